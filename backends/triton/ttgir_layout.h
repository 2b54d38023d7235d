// Distributed and shared layouts of TritonGPU IR, and the scratch memory Triton 3.6 gives the
// ops that exchange data through shared memory (layout conversion, reduce, scan, atomics, ...).
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_LAYOUT_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_LAYOUT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scratchsim::triton {

struct TtgirOp;
enum class TtgirOpKind : uint8_t;

// Bits of an MLIR element type ("f16" -> 16, "f8E4M3FN" -> 8, "i1" -> 1); 0 if unknown.
int64_t ElementBits(absl::string_view type);

// What a memdesc's memory space ("#smem", "#ttg.shared_memory", "#tmem", ...) is, the module's
// aliases resolved: Triton's printer aliases shared memory `#smem` (its definition may be left out
// of a snippet), hand-written IR spells it inline.
enum class MemorySpace { kShared, kOther, kUnknown };  // kOther: tensor memory, other #ttg./#ttng.
MemorySpace ClassifyMemorySpace(std::string_view space, const std::map<std::string, std::string>& aliases);

struct SharedEncoding {
  int64_t alignment = 16;
  // nvmma_shared with fp4Padded: two e2m1 values per i8 of the memdesc, each padded to a byte in
  // shared memory (tcgen05/TMA's fp4 operand layout), so the allocation holds twice the
  // memdesc's elements (tests/data/triton/README.md).
  int64_t elements_per_memdesc_element = 1;
  bool padded = false;
  std::vector<std::pair<int64_t, int64_t>> padding;  // (interval, pad) in elements
  std::optional<int64_t> PaddedSize(int64_t numel) const;  // std::nullopt past int64
};
absl::StatusOr<SharedEncoding> ParseSharedEncoding(absl::string_view text);

// A tensor type "tensor<128x64xf16, #blocked>".
struct TensorType {
  std::vector<int64_t> shape;
  std::string element;
  std::string encoding;  // alias ("#blocked") or inline ("#ttg.slice<{...}>")
};
std::optional<TensorType> ParseTensorType(absl::string_view text);
// Every tensor type in `text`, in order.
std::vector<TensorType> TensorTypes(absl::string_view text);

// The Triton releases whose allocation rules are modelled; where they differ, the rule follows
// the release (docs/triton.md, "Releases").
enum class TritonRelease : uint8_t { kUnknown = 0, k3_6, k3_9 };
// "3.6", "3.9".
const char* TritonReleaseName(TritonRelease release);
// "3.6", "3.6.0", "3.9", "3.9.0"; any other text is an InvalidArgument naming the modelled ones.
absl::StatusOr<TritonRelease> ParseTritonRelease(absl::string_view text);
// The release a plan follows when neither the TTGIR nor the caller says: the newest modelled.
inline constexpr TritonRelease kNewestTritonRelease = TritonRelease::k3_9;

struct LayoutContext {
  const std::map<std::string, std::string>& aliases;
  int num_warps = 4;
  int threads_per_warp = 32;
  // NVIDIA compute capability (90 for "cuda:90"); 0 for other targets. It decides which
  // shared-memory instructions a layout conversion may use, hence its scratch size.
  int compute_capability = 0;
  // 32-bit banks of a shared-memory line: 32 on NVIDIA and gfx942, 64 on gfx950 (CDNA4's LDS).
  int num_banks = 32;
  // 942 or 950 for AMD CDNA3/CDNA4 (their LDS access tiles); 0 otherwise.
  int amd_arch = 0;
  // Whose rules: tt.reduce's scratch changed between 3.6 and 3.9.
  TritonRelease release = kNewestTritonRelease;
};

// Per dimension: elements per thread, threads per warp, warps per CTA, for blocked, slice and
// MMA layouts (enough for reductions and scans).
struct DimSplit {
  std::vector<int64_t> per_thread, threads, warps;
};
absl::StatusOr<DimSplit> SplitOf(const LayoutContext& ctx, absl::string_view encoding, int rank);

struct ScratchNeed {
  int64_t bytes = 0;
  int64_t alignment = 128;
};
// The scratch an op needs; `result_used` matters for atomics. Unsupported layouts are errors
// naming the line.
absl::StatusOr<ScratchNeed> ScratchFor(const TtgirOp& op, const LayoutContext& ctx,
                                       bool result_used, absl::string_view origin);

// The ops whose scratch ScratchFor sizes by whether their result is used (the atomics, whose
// result is broadcast through scratch only when read): the allocation follows their results' users.
bool ScratchDependsOnResultUse(TtgirOpKind kind);

// LinearEncodingAttr::getOrder of `type`'s layout: the dimensions in the order its register
// bases first move along them, then the others from the last to the first.
absl::StatusOr<std::vector<int>> RegisterOrderOf(const LayoutContext& ctx, const TensorType& type);

// The scratch of one `ttg.convert_layout` of an m x n tile of `elem` (e.g. "f16") from layout
// `src` to `dst` (full encodings, e.g. "#ttg.blocked<{...}>"), as ScratchFor gives it for such an
// op in a module: for callers that know the layouts but have no IR (the pre-compile model).
absl::StatusOr<ScratchNeed> ConvertLayoutScratch(absl::string_view src, absl::string_view dst, int64_t m, int64_t n,
                                                 absl::string_view elem, int num_warps, int threads_per_warp,
                                                 int compute_capability, absl::string_view origin);

// The scratch of one `tt.reduce` of an m x n tile of `elem` in layout `layout` along `axis`, by
// the rules of `release`: for callers without IR (the pre-compile model).
absl::StatusOr<ScratchNeed> ReduceScratch(absl::string_view layout, int64_t m, int64_t n, int axis,
                                          absl::string_view elem, int num_warps, int threads_per_warp,
                                          int compute_capability, TritonRelease release, absl::string_view origin);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_LAYOUT_H_
