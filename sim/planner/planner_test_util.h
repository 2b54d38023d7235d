// Shared by the planner's tests and the plan command's (only *_test.cc files include it): a
// small graph family to sweep, the default sweep of a graph on the H100, and the matmul kernel
// families on the H200.
#ifndef SCRATCHSIM_SIM_PLANNER_PLANNER_TEST_UTIL_H_
#define SCRATCHSIM_SIM_PLANNER_PLANNER_TEST_UTIL_H_

#include <utility>

#include "absl/status/statusor.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/planner/param_space.h"
#include "sim/planner/planner.h"
#include "sim/test_util.h"

namespace scratchsim::testing {

// BLOCK = 1..4 blocks of a 64x64 f16 operand, 4 warps, one wave; %s adds fields.
inline constexpr char kBlockSweepGraph[] = R"pb(
  name: "block_sweep"
  parameters { name: "BLOCK" default_value: 2 min: 1 max: 4 }
  buffers { name: "a" shape: "64" shape: "64" dtype: "f16" memory_space: "smem" role: OPERAND }
  ops { name: "load" writes: "a" }
  ops { name: "use" reads: "a" }
  launch { num_warps: "4" grid: "132" }
  flops: "1000000 * BLOCK"
  global_bytes: "1000"
  compute_dtype: "f16"
  %s
)pb";

// Plans the graph's default parameter space on the H100, keeping the best `top_k` (on `threads`
// workers; 0: as many as the machine has).
inline absl::StatusOr<PlanResult> PlanDefaultSpace(const CompiledGraph& graph, int top_k, int threads = 0) {
  absl::StatusOr<DeviceModel> device = LoadDevice("h100");
  if (!device.ok()) return device.status();
  auto axes = BuildParamSpace(graph, {}, {});
  if (!axes.ok()) return axes.status();
  auto values = BindParameters(graph, {});
  if (!values.ok()) return values.status();
  PlanOptions options;
  options.top_k = top_k;
  options.threads = threads;
  return Plan(graph, *device, *std::move(axes), *values, options);
}

// The plain and the split-K Triton matmul (two kernel families of one problem) and the H200 they
// are planned on, loaded once for every test that uses them.
struct MatmulFamilies {
  DeviceModel device = ShippedDevice("h200");
  CompiledGraph plain = CompileExampleGraph("triton_matmul.pbtxt");
  CompiledGraph split = CompileExampleGraph("triton_matmul_splitk.pbtxt");
};
inline const MatmulFamilies& SharedMatmulFamilies() {
  static const MatmulFamilies* families = new MatmulFamilies();
  return *families;
}

}  // namespace scratchsim::testing

#endif  // SCRATCHSIM_SIM_PLANNER_PLANNER_TEST_UTIL_H_
