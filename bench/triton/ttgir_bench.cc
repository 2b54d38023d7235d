// Prediction time per Triton kernel (parse the .ttgir, derive buffers, place them like
// Triton) against Triton 3.6's own compile time for the same configuration, measured when the
// fixtures were made (tests/data/triton/expected.tsv). Results: docs/triton.md.
#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_import.h"
#include "backends/triton/ttgir_parser.h"
#include "backends/triton/ttgir_source.h"
#include "benchmark/benchmark.h"

namespace {

struct Fixture {
  std::string text;
  double compile_s = 0;
};

const std::vector<Fixture>& Fixtures() {
  static const std::vector<Fixture>* fixtures = [] {
    auto* out = new std::vector<Fixture>;
    std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/expected.tsv");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> f = absl::StrSplit(line, '\t');
      if (f.size() < 4) continue;
      std::ifstream t(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f[0] + ".ttgir");
      std::stringstream ss;
      ss << t.rdbuf();
      out->push_back({ss.str(), std::stod(f[3])});
    }
    return out;
  }();
  return *fixtures;
}

double MedianCompileSeconds() {
  std::vector<double> v;
  for (const Fixture& f : Fixtures()) v.push_back(f.compile_s);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One iteration predicts every fixture once; the counters give the time per kernel and the
// ratio of Triton's median compile time to it.
void BM_PredictAllFixtures(benchmark::State& state) {
  const auto& fixtures = Fixtures();
  if (fixtures.empty()) {
    state.SkipWithError("no fixtures: build the triton_fixtures target first");
    return;
  }
  for (auto _ : state) {
    for (const Fixture& f : fixtures) {
      auto plan = scratchsim::triton::PlanTtgir(f.text, "bench");
      benchmark::DoNotOptimize(plan);
    }
  }
  const double kernels = static_cast<double>(fixtures.size()) * state.iterations();
  state.counters["kernels"] = static_cast<double>(fixtures.size());
  state.counters["per_kernel_us"] =
      benchmark::Counter(kernels, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["triton_median_compile_s"] = MedianCompileSeconds();
}
BENCHMARK(BM_PredictAllFixtures)->Unit(benchmark::kMillisecond)->MinTime(2.0);
// A fixed amount of work, for instruction counts under callgrind (whose slowdown would
// otherwise change the iteration count):
//   valgrind --tool=callgrind ttgir_bench --benchmark_filter=fixed_iterations
BENCHMARK(BM_PredictAllFixtures)->Name("BM_PredictAllFixtures/fixed_iterations")->Iterations(3)
    ->Unit(benchmark::kMillisecond);

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Each fixture run kRounds times in a row (thread CPU time, the machine being shared), its
// median kept; the counters give the median, 10th and 90th percentile kernel and the ratio of
// Triton's median compile time to the median kernel.
template <typename Work>
void PerKernelDistribution(benchmark::State& state, Work work) {
  const auto& fixtures = Fixtures();
  if (fixtures.empty()) {
    state.SkipWithError("no fixtures");
    return;
  }
  constexpr int kRounds = 15;
  std::vector<double> per_kernel;
  for (auto _ : state) {
    per_kernel.clear();
    for (const Fixture& f : fixtures) {
      std::vector<double> rounds;
      for (int r = 0; r < kRounds; ++r) {
        const double t0 = ThreadCpuSeconds();
        work(f);
        rounds.push_back(ThreadCpuSeconds() - t0);
      }
      std::nth_element(rounds.begin(), rounds.begin() + kRounds / 2, rounds.end());
      per_kernel.push_back(rounds[kRounds / 2]);
    }
  }
  std::sort(per_kernel.begin(), per_kernel.end());
  auto at = [&](double q) { return per_kernel[static_cast<size_t>(q * (per_kernel.size() - 1))]; };
  state.counters["median_kernel_us"] = at(0.5) * 1e6;
  state.counters["p10_kernel_us"] = at(0.1) * 1e6;
  state.counters["p90_kernel_us"] = at(0.9) * 1e6;
  state.counters["max_kernel_us"] = per_kernel.back() * 1e6;
  state.counters["triton_median_over_median_kernel"] = MedianCompileSeconds() / at(0.5);
}

// The prediction: parse, plan and place (Triton's metadata.shared).
void BM_PredictPerKernelDistribution(benchmark::State& state) {
  PerKernelDistribution(state, [](const Fixture& f) {
    auto plan = scratchsim::triton::PlanTtgir(f.text, "bench");
    benchmark::DoNotOptimize(plan);
  });
}
BENCHMARK(BM_PredictPerKernelDistribution)->Unit(benchmark::kMillisecond)->Iterations(1);

// What `simulate --ttgir` derives from the text (LoadTtgirKernel less reading the file): the
// plan and the KernelGraph, from one parse.
void BM_FrontEndPerKernelDistribution(benchmark::State& state) {
  PerKernelDistribution(state, [](const Fixture& f) {
    auto module = scratchsim::triton::ParseTtgir(f.text, "bench");
    if (!module.ok()) return;
    auto plan = scratchsim::triton::PlanSharedMemory(*module);
    if (!plan.ok()) return;
    auto graph = scratchsim::triton::ImportTtgir(*module, *plan);
    benchmark::DoNotOptimize(plan);
    benchmark::DoNotOptimize(graph);
  });
}
BENCHMARK(BM_FrontEndPerKernelDistribution)->Unit(benchmark::kMillisecond)->Iterations(1);

// Parsing alone, to see where the time goes.
void BM_ParseAllFixtures(benchmark::State& state) {
  const auto& fixtures = Fixtures();
  for (auto _ : state) {
    for (const Fixture& f : fixtures) {
      auto m = scratchsim::triton::ParseTtgir(f.text, "bench");
      benchmark::DoNotOptimize(m);
    }
  }
  state.counters["per_kernel_us"] = benchmark::Counter(
      static_cast<double>(fixtures.size()) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseAllFixtures)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// Reading the source locations alone (what the front end adds for the report's source column).
void BM_SourceMapAllFixtures(benchmark::State& state) {
  const auto& fixtures = Fixtures();
  for (auto _ : state) {
    for (const Fixture& f : fixtures) {
      auto map = scratchsim::triton::TtgirSourceMap::Read(f.text);
      benchmark::DoNotOptimize(map);
    }
  }
  state.counters["per_kernel_us"] = benchmark::Counter(
      static_cast<double>(fixtures.size()) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SourceMapAllFixtures)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// Planning alone (buffers, liveness, placement) on parsed modules.
void BM_PlanAllFixtures(benchmark::State& state) {
  std::vector<scratchsim::triton::TtgirModule> modules;
  for (const Fixture& f : Fixtures()) {
    auto m = scratchsim::triton::ParseTtgir(f.text, "bench");
    if (m.ok()) modules.push_back(*std::move(m));
  }
  for (auto _ : state) {
    for (const auto& m : modules) {
      auto plan = scratchsim::triton::PlanSharedMemory(m);
      benchmark::DoNotOptimize(plan);
    }
  }
  state.counters["per_kernel_us"] = benchmark::Counter(
      static_cast<double>(modules.size()) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PlanAllFixtures)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// The largest fixture alone (warp-specialized persistent GEMM or attention IR).
void BM_PredictLargestFixture(benchmark::State& state) {
  const auto& fixtures = Fixtures();
  if (fixtures.empty()) {
    state.SkipWithError("no fixtures");
    return;
  }
  const Fixture* largest = &fixtures[0];
  for (const Fixture& f : fixtures)
    if (f.text.size() > largest->text.size()) largest = &f;
  for (auto _ : state) {
    auto plan = scratchsim::triton::PlanTtgir(largest->text, "bench");
    benchmark::DoNotOptimize(plan);
  }
  state.counters["bytes_of_ir"] = static_cast<double>(largest->text.size());
  state.counters["triton_compile_s"] = largest->compile_s;
}
BENCHMARK(BM_PredictLargestFixture)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
