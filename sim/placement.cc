#include "sim/placement.h"

#include <algorithm>
#include <numeric>
#include <optional>

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

// Every block's overlapping blocks, found once by a sweep in start order and stored flat
// (CSR). Far faster than querying a tree per block, but its size is the number of
// overlapping pairs, so it is only built when that stays within a budget; otherwise the
// segment tree above answers the same questions in bounded memory.
class OverlapLists {
 public:
  static std::optional<OverlapLists> Build(absl::Span<const Block> blocks, int64_t max_pairs) {
    const int n = static_cast<int>(blocks.size());
    std::vector<int> by_start;
    by_start.reserve(n);
    for (int i = 0; i < n; ++i) {
      if (blocks[i].size > 0) by_start.push_back(i);
    }
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](int a, int b) { return blocks[a].start < blocks[b].start; });
    // First sweep counts pairs (and degrees) so the budget is checked before allocating.
    OverlapLists lists;
    lists.begin_.assign(n + 1, 0);
    std::vector<int> active;
    int64_t pairs = 0;
    auto sweep = [&](auto&& on_pair) {
      active.clear();
      for (int b : by_start) {
        int64_t start = blocks[b].start;
        active.erase(std::remove_if(active.begin(), active.end(), [&](int a) { return blocks[a].end < start; }),
                     active.end());
        for (int a : active) on_pair(a, b);
        active.push_back(b);
      }
    };
    sweep([&](int a, int b) {
      ++pairs;
      ++lists.begin_[a + 1];
      ++lists.begin_[b + 1];
    });
    if (pairs > max_pairs) return std::nullopt;
    for (int i = 0; i < n; ++i) lists.begin_[i + 1] += lists.begin_[i];
    lists.neighbours_.resize(2 * pairs);
    std::vector<int64_t> fill(lists.begin_.begin(), lists.begin_.end() - 1);
    sweep([&](int a, int b) {
      lists.neighbours_[fill[a]++] = b;
      lists.neighbours_[fill[b]++] = a;
    });
    return lists;
  }

  absl::Span<const int> Of(int id) const {
    return absl::MakeConstSpan(neighbours_.data() + begin_[id], begin_[id + 1] - begin_[id]);
  }

 private:
  std::vector<int64_t> begin_;
  std::vector<int> neighbours_;
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
  DecreasingSizePolicy(bool best_fit, int64_t max_overlap_pairs)
      : best_fit_(best_fit), max_overlap_pairs_(max_overlap_pairs) {}

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
    std::optional<OverlapLists> overlaps = OverlapLists::Build(blocks, max_overlap_pairs_);
    std::optional<LiveRangeIndex> index;
    if (!overlaps) index.emplace(positions);
    std::vector<char> placed(n, 0);
    std::vector<int> stamp(n, -1);
    std::vector<int> conflicts;
    std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, end) of conflicting blocks
    for (int rank = 0; rank < n; ++rank) {
      const int id = order[rank];
      const Block& block = blocks[id];
      if (block.size == 0) continue;  // occupies nothing
      taken.clear();
      if (overlaps) {
        for (int other : overlaps->Of(id)) {
          if (placed[other]) taken.emplace_back(result.offsets[other], result.offsets[other] + blocks[other].size);
        }
      } else {
        conflicts.clear();
        index->Query(block.start, block.end, stamp, rank, conflicts);
        for (int other : conflicts) taken.emplace_back(result.offsets[other], result.offsets[other] + blocks[other].size);
      }
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
      placed[id] = 1;
      if (index) index->Insert(id, block.start, block.end);
    }
    return result;
  }

 private:
  bool best_fit_;
  int64_t max_overlap_pairs_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakePlacementPolicy(PlacementPolicyKind kind, int64_t max_overlap_pairs) {
  return std::make_unique<DecreasingSizePolicy>(kind == PlacementPolicyKind::kBestFitDecreasing, max_overlap_pairs);
}

absl::StatusOr<PlacementPolicyKind> ParsePlacementPolicy(absl::string_view name) {
  if (name == "first-fit") return PlacementPolicyKind::kFirstFitDecreasing;
  if (name == "best-fit") return PlacementPolicyKind::kBestFitDecreasing;
  return absl::InvalidArgumentError(
      absl::StrCat("--policy: unknown placement policy '", name, "' (known: first-fit, best-fit)"));
}

}  // namespace scratchsim
