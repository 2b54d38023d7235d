// Estimated buffers (Buffer.estimate): the fit engine judges the central, low and high sizes with
// the same rules; FITS only when the high bound fits, DOES NOT FIT when even the low bound
// breaks a limit, AT RISK in between. Generic: any device, any memory space.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

// Two shared-memory buffers on an H100 (232448 B per block with the opt-in): `known` exactly,
// `spill` estimated.
std::string Graph(int64_t known, int64_t central, int64_t low, int64_t high) {
  return absl::StrCat(R"pb(
    name: "estimated"
    buffers { name: "known" size_bytes: ")pb", known, R"pb(" memory_space: "smem" }
    buffers {
      name: "spill"
      size_bytes: ")pb", central, R"pb("
      memory_space: "smem"
      role: SPILL
      estimate { low_bytes: ")pb", low, R"pb(" high_bytes: ")pb", high, R"pb(" basis: "a guess" }
    }
    ops { name: "k" reads: "known" scratch: "spill" }
  )pb");
}

struct Judged {
  FitResult fit;
  Report report;
};

Judged Judge(const std::string& text) {
  Judged out;
  CompiledGraph graph = testing::CompileGraphText(text);
  DeviceModel h100 = testing::ShippedDevice("h100");
  absl::StatusOr<FitEngine> engine = FitEngine::Create(graph, h100);
  EXPECT_TRUE(engine.ok()) << engine.status();
  SimulateOptions options;
  options.suggest = false;
  absl::StatusOr<Report> report = Explain(*engine, graph.defaults, options, &out.fit);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) out.report = *report;
  return out;
}

const SpaceReport& Smem(const Report& report) {
  for (const SpaceReport& s : report.spaces()) {
    if (s.space() == "smem") return s;
  }
  static const SpaceReport none;
  return none;
}

TEST(EstimateTest, FitsWhenTheHighBoundFits) {
  Judged j = Judge(Graph(200000, 20000, 10000, 30000));
  EXPECT_EQ(j.fit.verdict, FitVerdict::kFits);
  EXPECT_TRUE(j.fit.fits);
  EXPECT_EQ(j.report.verdict(), FITS);
  EXPECT_TRUE(j.report.fits());
  const SpaceReport& smem = Smem(j.report);
  EXPECT_TRUE(smem.has_estimates());
  EXPECT_EQ(smem.peak_bytes(), 220000);
  EXPECT_EQ(smem.peak_bytes_low(), 210000);
  EXPECT_EQ(smem.peak_bytes_high(), 230000);
  EXPECT_EQ(smem.estimated_bytes(), 20000);
}

TEST(EstimateTest, AtRiskWhenOnlyTheHighBoundBreaksALimit) {
  // 220000 B central fits the 232448 B limit with 12448 B to spare; 240000 B at the high bound
  // does not: not FITS with bytes to spare, but AT RISK, and not a fit for a tool.
  Judged j = Judge(Graph(200000, 20000, 10000, 40000));
  EXPECT_EQ(j.fit.verdict, FitVerdict::kAtRisk);
  EXPECT_FALSE(j.fit.fits);
  EXPECT_EQ(j.fit.limit, Limit::kSharedMemory);
  EXPECT_EQ(j.fit.required, 240000);
  EXPECT_EQ(j.report.verdict(), AT_RISK);
  EXPECT_FALSE(j.report.fits());
  ASSERT_EQ(j.report.violations_size(), 1);
  EXPECT_TRUE(j.report.violations(0).at_risk());
  EXPECT_TRUE(j.report.violations(0).fatal());
  EXPECT_EQ(j.report.violations(0).required(), 240000);
  EXPECT_THAT(j.report.violations(0).message(), HasSubstr("AT RISK"));
  const std::string text = RenderText(j.report, testing::ShippedDevice("h100"));
  EXPECT_THAT(text, HasSubstr("verdict  AT RISK"));
  EXPECT_THAT(text, HasSubstr("estimated: 10000 to 40000 B per copy; a guess"));
}

TEST(EstimateTest, DoesNotFitWhenEvenTheLowBoundBreaksALimit) {
  Judged j = Judge(Graph(225280, 20000, 10000, 40000));
  EXPECT_EQ(j.fit.verdict, FitVerdict::kDoesNotFit);
  EXPECT_EQ(j.report.verdict(), DOES_NOT_FIT);
  EXPECT_EQ(j.fit.limit, Limit::kSharedMemory);
  EXPECT_EQ(j.fit.required, 245280);  // the central figure
}

TEST(EstimateTest, AGraphWithoutEstimatesIsFitsOrDoesNotFit) {
  Judged j = Judge(R"pb(
    buffers { name: "a" size_bytes: "1000" memory_space: "smem" }
    ops { name: "k" reads: "a" })pb");
  EXPECT_EQ(j.fit.verdict, FitVerdict::kFits);
  EXPECT_FALSE(j.fit.has_estimates);
  EXPECT_EQ(j.report.verdict(), FITS);
  EXPECT_FALSE(Smem(j.report).has_estimates());
}

TEST(EstimateTest, BoundsOnTheWrongSideOfTheCentralSizeAreErrors) {
  CompiledGraph graph = testing::CompileGraphText(Graph(1000, 500, 600, 700));
  DeviceModel h100 = testing::ShippedDevice("h100");
  absl::StatusOr<FitEngine> engine = FitEngine::Create(graph, h100);
  ASSERT_TRUE(engine.ok());
  FitEngine::Scratch scratch;
  FitResult fit;
  absl::Status status = engine->Evaluate(graph.defaults, scratch, &fit);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("buffer 'spill' estimate.low_bytes: 600 B is above the central size"));
  EXPECT_FALSE(CompileGraph(testing::ParseGraphText(R"pb(
                              buffers { name: "a" size_bytes: "8" memory_space: "smem" estimate { low_bytes: "4" } })pb"),
                            "test.pbtxt")
                   .ok());
}

}  // namespace
}  // namespace scratchsim
