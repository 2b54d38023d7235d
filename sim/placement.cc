#include "sim/placement.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/checked_math.h"

namespace scratchsim {
namespace {

// Placed blocks indexed by live range: a segment tree over op positions where each block is
// stored at the O(log T) nodes that tile its range. A query visits the nodes meeting its range,
// so its cost is the range's length in nodes plus the blocks reported.
class LiveRangeIndex {
 public:
  explicit LiveRangeIndex(int64_t positions) {
    size_ = 1;
    while (size_ < positions) size_ <<= 1;
    nodes_.resize(2 * size_);
  }

  void Insert(int id, int64_t start, int64_t end) { Insert(1, 0, size_ - 1, start, end, id); }

  // Appends ids of blocks whose range meets [start, end]; `stamp` dedupes across nodes.
  void Query(int64_t start, int64_t end, std::vector<int>& stamp, int token, std::vector<int>& out) const {
    Query(1, 0, size_ - 1, start, end, stamp, token, out);
  }

 private:
  void Insert(int64_t node, int64_t lo, int64_t hi, int64_t start, int64_t end, int id) {
    if (end < lo || hi < start) return;
    if (start <= lo && hi <= end) {
      nodes_[node].push_back(id);
      return;
    }
    int64_t mid = (lo + hi) / 2;
    Insert(2 * node, lo, mid, start, end, id);
    Insert(2 * node + 1, mid + 1, hi, start, end, id);
  }

  void Query(int64_t node, int64_t lo, int64_t hi, int64_t start, int64_t end, std::vector<int>& stamp,
             int token, std::vector<int>& out) const {
    if (end < lo || hi < start) return;
    for (int id : nodes_[node]) {
      if (stamp[id] != token) {
        stamp[id] = token;
        out.push_back(id);
      }
    }
    if (lo == hi) return;
    int64_t mid = (lo + hi) / 2;
    Query(2 * node, lo, mid, start, end, stamp, token, out);
    Query(2 * node + 1, mid + 1, hi, start, end, stamp, token, out);
  }

  int64_t size_;
  std::vector<std::vector<int>> nodes_;
};

absl::Status ValidateBlocks(absl::Span<const Block> blocks, int64_t* positions) {
  *positions = 1;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (b.size < 0) return absl::InvalidArgumentError(absl::StrCat("block ", i, ": negative size ", b.size));
    if (b.alignment <= 0 || (b.alignment & (b.alignment - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("block ", i, ": alignment ", b.alignment, " is not a power of two"));
    }
    if (b.start < 0 || b.end < b.start) {
      return absl::InvalidArgumentError(absl::StrCat("block ", i, ": bad live range [", b.start, ", ", b.end, "]"));
    }
    *positions = std::max(*positions, b.end + 1);
  }
  return absl::OkStatus();
}

// Largest-first placement shared by first-fit and best-fit; they differ only in which gap
// between conflicting blocks they take.
class DecreasingSizePolicy : public PlacementPolicy {
 public:
  explicit DecreasingSizePolicy(bool best_fit) : best_fit_(best_fit) {}

  absl::string_view name() const override { return best_fit_ ? "best-fit" : "first-fit"; }

  absl::StatusOr<PlacementResult> Place(absl::Span<const Block> blocks) const override {
    int64_t positions;
    if (auto status = ValidateBlocks(blocks, &positions); !status.ok()) return status;
    const int n = static_cast<int>(blocks.size());
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (blocks[a].size != blocks[b].size) return blocks[a].size > blocks[b].size;
      return blocks[a].start < blocks[b].start;
    });

    PlacementResult result;
    result.offsets.assign(n, 0);
    LiveRangeIndex index(positions);
    std::vector<int> stamp(n, -1);
    std::vector<int> conflicts;
    std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, end) of conflicting blocks
    for (int rank = 0; rank < n; ++rank) {
      const int id = order[rank];
      const Block& block = blocks[id];
      if (block.size == 0) continue;  // occupies nothing
      conflicts.clear();
      index.Query(block.start, block.end, stamp, rank, conflicts);
      taken.clear();
      for (int other : conflicts) taken.emplace_back(result.offsets[other], result.offsets[other] + blocks[other].size);
      std::sort(taken.begin(), taken.end());

      int64_t cursor = 0;
      int64_t best_offset = -1;
      int64_t best_gap = 0;
      for (const auto& [offset, end] : taken) {
        auto aligned = CheckedRoundUp(cursor, block.alignment);
        if (!aligned) return absl::OutOfRangeError("placement offset overflows 64 bits");
        if (*aligned + block.size <= offset) {
          int64_t gap = offset - *aligned;
          if (!best_fit_) {
            best_offset = *aligned;
            break;
          }
          if (best_offset < 0 || gap < best_gap) {
            best_offset = *aligned;
            best_gap = gap;
          }
        }
        cursor = std::max(cursor, end);
      }
      if (best_offset < 0) {
        auto aligned = CheckedRoundUp(cursor, block.alignment);
        if (!aligned) return absl::OutOfRangeError("placement offset overflows 64 bits");
        best_offset = *aligned;
      }
      auto top = CheckedAdd(best_offset, block.size);
      if (!top) return absl::OutOfRangeError("placement offset overflows 64 bits");
      result.offsets[id] = best_offset;
      result.peak = std::max(result.peak, *top);
      index.Insert(id, block.start, block.end);
    }
    return result;
  }

 private:
  bool best_fit_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakePlacementPolicy(PlacementPolicyKind kind) {
  return std::make_unique<DecreasingSizePolicy>(kind == PlacementPolicyKind::kBestFitDecreasing);
}

absl::StatusOr<PlacementPolicyKind> ParsePlacementPolicy(absl::string_view name) {
  if (name == "first-fit") return PlacementPolicyKind::kFirstFitDecreasing;
  if (name == "best-fit") return PlacementPolicyKind::kBestFitDecreasing;
  return absl::InvalidArgumentError(
      absl::StrCat("--policy: unknown placement policy '", name, "' (known: first-fit, best-fit)"));
}

}  // namespace scratchsim
