#include "sim/planner/planner.h"
#include "sim/simulator.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/planner/planner_test_util.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;



// ---------------------------------------------------------------------------------------------
// The autotuning shortlist

// BM (a block dimension) 1..4, STAGES 1..3, X 1..1000 (three chunks of the sweep, so workers keep
// block shapes of their own): the time follows 10 x BM + STAGES, so every configuration of BM = 1
// is faster than any of BM = 2. %s adds fields.
constexpr char kShortlistGraph[] = R"pb(
  name: "shortlist"
  parameters { name: "BM" default_value: 1 min: 1 max: 4 block_dim: true }
  parameters { name: "STAGES" default_value: 1 min: 1 max: 3 }
  parameters { name: "X" default_value: 1 min: 1 max: 1000 }
  buffers { name: "a" shape: "64" shape: "64" dtype: "f16" memory_space: "smem" role: OPERAND }
  ops { name: "load" writes: "a" }
  ops { name: "use" reads: "a" }
  launch { num_warps: "4" grid: "132" }
  flops: "1000000000000 * (10 * BM + STAGES)"
  global_bytes: "1000"
  compute_dtype: "f16"
  %s
)pb";

// (BM, STAGES) of each configuration of a list.
std::vector<std::pair<int64_t, int64_t>> BlockAndStages(const std::vector<RankedConfig>& list) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const RankedConfig& c : list) out.emplace_back(c.values[0], c.values[1]);
  return out;
}

absl::StatusOr<PlanResult> PlanShortlistGraph(const std::string& fields, int threads) {
  return PlanDefaultSpace(CompileGraphText(absl::StrFormat(kShortlistGraph, fields)), /*top_k=*/4, threads);
}

TEST(ShortlistTest, HedgesWithTheFastestOfEachBlockShapeWithinTheRankingError) {
  // 100%: BM = 2's fastest (21 against the pick's 11) is within it, BM = 3's (31) is not.
  for (int threads : {1, 3}) {
    auto plan = PlanShortlistGraph(R"pb(ranking_error_permille: "1000")pb", threads);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->ranking_error_permille, 1000);
    using P = std::pair<int64_t, int64_t>;
    EXPECT_THAT(BlockAndStages(plan->top), ::testing::ElementsAre(P{1, 1}, P{1, 1}, P{1, 1}, P{1, 1}));
    EXPECT_THAT(BlockAndStages(plan->shortlist), ::testing::ElementsAre(P{1, 1}, P{2, 1}, P{1, 1}, P{1, 1}))
        << threads << " threads";
    ASSERT_EQ(plan->shortlist.size(), 4u);
    EXPECT_EQ(plan->shortlist[0].hedge, Hedge::kNone);
    EXPECT_EQ(plan->shortlist[1].hedge, Hedge::kBlockShape);
    EXPECT_EQ(plan->shortlist[2].hedge, Hedge::kNone);
    // The pick is the ranking's first; the rest of the ranking follows the hedges in its order.
    EXPECT_EQ(plan->shortlist[0].index, plan->top[0].index);
    EXPECT_EQ(plan->shortlist[2].index, plan->top[1].index);
    EXPECT_EQ(plan->shortlist[3].index, plan->top[2].index);
  }
}

TEST(ShortlistTest, AWiderRankingErrorHedgesMoreBlockShapesFastestFirst) {
  auto plan = PlanShortlistGraph(R"pb(ranking_error_permille: "4000")pb", 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  using P = std::pair<int64_t, int64_t>;
  EXPECT_THAT(BlockAndStages(plan->shortlist), ::testing::ElementsAre(P{1, 1}, P{2, 1}, P{3, 1}, P{4, 1}));
}

TEST(ShortlistTest, IsTheRankingWithoutARankingError) {
  auto plan = PlanShortlistGraph("", 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->ranking_error_permille, -1);
  EXPECT_EQ(BlockAndStages(plan->shortlist), BlockAndStages(plan->top));
  for (const RankedConfig& c : plan->shortlist) EXPECT_EQ(c.hedge, Hedge::kNone);
}

TEST(ShortlistTest, IsTheRankingWhenNoParameterIsABlockDimension) {
  std::string text = absl::StrFormat(kShortlistGraph, R"pb(ranking_error_permille: "1000")pb");
  text = absl::StrReplaceAll(text, {{" block_dim: true", ""}});
  CompiledGraph graph = CompileGraphText(text);
  auto plan = PlanDefaultSpace(graph, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(BlockAndStages(plan->shortlist), BlockAndStages(plan->top));
}

// BM (a block dimension) 1..2 and STAGES 1..2 on the H100: a block holds 90,000 bytes of shared
// memory a stage, so STAGES = 1 runs two blocks a core and STAGES = 2 one, which has a load more
// in flight; every block waits SYNC cycles, which the ranking lets co-resident blocks share and
// the shortlist's other reading charges every block whole.
constexpr char kOccupancyGraph[] = R"pb(
  name: "occupancy"
  parameters { name: "BM" default_value: 1 min: 1 max: 2 block_dim: true }
  parameters { name: "STAGES" default_value: 1 min: 1 max: 2 }
  parameters { name: "SYNC" default_value: 0 min: 0 max: 1000000000 problem_size: true }
  buffers { name: "a" size_bytes: "90000 * STAGES" memory_space: "smem" role: OPERAND }
  loops { name: "k" trip_count: "64" num_stages: "STAGES + 1" }
  ops { name: "load" writes: "a" loop: "k" }
  ops { name: "use" reads: "a" loop: "k" }
  launch { num_warps: "4" grid: "264" }
  flops: "1000000000 * BM"
  global_bytes: "100000000"
  sync_cycles: "SYNC"
  compute_dtype: "f16"
  ranking_error_permille: "1000"
)pb";

class OccupancyHedgeTest : public ::testing::TestWithParam<int> {
 protected:
  // The shortlist of `top_k` at SYNC = `sync` cycles a block, planned on GetParam() threads.
  std::vector<RankedConfig> Shortlist(int64_t sync, const std::string& graph_text = kOccupancyGraph, int top_k = 4) {
    const CompiledGraph graph = CompileGraphText(graph_text);
    auto device = LoadDevice("h100");
    EXPECT_TRUE(device.ok()) << device.status();
    const std::vector<std::string> sets = {absl::StrCat("SYNC=", sync)};
    auto axes = BuildParamSpace(graph, {}, sets);
    auto values = BindParameters(graph, sets);
    EXPECT_TRUE(axes.ok() && values.ok());
    PlanOptions options;
    options.top_k = top_k;
    options.threads = GetParam();
    auto plan = Plan(graph, *device, *std::move(axes), *values, options);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->shortlist : std::vector<RankedConfig>{};
  }
};

std::vector<Hedge> Reasons(const std::vector<RankedConfig>& list) {
  std::vector<Hedge> out;
  for (const RankedConfig& c : list) out.push_back(c.hedge);
  return out;
}

// 200,000 cycles a block: with the waits shared, STAGES = 1's two blocks a core rank first; where
// every block adds its own, STAGES = 2 is the pick, the ranking's second here.
TEST_P(OccupancyHedgeTest, TheRankingLetsCoResidentBlocksShareTheWaits) {
  const std::vector<RankedConfig> list = Shortlist(200000);
  using P = std::pair<int64_t, int64_t>;
  EXPECT_THAT(BlockAndStages(list), ::testing::ElementsAre(P{1, 1}, P{1, 2}, P{2, 2}, P{2, 1}));
  EXPECT_THAT(Reasons(list), ::testing::ElementsAre(Hedge::kNone, Hedge::kNone, Hedge::kBlockShape, Hedge::kNone));
  EXPECT_EQ(list[0].fit.blocks_per_core(), 2);
  EXPECT_LT(list[0].perf.time_s, list[0].perf.own_wait_time_s);
  EXPECT_LT(list[1].perf.own_wait_time_s, list[0].perf.own_wait_time_s);
}

// 20,000 cycles: STAGES = 1 is estimated 48 us behind where every block adds its waits, more than
// the 10 us of waits its blocks could fill: no twin follows.
TEST_P(OccupancyHedgeTest, IsLeftOutWhereTheFillableWaitsDoNotCoverItsEstimate) {
  for (Hedge reason : Reasons(Shortlist(20000))) EXPECT_NE(reason, Hedge::kMoreBlocksPerCore);
}

// Without waits there is nothing co-resident blocks could fill, and one reading.
TEST_P(OccupancyHedgeTest, IsLeftOutWithoutSyncWaits) {
  for (Hedge reason : Reasons(Shortlist(0))) {
    EXPECT_NE(reason, Hedge::kMoreBlocksPerCore);
    EXPECT_NE(reason, Hedge::kOwnSyncWaits);
  }
}

// 2,000,000 cycles: the ranking's first two are both block shapes at two blocks a core; the pick
// where every block adds its own waits follows them, then the other block shape's fastest so.
TEST_P(OccupancyHedgeTest, TheOwnWaitsPickFollowsTheRankingsFirstTwo) {
  const std::vector<RankedConfig> list = Shortlist(2000000);
  using P = std::pair<int64_t, int64_t>;
  EXPECT_THAT(BlockAndStages(list), ::testing::ElementsAre(P{1, 1}, P{2, 1}, P{1, 2}, P{2, 2}));
  EXPECT_THAT(Reasons(list), ::testing::ElementsAre(Hedge::kNone, Hedge::kNone, Hedge::kOwnSyncWaits,
                                                    Hedge::kBlockShape));
}

// BM 1..3 within a ranking error of 3 at 2,000,000 cycles: the ranking's first two hold BM = 1
// and 2 at two blocks a core, so the pick where every block adds its waits (BM = 1 at one block a
// core) brings as its twin the fastest unlisted configuration at more blocks a core once its
// fillable waits are filled, BM = 3's; each other block shape's fastest so follows.
TEST_P(OccupancyHedgeTest, TheOwnWaitsPickBringsATwinTheRankingLeavesOut) {
  const std::string graph = absl::StrReplaceAll(
      kOccupancyGraph, {{"min: 1 max: 2 block_dim", "min: 1 max: 3 block_dim"}, {"permille: \"1000\"", "permille: \"3000\""}});
  const std::vector<RankedConfig> list = Shortlist(2000000, graph, 6);
  using P = std::pair<int64_t, int64_t>;
  EXPECT_THAT(BlockAndStages(list), ::testing::ElementsAre(P{1, 1}, P{2, 1}, P{1, 2}, P{3, 1}, P{2, 2}, P{3, 2}));
  EXPECT_THAT(Reasons(list), ::testing::ElementsAre(Hedge::kNone, Hedge::kNone, Hedge::kOwnSyncWaits,
                                                    Hedge::kMoreBlocksPerCore, Hedge::kBlockShape, Hedge::kBlockShape));
}

INSTANTIATE_TEST_SUITE_P(Threads, OccupancyHedgeTest, ::testing::Values(1, 3));

TEST(ShortlistTest, ARankingErrorNamingATuningParameterIsRefused) {
  const absl::Status status =
      CompileGraphTextError(absl::StrFormat(kShortlistGraph, R"pb(ranking_error_permille: "100 * BM")pb"));
  EXPECT_THAT(status.message(), HasSubstr("ranking_error_permille"));
  EXPECT_THAT(status.message(), HasSubstr("'BM', which is not a problem_size parameter"));
}

TEST(ShortlistTest, ANegativeRankingErrorIsAnError) {
  auto plan = PlanShortlistGraph(R"pb(ranking_error_permille: "0 - 5")pb", 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("ranking_error_permille \"0 - 5\" is -5"));
}

// ---------------------------------------------------------------------------------------------
// Pruning

TEST(PlanTest, PrunesEachLimitAndCountsIt) {
  // a: BLOCK x 1 KiB of dynamic shared memory; threads NUM_WARPS x 32; registers 4 x BLOCK.
  CompiledGraph graph = CompileGraphText(R"pb(
    name: "prune"
    parameters { name: "BLOCK" default_value: 1 min: 1 max: 256 }
    parameters { name: "NUM_WARPS" default_value: 4 min: 1 max: 64 }
    buffers { name: "a" shape: "BLOCK" shape: "1024" dtype: "i8" memory_space: "smem" role: OPERAND }
    ops { name: "load" writes: "a" }
    ops { name: "use" reads: "a" }
    launch { num_warps: "NUM_WARPS" registers_per_thread: "4 * BLOCK" grid: "1000" }
    flops: "1000000"
    compute_dtype: "f16"
  )pb");
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  auto axes = BuildParamSpace(graph, {}, {});
  ASSERT_TRUE(axes.ok()) << axes.status();
  ASSERT_EQ(axes->size(), 2u);
  auto values = BindParameters(graph, {});
  ASSERT_TRUE(values.ok());
  PlanOptions options;
  options.top_k = 5;
  options.threads = 2;
  auto plan = Plan(graph, *device, *axes, *values, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->space_size, 256u * 64u);
  // Threads first: NUM_WARPS 33..64 (32 values x 256 blocks).
  ASSERT_GE(plan->pruned.size(), 2u);
  EXPECT_EQ(plan->pruned[0].limit, Limit::kThreads);
  EXPECT_EQ(plan->pruned[0].count, 32u * 256u);
  EXPECT_EQ(plan->pruned[0].required, 33 * 32);
  EXPECT_EQ(plan->pruned[0].available, 1024);
  // Every configuration with NUM_WARPS=33..64 is pruned by threads, and no BLOCK value alone.
  EXPECT_EQ(plan->pruned[0].whole_values.size(), 32u);
  EXPECT_EQ(plan->pruned[0].whole_values.front(), std::make_pair(1, int64_t{33}));
  // Shared memory: the H100 opt-in maximum is 227 KiB, so BLOCK 228..256 with NUM_WARPS <= 32.
  EXPECT_EQ(plan->pruned[1].limit, Limit::kSharedMemory);
  EXPECT_EQ(plan->pruned[1].count, 29u * 32u);
  EXPECT_EQ(plan->pruned[1].required, 228 * 1024);
  EXPECT_EQ(plan->pruned[1].available, 232448);
  // The rest that goes: spills (4 x BLOCK registers above the budget) before residency.
  uint64_t pruned = 0;
  for (const PrunedFamily& f : plan->pruned) pruned += f.count;
  EXPECT_EQ(pruned + plan->fitting, plan->space_size);
  bool spills = false;
  for (const PrunedFamily& f : plan->pruned) spills |= f.limit == Limit::kRegisterSpill;
  EXPECT_TRUE(spills);
  // Every ranked configuration fits, fastest first.
  ASSERT_EQ(plan->top.size(), 5u);
  for (size_t i = 0; i < plan->top.size(); ++i) {
    EXPECT_TRUE(plan->top[i].fit.fits);
    if (i > 0) EXPECT_LE(plan->top[i - 1].perf.time_s, plan->top[i].perf.time_s);
  }

  // --allow-spills keeps the spilling configurations.
  options.allow_spills = true;
  auto lenient = Plan(graph, *device, *axes, *values, options);
  ASSERT_TRUE(lenient.ok());
  EXPECT_GT(lenient->fitting, plan->fitting);
}




TEST(PlanTest, RecordCellsKeepsEveryConfigurationInEnumerationOrder) {
  // BLOCK x 64 KiB of shared memory: BLOCK 1..3 fit the H100's 227 KiB, 4 does not.
  CompiledGraph graph = CompileGraphText(R"pb(
    name: "cells"
    parameters { name: "BLOCK" default_value: 1 min: 1 max: 4 }
    parameters { name: "NUM_WARPS" default_value: 4 min: 4 max: 8 power_of_two: true }
    buffers { name: "a" shape: "BLOCK" shape: "65536" dtype: "i8" memory_space: "smem" role: OPERAND }
    ops { name: "load" writes: "a" }
    ops { name: "use" reads: "a" }
    launch { num_warps: "NUM_WARPS" grid: "1000" }
    flops: "1000000 * BLOCK"
    compute_dtype: "f16"
  )pb");
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  auto axes = BuildParamSpace(graph, {}, {});
  ASSERT_TRUE(axes.ok()) << axes.status();
  auto values = BindParameters(graph, {});
  ASSERT_TRUE(values.ok());
  PlanOptions options;
  options.top_k = 0;
  options.record_cells = true;
  options.threads = 2;
  auto plan = Plan(graph, *device, *axes, *values, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->cells.size(), 8u);  // BLOCK (4 values) by NUM_WARPS (4, 8), the last axis fastest
  for (size_t i = 0; i < 8; ++i) {
    const PlanCell& c = plan->cells[i];
    if (i < 6) {
      EXPECT_TRUE(c.fits) << i;
      EXPECT_TRUE(c.estimated) << i;
      EXPECT_GT(c.time_s, 0) << i;
    } else {
      EXPECT_FALSE(c.fits) << i;
      EXPECT_EQ(c.limit, Limit::kSharedMemory) << i;
      EXPECT_EQ(c.required, 4 * 65536) << i;
      EXPECT_EQ(c.available, 232448) << i;
    }
  }
  EXPECT_TRUE(plan->top.empty());
  // Off by default.
  options.record_cells = false;
  auto plain = Plan(graph, *device, *axes, *values, options);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->cells.empty());
}

// ---------------------------------------------------------------------------------------------
// Determinism

TEST(PlanTest, RankingIsDeterministicAcrossThreadCounts) {
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  auto graph = LoadGraph(ExampleGraphPath("gemm.pbtxt"));
  ASSERT_TRUE(graph.ok());
  auto compiled = CompileGraph(*graph, "gemm.pbtxt");
  ASSERT_TRUE(compiled.ok());
  std::vector<std::string> sets = {"DTYPE=1"};
  auto axes = BuildParamSpace(*compiled, {}, sets);
  ASSERT_TRUE(axes.ok());
  auto values = BindParameters(*compiled, sets);
  ASSERT_TRUE(values.ok());
  PlanOptions options;
  options.top_k = 50;
  options.compute_dtype = "f16";
  std::vector<PlanResult> plans;
  for (int threads : {1, 3, 8}) {
    options.threads = threads;
    auto plan = Plan(*compiled, *device, *axes, *values, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    plans.push_back(*std::move(plan));
  }
  for (size_t p = 1; p < plans.size(); ++p) {
    EXPECT_EQ(plans[p].fitting, plans[0].fitting);
    ASSERT_EQ(plans[p].top.size(), plans[0].top.size());
    for (size_t i = 0; i < plans[0].top.size(); ++i) {
      EXPECT_EQ(plans[p].top[i].index, plans[0].top[i].index);
      EXPECT_EQ(plans[p].top[i].values, plans[0].top[i].values);
      EXPECT_EQ(plans[p].top[i].perf.time_s, plans[0].top[i].perf.time_s);
    }
    ASSERT_EQ(plans[p].pruned.size(), plans[0].pruned.size());
    for (size_t i = 0; i < plans[0].pruned.size(); ++i) {
      EXPECT_EQ(plans[p].pruned[i].limit, plans[0].pruned[i].limit);
      EXPECT_EQ(plans[p].pruned[i].count, plans[0].pruned[i].count);
      EXPECT_EQ(plans[p].pruned[i].example_index, plans[0].pruned[i].example_index);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Split-K (gemm.pbtxt SPLIT_K)

// The SPLIT_K of the H200's top-ranked configuration of gemm.pbtxt at M x N x K, over the tiles
// gemm-timing compiles, their depths and the graph's splits.
int64_t TopSplitK(const std::string& dtype, int64_t m, int64_t n, int64_t k) {
  auto device = LoadDevice("h200");
  auto graph = LoadGraph(ExampleGraphPath("gemm.pbtxt"));
  EXPECT_TRUE(device.ok() && graph.ok());
  if (!device.ok() || !graph.ok()) return -1;
  auto compiled = CompileGraph(*graph, "gemm.pbtxt");
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return -1;
  const std::vector<std::string> sets = {dtype, absl::StrCat("M=", m), absl::StrCat("N=", n), absl::StrCat("K=", k)};
  auto axes = BuildParamSpace(*compiled, {"BLOCK_M=32,64,128", "BLOCK_N=32,64,128", "BLOCK_K=16,32", "NUM_STAGES=1..4",
                                          "NUM_WARPS=4,8"}, sets);
  auto values = BindParameters(*compiled, sets);
  EXPECT_TRUE(axes.ok() && values.ok());
  if (!axes.ok() || !values.ok()) return -1;
  PlanOptions options;
  options.top_k = 1;
  options.threads = 1;
  auto plan = Plan(*compiled, *device, *axes, *values, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok() || plan->top.empty()) return -1;
  for (size_t a = 0; a < plan->axes.size(); ++a) {
    if (plan->axes[a].name == "SPLIT_K") return plan->top[0].values[a];
  }
  ADD_FAILURE() << "SPLIT_K is not an axis of gemm.pbtxt's default space";
  return -1;
}

// 128 x 256 outputs make at most 32 tiles (of 32 x 32) for the 132 SMs, with 16384 K: split-K
// fills the SMs. 4096 x 4096 is 1024 tiles of 128 x 128, 7.8 waves without it: a split only adds
// the atomics and the memset.
TEST(PlanTest, GemmSplitsKWhereTheOutputTilesLeaveTheSmsIdle) {
  for (const std::string dtype : {"DTYPE=0", "DTYPE=1"}) {
    EXPECT_GT(TopSplitK(dtype, 128, 256, 16384), 1) << dtype;
    EXPECT_EQ(TopSplitK(dtype, 4096, 4096, 4096), 1) << dtype;
  }
}

TEST(PlanTest, SmemBytesExpressionIsCheckedAndRanks) {
  static constexpr char kGraph[] = R"pb(
    name: "smem"
    parameters { name: "BLOCK" default_value: 1 min: 1 max: 4 }
    buffers { name: "a" shape: "BLOCK" shape: "1024" dtype: "i8" memory_space: "smem" role: OPERAND }
    ops { name: "load" writes: "a" }
    ops { name: "use" reads: "a" }
    launch { num_warps: "4" grid: "132" }
    flops: "1000"
    global_bytes: "1000"
    compute_dtype: "f16"
    smem_bytes: "%s"
  )pb";
  // BLOCK 1 moves the most through the banks, so it ranks last.
  CompiledGraph graph = CompileGraphText(absl::StrFormat(kGraph, "1000000000 / BLOCK"));
  auto plan = PlanDefaultSpace(graph, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->top.size(), 4u);
  EXPECT_GT(plan->top[0].perf.smem_s, 0);
  EXPECT_GT(plan->top[3].perf.smem_s, plan->top[0].perf.smem_s);
  EXPECT_EQ(plan->top[3].values[0], 1);

  // A malformed expression is an error of the graph, whatever the command.
  EXPECT_THAT(CompileGraphTextError(absl::StrFormat(kGraph, "2 * NOPE")).message(), HasSubstr("test.pbtxt: smem_bytes: "));
}


TEST(PlanTest, EqualEstimatesPreferMoreBytesInFlightAndNewFieldsAreChecked) {
  static constexpr char kGraph[] = R"pb(
    name: "pipe"
    parameters { name: "STAGES" default_value: 2 min: 2 max: 4 }
    buffers { name: "a" shape: "64" shape: "64" dtype: "f16" memory_space: "smem" role: OPERAND copies: "STAGES" }
    loops { name: "k" trip_count: "4" num_stages: "STAGES" }
    ops { name: "load" writes: "a" loop: "k" kind: "async_copy" }
    ops { name: "use" reads: "a" loop: "k" kind: "mma" }
    launch { num_warps: "4" grid: "132" }
    flops: "1000000"
    global_bytes: "1000"
    compute_dtype: "f16"
    %s
  )pb";
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  CompiledGraph graph = CompileGraphText(absl::StrFormat(kGraph, ""));
  auto axes = BuildParamSpace(graph, {}, {});
  ASSERT_TRUE(axes.ok()) << axes.status();
  auto values = BindParameters(graph, {});
  ASSERT_TRUE(values.ok());
  PlanOptions options;
  options.top_k = 3;
  auto plan = Plan(graph, *device, *axes, *values, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->top.size(), 3u);
  // The same time for every depth (compute-bound, nothing exposed to speak of): the deepest
  // pipeline, with the most bytes in flight, ranks first.
  EXPECT_EQ(plan->top[0].values[0], 4);
  EXPECT_EQ(plan->top[2].values[0], 2);
  // One block per core: the grid (132) gives no core a second block to keep loads in flight.
  EXPECT_DOUBLE_EQ(plan->top[0].perf.inflight_bytes_per_core, 3 * 64 * 64 * 2);

  for (const char* field :
       {"peak_percent", "sync_cycles", "smem_round_trips", "wait_cycles", "issue_slots", "warp_stall_percent"}) {
    EXPECT_THAT(CompileGraphTextError(absl::StrFormat(kGraph, absl::StrCat(field, ": \"2 * NOPE\""))).message(),
                HasSubstr(absl::StrCat("test.pbtxt: ", field, ": ")));
  }
  EXPECT_THAT(CompileGraphTextError(absl::StrReplaceAll(absl::StrFormat(kGraph, ""), {{"trip_count: \"4\"", "trip_count: \"4 * NOPE\""}}))
                  .message(),
              HasSubstr("test.pbtxt: loop 'k' trip_count: "));
}




TEST(PlanTest, ConfigurationsWithoutAnEstimateAreCountedNamedAndRankLast) {
  CompiledGraph graph = CompileGraphText(absl::StrFormat(kBlockSweepGraph, R"x(wait_cycles: "100 * (BLOCK - 2)")x"));
  auto plan = PlanDefaultSpace(graph, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // BLOCK = 1 waits -100 cycles: out of range, so no estimate; it ranks last and a note says so.
  EXPECT_EQ(plan->unestimated, 1u);
  ASSERT_EQ(plan->top.size(), 4u);
  EXPECT_FALSE(plan->top[3].estimated);
  EXPECT_EQ(plan->top[3].values[0], 1);
  EXPECT_TRUE(plan->top[0].estimated);
  EXPECT_THAT(plan->notes, ::testing::Contains(HasSubstr("1 fitting configuration has no estimate")));

  // A negative issue-slot count is out of range the same way.
  CompiledGraph with_slots = CompileGraphText(absl::StrFormat(kBlockSweepGraph, R"x(issue_slots: "100 * (BLOCK - 2)")x"));
  plan = PlanDefaultSpace(with_slots, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->unestimated, 1u);
  EXPECT_FALSE(plan->top[3].estimated);
  EXPECT_EQ(plan->top[3].values[0], 1);

  // So is a stall share outside 0-99 percent, either way.
  CompiledGraph with_stalls =
      CompileGraphText(absl::StrFormat(kBlockSweepGraph, R"x(warp_stall_percent: "(BLOCK - 1) * 50 - 1")x"));
  plan = PlanDefaultSpace(with_stalls, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->unestimated, 2u);  // BLOCK 1 (-1%) and BLOCK 4 (149%)
  EXPECT_FALSE(plan->top[2].estimated);
  EXPECT_FALSE(plan->top[3].estimated);

}


TEST(PlanTest, ConfigurationsBreakingARequirementArePrunedAsInvalidNamingIt) {
  CompiledGraph graph = CompileGraphText(
      absl::StrFormat(kBlockSweepGraph, R"(requirements { expr: "BLOCK % 2 == 0" doc: "the kernel pairs rows" })"));
  auto plan = PlanDefaultSpace(graph, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fitting, 2u);
  ASSERT_EQ(plan->top.size(), 2u);
  for (const RankedConfig& config : plan->top) EXPECT_EQ(config.values[0] % 2, 0);
  ASSERT_EQ(plan->pruned.size(), 1u);
  const PrunedFamily& family = plan->pruned[0];
  EXPECT_EQ(family.limit, Limit::kInvalid);
  EXPECT_EQ(family.count, 2u);
  EXPECT_THAT(family.message, HasSubstr("requirements[0] \"BLOCK % 2 == 0\" does not hold (the kernel pairs rows)"));
  // Simulate refuses the same configuration with the same words.
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  auto odd = BindParameters(graph, {"BLOCK=3"});
  ASSERT_TRUE(odd.ok());
  SimulateOptions simulate_options;
  auto report = SimulateOnce(graph, *device, *odd, simulate_options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(), HasSubstr("the kernel pairs rows"));
}


TEST(PlanTest, L2ReuseFieldsAreChecked) {
  static constexpr char kGraph[] = R"pb(
    name: "reuse"
    parameters { name: "BLOCK" default_value: 64 min: 32 max: 128 power_of_two: true }
    buffers { name: "a" shape: "BLOCK" shape: "64" dtype: "f16" memory_space: "smem" role: OPERAND }
    ops { name: "load" writes: "a" }
    ops { name: "use" reads: "a" }
    launch { num_warps: "4" grid: "1024 / BLOCK" grid: "16" }
    flops: "1000000"
    global_bytes: "BLOCK * 4096"
    compute_dtype: "f16"
    %s
  )pb";
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  PlanOptions options;
  auto plan_of = [&](const std::string& fields) {
    CompiledGraph graph = CompileGraphText(absl::StrFormat(kGraph, fields));
    auto axes = BuildParamSpace(graph, {}, {});
    auto values = BindParameters(graph, {});
    EXPECT_TRUE(axes.ok() && values.ok());
    return Plan(graph, *device, *axes, *values, options);
  };
  auto ok = plan_of(R"(grid_row_bytes: "BLOCK * 2048" grid_col_bytes: "BLOCK * 2048" tile_group_rows: "8")");
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_FALSE(ok->top.empty());
  // With reuse DRAM carries less than every block's bytes.
  EXPECT_LT(ok->top[0].perf.dram_s * 3352.3e9, ok->top[0].perf.grid_blocks * ok->top[0].values[0] * 4096.0);
  auto partial = plan_of(R"(grid_row_bytes: "BLOCK * 2048")");
  ASSERT_FALSE(partial.ok());
  EXPECT_THAT(partial.status().message(), HasSubstr("go together"));
  EXPECT_THAT(CompileGraphTextError(absl::StrFormat(
                  kGraph, R"(grid_row_bytes: "BLOCK * 2048" grid_col_bytes: "2 * NOPE" tile_group_rows: "8")"))
                  .message(),
              HasSubstr("grid_col_bytes"));
}

}  // namespace
}  // namespace scratchsim
