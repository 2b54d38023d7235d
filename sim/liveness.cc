#include "sim/liveness.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace scratchsim {

std::vector<LiveRange> ComputeLiveRanges(const CompiledGraph& graph) {
  const int num_loops = graph.graph.loops_size();
  const int num_buffers = static_cast<int>(graph.buffers.size());
  std::vector<LiveRange> ranges(num_buffers);
  std::vector<LiveRange> loop_ranges(num_loops);
  // Per buffer: the first op inside each loop that touches it, to spot loop-carried reads.
  struct FirstTouch {
    int loop;
    int op;
  };
  std::vector<std::vector<FirstTouch>> first_in_loop(num_buffers);

  for (int64_t position = 0; position < static_cast<int64_t>(graph.op_order.size()); ++position) {
    int op = graph.op_order[position];
    for (int loop : graph.op_loops[op]) {
      LiveRange& r = loop_ranges[loop];
      if (r.start < 0) r.start = position;
      r.end = position;
    }
    for (int b : graph.op_buffers[op]) {
      LiveRange& r = ranges[b];
      if (r.start < 0) r.start = position;
      r.end = position;
      for (int loop : graph.op_loops[op]) {
        auto& firsts = first_in_loop[b];
        if (std::none_of(firsts.begin(), firsts.end(), [&](const FirstTouch& f) { return f.loop == loop; })) {
          firsts.push_back({loop, op});
        }
      }
    }
  }

  for (int b = 0; b < num_buffers; ++b) {
    LiveRange& r = ranges[b];
    if (!r.used()) continue;
    const bool pipelined = graph.buffers[b].copies.has_value();
    // Extending for an outer loop can expose another; repeat until stable (depth is small).
    for (bool changed = true; changed;) {
      changed = false;
      for (const FirstTouch& first : first_in_loop[b]) {
        const LiveRange& loop = loop_ranges[first.loop];
        bool inside_only = r.start >= loop.start && r.end <= loop.end;
        bool carried = false;
        if (inside_only) {
          const auto& writes = graph.op_writes[first.op];
          carried = std::find(writes.begin(), writes.end(), b) == writes.end() &&
                    std::any_of(graph.op_order.begin() + loop.start, graph.op_order.begin() + loop.end + 1,
                                [&](int op) {
                                  const auto& w = graph.op_writes[op];
                                  return std::find(w.begin(), w.end(), b) != w.end();
                                });
        }
        // A pipelined buffer is live for its innermost loop: the first loop recorded.
        bool innermost = &first == &first_in_loop[b].front();
        if (!inside_only || carried || (pipelined && innermost)) {
          if (loop.start < r.start || loop.end > r.end) {
            r.start = std::min(r.start, loop.start);
            r.end = std::max(r.end, loop.end);
            changed = true;
          }
        }
      }
    }
  }
  return ranges;
}

}  // namespace scratchsim
