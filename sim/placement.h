// Assigns offsets to live blocks in one memory space with a pluggable policy and reports the
// peak. Buffers whose live ranges do not overlap may share addresses.
#ifndef SCRATCHSIM_SIM_PLACEMENT_H_
#define SCRATCHSIM_SIM_PLACEMENT_H_

#include <cstdint>
#include <memory>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace scratchsim {

// One contiguous allocation: a copy of a buffer, live over op positions [start, end].
struct Block {
  int64_t size = 0;
  int64_t alignment = 1;  // a power of two
  int64_t start = 0;
  int64_t end = 0;
};

struct PlacementResult {
  std::vector<int64_t> offsets;  // one per block
  int64_t peak = 0;              // max(offset + size)
};

enum class PlacementPolicyKind {
  // Compiler style (Triton, XLA's heap simulator): largest block first, each at the lowest
  // aligned offset free for its whole live range.
  kFirstFitDecreasing,
  // Largest first, into the smallest gap that fits (XLA's GlobalDecreasingSizeBestFit).
  kBestFitDecreasing,
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::StatusOr<PlacementResult> Place(absl::Span<const Block> blocks) const = 0;
};

// Conflicts between blocks come from precomputed overlap lists while the number of
// overlapping pairs stays within `max_overlap_pairs` (memory: 8 bytes a pair), else from a
// segment tree over live ranges. Both give the same placement.
inline constexpr int64_t kDefaultMaxOverlapPairs = int64_t{1} << 24;
std::unique_ptr<PlacementPolicy> MakePlacementPolicy(PlacementPolicyKind kind,
                                                     int64_t max_overlap_pairs = kDefaultMaxOverlapPairs);
absl::StatusOr<PlacementPolicyKind> ParsePlacementPolicy(absl::string_view name);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLACEMENT_H_
