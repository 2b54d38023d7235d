// Property tests of the planner: sweeps give the same result whatever the thread count and run
// after run, and a cancelled sweep stops with a consistent partial result (issue 17).
#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/limits.h"
#include "sim/planner/param_space.h"
#include "sim/planner/planner.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using namespace ::scratchsim::testing;

// A random family of kernels over three tile parameters: 9,000 to 45,000 configurations, so
// that several threads take chunks of the sweep.
std::string RandomFamily(std::mt19937_64& rng) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % n); };
  std::string text =
      "parameters { name: \"BM\" default_value: 64 min: 1 max: 60 }\n"
      "parameters { name: \"BN\" default_value: 64 min: 1 max: 30 }\n"
      "parameters { name: \"S\" default_value: 2 min: 1 max: 5 }\n"
      "parameters { name: \"W\" default_value: 4 min: 1 max: 5 }\n"
      "compute_dtype: \"f16\"\nflops: \"2 * BM * BN * 4096\"\nglobal_bytes: \"(BM + BN) * 8192\"\n";
  const int buffers = 1 + pick(6);
  for (int b = 0; b < buffers; ++b) {
    absl::StrAppend(&text, "buffers { name: \"b", b, "\" dtype: \"f16\" memory_space: \"smem\" shape: \"",
                    pick(2) ? "BM * 16" : "BN * 16", "\" shape: \"", 8 + pick(64), "\"",
                    pick(2) ? " copies: \"S\"" : "", " }\n");
    absl::StrAppend(&text, "ops { name: \"w", b, "\" writes: \"b", b, "\" }\nops { name: \"r", b, "\" reads: \"b", b,
                    "\" }\n");
  }
  absl::StrAppend(&text, "launch { num_warps: \"W * 4\" registers_per_thread: \"", 32 + pick(200), "\" grid: \"1024\" }\n");
  return text;
}

PlanResult PlanWith(const CompiledGraph& graph, int threads, const std::atomic<bool>* cancel = nullptr,
                    std::function<void(uint64_t, uint64_t)> progress = nullptr) {
  static const DeviceModel* device = new DeviceModel(ShippedDevice("h100"));
  auto axes = BuildParamSpace(graph, {}, {});
  EXPECT_TRUE(axes.ok()) << axes.status();
  auto values = BindParameters(graph, {});
  EXPECT_TRUE(values.ok());
  PlanOptions options;
  options.top_k = 8;
  options.threads = threads;
  options.cancel = cancel;
  options.progress = std::move(progress);
  auto plan = Plan(graph, *device, *axes, *values, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : PlanResult();
}

// Everything a plan reports, as text, for comparison.
std::string Summary(const PlanResult& plan) {
  std::string out = absl::StrCat("space ", plan.space_size, " evaluated ", plan.evaluated, " fitting ", plan.fitting, "\n");
  for (const RankedConfig& c : plan.top) absl::StrAppend(&out, "top ", c.index, " ", absl::StrFormat("%.17g", c.perf.time_s), "\n");
  for (const PrunedFamily& f : plan.pruned) {
    absl::StrAppend(&out, "pruned ", LimitName(f.limit), " ", f.count, " e.g. ", f.example_index, " ", f.required, " ",
                    f.available, " ", f.whole_values.size(), "\n");
  }
  return out;
}

TEST(PlanInvariantsTest, ResultsAreTheSameForEveryThreadCountAndRun) {
  std::mt19937_64 rng(20261126);
  for (int family = 0; family < 12; ++family) {
    const std::string text = RandomFamily(rng);
    const CompiledGraph graph = CompileGraphText(text);
    const std::string reference = Summary(PlanWith(graph, 1));
    for (int threads : {1, 2, 4}) EXPECT_EQ(Summary(PlanWith(graph, threads)), reference) << threads << "\n" << text;
  }
}

TEST(PlanInvariantsTest, ASweepCancelledBeforeItStartsEvaluatesNothing) {
  std::mt19937_64 rng(1);
  const CompiledGraph graph = CompileGraphText(RandomFamily(rng));
  std::atomic<bool> cancel{true};
  const PlanResult plan = PlanWith(graph, 2, &cancel);
  EXPECT_TRUE(plan.partial);
  EXPECT_EQ(plan.evaluated, 0u);
  EXPECT_EQ(plan.fitting, 0u);
  EXPECT_TRUE(plan.top.empty());
}

// Cancelled after the first chunk: what it reports covers the evaluated configurations exactly.
TEST(PlanInvariantsTest, ACancelledSweepReportsWhatItEvaluated) {
  std::mt19937_64 rng(2);
  const CompiledGraph graph = CompileGraphText(RandomFamily(rng));
  std::atomic<bool> cancel{false};
  const PlanResult plan = PlanWith(graph, 1, &cancel, [&cancel](uint64_t, uint64_t) { cancel = true; });
  EXPECT_TRUE(plan.partial);
  EXPECT_GT(plan.evaluated, 0u);
  EXPECT_LT(plan.evaluated, plan.space_size);
  uint64_t pruned = 0;
  for (const PrunedFamily& f : plan.pruned) {
    pruned += f.count;
    EXPECT_TRUE(f.whole_values.empty());
  }
  EXPECT_EQ(plan.fitting + pruned, plan.evaluated);
}

}  // namespace
}  // namespace scratchsim
