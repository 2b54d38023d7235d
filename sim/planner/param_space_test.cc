#include "sim/planner/param_space.h"

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
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;


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
  CompiledGraph graph = CompileGraphText(kOneTileGraph);
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
  CompiledGraph graph = CompileGraphText(kOneTileGraph);
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


// Reproducer of issue 17 (shared/reliability/graph_param_extreme_range.pbtxt): max - min of the
// graph's range overflowed int64 and the sweep appended values until memory ran out.
TEST(BuildParamSpaceTest, AGraphRangeOverTheWholeInt64IsRefused) {
  auto graph = LoadGraph(SourcePath("tests/data/reliability/graph_param_extreme_range.pbtxt"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto compiled = CompileGraph(*graph, "extreme.pbtxt");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto axes = BuildParamSpace(*compiled, {}, {});
  ASSERT_FALSE(axes.ok());
  EXPECT_THAT(axes.status().message(), HasSubstr("extreme.pbtxt: parameter 'P': range -9223372036854775808..9223372036854775807 has more than 1048576 values"));
}

TEST(ParseParamSpecTest, ARangeOverTheWholeInt64IsRefused) {
  CompiledGraph graph = CompileGraphText(kOneTileGraph);
  auto axis = ParseParamSpec("BLOCK_M=-9223372036854775808..9223372036854775807", graph);
  ASSERT_FALSE(axis.ok());
  EXPECT_THAT(axis.status().message(), HasSubstr("more than 1048576 values"));
}

}  // namespace
}  // namespace scratchsim
