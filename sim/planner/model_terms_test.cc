#include "sim/planner/model_terms.h"

#include <string>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/planner/planner.h"
#include "sim/planner/planner_test_util.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

CompiledGraph Compile(const std::string& relative) {
  auto proto = LoadGraph(Source(relative));
  EXPECT_TRUE(proto.ok()) << proto.status();
  auto graph = CompileGraph(*proto, relative);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

ModelTerms Resolve(const std::string& device_name, const std::string& graph_path, const std::string& dtype) {
  auto device = LoadDevice(device_name);
  EXPECT_TRUE(device.ok()) << device.status();
  const CompiledGraph graph = Compile(graph_path);
  auto perf = CompilePerfExpressions(graph);
  EXPECT_TRUE(perf.ok()) << perf.status();
  return ResolveModelTerms(*device, graph, *perf, dtype);
}

const ModelTerm* Find(const ModelTerms& terms, const std::string& name) {
  for (const ModelTerm& t : terms.terms) {
    if (t.term == name) return &t;
  }
  return nullptr;
}

TEST(ModelTermsTest, TheH100GivesEveryTermTheTritonMatmulNeeds) {
  const ModelTerms terms = Resolve("h100", "models/graphs/triton_matmul.pbtxt", "f16");
  EXPECT_TRUE(terms.warnings.empty()) << terms.warnings.front();
  for (const char* name : {"memory_bandwidth_gbps", "peak.f16", "clock_mhz", "smem_bytes_per_clk", "l2_bandwidth_gbps",
                           "dram_latency_ns"}) {
    const ModelTerm* t = Find(terms, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_FALSE(t->assumed) << name;
    EXPECT_EQ(t->model, "h100") << name;
  }
}

TEST(ModelTermsTest, TheCudaGemmNeedsTheSharedMemoryLatency) {
  const ModelTerms terms = Resolve("h100", "models/graphs/gemm.pbtxt", "f32");
  const ModelTerm* t = Find(terms, "smem_latency_ns");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->value, 11.3);
}

// A chain's waits are cycles: a graph that gives only them still needs the device's clock.
TEST(ModelTermsTest, ChainLatencyCyclesNeedTheClock) {
  auto device = LoadDevice("h100");
  ASSERT_TRUE(device.ok()) << device.status();
  const CompiledGraph graph = testing::CompileGraphText(absl::StrFormat(
      testing::kBlockSweepGraph, R"pb(chains_per_block: "2" chain_latency_cycles: "1000")pb"));
  auto perf = CompilePerfExpressions(graph);
  ASSERT_TRUE(perf.ok()) << perf.status();
  const ModelTerms terms = ResolveModelTerms(*device, graph, *perf, "f16");
  const ModelTerm* t = Find(terms, "clock_mhz");
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->use, HasSubstr("chain_latency_cycles"));
}

TEST(ModelTermsTest, TheH200SaysWhichTermsItInherits) {
  const ModelTerms terms = Resolve("h200", "models/graphs/triton_matmul.pbtxt", "f16");
  EXPECT_TRUE(terms.warnings.empty());
  const ModelTerm* l2 = Find(terms, "l2_bandwidth_gbps");
  ASSERT_NE(l2, nullptr);
  EXPECT_TRUE(l2->inherited);
  EXPECT_EQ(l2->model, "h100");
  const ModelTerm* bandwidth = Find(terms, "memory_bandwidth_gbps");
  ASSERT_NE(bandwidth, nullptr);
  EXPECT_FALSE(bandwidth->inherited);
  EXPECT_EQ(bandwidth->value, 4800);
}

TEST(ModelTermsTest, AMissingL2BandwidthIsAssumedPerClockAndCoreAndWarned) {
  const ModelTerms terms = Resolve("b200", "models/graphs/triton_matmul.pbtxt", "f16");
  const ModelTerm* l2 = Find(terms, "l2_bandwidth_gbps");
  ASSERT_NE(l2, nullptr);
  EXPECT_TRUE(l2->assumed);
  // The b200 model gives no clock either: the h100's 1980 MHz stands in, so the L2 stand-in is
  // the h100's 12,500 GB/s per core (132) at 148 cores.
  EXPECT_NEAR(l2->value, 12500.0 / 132 * 148, 1e-6);
  EXPECT_THAT(terms.warnings, ::testing::Contains(HasSubstr("b200 gives no l2_bandwidth_gbps")));
  EXPECT_THAT(terms.warnings, ::testing::Contains(HasSubstr("b200 gives no clock_mhz")));
}

TEST(ModelTermsTest, StandInsAreWrittenIntoTheDeviceTheModelReads) {
  const ModelTerms terms = Resolve("b200", "models/graphs/triton_matmul.pbtxt", "f16");
  EXPECT_GT(terms.device.performance().l2_bandwidth_gbps(), 0);
  EXPECT_GT(terms.device.performance().dram_latency_ns(), 0);
  EXPECT_GT(terms.device.performance().smem_bytes_per_clk(), 0);
}

TEST(ModelTermsTest, ALatencyStandInKeepsTheCyclesAtTheDevicesClock) {
  // The A100 gives a clock (1410 MHz) but no ld.shared latency: the H100's 22.4 cycles at 1410 MHz.
  const ModelTerms terms = Resolve("a100", "models/graphs/gemm.pbtxt", "f32");
  const ModelTerm* t = Find(terms, "smem_latency_ns");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->assumed);
  EXPECT_NEAR(t->value, 11.3 * 1980 / 1410, 1e-9);
}

TEST(ModelTermsTest, ATpuNeedsNoGpuOnChipTerms) {
  const ModelTerms terms = Resolve("tpu_v5e", "models/graphs/triton_matmul.pbtxt", "bf16");
  EXPECT_TRUE(terms.warnings.empty());
  EXPECT_EQ(Find(terms, "smem_bytes_per_clk"), nullptr);
  EXPECT_NE(Find(terms, "memory_bandwidth_gbps"), nullptr);
}

TEST(ModelTermsTest, APlanCarriesTheWarnings) {
  auto device = LoadDevice("b200");
  ASSERT_TRUE(device.ok());
  const CompiledGraph graph = Compile("models/graphs/triton_matmul.pbtxt");
  auto values = BindParameters(graph, {});
  auto axes = BuildParamSpace(graph, {}, {});
  ASSERT_TRUE(values.ok() && axes.ok());
  PlanOptions options;
  options.top_k = 1;
  options.threads = 1;
  auto plan = Plan(graph, *device, *axes, *values, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->warnings, ::testing::Contains(HasSubstr("l2_bandwidth_gbps")));
  EXPECT_FALSE(plan->terms.empty());
}

TEST(ModelTermsTest, FormatTermValueGroupsThousands) {
  ModelTerm t;
  t.value = 12500;
  t.unit = "GB/s";
  EXPECT_EQ(FormatTermValue(t), "12,500 GB/s");
  t.value = 11.3;
  t.unit = "ns";
  EXPECT_EQ(FormatTermValue(t), "11.3 ns");
}

}  // namespace
}  // namespace scratchsim
