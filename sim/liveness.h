// Live ranges of buffers over the op order, and their expansion into placeable blocks
// (one per pipeline copy). Loops extend the range of buffers that stay live across iterations.
#ifndef SCRATCHSIM_SIM_LIVENESS_H_
#define SCRATCHSIM_SIM_LIVENESS_H_

#include <cstdint>
#include <vector>

#include "sim/graph.h"

namespace scratchsim {

struct LiveRange {
  int64_t start = -1;  // op position (index into CompiledGraph::op_order), inclusive
  int64_t end = -1;
  bool used() const { return start >= 0; }
};

// One range per buffer; parameter independent, so computed once per graph. A buffer stays
// live for a whole loop when it is pipelined there (has copies), used both inside and outside
// the loop, or read in the loop before it is written there (loop-carried).
std::vector<LiveRange> ComputeLiveRanges(const CompiledGraph& graph);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_LIVENESS_H_
