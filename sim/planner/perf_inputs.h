// The performance model's inputs for one configuration: what it derives from the graph once
// (per-operand traffic, the pipelined loop), evaluated per configuration with the engine's result.
#ifndef SCRATCHSIM_SIM_PLANNER_PERF_INPUTS_H_
#define SCRATCHSIM_SIM_PLANNER_PERF_INPUTS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/engine.h"
#include "sim/expr.h"
#include "sim/graph.h"
#include "sim/planner/perf_model.h"

namespace scratchsim {

// What the performance model derives from the graph once, beyond the expressions CompiledGraph
// holds: per-operand traffic without global_bytes, and the pipelined loop.
struct PerfExpressions {
  // Without global_bytes: each operand tile crosses global memory once per iteration of the
  // loops around its first writer (or first user).
  struct OperandTraffic {
    int buffer;
    std::vector<Expr> trips;
  };
  std::vector<OperandTraffic> operands;
  std::vector<Expr> stages;   // loop num_stages
  // The pipelined loop (the first with num_stages): its trip count, and the buffers that ops
  // of kind "async_copy" inside it write (one copy of each is a stage's load).
  std::optional<Expr> pipeline_trips;
  std::vector<int> stage_buffers;
};
absl::StatusOr<PerfExpressions> CompilePerfExpressions(const CompiledGraph& graph);


// Evaluates the model's inputs for one configuration the engine found fitting (`scratch` holds
// its buffer sizes); false when an expression fails or leaves its range (the configuration is
// then ranked last).
bool EvaluatePerfInputs(const CompiledGraph& graph, const PerfExpressions& perf, absl::Span<const int64_t> values,
                        const FitEngine::Scratch& scratch, const FitResult& fit, PerfInputs* in);

// The dtype the model rates compute in: graph.compute_dtype, else the widest operand tile's.
std::string DefaultComputeDtype(const CompiledGraph& graph);

// The dtype a plan rates compute in: `requested` (--compute-dtype), else DefaultComputeDtype.
std::string PlanComputeDtype(const CompiledGraph& graph, const std::string& requested);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_PERF_INPUTS_H_
