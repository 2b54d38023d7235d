// Live ranges of buffers over the op order, and their expansion into placeable blocks
// (one per pipeline copy). Loops extend the range of buffers that stay live across iterations.
#ifndef SCRATCHSIM_SIM_LIVENESS_H_
#define SCRATCHSIM_SIM_LIVENESS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/graph.h"
#include "sim/placement.h"

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

// A placeable block and where it came from.
struct BufferBlock {
  Block block;
  int buffer = 0;
  int64_t copy = 0;
};

// Expands every used buffer into `copies` blocks with its byte size and alignment
// (`default_alignment(buffer)` when the graph gives none).
absl::StatusOr<std::vector<BufferBlock>> ExpandBlocks(
    const CompiledGraph& graph, absl::Span<const LiveRange> ranges, absl::Span<const int64_t> values,
    absl::Span<const int64_t> default_alignment);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_LIVENESS_H_
