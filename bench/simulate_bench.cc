// Throughput of the core pipeline on synthetic graphs of 100 to 1,000,000 buffers, and of the
// placement policies alone; docs/performance.md records the numbers and the machine.
#include <cstdint>
#include <memory>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/placement.h"
#include "sim/simulator.h"

namespace scratchsim {
namespace {

// Ops read the buffers the previous few ops wrote, so each buffer lives over a handful of op
// positions and the live set stays bounded (and within H100's shared memory) however long the
// chain grows; sizes vary so placement has gaps to fill.
constexpr int kBuffersPerOp = 2;
constexpr int kReadWindow = 3;  // an op reads what the last kReadWindow ops wrote

KernelGraph ChainGraph(int64_t num_buffers) {
  std::mt19937_64 rng(num_buffers);
  std::uniform_int_distribution<int> extent(1, 32);
  KernelGraph graph;
  graph.set_name(absl::StrCat("chain_", num_buffers));
  Parameter* block = graph.add_parameters();
  block->set_name("BLOCK");
  block->set_default_value(16);
  const int64_t num_ops = (num_buffers + kBuffersPerOp - 1) / kBuffersPerOp;
  for (int64_t b = 0; b < num_buffers; ++b) {
    Buffer* buffer = graph.add_buffers();
    buffer->set_name(absl::StrCat("b", b));
    // BLOCK x (4..128) f32: 256 B to 8 KiB.
    buffer->add_shape("BLOCK");
    buffer->add_shape(absl::StrCat(4 * extent(rng)));
    buffer->set_dtype("f32");
    buffer->set_memory_space("smem");
  }
  for (int64_t o = 0; o < num_ops; ++o) {
    Op* op = graph.add_ops();
    op->set_name(absl::StrCat("op", o));
    for (int64_t w = o - kReadWindow; w < o; ++w) {
      if (w < 0) continue;
      for (int k = 0; k < kBuffersPerOp; ++k) {
        int64_t b = w * kBuffersPerOp + k;
        if (b < num_buffers) op->add_reads(absl::StrCat("b", b));
      }
    }
    for (int k = 0; k < kBuffersPerOp; ++k) {
      int64_t b = o * kBuffersPerOp + k;
      if (b < num_buffers) op->add_writes(absl::StrCat("b", b));
    }
  }
  graph.mutable_launch()->set_num_warps("4");
  graph.mutable_launch()->set_registers_per_thread("64");
  return graph;
}

// Loaded once; a model that fails to load is reported by every benchmark that needs it.
const absl::StatusOr<DeviceModel>& H100() {
  static const absl::StatusOr<DeviceModel>* device = new absl::StatusOr<DeviceModel>(
      LoadDevice(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/devices/h100.textproto")));
  return *device;
}

SimulateOptions BenchOptions() {
  SimulateOptions options;
  options.keep_placements = false;  // a million placements would time report building, not simulation
  return options;
}

bool SkipOnError(benchmark::State& state, const absl::Status& status) {
  if (status.ok()) return false;
  state.SkipWithError(std::string(status.message()).c_str());
  return true;
}

// 100 to 1,000,000 buffers, reported in ms with an n log n complexity fit.
void SizeSweep(benchmark::internal::Benchmark* b) {
  b->RangeMultiplier(10)->Range(100, 1000000)->Unit(benchmark::kMillisecond)->Complexity(benchmark::oNLogN);
}

// CompileGraph + Simulate, the whole path of `simulate graph.pbtxt` after parsing. The copy
// of the graph CompileGraph consumes is not timed: the CLI moves the parsed graph in.
void BM_CompileAndSimulate(benchmark::State& state) {
  const KernelGraph graph = ChainGraph(state.range(0));
  if (SkipOnError(state, H100().status())) return;
  const DeviceModel& device = *H100();
  for (auto _ : state) {
    state.PauseTiming();
    KernelGraph copy = graph;
    state.ResumeTiming();
    absl::StatusOr<CompiledGraph> compiled = CompileGraph(std::move(copy), "bench");
    if (SkipOnError(state, compiled.status())) return;
    absl::StatusOr<Report> report = Simulate(*compiled, device, compiled->defaults, BenchOptions());
    if (SkipOnError(state, report.status())) return;
    if (!report->fits()) {
      state.SkipWithError("synthetic graph unexpectedly overflows; the benchmark would time suggestions");
      return;
    }
    benchmark::DoNotOptimize(report->spaces(0).peak_bytes());
  }
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CompileAndSimulate)->Apply(SizeSweep);

// CompileGraph alone: validation, expression parsing, op ordering.
void BM_CompileGraph(benchmark::State& state) {
  const KernelGraph graph = ChainGraph(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    KernelGraph copy = graph;
    state.ResumeTiming();
    absl::StatusOr<CompiledGraph> compiled = CompileGraph(std::move(copy), "bench");
    if (SkipOnError(state, compiled.status())) return;
    benchmark::DoNotOptimize(compiled->op_order.data());
  }
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CompileGraph)->Apply(SizeSweep);

// Simulate alone on a graph compiled once: what the planner pays per configuration.
void BM_Simulate(benchmark::State& state) {
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(ChainGraph(state.range(0)), "bench");
  if (SkipOnError(state, compiled.status()) || SkipOnError(state, H100().status())) return;
  const DeviceModel& device = *H100();
  for (auto _ : state) {
    absl::StatusOr<Report> report = Simulate(*compiled, device, compiled->defaults, BenchOptions());
    if (SkipOnError(state, report.status())) return;
    benchmark::DoNotOptimize(report->spaces(0).peak_bytes());
  }
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Simulate)->Apply(SizeSweep);

// Blocks shaped like the chain graph's: short overlapping live ranges, mixed sizes and
// alignments.
std::vector<Block> ChainBlocks(int64_t n) {
  std::mt19937_64 rng(n);
  std::uniform_int_distribution<int64_t> size(1, 64);
  std::uniform_int_distribution<int64_t> span(0, 4);
  std::vector<Block> blocks(n);
  for (int64_t i = 0; i < n; ++i) {
    blocks[i].size = 128 * size(rng);
    blocks[i].alignment = (i % 4 == 0) ? 1024 : 16;
    blocks[i].start = i / kBuffersPerOp;
    blocks[i].end = blocks[i].start + span(rng);
  }
  return blocks;
}

void BM_Placement(benchmark::State& state, PlacementPolicyKind kind) {
  const std::vector<Block> blocks = ChainBlocks(state.range(0));
  std::unique_ptr<PlacementPolicy> policy = MakePlacementPolicy(kind);
  for (auto _ : state) {
    absl::StatusOr<PlacementResult> result = policy->Place(blocks);
    if (SkipOnError(state, result.status())) return;
    benchmark::DoNotOptimize(result->peak);
  }
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK_CAPTURE(BM_Placement, first_fit_decreasing, PlacementPolicyKind::kFirstFitDecreasing)->Apply(SizeSweep);
BENCHMARK_CAPTURE(BM_Placement, best_fit_decreasing, PlacementPolicyKind::kBestFitDecreasing)->Apply(SizeSweep);

}  // namespace
}  // namespace scratchsim

BENCHMARK_MAIN();
