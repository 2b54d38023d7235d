#include "sim/planner.h"

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
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "sim/cli.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/occupancy.h"
#include "sim/perf_model.h"
#include "sim/plan_command.h"
#include "sim/simulator.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string GraphPath(const std::string& name) {
  return absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/graphs/", name);
}

CompiledGraph CompileText(const std::string& text) {
  KernelGraph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph));
  auto compiled = CompileGraph(graph, "test.pbtxt");
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *std::move(compiled);
}

// What CompileGraph says of a graph that must not compile.
absl::Status CompileError(const std::string& text) {
  KernelGraph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph));
  auto compiled = CompileGraph(graph, "test.pbtxt");
  EXPECT_FALSE(compiled.ok());
  return compiled.status();
}

// Plans the graph's default parameter space on the H100, keeping the best `top_k`.
absl::StatusOr<PlanResult> PlanDefaultSpace(const CompiledGraph& graph, int top_k) {
  auto device = LoadDevice("h100");
  if (!device.ok()) return device.status();
  auto axes = BuildParamSpace(graph, {}, {});
  if (!axes.ok()) return axes.status();
  auto values = BindParameters(graph, {});
  if (!values.ok()) return values.status();
  PlanOptions options;
  options.top_k = top_k;
  return Plan(graph, *device, *std::move(axes), *values, options);
}

int RunPlan(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  int code = RunPlanCommand(args, o, e);
  *out = o.str();
  *err = e.str();
  return code;
}

// ---------------------------------------------------------------------------------------------
// --param syntax

// One tunable tile and one problem dimension.
constexpr char kOneTileGraph[] = R"pb(
  parameters { name: "BLOCK_M" default_value: 64 }
  parameters { name: "M" default_value: 4096 problem_size: true }
  buffers { name: "a" shape: "BLOCK_M" dtype: "f16" memory_space: "smem" }
  ops { name: "use" writes: "a" }
)pb";

TEST(ParseParamSpecTest, AcceptsRangesPowersStepsAndLists) {
  CompiledGraph graph = CompileText(kOneTileGraph);
  auto pow2 = ParseParamSpec("BLOCK_M=16..256:pow2", graph);
  ASSERT_TRUE(pow2.ok()) << pow2.status();
  EXPECT_THAT(pow2->values, ::testing::ElementsAre(16, 32, 64, 128, 256));
  auto range = ParseParamSpec("BLOCK_M=1..4", graph);
  ASSERT_TRUE(range.ok());
  EXPECT_THAT(range->values, ::testing::ElementsAre(1, 2, 3, 4));
  auto step = ParseParamSpec("BLOCK_M=16..64:step=16", graph);
  ASSERT_TRUE(step.ok());
  EXPECT_THAT(step->values, ::testing::ElementsAre(16, 32, 48, 64));
  auto list = ParseParamSpec("BLOCK_M=32,96,64", graph);
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(list->values, ::testing::ElementsAre(32, 96, 64));
}

TEST(ParseParamSpecTest, RejectsBadSyntaxWithTheSpecInTheMessage) {
  CompiledGraph graph = CompileText(kOneTileGraph);
  struct Case {
    const char* spec;
    const char* problem;
  };
  for (const Case& c : std::vector<Case>{{"BLOCK_M", "missing NAME="},
                                         {"BLOCK_M=", "missing NAME="},
                                         {"=1..4", "missing NAME="},
                                         {"NOPE=1..4", "no parameter 'NOPE'"},
                                         {"BLOCK_M=a..4", "'a' is not an integer"},
                                         {"BLOCK_M=1..x", "'x' is not an integer"},
                                         {"BLOCK_M=8..4", "the range is empty"},
                                         {"BLOCK_M=5..7:pow2", "no power of two"},
                                         {"BLOCK_M=1..8:cube", "unknown modifier 'cube'"},
                                         {"BLOCK_M=1..8:step=0", "not a positive integer"},
                                         {"BLOCK_M=1,,2", "'' is not an integer"},
                                         {"BLOCK_M=2,2", "a value repeats"},
                                         {"M=1..8", "is a problem size"}}) {
    auto axis = ParseParamSpec(c.spec, graph);
    ASSERT_FALSE(axis.ok()) << c.spec;
    EXPECT_EQ(axis.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(axis.status().message(), HasSubstr(absl::StrCat("'", c.spec, "'"))) << c.spec;
    EXPECT_THAT(axis.status().message(), HasSubstr(c.problem)) << c.spec;
  }
}

TEST(PlanCommandTest, BadParamIsExitTwoWithAClearMessage) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--param", "BLOCK_M=16..x:pow2"}, &out,
                    &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--param 'BLOCK_M=16..x:pow2': 'x' is not an integer"));
  EXPECT_EQ(out, "");
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--param", "M=1..4"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("is a problem size"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--set", "BLOCK_M=64", "--param",
                     "BLOCK_M=16..64:pow2"},
                    &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("already fixed"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--format", "xml"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--format"));
  EXPECT_EQ(RunPlan({"--graph", GraphPath("gemm.pbtxt")}, &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--device is required"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--top", "-1"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--top"));
}

TEST(PlanCommandTest, SimulateDispatchesPlan) {
  std::ostringstream o, e;
  int code = RunSimulateCommand({"plan", "--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--set", "DTYPE=1",
                                 "--compute-dtype", "f16", "--top", "3", "--format", "json"},
                                o, e);
  EXPECT_EQ(code, kExitFits) << e.str();
  EXPECT_THAT(o.str(), HasSubstr("\"configs\": ["));
  EXPECT_THAT(o.str(), HasSubstr("\"params\": {\"BLOCK_M\": "));
  EXPECT_THAT(o.str(), HasSubstr("\"terms_us\": {\"math\": "));
  EXPECT_THAT(o.str(), HasSubstr("\"unfilled_waits\": "));
}

// ---------------------------------------------------------------------------------------------
// Pruning

TEST(PlanTest, PrunesEachLimitAndCountsIt) {
  // a: BLOCK x 1 KiB of dynamic shared memory; threads NUM_WARPS x 32; registers 4 x BLOCK.
  CompiledGraph graph = CompileText(R"pb(
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

TEST(PlanTest, TpuVmemIsPrunedAgainstTheScopedLimit) {
  auto device = LoadDevice("tpu_v7x");
  ASSERT_TRUE(device.ok());
  auto graph = LoadKernelGraph(GraphPath("tpu_matmul_big.pbtxt"), *device);
  if (graph.status().code() == absl::StatusCode::kUnimplemented) GTEST_SKIP() << "built without backends/tpu";
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto compiled = CompileGraph(*graph, "tpu_matmul_big.pbtxt");
  ASSERT_TRUE(compiled.ok());
  auto axes = BuildParamSpace(*compiled, {}, {});
  ASSERT_TRUE(axes.ok());
  auto values = BindParameters(*compiled, {});
  ASSERT_TRUE(values.ok());
  auto plan = Plan(*compiled, *device, *axes, *values, PlanOptions());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->pruned.empty());
  EXPECT_EQ(plan->pruned[0].limit, Limit::kVmemScoped);
  EXPECT_GT(plan->fitting, 0u);
}

// ---------------------------------------------------------------------------------------------
// Determinism

TEST(PlanTest, RankingIsDeterministicAcrossThreadCounts) {
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok());
  auto graph = LoadGraph(GraphPath("gemm.pbtxt"));
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
  // The command's output is byte-identical from run to run and across --threads.
  std::string a, b, err;
  const std::vector<std::string> args = {"--device", "h100", "--graph", GraphPath("gemm.pbtxt"), "--set", "DTYPE=1",
                                         "--compute-dtype", "f16", "--top", "20"};
  std::vector<std::string> one = args, four = args;
  one.insert(one.end(), {"--threads", "1"});
  four.insert(four.end(), {"--threads", "4"});
  ASSERT_EQ(RunPlan(one, &a, &err), kExitFits) << err;
  ASSERT_EQ(RunPlan(four, &b, &err), kExitFits) << err;
  EXPECT_EQ(a, b);
}

// ---------------------------------------------------------------------------------------------
// Agreement with Simulate

struct Pair {
  std::string graph;
  std::string device;
};

int64_t RandomValue(const Parameter& p, std::mt19937_64& rng) {
  if (p.max() > 0 && !p.problem_size()) {
    if (p.power_of_two()) {
      std::vector<int64_t> options;
      for (int64_t v = 1; v <= p.max(); v <<= 1) {
        if (v >= p.min()) options.push_back(v);
      }
      return options[rng() % options.size()];
    }
    return p.min() + static_cast<int64_t>(rng() % (p.max() - p.min() + 1));
  }
  // Problem sizes and unranged parameters: near the default, sometimes off a tile multiple.
  const int64_t d = std::max<int64_t>(p.default_value(), 1);
  switch (rng() % 4) {
    case 0: return std::max<int64_t>(d / 2, 1);
    case 1: return d * 2;
    case 2: return d + 1;
    default: return d;
  }
}

TEST(FitEvaluatorTest, AgreesWithSimulateOnRandomConfigurationsOfEveryExampleGraph) {
  const std::vector<std::string> gpus = {"h100", "a100", "b200", "rtx5090", "mi300x", "mi355x", "t4"};
  const std::vector<std::string> tpus = {"tpu_v5e", "tpu_v6e", "tpu_v7x"};
  std::mt19937_64 rng(20261125);
  int graphs = 0, compared = 0, mismatches = 0, requirement_rejects = 0;
  for (const auto& entry : std::filesystem::directory_iterator(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/graphs"))) {
    if (entry.path().extension() != ".pbtxt") continue;
    const std::string name = entry.path().filename().string();
    const bool tpu = name.rfind("tpu_", 0) == 0;
    ++graphs;
    for (const std::string& device_name : tpu ? tpus : gpus) {
      auto device = LoadDevice(device_name);
      ASSERT_TRUE(device.ok()) << device.status();
      auto graph = LoadKernelGraph(entry.path().string(), *device);
      if (graph.status().code() == absl::StatusCode::kUnimplemented) continue;  // built without backends/tpu
      ASSERT_TRUE(graph.ok()) << name << ": " << graph.status();
      auto compiled = CompileGraph(*graph, name);
      ASSERT_TRUE(compiled.ok()) << name << ": " << compiled.status();
      auto evaluator = FitEvaluator::Create(*compiled, *device, PlacementPolicyKind::kFirstFitDecreasing, false);
      auto best_fit = FitEvaluator::Create(*compiled, *device, PlacementPolicyKind::kBestFitDecreasing, false);
      auto defaults = BindParameters(*compiled, {});
      ASSERT_TRUE(defaults.ok());
      if (!evaluator.ok()) {
        // Only a space the device lacks; Simulate refuses it too.
        SimulateOptions options;
        options.suggest = false;
        EXPECT_FALSE(SimulateOnce(*compiled, *device, *defaults, options).ok()) << name << " on " << device_name;
        continue;
      }
      FitEvaluator::Scratch scratch;
      for (int trial = 0; trial < 150; ++trial) {
        std::vector<int64_t> values = *defaults;
        // Draw configurations that are kernels (the graph's requirements hold), except every
        // tenth trial, which takes the first draw as it comes.
        for (int draw = 0; draw < 200; ++draw) {
          for (const Parameter& p : compiled->graph.parameters()) {
            values[compiled->symbols.Find(p.name())] = RandomValue(p, rng);
          }
          std::vector<int64_t> bound = values;
          BindDeviceSymbols(*compiled, *device, absl::MakeSpan(bound));
          if (trial % 10 == 9 || FirstBrokenRequirement(*compiled, bound) < 0) break;
        }
        const bool use_best_fit = trial % 5 == 4;
        SimulateOptions options;
        options.suggest = false;
        options.keep_placements = false;
        options.policy = use_best_fit ? PlacementPolicyKind::kBestFitDecreasing : PlacementPolicyKind::kFirstFitDecreasing;
        auto report = SimulateOnce(*compiled, *device, values, options);
        FitResult fit;
        absl::Status status = (use_best_fit ? *best_fit : *evaluator).Evaluate(values, scratch, &fit);
        ++compared;
        const std::string where = absl::StrCat(name, " on ", device_name, " trial ", trial);
        if (status.ok() && fit.broken_requirement >= 0) {
          // Not a kernel: the planner prunes it as invalid, Simulate refuses it naming the requirement.
          EXPECT_EQ(fit.limit, Limit::kInvalid) << where;
          EXPECT_FALSE(fit.fits) << where;
          ASSERT_FALSE(report.ok()) << where;
          EXPECT_THAT(report.status().message(), HasSubstr(absl::StrCat("requirements[", fit.broken_requirement, "]")))
              << where;
          ++requirement_rejects;
          continue;
        }
        ASSERT_EQ(report.ok(), status.ok()) << where << ": simulate " << report.status() << " planner " << status;
        if (!report.ok()) continue;
        bool same = fit.simulate_fits == report->fits();
        for (const SpaceReport& space : report->spaces()) {
          int index = -1;
          for (int s = 0; s < device->memory_spaces_size(); ++s) {
            if (device->memory_spaces(s).name() == space.space()) index = s;
          }
          ASSERT_GE(index, 0);
          same &= fit.peak_bytes[index] == space.peak_bytes();
          EXPECT_EQ(fit.peak_bytes[index], space.peak_bytes()) << where << " space " << space.space();
        }
        EXPECT_EQ(fit.has_occupancy, report->has_occupancy()) << where;
        if (report->has_occupancy()) {
          EXPECT_EQ(fit.blocks_per_core, report->occupancy().blocks_per_core()) << where;
          same &= fit.blocks_per_core == report->occupancy().blocks_per_core();
          if (report->occupancy().blocks_per_core() > 0) {
            EXPECT_EQ(kLimitWarps == report->occupancy().limiting_factor(), fit.occupancy_factor == 0) << where;
          }
        }
        if (report->has_registers()) {
          EXPECT_EQ(fit.spill_bytes_per_thread, report->registers().spill_bytes_per_thread()) << where;
          EXPECT_EQ(fit.register_budget, report->registers().budget_per_thread()) << where;
        }
        if (report->has_threads()) EXPECT_EQ(fit.threads, report->threads().required_threads()) << where;
        EXPECT_EQ(fit.simulate_fits, report->fits()) << where;
        if (!same) ++mismatches;
      }
    }
  }
  EXPECT_GE(graphs, 9);
  EXPECT_GT(compared, 1000);
  // gemm.pbtxt has requirements; the undrawn tenth trials break some of them.
  EXPECT_GT(requirement_rejects, 0);
  EXPECT_EQ(mismatches, 0);
}

TEST(FitEvaluatorTest, OccupancyAgreesWithComputeOccupancy) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "a" shape: "64" dtype: "f16" memory_space: "smem" }
    ops { name: "use" writes: "a" }
  )pb");
  std::mt19937_64 rng(7);
  int compared = 0;
  for (const std::string& name : {"h100", "a100", "b200", "rtx5090", "mi300x", "mi355x", "t4", "v100", "l40s"}) {
    auto device = LoadDevice(name);
    ASSERT_TRUE(device.ok());
    auto evaluator = FitEvaluator::Create(graph, *device, PlacementPolicyKind::kFirstFitDecreasing);
    ASSERT_TRUE(evaluator.ok());
    const int warp = device->limits().warp_size();
    for (int i = 0; i < 20000; ++i) {
      OccupancyInput input;
      input.threads_per_block = warp * (1 + static_cast<int64_t>(rng() % (device->limits().max_threads_per_block() / warp)));
      input.registers_per_thread = static_cast<int64_t>(rng() % 256);
      input.static_shared_bytes = rng() % 3 == 0 ? static_cast<int64_t>(rng() % 49152) : 0;
      input.dynamic_shared_bytes = static_cast<int64_t>(rng() % 262144);
      auto expected = ComputeOccupancy(*device, input);
      int32_t blocks = -1;
      int8_t factor = -1;
      bool ok = evaluator->Occupancy(input.threads_per_block, input.registers_per_thread, input.static_shared_bytes,
                                     input.dynamic_shared_bytes, &blocks, &factor);
      ASSERT_EQ(ok, expected.ok()) << name << " " << expected.status();
      if (!ok) continue;
      ++compared;
      ASSERT_EQ(blocks, expected->blocks_per_core()) << name << " threads " << input.threads_per_block << " regs "
                                                     << input.registers_per_thread << " smem "
                                                     << input.dynamic_shared_bytes;
      const char* names[] = {kLimitWarps, kLimitRegisters, kLimitSharedMemory, kLimitBlocks};
      ASSERT_GE(factor, 0);
      EXPECT_EQ(names[factor], expected->limiting_factor()) << name;
    }
  }
  EXPECT_GT(compared, 100000);
}

// ---------------------------------------------------------------------------------------------
// Performance model

// A device whose figures check by hand: 10 cores of 4 warp schedulers, 1000 GB/s (1e12 B/s),
// 10 bf16 TFLOP/s (1e12 flop/s per core). Tests add the clock, banks and latencies they need.
DeviceModel ToyDevice() {
  DeviceModel device;
  device.set_name("toy");
  device.mutable_limits()->set_num_cores(10);
  device.mutable_limits()->set_register_sub_partitions(4);
  device.mutable_performance()->set_memory_bandwidth_gbps(1000);
  PeakThroughput* peak = device.mutable_performance()->add_peak();
  peak->set_dtype("bf16");
  peak->set_tflops(10);
  return device;
}

TEST(PerfModelTest, WaveQuantizationAndOverlap) {
  DeviceModel device = ToyDevice();
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  PerfInputs in;
  in.flops_per_block = 1e9;  // 1 ms per block on one core
  in.bytes_per_block = 1e6;  // 1 us per block at the chip's bandwidth
  in.grid_blocks = 25;       // 3 waves of 10 at 1 block per core
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 1;
  PerfEstimate e = model->Estimate(in);
  EXPECT_EQ(e.waves, 3);
  EXPECT_DOUBLE_EQ(e.wave_efficiency, 25.0 / 30.0);
  EXPECT_DOUBLE_EQ(e.compute_s, 3e-3);
  EXPECT_DOUBLE_EQ(e.memory_s, 25e-6);
  EXPECT_EQ(e.loads_in_flight, 0);
  EXPECT_DOUBLE_EQ(e.time_s, 3e-3 + 25e-6);  // nothing in flight: serial
  EXPECT_TRUE(e.compute_bound);
  in.stages = 3;  // two loads in flight hide two thirds of the memory time
  e = model->Estimate(in);
  EXPECT_EQ(e.loads_in_flight, 2);
  EXPECT_DOUBLE_EQ(e.time_s, 3e-3 + 25e-6 / 3);
  in.warps_per_block = 1;  // one warp on four schedulers
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.issue_efficiency, 0.25);
  EXPECT_DOUBLE_EQ(e.compute_s, 12e-3);

  EXPECT_FALSE(PerfModel::Create(device, "f8e4m3", true).ok());
  EXPECT_THAT(PerfModel::Create(device, "f8e4m3", true).status().message(), HasSubstr("no peak for compute dtype"));
  EXPECT_TRUE(PerfModel::Create(device, "f8e4m3", false).ok());
}

TEST(PerfModelTest, SharedMemoryBanksOverlapTheMathAndQuantize) {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_smem_bytes_per_clk(100);       // 1e11 B/s per core
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->smem_bandwidth_per_core(), 1e11);
  PerfInputs in;
  in.flops_per_block = 1e9;        // 1 ms per block on one core
  in.bytes_per_block = 1e6;
  in.smem_bytes_per_block = 2e8;   // 2 ms per block in the banks of one core
  in.grid_blocks = 25;             // 3 waves of 10
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 1;
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 3e-3);
  EXPECT_DOUBLE_EQ(e.smem_s, 6e-3);
  // The tensor pipe and the banks run concurrently: the longer one is the on-chip time.
  EXPECT_DOUBLE_EQ(e.core_s, 6e-3);
  EXPECT_DOUBLE_EQ(e.time_s, 6e-3 + 25e-6);
  EXPECT_TRUE(e.compute_bound);
  EXPECT_TRUE(e.smem_bound);
  // Sync cycles add to it, per block and wave: 3 waves x 1e6 cycles at 1 GHz.
  in.sync_cycles_per_block = 1e6;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.sync_s, 3e-3);
  EXPECT_DOUBLE_EQ(e.core_s, 9e-3);
  in.sync_cycles_per_block = 0;
  // An instruction reaching half the peak doubles the math time.
  in.peak_fraction = 0.5;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 6e-3);
  EXPECT_FALSE(e.smem_bound);
  in.peak_fraction = 1;
  // Without the graph's smem_bytes the term is absent.
  in.smem_bytes_per_block = -1;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.smem_s, 0);
  EXPECT_FALSE(e.smem_bound);

  // A bandwidth without a clock, or a negative one, is bad input naming the field.
  device.mutable_performance()->set_clock_mhz(0);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("smem_bytes_per_clk"));
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_smem_bytes_per_clk(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("smem_bytes_per_clk"));
}

TEST(PlanTest, SmemBytesExpressionIsCheckedAndRanks) {
  const char* kGraph = R"pb(
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
  CompiledGraph graph = CompileText(absl::StrFormat(kGraph, "1000000000 / BLOCK"));
  auto plan = PlanDefaultSpace(graph, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->top.size(), 4u);
  EXPECT_GT(plan->top[0].perf.smem_s, 0);
  EXPECT_GT(plan->top[3].perf.smem_s, plan->top[0].perf.smem_s);
  EXPECT_EQ(plan->top[3].values[0], 1);

  // A malformed expression is an error of the graph, whatever the command.
  EXPECT_THAT(CompileError(absl::StrFormat(kGraph, "2 * NOPE")).message(), HasSubstr("test.pbtxt: smem_bytes: "));
}

TEST(PlanTest, EqualEstimatesPreferMoreBytesInFlightAndNewFieldsAreChecked) {
  const char* kGraph = R"pb(
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
  CompiledGraph graph = CompileText(absl::StrFormat(kGraph, ""));
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
  EXPECT_DOUBLE_EQ(plan->top[0].perf.inflight_bytes_per_core, 3 * 64 * 64 * 2 * plan->top[0].fit.blocks_per_core);

  for (const char* field :
       {"peak_percent", "sync_cycles", "smem_round_trips", "wait_cycles", "issue_slots", "warp_stall_percent"}) {
    EXPECT_THAT(CompileError(absl::StrFormat(kGraph, absl::StrCat(field, ": \"2 * NOPE\""))).message(),
                HasSubstr(absl::StrCat("test.pbtxt: ", field, ": ")));
  }
  EXPECT_THAT(CompileError(absl::StrReplaceAll(absl::StrFormat(kGraph, ""), {{"trip_count: \"4\"", "trip_count: \"4 * NOPE\""}}))
                  .message(),
              HasSubstr("test.pbtxt: loop 'k' trip_count: "));
}

TEST(PerfModelTest, CoResidentBlocksFillWaitsAndATailRoundCostsLess) {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);            // 1 cycle = 1 ns
  device.mutable_performance()->set_smem_bytes_per_clk(100);    // 1e11 B/s per core
  device.mutable_performance()->set_dram_latency_ns(1000);
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  PerfInputs in;
  in.flops_per_block = 1e6;        // 1 us of math per block
  in.bytes_per_block = 1;
  in.grid_blocks = 20;             // 2 blocks on every core
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 2;
  in.wait_cycles_per_block = 500;  // 0.5 us of barriers and cp.async waits
  // Alone, each block pays its waits: 2 x (1 + 0.5) us.
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 3e-6);
  // Together, the other block's math fills them: 2 x 1 + 0.5 us.
  in.blocks_per_core = 2;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6);
  EXPECT_DOUBLE_EQ(e.wait_s, 0.5e-6);
  // Sync cycles are not filled: every block adds them.
  in.sync_cycles_per_block = 100;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.7e-6);
  EXPECT_DOUBLE_EQ(e.sync_s, 0.2e-6);
  in.sync_cycles_per_block = 0;
  // Three blocks per core at two per round: a full round and a tail of one block.
  in.grid_blocks = 30;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6 + 1.5e-6);
  in.grid_blocks = 20;
  // Shared-memory round trips: each warp waits the ld.shared latency; the other warps on its
  // scheduler issue meanwhile. Alone (one warp per scheduler), a block pays them after its math.
  device.mutable_performance()->set_smem_latency_ns(25);
  model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  in.smem_round_trips = 10;  // 0.25 us per warp
  in.blocks_per_core = 1;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.wait_s, 2 * (0.5e-6 + 0.25e-6));
  EXPECT_DOUBLE_EQ(e.core_s, 2 * (1e-6 + 0.75e-6));
  // Two blocks, two warps per scheduler: a warp's 1 us of issue plus 0.25 us of round trips
  // fits in the round's 2 us of math; only the block-wide waits remain.
  in.blocks_per_core = 2;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.wait_s, 0.5e-6);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6);
  // 1.25 us of round trips: the chain of 2.25 us outlasts the round's math by 0.25 us.
  in.smem_round_trips = 50;
  e = model->Estimate(in);
  EXPECT_NEAR(e.wait_s, 0.5e-6 + 0.25e-6, 1e-15);
  EXPECT_NEAR(e.core_s, 2.75e-6, 1e-15);
  // The same block as eight warps: four per scheduler, 0.5 us of issue each; covered.
  in.warps_per_block = 8;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6);
  in.warps_per_block = 4;
  in.smem_round_trips = 0;
  // Issue slots: 8,000 warp instructions on 4 schedulers at 1 GHz take 2 us, longer than the
  // 1 us the flops take at the peak, so they are the block's math.
  in.issue_slots_per_block = 8000;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 4e-6);
  EXPECT_DOUBLE_EQ(e.core_s, 4.5e-6);
  // Fewer slots than the flops need: the peak bounds the math.
  in.issue_slots_per_block = 2000;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 2e-6);
  // A warp alone stalls half its cycles: n warps per scheduler find one ready on 1 - 0.5^n of
  // them, and the 8,000 slots (2 us per block) stretch by the inverse; either way each core runs
  // two blocks. The flops at the peak are not stretched.
  in.issue_slots_per_block = 8000;
  in.warp_stall_share = 0.5;
  struct StallCase {
    int64_t warps_per_block, blocks_per_core;
    double ready_share, issue_efficiency;
  };
  for (const StallCase& t : {StallCase{4, 2, 0.75, 1},        // two warps per scheduler
                             StallCase{8, 2, 1 - 0.0625, 1},  // four
                             StallCase{4, 1, 0.5, 1},         // one
                             StallCase{2, 1, 0.5, 0.5}}) {    // half the schedulers idle
    in.warps_per_block = t.warps_per_block;
    in.blocks_per_core = t.blocks_per_core;
    e = model->Estimate(in);
    EXPECT_DOUBLE_EQ(e.ready_share, t.ready_share) << t.warps_per_block << " warps, " << t.blocks_per_core << " blocks";
    EXPECT_DOUBLE_EQ(e.issue_efficiency, t.issue_efficiency);
    EXPECT_DOUBLE_EQ(e.compute_s, 2 * 2e-6 / t.ready_share / t.issue_efficiency);
  }
  in.issue_slots_per_block = 2000;  // below the flops' 1 us at any share: the peak bounds it
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 2 * 1e-6 / 0.5);
  in.warps_per_block = 4;
  in.blocks_per_core = 2;
  in.warp_stall_share = 0;
  in.issue_slots_per_block = 0;
  // When the banks take longer than the math and the waits, they set the pace.
  in.smem_bytes_per_block = 2e5;   // 2 us per block in the banks, 4 us for the pair
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 4e-6);
  EXPECT_TRUE(e.smem_bound);
  in.smem_bytes_per_block = -1;
  // One stage: every K step waits the load latency, once per round.
  in.stages = 1;
  in.pipeline_trips = 3;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.wait_s, 0.5e-6 + 3e-6);
  EXPECT_DOUBLE_EQ(e.core_s, 2e-6 + 3.5e-6);
}

// BLOCK = 1..4 blocks of a 64x64 f16 operand, 4 warps, one wave; %s adds fields.
constexpr char kBlockSweepGraph[] = R"pb(
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

TEST(PlanTest, ConfigurationsWithoutAnEstimateAreCountedNamedAndRankLast) {
  CompiledGraph graph = CompileText(absl::StrFormat(kBlockSweepGraph, R"x(wait_cycles: "100 * (BLOCK - 2)")x"));
  auto plan = PlanDefaultSpace(graph, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // BLOCK = 1 waits -100 cycles: out of range, so no estimate; it ranks last and a note says so.
  EXPECT_EQ(plan->unestimated, 1u);
  ASSERT_EQ(plan->top.size(), 4u);
  EXPECT_FALSE(plan->top[3].estimated);
  EXPECT_EQ(plan->top[3].values[0], 1);
  EXPECT_TRUE(plan->top[0].estimated);
  EXPECT_THAT(plan->notes, testing::Contains(HasSubstr("1 fitting configuration has no estimate")));

  // A negative issue-slot count is out of range the same way.
  CompiledGraph with_slots = CompileText(absl::StrFormat(kBlockSweepGraph, R"x(issue_slots: "100 * (BLOCK - 2)")x"));
  plan = PlanDefaultSpace(with_slots, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->unestimated, 1u);
  EXPECT_FALSE(plan->top[3].estimated);
  EXPECT_EQ(plan->top[3].values[0], 1);

  // So is a stall share outside 0-99 percent, either way.
  CompiledGraph with_stalls =
      CompileText(absl::StrFormat(kBlockSweepGraph, R"x(warp_stall_percent: "(BLOCK - 1) * 50 - 1")x"));
  plan = PlanDefaultSpace(with_stalls, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->unestimated, 2u);  // BLOCK 1 (-1%) and BLOCK 4 (149%)
  EXPECT_FALSE(plan->top[2].estimated);
  EXPECT_FALSE(plan->top[3].estimated);

  // JSON and CSV leave every figure of the model unknown for it, not the empty estimate's zeros.
  const std::string path = ::testing::TempDir() + "/unestimated.pbtxt";
  std::ofstream(path) << absl::StrFormat(kBlockSweepGraph, R"x(wait_cycles: "100 * (BLOCK - 2)")x");
  std::string out, err;
  ASSERT_EQ(RunPlan({"--device", "h100", "--graph", path, "--format", "json"}, &out, &err), kExitFits) << err;
  const std::string last_json = out.substr(out.find("\"rank\": 4"));
  EXPECT_THAT(last_json, HasSubstr("\"estimated_us\": null, \"score\": null"));
  EXPECT_THAT(last_json, HasSubstr("\"bound\": null, \"intensity\": null, \"grid_blocks\": null, \"waves\": null, "
                                   "\"wave_efficiency\": null, \"loads_in_flight\": null"));
  EXPECT_THAT(last_json, ::testing::Not(HasSubstr("terms_us")));
  ASSERT_EQ(RunPlan({"--device", "h100", "--graph", path, "--format", "csv"}, &out, &err), kExitFits) << err;
  // rank, BLOCK, estimated_us, score, bound, blocks_per_core, occupancy_limit, waves, ...
  EXPECT_THAT(out, HasSubstr("\n4,1,,,,"));
  const std::string last_csv = out.substr(out.find("\n4,1,") + 1);
  std::vector<std::string> fields = absl::StrSplit(last_csv.substr(0, last_csv.find('\n')), ',');
  ASSERT_GE(fields.size(), 10u);
  for (int column : {2, 3, 4, 7, 8, 9}) EXPECT_EQ(fields[column], "") << "column " << column;
}

TEST(PlanTest, ConfigurationsBreakingARequirementArePrunedAsInvalidNamingIt) {
  CompiledGraph graph = CompileText(
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

TEST(PerfModelTest, LatencyBoundsAShallowPipelineAndInflightBytesAreCounted) {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_dram_latency_ns(1000);  // 1 us
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->load_latency(), 1e-6);
  PerfInputs in;
  in.flops_per_block = 1e6;  // 1 us of math per block
  in.bytes_per_block = 1e3;
  in.grid_blocks = 10;       // one wave
  in.blocks_per_core = 2;
  in.warps_per_block = 4;
  in.stages = 3;
  in.pipeline_trips = 100;   // 100 K steps, 2 loads in flight: 50 latencies
  in.stage_bytes_per_block = 4096;
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.latency_s, 50e-6);
  EXPECT_TRUE(e.latency_bound);
  EXPECT_FALSE(e.compute_bound);
  EXPECT_GE(e.time_s, 50e-6);
  EXPECT_DOUBLE_EQ(e.inflight_bytes_per_core, 2 * 2 * 4096);
  // A deeper pipeline hides it.
  in.stages = 201;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.latency_s, 0.5e-6);
  EXPECT_FALSE(e.latency_bound);
  // Negative latency is bad input naming the field.
  device.mutable_performance()->set_dram_latency_ns(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("dram_latency_ns"));
  device.mutable_performance()->set_dram_latency_ns(1000);
  device.mutable_performance()->set_smem_latency_ns(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("smem_latency_ns"));
}

TEST(PerfModelTest, CountWaveStripsMatchesTheLaunchOrder) {
  // Against the Triton GROUP_M pid mapping, block by block.
  for (int64_t rows : {1, 3, 8, 13, 24}) {
    for (int64_t cols : {1, 2, 7, 16}) {
      for (int64_t group : {1, 4, 8}) {
        for (int64_t wave : {1, 5, 16, 132, 1000}) {
          WaveStrips expect;
          const int64_t total = rows * cols;
          for (int64_t lo = 0; lo < total; lo += wave) {
            std::vector<bool> seen_row(rows), seen_col(cols);
            for (int64_t pid = lo; pid < std::min(total, lo + wave); ++pid) {
              const int64_t g = std::min(group, rows);
              const int64_t first = pid / (g * cols) * g;
              const int64_t height = std::min(rows - first, g);
              seen_row[first + pid % height] = true;
              seen_col[(pid % (g * cols)) / height] = true;
            }
            for (bool b : seen_row) expect.rows += b;
            for (bool b : seen_col) expect.cols += b;
          }
          const WaveStrips got = CountWaveStrips(rows, cols, group, wave);
          EXPECT_EQ(got.rows, expect.rows) << rows << "x" << cols << " group " << group << " wave " << wave;
          EXPECT_EQ(got.cols, expect.cols) << rows << "x" << cols << " group " << group << " wave " << wave;
        }
      }
    }
  }
  EXPECT_EQ(CountWaveStrips(0, 4, 8, 10).rows, 0);
}

TEST(PerfModelTest, L2ReuseCutsDramTrafficAndL2BandwidthBoundsIt) {
  DeviceModel device;
  device.set_name("toy");
  device.mutable_limits()->set_num_cores(4);
  device.mutable_performance()->set_memory_bandwidth_gbps(1000);  // 1e12 B/s
  device.mutable_performance()->set_l2_bandwidth_gbps(4000);      // 4e12 B/s
  PeakThroughput* peak = device.mutable_performance()->add_peak();
  peak->set_dtype("bf16");
  peak->set_tflops(1);
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->l2_bandwidth(), 4e12);
  PerfInputs in;
  in.flops_per_block = 1;
  in.bytes_per_block = 1e6 + 1e6 + 1e5;  // A strip, B strip, own C tile
  in.grid_blocks = 16;                   // 4 x 4, waves of 4
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.dram_s, 16 * 2.1e6 / 1e12);  // no reuse without the strips
  EXPECT_DOUBLE_EQ(e.l2_s, 16 * 2.1e6 / 4e12);
  EXPECT_DOUBLE_EQ(e.memory_s, e.dram_s);
  in.grid_rows = 4;
  in.grid_cols = 4;
  in.row_bytes_per_block = 1e6;
  in.col_bytes_per_block = 1e6;
  in.tile_group_rows = 4;  // each wave of 4 is one grid column: 4 A strips, 1 B strip
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.dram_s, (4 * (4 + 1) * 1e6 + 16 * 1e5) / 1e12);
  EXPECT_DOUBLE_EQ(e.memory_s, std::max(e.dram_s, e.l2_s));
  // Inconsistent grid extents: no reuse is claimed.
  in.grid_cols = 5;
  EXPECT_DOUBLE_EQ(model->Estimate(in).dram_s, 16 * 2.1e6 / 1e12);
  // Nor without the device's L2 bandwidth.
  in.grid_cols = 4;
  device.mutable_performance()->set_l2_bandwidth_gbps(0);
  auto no_l2 = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(no_l2.ok());
  EXPECT_DOUBLE_EQ(no_l2->Estimate(in).dram_s, 16 * 2.1e6 / 1e12);
  EXPECT_DOUBLE_EQ(no_l2->Estimate(in).l2_s, 0);

  device.mutable_performance()->set_l2_bandwidth_gbps(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("l2_bandwidth_gbps"));
}

TEST(PlanTest, L2ReuseFieldsAreChecked) {
  const char* kGraph = R"pb(
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
    CompiledGraph graph = CompileText(absl::StrFormat(kGraph, fields));
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
  EXPECT_THAT(CompileError(absl::StrFormat(
                  kGraph, R"(grid_row_bytes: "BLOCK * 2048" grid_col_bytes: "2 * NOPE" tile_group_rows: "8")"))
                  .message(),
              HasSubstr("grid_col_bytes"));
}

}  // namespace
}  // namespace scratchsim
