// AMD's OptimizeLDSUsage pass on a planned module: a layout conversion whose scratch keeps the
// kernel over the LDS is split in two through a temporary layout, swizzled or padded.
#ifndef SCRATCHSIM_BACKENDS_TRITON_AMD_LDS_USAGE_H_
#define SCRATCHSIM_BACKENDS_TRITON_AMD_LDS_USAGE_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/triton/ttgir_layout.h"
#include "backends/triton/ttgir_parser.h"

namespace scratchsim::triton {

// LDS per workgroup as Triton's AMD TargetInfo::getSharedMemorySize gives it, the limit the pass
// works to: 160 KiB on gfx950 (CDNA4), 64 KiB on every other arch.
int64_t AmdLdsBytes(absl::string_view target);

// tryFitCvtIntoLDS for the ttg.convert_layout `op` (Triton 3.6): the temporary layouts Triton
// tries (the source's, the destination's and a plain blocked layout, each with every split of
// the warps over the dimensions), each costing the larger of the two conversions through it;
// the cheapest swizzled split below `target_bytes`, else the cheapest padded one below it.
// Returns the LDS of the split (the larger half: the two halves run one after the other), or
// std::nullopt when Triton keeps the conversion.
absl::StatusOr<std::optional<int64_t>> SplitConversionLds(const TtgirOp& op, const LayoutContext& ctx,
                                                          int64_t target_bytes, absl::string_view origin);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_AMD_LDS_USAGE_H_
