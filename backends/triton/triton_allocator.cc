// Triton 3.6's allocator (AllocationAnalysis::computeOffsets), reimplemented from its documented
// behaviour, phase by phase under upstream's names: a size-descending stable order,
// calculateStarts ("triple" first-fit, Algorithms for Compile-Time Memory Optimization), then
// buildInterferenceGraph and allocate (first-fit colouring) repeated until no two live buffers
// overlap.
#include "backends/triton/triton_allocator.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/checked_math.h"

namespace scratchsim::triton {
namespace {

struct Interval {
  uint64_t start = 0;
  uint64_t end = std::numeric_limits<uint64_t>::max();
  bool Intersects(const Interval& o) const { return start < o.end && o.start < end; }
};

int64_t AlignTo(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

Interval RangeOf(const TritonBuffer& b) { return Interval{b.start, b.end}; }

// calculateStarts: initial offsets by the "triple" first-fit. The lowest free slot takes the
// first buffer (in size order) whose interval meets the slot's and no other open slot's.
std::vector<int64_t> CalculateStarts(absl::Span<const TritonBuffer> buffers, const std::vector<int>& order) {
  const int n = static_cast<int>(buffers.size());
  std::vector<int64_t> offset(n, 0);
  // The open slots, taken lowest offset first and, among equal offsets, oldest first (the
  // order of a multimap keyed by offset); a few entries, so a flat vector.
  struct Slot {
    int64_t offset;
    uint64_t seq;
    Interval range;
  };
  std::vector<Slot> triples;
  triples.reserve(static_cast<size_t>(2 * n + 1));
  uint64_t next_seq = 0;
  triples.push_back({0, next_seq++, Interval{}});
  std::vector<int> pending = order;
  while (!pending.empty() && !triples.empty()) {
    auto it = std::min_element(triples.begin(), triples.end(), [](const Slot& x, const Slot& y) {
      return x.offset != y.offset ? x.offset < y.offset : x.seq < y.seq;
    });
    const int64_t slot = it->offset;
    const Interval slot_range = it->range;
    triples.erase(it);
    auto chosen = std::find_if(pending.begin(), pending.end(), [&](int b) {
      const Interval live = RangeOf(buffers[b]);
      if (!live.Intersects(slot_range)) return false;
      for (const Slot& t : triples) {
        if (t.range.Intersects(live)) return false;
      }
      return true;
    });
    if (chosen == pending.end()) continue;
    const int b = *chosen;
    const Interval live = RangeOf(buffers[b]);
    offset[b] = AlignTo(slot, buffers[b].alignment);
    triples.push_back({offset[b] + buffers[b].size, next_seq++,
                       Interval{std::max(slot_range.start, live.start),
                                std::min(slot_range.end, live.end)}});
    if (slot_range.start < live.start) {
      triples.push_back({slot, next_seq++, Interval{slot_range.start, live.end}});
    }
    if (live.end < slot_range.end) {
      triples.push_back({slot, next_seq++, Interval{live.start, slot_range.end}});
    }
    pending.erase(chosen);
  }
  return offset;
}

// Two buffers interfere when their addresses overlap and either their intervals do or they
// belong to different regions of one warp_specialize (AsyncRegions: those run concurrently).
bool Interferes(const TritonBuffer& x, int64_t x_offset, const TritonBuffer& y, int64_t y_offset) {
  const bool mem = x_offset < y_offset + y.size && y_offset < x_offset + x.size;
  if (!mem) return false;
  if (RangeOf(x).Intersects(RangeOf(y))) return true;
  return x.async_group >= 0 && x.async_group == y.async_group && x.async_region != y.async_region;
}

// buildInterferenceGraph: each buffer's interfering buffers, in size order; true if any.
bool BuildInterferenceGraph(absl::Span<const TritonBuffer> buffers, const std::vector<int>& order,
                            const std::vector<int64_t>& offset, std::vector<std::vector<int>>& graph) {
  bool any = false;
  for (int x : order) {
    graph[x].clear();
    for (int y : order) {
      if (x != y && Interferes(buffers[x], offset[x], buffers[y], offset[y])) {
        graph[x].push_back(y);
        any = true;
      }
    }
  }
  return any;
}

// allocate: first-fit colouring of the interference graph in size order; every buffer of a
// non-zero colour moves past its neighbours. Returns max(offset + size).
int64_t Allocate(absl::Span<const TritonBuffer> buffers, const std::vector<int>& order,
                 const std::vector<std::vector<int>>& graph, std::vector<int64_t>& offset,
                 std::vector<int>& color, std::vector<uint8_t>& available) {
  std::fill(color.begin(), color.end(), -1);
  if (!order.empty()) color[order[0]] = 0;
  for (int x : order) {
    std::fill(available.begin(), available.end(), uint8_t{1});
    for (int y : graph[x]) {
      if (color[y] >= 0) available[color[y]] = 0;
    }
    color[x] = static_cast<int>(std::find(available.begin(), available.end(), uint8_t{1}) -
                                available.begin());
  }
  int64_t shared = 0;
  for (int x : order) {
    int64_t bumped = 0;
    for (int y : graph[x]) bumped = std::max(bumped, offset[y] + buffers[y].size);
    if (color[x] != 0) offset[x] = AlignTo(bumped, buffers[x].alignment);
    shared = std::max(shared, offset[x] + buffers[x].size);
  }
  return shared;
}

}  // namespace

absl::StatusOr<TritonAllocation> AllocateLikeTriton(absl::Span<const TritonBuffer> buffers) {
  const int n = static_cast<int>(buffers.size());
  for (int i = 0; i < n; ++i) {
    const TritonBuffer& b = buffers[i];
    if (b.size <= 0 || b.size > kMaxTritonBufferBytes) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", i, ": size ", b.size,
                                                     " is not in (0, 2^40]"));
    }
    if (b.alignment <= 0 || (b.alignment & (b.alignment - 1)) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", i, ": alignment ", b.alignment, " is not a power of two"));
    }
    if (b.start > b.end) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", i, ": live interval [", b.start,
                                                     ", ", b.end, ") is reversed"));
    }
  }
  // computeOffsets: a stable sort by size, largest first (ties keep the input order, which
  // decides offsets), initial starts, then colouring rounds until nothing interferes.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return buffers[a].size > buffers[b].size; });
  std::vector<int64_t> offset = CalculateStarts(buffers, order);
  std::vector<std::vector<int>> graph(n);
  bool any = BuildInterferenceGraph(buffers, order, offset, graph);
  // Each round only raises offsets, so this reaches a fixed point; the bound guards against a
  // logic error turning into a hang. The colouring's vectors are reused across rounds.
  std::vector<int> color(n);
  std::vector<uint8_t> available(n);
  for (int round = 0; round <= n + 1; ++round) {
    const int64_t shared = Allocate(buffers, order, graph, offset, color, available);
    any = BuildInterferenceGraph(buffers, order, offset, graph);
    if (!any) {
      TritonAllocation result;
      result.offsets = std::move(offset);
      result.shared = shared;
      return result;
    }
  }
  return absl::InternalError("Triton allocator did not converge");
}

absl::StatusOr<PlacementResult> TritonPlacementPolicy::Place(
    absl::Span<const Block> blocks) const {
  std::vector<TritonBuffer> buffers;
  buffers.reserve(blocks.size());
  for (const Block& b : blocks) {
    if (b.start < 0 || b.end < b.start) {
      return absl::InvalidArgumentError(
          absl::StrCat("block live range [", b.start, ", ", b.end, "] is invalid"));
    }
    buffers.push_back(TritonBuffer{b.size, b.alignment, static_cast<uint64_t>(b.start),
                                   static_cast<uint64_t>(b.end) + 1});
  }
  auto alloc = AllocateLikeTriton(buffers);
  if (!alloc.ok()) return alloc.status();
  PlacementResult result;
  result.offsets = std::move(alloc->offsets);
  result.peak = alloc->shared;
  return result;
}

}  // namespace scratchsim::triton
