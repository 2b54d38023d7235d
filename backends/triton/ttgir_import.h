// TTGIR -> KernelGraph: a parsed module and Triton's plan for it become the simulator's graph
// (one buffer per shared allocation, one op per interval endpoint), for the --ttgir front end.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_IMPORT_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_IMPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_parser.h"
#include "backends/triton/ttgir_source.h"
#include "proto/graph.pb.h"

namespace scratchsim::triton {

// The software pipeline's rings as the TTGIR shows them: buffers made empty by ttg.local_alloc
// and taken apart by ttg.memdesc_index, whose leading extent is the number of slots (the
// deepest ring of data sets the depth; barrier rings of that depth go with it).
struct PipelinedBuffers {
  int64_t depth = 0;             // slots per ring; 0 when the module pipelines nothing
  std::vector<bool> index;       // per plan buffer: a ring of `depth` slots
  std::string parameter;         // the graph parameter that sets the slots: NUM_STAGES on NVIDIA
  std::string slots;             // the slots as an expression of it
  int64_t default_value = 0;     // the parameter's value that gives `depth` slots
  std::string doc;
};
PipelinedBuffers FindPipelinedBuffers(const TtgirModule& module, const SharedMemoryPlan& plan);

// The graph of `module` placed as `plan` (PlanSharedMemory(module)) says: one buffer per
// planned allocation, in plan order (raw bytes, Triton's alignment), written at its interval's
// first op position and read at its last, so the simulator's liveness sees Triton's intervals;
// the kernel's doc names Triton's predicted total. Taking the plan keeps callers that need both
// (the front end) at one parse and one plan. The pipeline's rings are sized by a parameter
// (PipelinedBuffers) whose default is the module's depth, so suggestions can lower it; with
// `sources`, buffers and positions carry the kernel source's names and lines.
absl::StatusOr<KernelGraph> ImportTtgir(const TtgirModule& module, const SharedMemoryPlan& plan,
                                        const TtgirSourceMap* sources = nullptr);

// Parses and plans `text`, then imports it.
absl::StatusOr<KernelGraph> ImportTtgir(std::string_view text, std::string_view origin);
absl::StatusOr<KernelGraph> LoadTtgirFile(std::string_view path);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_IMPORT_H_
