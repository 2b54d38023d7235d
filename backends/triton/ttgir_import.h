// TTGIR -> KernelGraph: a parsed module and Triton's plan for it become the simulator's graph
// (one buffer per shared allocation, one op per interval endpoint), for the --ttgir front end.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_IMPORT_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_IMPORT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_parser.h"
#include "proto/graph.pb.h"

namespace scratchsim::triton {

// The graph of `module` placed as `plan` (PlanSharedMemory(module)) says: one buffer per
// planned allocation, in plan order (raw bytes, Triton's alignment), written at its interval's
// first op position and read at its last, so the simulator's liveness sees Triton's intervals;
// the kernel's doc names Triton's predicted total. Taking the plan keeps callers that need both
// (the front end) at one parse and one plan.
absl::StatusOr<KernelGraph> ImportTtgir(const TtgirModule& module, const SharedMemoryPlan& plan);

// Parses and plans `text`, then imports it.
absl::StatusOr<KernelGraph> ImportTtgir(std::string_view text, std::string_view origin);
absl::StatusOr<KernelGraph> LoadTtgirFile(std::string_view path);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_IMPORT_H_
