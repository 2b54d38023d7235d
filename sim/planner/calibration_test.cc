#include "sim/planner/calibration.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/device_inherit.h"
#include "sim/planner/planner.h"
#include "sim/planner/residuals.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

CompiledGraph TritonMatmul() {
  auto proto = LoadGraph(Source("models/graphs/triton_matmul.pbtxt"));
  EXPECT_TRUE(proto.ok()) << proto.status();
  auto graph = CompileGraph(*proto, "triton_matmul.pbtxt");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

// "Measured" times that are `truth`'s own estimates for every fitting configuration of a few
// f16 shapes: calibrating from another device must find `truth`'s terms again.
std::vector<CalibrationSample> SamplesFrom(const CompiledGraph& graph, const DeviceModel& truth) {
  std::vector<CalibrationSample> samples;
  for (const auto& [m, n, k] : {std::tuple{4096, 4096, 4096}, {2048, 8192, 2048}, {6144, 1536, 3072}}) {
    const std::vector<std::string> sets = {absl::StrCat("M=", m), absl::StrCat("N=", n), absl::StrCat("K=", k), "ELT=2"};
    auto values = BindParameters(graph, sets);
    auto axes = BuildParamSpace(graph, {}, sets);
    EXPECT_TRUE(values.ok() && axes.ok());
    PlanOptions options;
    options.top_k = 100000;
    options.threads = 1;
    options.compute_dtype = "f16";
    auto plan = Plan(graph, truth, *axes, *values, options);
    EXPECT_TRUE(plan.ok()) << plan.status();
    for (const RankedConfig& c : plan->top) {
      CalibrationSample s;
      s.sets = sets;
      for (size_t a = 0; a < plan->axes.size(); ++a) s.sets.push_back(absl::StrCat(plan->axes[a].name, "=", c.values[a]));
      s.compute_dtype = "f16";
      s.row = absl::StrCat(m, "x", n, "x", k);
      s.measured_s = c.perf.time_s;
      samples.push_back(s);
    }
  }
  return samples;
}

// Calibrates h100's f16 peak and L2 bandwidth on timings the model made with 800 TFLOP/s and
// 10,000 GB/s.
absl::StatusOr<CalibrationResult> CalibrateOnKnownTruth(CalibrationOptions options) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  if (!h100.ok()) return h100.status();
  DeviceModel truth = *h100;
  SetPerformanceTerm(&truth, "peak.f16", 800);
  SetPerformanceTerm(&truth, "l2_bandwidth_gbps", 10000);
  options.terms = {"peak.f16", "l2_bandwidth_gbps"};
  return Calibrate(graph, *h100, SamplesFrom(graph, truth), options);
}

TEST(CalibrationTest, FindsTheTermsThatMadeTheTimings) {
  CalibrationOptions options;
  options.regularization = 0;
  auto result = CalibrateOnKnownTruth(options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->terms.size(), 2u);
  EXPECT_NEAR(result->terms[0].after, 800, 800 * 0.02);
  EXPECT_NEAR(result->terms[1].after, 10000, 10000 * 0.05);
  EXPECT_LT(result->after.log_rms, result->before.log_rms);
  EXPECT_NEAR(result->after.log_rms, 0, 0.02);
}

TEST(CalibrationTest, TheRankObjectiveLowersTheExpectedTop1Slowdown) {
  CalibrationOptions options;
  options.objective = CalibrationObjective::kRank;
  auto result = CalibrateOnKnownTruth(options);
  ASSERT_TRUE(result.ok()) << result.status();
  // Every timed configuration enters the ranking loss; the softened top-1 gets no slower.
  EXPECT_EQ(result->samples_estimated, result->samples_total);
  EXPECT_LE(result->after.expected_regret, result->before.expected_regret);
  EXPECT_GE(result->after.top1_within_10, result->before.top1_within_10);
}

TEST(CalibrationTest, TheDefaultTermsAreThoseTheRankingUsesButTheDramBandwidth) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  CalibrationOptions options;
  options.passes = 1;
  auto result = Calibrate(graph, *h100, SamplesFrom(graph, *h100), options);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::string> names;
  for (const TermFit& t : result->terms) names.push_back(t.term);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("peak.f16", "clock_mhz", "smem_bytes_per_clk", "l2_bandwidth_gbps",
                                                     "dram_latency_ns"));
}

TEST(CalibrationTest, ATermTheDeviceLacksStartsFromItsStandIn) {
  const CompiledGraph graph = TritonMatmul();
  auto b200 = LoadDevice("b200");
  ASSERT_TRUE(b200.ok());
  CalibrationOptions options;
  options.terms = {"l2_bandwidth_gbps"};
  options.passes = 1;
  auto result = Calibrate(graph, *b200, SamplesFrom(graph, *b200), options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->terms[0].was_assumed);
  EXPECT_GT(result->terms[0].before, 0);
}

TEST(CalibrationTest, AnUnknownTermIsRefused) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  CalibrationOptions options;
  options.terms = {"warp_speed"};
  auto result = Calibrate(graph, *h100, SamplesFrom(graph, *h100), options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("'warp_speed' is no performance term"));
}

TEST(CalibrationTest, NoTimingIsRefused) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  EXPECT_FALSE(Calibrate(graph, *h100, {}, CalibrationOptions{}).ok());
}

TEST(CalibrationTest, TimingsOfConfigurationsThatDoNotFitAreLeftOut) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  CalibrationSample too_big;  // 256 x 256 x 128 x 4 stages of f16 tiles: over 227 KiB
  too_big.sets = {"BLOCK_M=256", "BLOCK_N=256", "BLOCK_K=128", "NUM_STAGES=4", "NUM_WARPS=8", "ELT=2"};
  too_big.measured_s = 1e-3;
  too_big.row = "r";
  auto result = Calibrate(graph, *h100, {too_big}, CalibrationOptions{});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("no timed configuration fits"));
}

TEST(CalibrationTest, TheFileIsADeviceModelThatInheritsTheDevice) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  CalibrationOptions options;
  options.terms = {"peak.f16", "l2_bandwidth_gbps"};
  options.passes = 1;
  auto result = Calibrate(graph, *h100, SamplesFrom(graph, *h100), options);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string text = CalibrationTextproto(*h100, *result, "h100_mine", "sweep.json (\"H100\", today)", "simulate calibrate ...",
                                                "2026-11-26 12:00 UTC");
  EXPECT_THAT(text, HasSubstr("inherits: \"h100\""));
  EXPECT_THAT(text, HasSubstr("# source: calibrated by simulate calibrate from sweep.json"));
  const std::string path = (std::filesystem::temp_directory_path() / "calibration_test_h100_mine.textproto").string();
  std::ofstream(path) << text;
  auto loaded = LoadDevice(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status() << "\n" << text;
  EXPECT_EQ(loaded->name(), "h100_mine");
  EXPECT_NEAR(loaded->performance().l2_bandwidth_gbps(), result->terms[1].after, 1e-3 * result->terms[1].after);
  EXPECT_EQ(loaded->limits().num_cores(), 132);
}

// Timings that are h100's own estimates except for one configuration, measured 20% slower in
// every row: its residual is 1.2, every other configuration's 1, and the planner's top-1 on the
// samples no longer picks it.
TEST(CalibrationTest, LearnsTheResidualOfAConfigurationTheModelMisses) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok()) << h100.status();
  std::vector<CalibrationSample> samples = SamplesFrom(graph, *h100);
  // The first sample's configuration (without the shape) is the slow one.
  std::vector<std::string> slow;
  for (const std::string& set : samples[0].sets) {
    if (set.rfind("M=", 0) != 0 && set.rfind("N=", 0) != 0 && set.rfind("K=", 0) != 0) slow.push_back(set);
  }
  for (CalibrationSample& s : samples) {
    for (const std::string& set : s.sets) {
      if (set.rfind("M=", 0) != 0 && set.rfind("N=", 0) != 0 && set.rfind("K=", 0) != 0) s.config_sets.push_back(set);
    }
    if (ResidualKey(s.config_sets) == ResidualKey(slow)) s.measured_s *= 1.2;
  }
  CalibrationOptions options;
  options.fit_terms = false;
  options.residuals = true;
  auto result = Calibrate(graph, *h100, samples, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->residuals.empty());
  EXPECT_TRUE(result->terms.empty());
  for (const ConfigResidual& r : result->residuals) {
    const bool is_slow = std::vector<std::string>(r.sets().begin(), r.sets().end()) == ResidualKey(slow);
    EXPECT_NEAR(r.factor(), is_slow ? 1.2 : 1.0, 1e-9) << r.ShortDebugString();
    EXPECT_EQ(r.graph(), "triton_matmul");
    EXPECT_EQ(r.compute_dtype(), "f16");
    EXPECT_EQ(r.rows(), 3);
  }
}

TEST(CalibrationTest, ResidualsPoolTheConfigurationsTheirParametersDoNotTellApart) {
  const CompiledGraph graph = TritonMatmul();
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok()) << h100.status();
  std::vector<CalibrationSample> samples = SamplesFrom(graph, *h100);
  for (CalibrationSample& s : samples) {
    for (const std::string& set : s.sets) {
      if (set.rfind("BLOCK_", 0) == 0 || set.rfind("NUM_", 0) == 0) s.config_sets.push_back(set);
    }
  }
  CalibrationOptions options;
  options.fit_terms = false;
  options.residuals = true;
  options.residual_params = {"BLOCK_M", "BLOCK_N"};
  auto result = Calibrate(graph, *h100, samples, options);
  ASSERT_TRUE(result.ok()) << result.status();
  for (const ConfigResidual& r : result->residuals) {
    ASSERT_EQ(r.sets_size(), 2) << r.ShortDebugString();
    EXPECT_GT(r.rows(), 3);  // several configurations of each row share a key
  }
}

}  // namespace
}  // namespace scratchsim
