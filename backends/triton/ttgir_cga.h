// Cluster launches (ttg.num-ctas > 1): how a layout splits a tensor over the CTAs of the cluster
// (its CGA layout), the shape each CTA holds, and the per-CTA text the scratch rules size.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_CGA_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_CGA_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scratchsim::triton {

// Triton's getCTASplitNum of an encoding (alias or inline text): per dimension, over how many
// CTAs the tensor is split. A layout's CGA is a list of bases, one per bit of the CTA id
// (`CGALayout = [[0, 1], [1, 0]]` on blocked, MMA and shared layouts; `block = [...]` on
// linear ones): a basis with a non-zero entry in dimension d doubles the split along d, a zero
// basis replicates the tile (broadcast). Releases before 3.6 printed `CTASplitNum = [...]`,
// taken as it stands. A slice drops its parent's dimension; a dot operand
// keeps its parent's split but never splits K (DotOperandEncodingAttr::getCTASplitNum).
// All ones when the encoding has no CGA. `rank` is the tensor's.
absl::StatusOr<std::vector<int64_t>> CtaSplitNum(absl::string_view encoding,
                                                 const std::map<std::string, std::string>& aliases, int rank);

// Triton's getShapePerCTA: each dimension divided by its split, the split capped at the
// dimension. A split shorter than the shape applies to the trailing dimensions (a multi-buffered
// memdesc's leading slot dimension is never split).
std::vector<int64_t> ShapePerCta(const std::vector<int64_t>& shape, const std::vector<int64_t>& split);

// An op's text with every `tensor<...>` type's shape replaced by the shape per CTA, so the
// scratch rules size what one CTA exchanges. Also says whether the op moves data between the
// CTAs of the cluster (a layout conversion whose source and result split differently; a
// reduction or scan along a split axis): Triton then goes through distributed shared memory,
// which the per-CTA rules do not model.
struct PerCtaText {
  std::string text;
  bool changed = false;
  bool crosses_ctas = false;
  // The CTAs the first tensor (a conversion's source) is split over: the product of its split.
  int64_t source_split = 1;
};
absl::StatusOr<PerCtaText> PerCtaOpText(absl::string_view text, absl::string_view op_name,
                                        const std::map<std::string, std::string>& aliases);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_CGA_H_
