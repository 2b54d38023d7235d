// ResidualTable: the measured per-configuration corrections a calibration carries, looked up as
// the planner sees configurations; one behaviour per test on the shipped CUDA GEMM graph.
#include "sim/planner/residuals.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/planner/planner.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

class ResidualTableTest : public ::testing::Test {
 protected:
  ConfigResidual* Add(const std::vector<std::string>& sets, double factor, const std::string& graph = "gemm",
                      const std::string& dtype = "f32") {
    ConfigResidual* r = device_.add_config_residuals();
    r->set_graph(graph);
    r->set_compute_dtype(dtype);
    for (const std::string& s : sets) r->add_sets(s);
    r->set_factor(factor);
    r->set_rows(3);
    return r;
  }
  std::vector<int64_t> Values(const std::vector<std::string>& sets) {
    auto values = BindParameters(graph_, sets);
    EXPECT_TRUE(values.ok()) << values.status();
    return *values;
  }

  CompiledGraph graph_ = testing::CompileExampleGraph("gemm.pbtxt");
  DeviceModel device_ = testing::ShippedDevice("h100");
  const std::vector<std::string> tile_ = {"BLOCK_M=64", "BLOCK_N=128", "BLOCK_K=32", "NUM_STAGES=2", "NUM_WARPS=4",
                                          "DTYPE=1"};
};

TEST_F(ResidualTableTest, AConfigurationWithAResidualGetsItsFactor) {
  Add(tile_, 0.9);
  auto table = ResidualTable::Build(graph_, device_, "f32");
  ASSERT_TRUE(table.ok()) << table.status();
  std::vector<std::string> sets = tile_;
  sets.push_back("M=4096");  // the shape is not part of the key
  EXPECT_EQ(table->Factor(Values(sets)), 0.9);
}

TEST_F(ResidualTableTest, AConfigurationWithoutOneKeepsTheModelsEstimate) {
  Add(tile_, 0.9);
  auto table = ResidualTable::Build(graph_, device_, "f32");
  ASSERT_TRUE(table.ok()) << table.status();
  std::vector<std::string> other = tile_;
  other[3] = "NUM_STAGES=3";
  EXPECT_FALSE(table->Factor(Values(other)).has_value());
}

TEST_F(ResidualTableTest, ResidualsOfAnotherGraphOrComputeDtypeDoNotApply) {
  Add(tile_, 0.9, "triton_matmul");
  Add(tile_, 0.9, "gemm", "f16");
  auto table = ResidualTable::Build(graph_, device_, "f32");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->empty());
}

TEST_F(ResidualTableTest, AnUnknownParameterIsAnErrorNamingTheResidual) {
  Add({"BLOCK_Q=64"}, 0.9);
  auto table = ResidualTable::Build(graph_, device_, "f32");
  ASSERT_FALSE(table.ok());
  EXPECT_TRUE(absl::StrContains(table.status().message(), "config_residuals[0].sets")) << table.status();
}

TEST_F(ResidualTableTest, ResidualsKeyedByDifferentParametersAreAnError) {
  Add(tile_, 0.9);
  Add({"BLOCK_M=64", "BLOCK_N=128"}, 1.1);
  auto table = ResidualTable::Build(graph_, device_, "f32");
  ASSERT_FALSE(table.ok());
  EXPECT_TRUE(absl::StrContains(table.status().message(), "config_residuals[1].sets")) << table.status();
}

TEST_F(ResidualTableTest, AFactorOutOfRangeIsRefusedByTheDeviceCheck) {
  Add(tile_, 0);
  absl::Status status = ValidateDevice(device_, "calibration.textproto");
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "config_residuals[0].factor")) << status;
}

// The planner ranks by the corrected estimate: a residual that makes the model's runner-up
// faster than its top-1 swaps them, and the ranked configuration says what was applied.
TEST_F(ResidualTableTest, ThePlannerRanksByTheCorrectedEstimate) {
  const std::vector<std::string> sets = {"M=4096", "N=4096", "K=4096", "DTYPE=1"};
  auto values = BindParameters(graph_, sets);
  auto axes = BuildParamSpace(graph_, {"BLOCK_M=64,128", "BLOCK_N=64,128", "BLOCK_K=32", "NUM_STAGES=3", "NUM_WARPS=4,8"},
                              sets);
  ASSERT_TRUE(values.ok() && axes.ok());
  PlanOptions options;
  options.threads = 1;
  auto plain = Plan(graph_, device_, *axes, *values, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_GE(plain->top.size(), 2u);
  std::vector<std::string> second;
  for (size_t a = 0; a < plain->axes.size(); ++a) {
    second.push_back(plain->axes[a].name + "=" + std::to_string(plain->top[1].values[a]));
  }
  second.push_back("DTYPE=1");
  Add(second, 0.5);
  auto table = ResidualTable::Build(graph_, device_, "f32");
  ASSERT_TRUE(table.ok()) << table.status();
  options.residuals = std::make_shared<const ResidualTable>(*table);
  auto corrected = Plan(graph_, device_, *axes, *values, options);
  ASSERT_TRUE(corrected.ok()) << corrected.status();
  EXPECT_EQ(corrected->top[0].values, plain->top[1].values);
  EXPECT_DOUBLE_EQ(corrected->top[0].residual, 0.5);
  EXPECT_DOUBLE_EQ(corrected->top[0].perf.time_s, plain->top[1].perf.time_s * 0.5);
}

}  // namespace
}  // namespace scratchsim
