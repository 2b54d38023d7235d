#include "sim/placement.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

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

// The buffer interference graph: an edge joins two blocks whose live ranges overlap. Found
// once by a sweep in start order and stored in compressed sparse row form (each block's
// neighbours contiguous, written straight into place: 4 bytes per edge end and nothing else), it
// answers "which blocks conflict with this one" far faster than a tree query per block. Its size
// is the number of overlapping pairs, so it is only built while that stays within a budget;
// beyond it the segment tree above answers the same questions in bounded memory.
class InterferenceGraph {
 public:
  // Over the blocks that occupy bytes and are not `excluded` (the universal ones, which the
  // caller handles as a union).
  static std::optional<InterferenceGraph> Build(absl::Span<const Block> blocks, int64_t max_pairs,
                                                const std::vector<bool>& excluded) {
    const int n = static_cast<int>(blocks.size());
    std::vector<uint32_t> by_start;
    by_start.reserve(n);
    for (int i = 0; i < n; ++i) {
      if (blocks[i].size > 0 && !excluded[i]) by_start.push_back(i);
    }
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](uint32_t a, uint32_t b) { return blocks[a].start < blocks[b].start; });
    std::vector<uint32_t> active;
    // `limit`: stop once that many pairs are seen (the sweep's own work is the pairs it visits).
    auto sweep = [&](int64_t limit, auto&& on_pair) {
      active.clear();
      int64_t seen = 0;
      for (uint32_t b : by_start) {
        int64_t start = blocks[b].start;
        active.erase(std::remove_if(active.begin(), active.end(), [&](uint32_t a) { return blocks[a].end < start; }),
                     active.end());
        seen += static_cast<int64_t>(active.size());
        if (seen > limit) return false;
        for (uint32_t a : active) on_pair(a, b);
        active.push_back(b);
      }
      return true;
    };
    // Count first (pairs and each block's degree), so the budget is checked before anything
    // large is allocated.
    int64_t pairs = 0;
    InterferenceGraph graph;
    graph.first_.assign(static_cast<size_t>(n) + 1, 0);
    const bool within = sweep(max_pairs, [&](uint32_t a, uint32_t b) {
      ++pairs;
      ++graph.first_[a + 1];
      ++graph.first_[b + 1];
    });
    if (!within) return std::nullopt;
    for (int i = 0; i < n; ++i) graph.first_[i + 1] += graph.first_[i];
    graph.neighbours_.resize(static_cast<size_t>(2 * pairs));
    std::vector<uint64_t> next(graph.first_.begin(), graph.first_.end() - 1);
    sweep(max_pairs, [&](uint32_t a, uint32_t b) {
      graph.neighbours_[next[a]++] = b;
      graph.neighbours_[next[b]++] = a;
    });
    return graph;
  }

  absl::Span<const uint32_t> Neighbours(uint32_t id) const {
    return absl::MakeConstSpan(neighbours_.data() + first_[id], first_[id + 1] - first_[id]);
  }

 private:
  InterferenceGraph() = default;
  std::vector<uint64_t> first_;        // block i's neighbours: neighbours_[first_[i], first_[i + 1])
  std::vector<uint32_t> neighbours_;
};

// What one pass over the blocks learns: whether they are valid, and what the shortcuts need.
struct BlockStats {
  int64_t positions = 1;       // op positions spanned
  int64_t max_start = 0;       // over blocks that occupy bytes
  int64_t min_end = INT64_MAX;
  int64_t min_start = INT64_MAX;  // over blocks that occupy bytes
  int64_t max_end = 0;
  int64_t max_alignment = 1;
  int64_t size_bits = 0;       // OR of every size: no alignment gap when it is a multiple of max_alignment
};

absl::Status ScanBlocks(absl::Span<const Block> blocks, BlockStats* stats) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (b.size < 0) return absl::InvalidArgumentError(absl::StrCat("block ", i, ": negative size ", b.size));
    if (b.alignment <= 0 || (b.alignment & (b.alignment - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("block ", i, ": alignment ", b.alignment, " is not a power of two"));
    }
    if (b.start < 0 || b.end < b.start) {
      return absl::InvalidArgumentError(absl::StrCat("block ", i, ": bad live range [", b.start, ", ", b.end, "]"));
    }
    stats->positions = std::max(stats->positions, b.end + 1);
    stats->size_bits |= b.size;
    if (b.size == 0) continue;
    stats->max_start = std::max(stats->max_start, b.start);
    stats->min_end = std::min(stats->min_end, b.end);
    stats->min_start = std::min(stats->min_start, b.start);
    stats->max_end = std::max(stats->max_end, b.end);
    stats->max_alignment = std::max(stats->max_alignment, b.alignment);
  }
  return absl::OkStatus();
}

// Largest-first placement shared by first-fit and best-fit; they differ only in which gap
// between conflicting blocks they take.
class DecreasingSizePolicy : public PlacementPolicy {
 public:
  DecreasingSizePolicy(bool best_fit, PlacementTuning tuning) : best_fit_(best_fit), tuning_(tuning) {}

  absl::string_view name() const override { return best_fit_ ? "best-fit" : "first-fit"; }

  absl::StatusOr<PlacementResult> Place(absl::Span<const Block> blocks) const override {
    PlacementResult result;
    if (auto status = PlaceInto(blocks, &result); !status.ok()) return status;
    return result;
  }

  absl::Status PlaceInto(absl::Span<const Block> blocks, PlacementResult* result) const override {
    BlockStats stats;
    if (auto status = ScanBlocks(blocks, &stats); !status.ok()) return status;
    const int n = static_cast<int>(blocks.size());
    // Intervals on a line meet pairwise exactly when they share a point (max start <= min end).
    // Then every block conflicts with every placed one, and when no size leaves an alignment
    // gap (alignments are powers of two, so the OR of the sizes tells) both rules put each block
    // at the top of the ones before it: the peak is the sum.
    const bool packed = tuning_.closed_form && stats.max_start <= stats.min_end &&
                        (stats.size_bits & (stats.max_alignment - 1)) == 0;
    result->peak = 0;
    if (packed && !result->offsets_needed) {
      result->offsets.clear();
      for (const Block& b : blocks) {
        if (__builtin_add_overflow(result->peak, b.size, &result->peak)) {
          return absl::OutOfRangeError("placement offset overflows 64 bits");
        }
      }
      return absl::OkStatus();
    }

    // Working storage reused across calls on this thread: no allocation once warmed up.
    thread_local Workspace ws;
    // Largest first, then earliest start, then input order: sorting packed keys keeps the
    // comparisons off the blocks array.
    ws.keys.resize(n);
    for (int i = 0; i < n; ++i) ws.keys[i] = {blocks[i].size, blocks[i].start, i};
    std::sort(ws.keys.begin(), ws.keys.end(), [](const Key& a, const Key& b) {
      if (a.size != b.size) return a.size > b.size;
      if (a.start != b.start) return a.start < b.start;
      return a.id < b.id;
    });
    result->offsets.assign(n, 0);
    if (packed) {
      int64_t top = 0;
      for (const Key& key : ws.keys) {
        if (key.size == 0) continue;
        result->offsets[key.id] = top;
        if (__builtin_add_overflow(top, key.size, &top)) return absl::OutOfRangeError("placement offset overflows 64 bits");
      }
      result->peak = top;
      return absl::OkStatus();
    }

    // [offset, end) of each placed block, end -1 while unplaced.
    ws.range.assign(n, {0, -1});
    // Few blocks, or blocks that all overlap (each then conflicts with every placed one, and the
    // interference graph would only repeat the placed list, sorted again per block): scan the
    // placed ones, kept sorted by (offset, end) as the rule reads them.
    const bool all_overlap = tuning_.closed_form && stats.max_start <= stats.min_end;
    if (n <= tuning_.scan_blocks || all_overlap) {
      ws.placed.clear();
      for (const Key& key : ws.keys) {
        const Block& block = blocks[key.id];
        if (block.size == 0) continue;
        GapFinder finder(block.size, block.alignment, best_fit_);
        if (all_overlap && block.size >= stats.max_alignment) {
          // Where all blocks overlap, the only free space below the top is alignment padding,
          // each piece shorter than the largest alignment: a block at least that large goes on
          // top, as the scan would find.
          finder.Offer(0, result->peak);
          if (auto status = Commit(finder, key.id, ws, result); !status.ok()) return status;
          ws.placed.push_back(key.id);
          continue;
        }
        for (int other : ws.placed) {
          const Block& o = blocks[other];
          if (o.start > block.end || block.start > o.end) continue;
          if (!finder.Offer(ws.range[other].first, ws.range[other].second)) break;
        }
        if (auto status = Commit(finder, key.id, ws, result); !status.ok()) return status;
        auto at = std::upper_bound(ws.placed.begin(), ws.placed.end(), key.id,
                                   [&](int a, int b) { return ws.range[a] < ws.range[b]; });
        ws.placed.insert(at, key.id);
      }
      return absl::OkStatus();
    }

    return PlaceByConflicts(blocks, stats, ws, result);
  }

 private:
  struct Key {
    int64_t size;
    int64_t start;
    int id;
  };
  // Disjoint [offset, end) runs by offset: the union of some placed blocks.
  using Runs = std::map<int64_t, int64_t>;
  struct Workspace {
    std::vector<Key> keys;
    std::vector<std::pair<int64_t, int64_t>> range;
    std::vector<int> placed;
    std::vector<int> stamp;
    std::vector<int> conflicts;
    std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, end) of conflicting blocks
    std::vector<bool> universal;
    Runs all_runs, universal_runs;
  };

  // Adds [offset, end) to `runs`, merging it with the runs it meets or touches.
  static void AddRun(Runs& runs, int64_t offset, int64_t end) {
    auto it = runs.upper_bound(offset);
    if (it != runs.begin() && std::prev(it)->second >= offset) --it;
    while (it != runs.end() && it->first <= end) {
      offset = std::min(offset, it->first);
      end = std::max(end, it->second);
      it = runs.erase(it);
    }
    runs.emplace(offset, end);
  }

  // The general case, in the keys' order. A block whose live range covers every other block's
  // (a universal block: an untouched buffer is live throughout) conflicts with all of them, so
  // listing it per block made placement quadratic in such blocks (issue 37, F2). The rules read
  // only the union of the conflicting blocks' bytes (GapFinder takes gaps between the runs it is
  // offered), so universal blocks are kept as the union they cover instead: a universal block
  // is offered the union of all placed blocks, any other block its own conflicts among the rest
  // (the interference graph or the live-range index, which hold only the rest) and the union of
  // the universal ones. The offsets are the same as listing every conflict.
  absl::Status PlaceByConflicts(absl::Span<const Block> blocks, const BlockStats& stats, Workspace& ws,
                                PlacementResult* result) const {
    const int n = static_cast<int>(blocks.size());
    ws.universal.assign(n, false);
    bool any_universal = false;
    for (int i = 0; i < n; ++i) {
      const Block& b = blocks[i];
      ws.universal[i] = b.size > 0 && b.start <= stats.min_start && b.end >= stats.max_end;
      any_universal = any_universal || ws.universal[i];
    }
    ws.all_runs.clear();
    ws.universal_runs.clear();
    std::optional<InterferenceGraph> overlaps =
        InterferenceGraph::Build(blocks, tuning_.max_overlap_pairs, ws.universal);
    std::optional<LiveRangeIndex> index;
    if (!overlaps) index.emplace(stats.positions);
    ws.stamp.assign(n, -1);
    for (int rank = 0; rank < n; ++rank) {
      const int id = ws.keys[rank].id;
      const Block& block = blocks[id];
      if (block.size == 0) continue;  // occupies nothing
      GapFinder finder(block.size, block.alignment, best_fit_);
      if (ws.universal[id]) {
        for (const auto& [offset, end] : ws.all_runs) {
          if (!finder.Offer(offset, end)) break;
        }
      } else {
        ws.taken.assign(ws.universal_runs.begin(), ws.universal_runs.end());
        if (overlaps) {
          for (const uint32_t other : overlaps->Neighbours(id)) {
            if (ws.range[other].second >= 0) ws.taken.push_back(ws.range[other]);
          }
        } else {
          ws.conflicts.clear();
          index->Query(block.start, block.end, ws.stamp, rank, ws.conflicts);
          for (int other : ws.conflicts) ws.taken.push_back(ws.range[other]);
        }
        std::sort(ws.taken.begin(), ws.taken.end());
        for (const auto& [offset, end] : ws.taken) {
          if (!finder.Offer(offset, end)) break;
        }
      }
      if (auto status = Commit(finder, id, ws, result); !status.ok()) return status;
      if (any_universal) {
        AddRun(ws.all_runs, ws.range[id].first, ws.range[id].second);
        if (ws.universal[id]) AddRun(ws.universal_runs, ws.range[id].first, ws.range[id].second);
      }
      if (index && !ws.universal[id]) index->Insert(id, block.start, block.end);
    }
    return absl::OkStatus();
  }

  // Records the offset `finder` chose for block `id`.
  static absl::Status Commit(const GapFinder& finder, int id, Workspace& ws, PlacementResult* result) {
    int64_t offset;
    if (!finder.Offset(&offset)) return absl::OutOfRangeError("placement offset overflows 64 bits");
    result->offsets[id] = offset;
    result->peak = std::max(result->peak, finder.top());
    ws.range[id] = {offset, finder.top()};
    return absl::OkStatus();
  }

  bool best_fit_;
  PlacementTuning tuning_;
};

}  // namespace

absl::Status PlacementPolicy::PlaceInto(absl::Span<const Block> blocks, PlacementResult* result) const {
  absl::StatusOr<PlacementResult> placed = Place(blocks);
  if (!placed.ok()) return placed.status();
  *result = std::move(*placed);
  return absl::OkStatus();
}

std::unique_ptr<PlacementPolicy> MakePlacementPolicy(PlacementPolicyKind kind, PlacementTuning tuning) {
  return std::make_unique<DecreasingSizePolicy>(kind == PlacementPolicyKind::kBestFitDecreasing, tuning);
}

absl::StatusOr<PlacementPolicyKind> ParsePlacementPolicy(absl::string_view name) {
  if (name == "first-fit") return PlacementPolicyKind::kFirstFitDecreasing;
  if (name == "best-fit") return PlacementPolicyKind::kBestFitDecreasing;
  return absl::InvalidArgumentError(
      absl::StrCat("--policy: unknown placement policy '", name, "' (known: first-fit, best-fit)"));
}

}  // namespace scratchsim
