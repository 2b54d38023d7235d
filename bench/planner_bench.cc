// Throughput of the tile planner: configurations evaluated per second on the GEMM example
// (models/graphs/gemm.pbtxt) and on the Triton matmul of the H100 validation (every model term:
// L2 reuse per wave, bank traffic, sync cycles, latency) on H100; docs/planner.md has numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/engine.h"
#include "sim/planner/planner.h"
#include "sim/simulator.h"

namespace scratchsim {
namespace {

struct Fixture {
  DeviceModel device;
  CompiledGraph graph;
  std::vector<ParamAxis> axes;
  std::vector<int64_t> values;
};

Fixture* MakeFixture(const char* relative_path, const std::vector<std::string>& params,
                     const std::vector<std::string>& sets) {
  auto* f = new Fixture;
  f->device = *LoadDevice("h100");
  const std::string path = absl::StrCat(SCRATCHSIM_SOURCE_DIR, relative_path);
  f->graph = *CompileGraph(*LoadGraph(path), path);
  f->axes = *BuildParamSpace(f->graph, params, sets);
  f->values = *BindParameters(f->graph, sets);
  return f;
}

// The default space without split-K (SPLIT_K=1): the 9,600 configurations docs/planner.md times.
const Fixture& Gemm() {
  static const Fixture* fixture = MakeFixture("/models/graphs/gemm.pbtxt", {}, {"DTYPE=1", "SPLIT_K=1"});
  return *fixture;
}

// 6 x 6 x 5 x 8 x 5 = 7,200 configurations of the validated Triton matmul at 8192^3 f16.
const Fixture& TritonMatmul() {
  static const Fixture* fixture =
      MakeFixture("/models/graphs/triton_matmul.pbtxt",
                  {"BLOCK_M=16..512:pow2", "BLOCK_N=16..512:pow2", "BLOCK_K=16..256:pow2", "NUM_STAGES=1..8",
                   "NUM_WARPS=1..16:pow2"},
                  {"M=8192", "N=8192", "K=8192", "ELT=2"});
  return *fixture;
}

// Every configuration of the sweep, decoded once, so the loop times only the evaluation.
std::vector<std::vector<int64_t>> AllConfigs(const Fixture& f, size_t limit) {
  std::vector<std::vector<int64_t>> configs;
  uint64_t total = 1;
  for (const ParamAxis& a : f.axes) total *= a.values.size();
  for (uint64_t index = 0; index < total && configs.size() < limit; ++index) {
    std::vector<int64_t> values = f.values;
    uint64_t rest = index;
    for (int a = static_cast<int>(f.axes.size()) - 1; a >= 0; --a) {
      values[f.axes[a].slot] = f.axes[a].values[rest % f.axes[a].values.size()];
      rest /= f.axes[a].values.size();
    }
    configs.push_back(std::move(values));
  }
  return configs;
}

// The fit engine alone, one thread, as the planner calls it: the per-core figure of the
// acceptance criterion (the name is kept so the figures compare across versions).
void BM_FitEvaluatorGemm(benchmark::State& state) {
  const Fixture& f = Gemm();
  EngineOptions options;
  options.spills_fatal = true;
  auto engine = *FitEngine::Create(f.graph, f.device, options);
  const auto configs = AllConfigs(f, 1 << 16);
  FitEngine::Scratch scratch;
  FitResult fit;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.Evaluate(configs[i], scratch, &fit));
    benchmark::DoNotOptimize(fit.fits);
    if (++i == configs.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FitEvaluatorGemm);

// The full Simulate (engine + explanation, no suggestions) for comparison.
void BM_SimulateOnceGemm(benchmark::State& state) {
  const Fixture& f = Gemm();
  const auto configs = AllConfigs(f, 1 << 12);
  SimulateOptions options;
  options.suggest = false;
  options.keep_placements = false;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(SimulateOnce(f.graph, f.device, configs[i], options));
    if (++i == configs.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimulateOnceGemm);

// A whole sweep (enumeration, evaluation, ranking, top 10) with state.range(0) threads.
void RunPlanSweep(benchmark::State& state, const Fixture& f) {
  PlanOptions options;
  options.threads = static_cast<int>(state.range(0));
  options.compute_dtype = "f16";
  uint64_t configs = 0;
  for (auto _ : state) {
    auto plan = Plan(f.graph, f.device, f.axes, f.values, options);
    configs += plan->space_size;
    benchmark::DoNotOptimize(plan->top);
  }
  state.SetItemsProcessed(static_cast<int64_t>(configs));
}

// The GEMM example's default space: 9,600 configurations (1,600 break a requirement, 4,990 fit).
void BM_PlanGemm(benchmark::State& state) { RunPlanSweep(state, Gemm()); }
BENCHMARK(BM_PlanGemm)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same on the Triton matmul: what the wave-level reuse and the other terms cost per fitting
// configuration.
void BM_PlanTritonMatmul(benchmark::State& state) { RunPlanSweep(state, TritonMatmul()); }
BENCHMARK(BM_PlanTritonMatmul)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace scratchsim

BENCHMARK_MAIN();
