// Triton's shared-memory allocator (lib/Analysis/Allocation.cpp, Triton 3.6) over buffers with
// sizes, alignments and live intervals: the placement that decides Triton's metadata.shared.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TRITON_ALLOCATOR_H_
#define SCRATCHSIM_BACKENDS_TRITON_TRITON_ALLOCATOR_H_

#include <cstdint>
#include <limits>
#include <string_view>

#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/placement.h"

namespace scratchsim::triton {

// The largest buffer the allocator places (1 TiB, far past any scratchpad): offsets and sums of
// sizes stay far from int64's range.
inline constexpr int64_t kMaxTritonBufferBytes = int64_t{1} << 40;

// One buffer as Triton's allocator sees it. Live interval is [start, end) over operation ids.
struct TritonBuffer {
  int64_t size = 0;
  int64_t alignment = 4;
  uint64_t start = 0;
  uint64_t end = std::numeric_limits<uint64_t>::max();
  // Buffers owned by ops in different regions of the same warp_specialize op run concurrently
  // and must not share addresses whatever their intervals (Triton's AsyncRegions check).
  // -1: not inside a warp_specialize partition.
  int async_group = -1;
  int async_region = -1;
};

struct TritonAllocation {
  std::vector<int64_t> offsets;  // one per buffer, in input order
  int64_t shared = 0;            // Triton's metadata.shared: max(offset + size)
};

// Upstream's computeOffsets: calculateStarts, then buildInterferenceGraph and allocate until no
// two buffers interfere. Buffers must come in Triton's order (explicit buffers in walk order,
// then scratch buffers in walk order): the size sort is stable, so ties keep this order, which
// decides offsets.
absl::StatusOr<TritonAllocation> AllocateLikeTriton(absl::Span<const TritonBuffer> buffers);

// The same algorithm as a PlacementPolicy over the simulator's Blocks (inclusive [start, end]
// positions become [start, end + 1)); blocks carry no warp-specialization regions.
class TritonPlacementPolicy : public PlacementPolicy {
 public:
  absl::string_view name() const override { return "triton"; }
  absl::StatusOr<PlacementResult> Place(absl::Span<const Block> blocks) const override;
};

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TRITON_ALLOCATOR_H_
