#include "backends/tpu/xla_verdict.h"

#include <string>

#include "backends/tpu/tpu_test_util.h"
#include "gtest/gtest.h"

namespace scratchsim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

TEST(XlaBytesTest, MatchesXlaRounding) {
  EXPECT_EQ(XlaBytes(16 * kMiB), "16.00M");
  EXPECT_EQ(XlaBytes(65536), "64.0K");
  EXPECT_EQ(XlaBytes(1536), "1.5K");
  EXPECT_EQ(XlaBytes(512), "512B");
  // tunix report on v5p: "Scoped allocation with size 19.85M and limit 16.00M exceeded scoped
  // vmem limit by 3.85M": any size within the 0.005M rounding prints the same.
  int64_t size = static_cast<int64_t>(19.85 * kMiB);
  EXPECT_EQ(XlaBytes(size), "19.85M");
  EXPECT_EQ(XlaBytes(size - 16 * kMiB), "3.85M");
}

TEST(XlaVerdictTest, E1001OnV5e) {
  KernelGraph graph = ExampleGraph("tpu_e1001.pbtxt");
  DeviceModel v5e = TpuDevice("tpu_v5e");
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, v5e);
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(XlaVmemVerdict(graph, v5e, *fp),
            "RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack "
            "for %my-custom-kernel = bf16[2048,4096]{1,0:T(8,128)(2,1)} custom-call(x), "
            "custom_call_target=\"tpu_custom_call\". Scoped allocation with size 48.00M and limit "
            "16.00M exceeded scoped vmem limit by 32.00M.");
  EXPECT_EQ(XlaVmemCapacityVerdict(*fp), "");  // 48 MiB of 128 MiB VMEM
  std::vector<std::string> lines = FootprintBreakdown(*fp);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "x (input, vmem, scoped): 2 x 16.00M = 32.00M bf16[1,2048,4096]");
  EXPECT_EQ(lines[1], "o (output, vmem, scoped): 1 x 16.00M = 16.00M bf16[2048,4096]");
}

TEST(XlaVerdictTest, E1001FixOnV5e) {
  absl::StatusOr<VmemFix> fix = SuggestVmemFix(ExampleGraph("tpu_e1001.pbtxt"), TpuDevice("tpu_v5e"));
  ASSERT_TRUE(fix.ok()) << fix.status();
  EXPECT_EQ(fix->smallest_vmem_limit_bytes, 48 * kMiB);
  EXPECT_TRUE(fix->limit_allowed);  // v5e has 128 MiB of VMEM
  ASSERT_TRUE(fix->blocks_fit_default);
  ASSERT_EQ(fix->parameters.size(), 1u);
  EXPECT_EQ(fix->parameters[0].name(), "BM");
  EXPECT_EQ(fix->parameters[0].value(), 512);
  EXPECT_EQ(fix->resulting_scoped_bytes, 16 * kMiB);
}

TEST(XlaVerdictTest, E1001FixPerGeneration) {
  // v6e/v7x default to 32 MiB, so BM=1024 already fits; v4 cannot raise the limit to 48 MiB.
  absl::StatusOr<VmemFix> v6e = SuggestVmemFix(ExampleGraph("tpu_e1001.pbtxt"), TpuDevice("tpu_v6e"));
  ASSERT_TRUE(v6e.ok());
  EXPECT_EQ(v6e->parameters[0].value(), 1024);
  EXPECT_EQ(v6e->resulting_scoped_bytes, 32 * kMiB);
  absl::StatusOr<VmemFix> v4 = SuggestVmemFix(ExampleGraph("tpu_e1001.pbtxt"), TpuDevice("tpu_v4"));
  ASSERT_TRUE(v4.ok());
  EXPECT_FALSE(v4->limit_allowed);
  EXPECT_TRUE(v4->blocks_fit_default);
  absl::StatusOr<VmemFix> v7x = SuggestVmemFix(ExampleGraph("tpu_e1001.pbtxt"), TpuDevice("tpu_v7x"));
  ASSERT_TRUE(v7x.ok());
  EXPECT_TRUE(v7x->limit_allowed);  // 48 MiB of the 64 MiB per TensorCore
}

TEST(XlaVerdictTest, MatmulBigFixOnV6e) {
  absl::StatusOr<VmemFix> fix = SuggestVmemFix(ExampleGraph("tpu_matmul_big.pbtxt"), TpuDevice("tpu_v6e"));
  ASSERT_TRUE(fix.ok()) << fix.status();
  EXPECT_EQ(fix->smallest_vmem_limit_bytes, 64 * kMiB);
  EXPECT_TRUE(fix->limit_allowed);
  ASSERT_TRUE(fix->blocks_fit_default);
  ASSERT_EQ(fix->parameters.size(), 2u);
  EXPECT_EQ(fix->parameters[0].name(), "BM");
  EXPECT_EQ(fix->parameters[0].value(), 1024);
  EXPECT_EQ(fix->parameters[1].name(), "BN");
  EXPECT_EQ(fix->parameters[1].value(), 1024);
  EXPECT_EQ(fix->resulting_scoped_bytes, 24 * kMiB);
}

TEST(XlaVerdictTest, CapacityVerdictWhenTheLimitExceedsVmem) {
  // v4 has 16 MiB of VMEM per TensorCore: raising vmem_limit_bytes to 64 MiB passes the scoped
  // check but not the capacity one.
  KernelGraph graph = ExampleGraph("tpu_e1001.pbtxt");
  graph.mutable_tpu()->set_vmem_limit_bytes("67108864");
  DeviceModel v4 = TpuDevice("tpu_v4");
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, v4);
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(XlaVmemVerdict(graph, v4, *fp), "");
  EXPECT_EQ(XlaVmemCapacityVerdict(*fp),
            "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
            "space vmem. Used 48.00M of 16.00M vmem. Exceeded vmem capacity by 32.00M.");
}

TEST(AnnotateTpuReportTest, RewritesTheSimulatorViolation) {
  KernelGraph graph = ExampleGraph("tpu_e1001.pbtxt");
  Report report;
  report.set_fits(false);
  Violation* v = report.add_violations();
  v->set_resource("vmem");
  v->set_space("vmem");
  v->set_required(48 * kMiB);
  v->set_available(16 * kMiB);
  v->set_message("vmem: 50331648 > 16777216");
  ASSERT_TRUE(AnnotateTpuReport(graph, TpuDevice("tpu_v5e"), &report).ok());
  ASSERT_EQ(report.violations_size(), 1);
  EXPECT_EQ(report.violations(0).message().rfind("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem", 0), 0u);
  EXPECT_FALSE(report.fits());
  ASSERT_EQ(report.suggestions_size(), 2);
  EXPECT_NE(report.suggestions(0).text().find("vmem_limit_bytes=50331648"), std::string::npos);
  ASSERT_EQ(report.suggestions(1).parameters_size(), 1);
  EXPECT_EQ(report.suggestions(1).parameters(0).value(), 512);
  EXPECT_GE(report.notes_size(), 3);
}

TEST(AnnotateTpuReportTest, AddsAViolationTheSimulatorMissed) {
  Report report;
  report.set_fits(true);
  ASSERT_TRUE(AnnotateTpuReport(ExampleGraph("tpu_matmul_big.pbtxt"), TpuDevice("tpu_v7x"), &report).ok());
  ASSERT_EQ(report.violations_size(), 1);
  EXPECT_EQ(report.violations(0).required(), 64 * kMiB);
  EXPECT_EQ(report.violations(0).available(), 32 * kMiB);
  EXPECT_EQ(report.violations(0).culprits_size(), 4);
  EXPECT_FALSE(report.fits());
}

TEST(AnnotateTpuReportTest, UsesTheReportParameters) {
  Report report;
  ParameterValue* pv = report.add_parameters();
  pv->set_name("BM");
  pv->set_value(512);
  ASSERT_TRUE(AnnotateTpuReport(ExampleGraph("tpu_e1001.pbtxt"), TpuDevice("tpu_v5e"), &report).ok());
  EXPECT_EQ(report.violations_size(), 0);  // 16 MiB fits the 16 MiB default
}

TEST(AnnotateTpuReportTest, BadGraphIsAnError) {
  KernelGraph graph = ExampleGraph("tpu_e1001.pbtxt");
  graph.mutable_pallas()->mutable_in_specs(0)->set_buffer_count(0);
  Report report;
  absl::Status status = AnnotateTpuReport(graph, TpuDevice("tpu_v5e"), &report);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace scratchsim
