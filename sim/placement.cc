#include "sim/placement.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/graph/compressed_sparse_row_graph.hpp"

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
// once by a sweep in start order and stored as a Boost compressed sparse row graph, it answers
// "which blocks conflict with this one" far faster than a tree query per block. Its size is
// the number of overlapping pairs, so it is only built while that stays within a budget;
// beyond it the segment tree above answers the same questions in bounded memory.
class InterferenceGraph {
 public:
  using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                   boost::no_property, uint32_t, uint32_t>;

  static std::optional<InterferenceGraph> Build(absl::Span<const Block> blocks, int64_t max_pairs) {
    const int n = static_cast<int>(blocks.size());
    std::vector<uint32_t> by_start;
    by_start.reserve(n);
    for (int i = 0; i < n; ++i) {
      if (blocks[i].size > 0) by_start.push_back(i);
    }
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](uint32_t a, uint32_t b) { return blocks[a].start < blocks[b].start; });
    std::vector<uint32_t> active;
    auto sweep = [&](auto&& on_pair) {
      active.clear();
      for (uint32_t b : by_start) {
        int64_t start = blocks[b].start;
        active.erase(std::remove_if(active.begin(), active.end(), [&](uint32_t a) { return blocks[a].end < start; }),
                     active.end());
        for (uint32_t a : active) on_pair(a, b);
        active.push_back(b);
      }
    };
    // Count first, so the budget is checked before anything large is allocated.
    int64_t pairs = 0;
    sweep([&](uint32_t, uint32_t) { ++pairs; });
    if (pairs > max_pairs) return std::nullopt;
    std::vector<uint32_t> sources, targets;
    sources.reserve(2 * pairs);
    targets.reserve(2 * pairs);
    sweep([&](uint32_t a, uint32_t b) {
      sources.push_back(a);
      targets.push_back(b);
      sources.push_back(b);
      targets.push_back(a);
    });
    return InterferenceGraph(Graph(boost::construct_inplace_from_sources_and_targets, sources, targets, n));
  }

  auto Neighbours(uint32_t id) const { return boost::adjacent_vertices(id, graph_); }

 private:
  explicit InterferenceGraph(Graph graph) : graph_(std::move(graph)) {}
  Graph graph_;
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
    // Largest first, then earliest start, then input order: sorting packed keys keeps the
    // comparisons off the blocks array.
    struct Key {
      int64_t size;
      int64_t start;
      int id;
    };
    std::vector<Key> keys(n);
    for (int i = 0; i < n; ++i) keys[i] = {blocks[i].size, blocks[i].start, i};
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
      if (a.size != b.size) return a.size > b.size;
      if (a.start != b.start) return a.start < b.start;
      return a.id < b.id;
    });

    PlacementResult result;
    result.offsets.assign(n, 0);
    std::optional<InterferenceGraph> overlaps = InterferenceGraph::Build(blocks, max_overlap_pairs_);
    std::optional<LiveRangeIndex> index;
    if (!overlaps) index.emplace(positions);
    // [offset, end) of each placed block, end -1 while unplaced: one load per neighbour.
    std::vector<std::pair<int64_t, int64_t>> range(n, {0, -1});
    std::vector<int> stamp(n, -1);
    std::vector<int> conflicts;
    std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, end) of conflicting blocks
    for (int rank = 0; rank < n; ++rank) {
      const int id = keys[rank].id;
      const Block& block = blocks[id];
      if (block.size == 0) continue;  // occupies nothing
      taken.clear();
      if (overlaps) {
        for (auto [it, end] = overlaps->Neighbours(id); it != end; ++it) {
          const int other = static_cast<int>(*it);
          if (range[other].second >= 0) taken.push_back(range[other]);
        }
      } else {
        conflicts.clear();
        index->Query(block.start, block.end, stamp, rank, conflicts);
        for (int other : conflicts) taken.push_back(range[other]);
      }
      std::sort(taken.begin(), taken.end());

      GapFinder finder(block.size, block.alignment, best_fit_);
      for (const auto& [offset, end] : taken) {
        if (!finder.Offer(offset, end)) break;
      }
      int64_t best_offset;
      if (!finder.Offset(&best_offset)) return absl::OutOfRangeError("placement offset overflows 64 bits");
      const int64_t top = finder.top();
      result.offsets[id] = best_offset;
      result.peak = std::max(result.peak, top);
      range[id] = {best_offset, top};
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
