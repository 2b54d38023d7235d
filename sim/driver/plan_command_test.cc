#include "sim/driver/plan_command.h"

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
#include "sim/driver/cli.h"
#include "sim/planner/planner.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;

int RunPlan(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  int code = RunPlanCommand(args, o, e);
  *out = o.str();
  *err = e.str();
  return code;
}


TEST(PlanCommandTest, BadParamIsExitTwoWithAClearMessage) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--param", "BLOCK_M=16..x:pow2"}, &out,
                    &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--param 'BLOCK_M=16..x:pow2': 'x' is not an integer"));
  EXPECT_EQ(out, "");
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--param", "M=1..4"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("is a problem size"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "BLOCK_M=64", "--param",
                     "BLOCK_M=16..64:pow2"},
                    &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("already fixed"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--format", "xml"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--format"));
  EXPECT_EQ(RunPlan({"--graph", ExampleGraphPath("gemm.pbtxt")}, &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--device is required"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--top", "-1"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--top"));
}


TEST(PlanCommandTest, SimulateDispatchesPlan) {
  std::ostringstream o, e;
  int code = RunSimulateCommand({"plan", "--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "DTYPE=1",
                                 "--compute-dtype", "f16", "--top", "3", "--format", "json"},
                                o, e);
  EXPECT_EQ(code, kExitFits) << e.str();
  EXPECT_THAT(o.str(), HasSubstr("\"configs\": ["));
  EXPECT_THAT(o.str(), HasSubstr("\"params\": {\"BLOCK_M\": "));
  EXPECT_THAT(o.str(), HasSubstr("\"terms_us\": {\"math\": "));
  EXPECT_THAT(o.str(), HasSubstr("\"unfilled_waits\": "));
}

// The command's output is byte-identical from run to run and across --threads.
TEST(PlanCommandTest, OutputIsIdenticalAcrossThreadCounts) {
  std::string a, b, err;
  const std::vector<std::string> args = {"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "DTYPE=1",
                                         "--compute-dtype", "f16", "--top", "20"};
  std::vector<std::string> one = args, four = args;
  one.insert(one.end(), {"--threads", "1"});
  four.insert(four.end(), {"--threads", "4"});
  ASSERT_EQ(RunPlan(one, &a, &err), kExitFits) << err;
  ASSERT_EQ(RunPlan(four, &b, &err), kExitFits) << err;
  EXPECT_EQ(a, b);
}



// JSON and CSV leave every figure of the model unknown for a configuration without an
// estimate, not the empty estimate's zeros.
TEST(PlanCommandTest, UnestimatedConfigurationsShowNoFigures) {
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

}  // namespace
}  // namespace scratchsim
