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
  // Set by the caller: false when only the peak is wanted (the planner's sweep), which lets a
  // policy skip working out offsets it can bound otherwise; `offsets` may then be left empty.
  bool offsets_needed = true;
};

// The offset rule shared by first-fit and best-fit: fed the [offset, end) ranges of the
// blocks that conflict with a new block, in ascending offset order, it picks the lowest
// (first-fit) or tightest (best-fit) aligned gap that holds the block, else the top.
class GapFinder {
 public:
  GapFinder(int64_t size, int64_t alignment, bool best_fit)
      : size_(size), alignment_(alignment), best_fit_(best_fit) {}

  // Returns false once the answer is known (first-fit found its gap) or arithmetic overflowed.
  bool Offer(int64_t offset, int64_t end) {
    int64_t aligned;
    if (!AlignUp(cursor_, &aligned)) return false;
    if (aligned + size_ <= offset) {
      int64_t gap = offset - aligned;
      if (!best_fit_) {
        best_ = aligned;
        return false;
      }
      if (best_ < 0 || gap < best_gap_) {
        best_ = aligned;
        best_gap_ = gap;
      }
    }
    if (end > cursor_) cursor_ = end;
    return true;
  }

  // The chosen offset; false on 64-bit overflow.
  bool Offset(int64_t* offset) const {
    if (overflow_) return false;
    if (best_ >= 0) {
      *offset = best_;
    } else if (!AlignUp(cursor_, offset)) {
      return false;
    }
    return !__builtin_add_overflow(*offset, size_, &top_);
  }
  // offset + size of the last Offset() answer.
  int64_t top() const { return top_; }

 private:
  bool AlignUp(int64_t value, int64_t* out) const {
    int64_t remainder = value % alignment_;
    if (remainder == 0) {
      *out = value;
      return true;
    }
    if (__builtin_add_overflow(value, alignment_ - remainder, out)) {
      overflow_ = true;
      return false;
    }
    return true;
  }

  int64_t size_;
  int64_t alignment_;
  bool best_fit_;
  int64_t cursor_ = 0;
  int64_t best_ = -1;
  int64_t best_gap_ = 0;
  mutable bool overflow_ = false;
  mutable int64_t top_ = 0;
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
  // The same into a result whose storage is reused, for callers that place millions of times
  // (the planner through the fit engine). Defaults to Place.
  virtual absl::Status PlaceInto(absl::Span<const Block> blocks, PlacementResult* result) const;
};

// One algorithm (largest first, GapFinder's rule) with the conflicts of a block found the
// cheapest way its input allows, all giving the same placement (placement_test checks them
// against each other):
//  - every block live with every other and no alignment gap possible: blocks pack end to end in
//    placement order, a closed form;
//  - up to `scan_blocks` blocks, or blocks that all overlap: a scan of the placed blocks kept
//    sorted by offset (where all overlap, a block at least as large as the largest alignment
//    goes on top without one: the free space below is alignment padding);
//  - more: the buffer interference graph (Boost CSR) while the number of overlapping pairs
//    stays within `max_overlap_pairs` (about 16 bytes a pair while it is built), else a segment
//    tree over live ranges.
inline constexpr int64_t kDefaultMaxOverlapPairs = int64_t{1} << 24;
inline constexpr int kDefaultScanBlocks = 64;
struct PlacementTuning {
  int64_t max_overlap_pairs = kDefaultMaxOverlapPairs;
  int scan_blocks = kDefaultScanBlocks;
  bool closed_form = true;  // the shortcuts: the closed form, the scan for blocks that all overlap
};
std::unique_ptr<PlacementPolicy> MakePlacementPolicy(PlacementPolicyKind kind, PlacementTuning tuning = {});
absl::StatusOr<PlacementPolicyKind> ParsePlacementPolicy(absl::string_view name);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLACEMENT_H_
