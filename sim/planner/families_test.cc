#include "sim/planner/families.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/planner/planner_test_util.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;

// The plain and the split-K Triton matmul planned together on the H200.
class FamiliesTest : public ::testing::Test {
 protected:
  static std::vector<KernelFamily> Families(int top_k = 10) {
    PlanOptions options;
    options.top_k = top_k;
    options.threads = 1;
    return {KernelFamily{&m().plain, options}, KernelFamily{&m().split, options}};
  }

  static absl::StatusOr<FamiliesPlan> PlanBoth(const std::vector<std::string>& sets,
                                               const std::vector<std::string>& params = {}) {
    return PlanFamilies(Families(), m().device, sets, params);
  }

  static const MatmulFamilies& m() { return SharedMatmulFamilies(); }
  static int PlainFamily() { return 0; }
  static int SplitFamily() { return 1; }
};

// LLM decode: 16 tokens against a 4096 x 14336 f16 weight. The plain kernel has too few output
// tiles to share the K loop over the SMs; split-K does.
TEST_F(FamiliesTest, TheSplitKFamilyWinsADecodeShape) {
  auto plan = PlanBoth({"M=16", "N=4096", "K=14336", "ELT=2"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->choice.winner, SplitFamily());
  EXPECT_EQ(plan->choice.runner_up, PlainFamily());
  ASSERT_FALSE(plan->top.empty());
  EXPECT_EQ(plan->top.front().family, SplitFamily());
  EXPECT_GT(plan->summaries[PlainFamily()].ratio, 1.0);
}

// A large product whose tiles fill every wave (8448 x 8192 in 128 x 256 tiles: 2,112 blocks, 16
// waves of the 132 SMs): the atomic adds and the re-read K strips only cost. (At 8192 x 8192 the
// two tie within 0.1%, the plain grid's last wave half full.)
TEST_F(FamiliesTest, ThePlainFamilyWinsALargeShapeThatFillsItsWaves) {
  auto plan = PlanBoth({"M=8448", "N=8192", "K=8192", "ELT=2"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->choice.winner, PlainFamily());
  ASSERT_FALSE(plan->top.empty());
  EXPECT_EQ(plan->top.front().family, PlainFamily());
}

// The overall ranking is the families' configurations in the ranking's order, at most top_k.
TEST_F(FamiliesTest, TheRankingIsTheUnionInEstimateOrder) {
  auto plan = PlanFamilies(Families(/*top_k=*/300), m().device, {"M=16", "N=8192", "K=8192"}, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->top.size(), 300u);
  bool both = false;
  for (size_t i = 0; i < plan->top.size(); ++i) {
    const FamilyRank& r = plan->top[i];
    both = both || r.family != plan->top.front().family;
    if (i == 0) continue;
    const FamilyRank& p = plan->top[i - 1];
    EXPECT_FALSE(RankKeyOf(plan->plans[r.family].top[r.index]) < RankKeyOf(plan->plans[p.family].top[p.index])) << i;
  }
  EXPECT_TRUE(both) << "both families rank in the top 300 of this shape";
  EXPECT_EQ(plan->fitting, plan->plans[0].fitting + plan->plans[1].fitting);
}

// The shortlist over both families: the overall pick, then the hedges within each family's
// ranking error of the pick, fastest first (the plain family's other block shapes; the split-K
// graph has no ranking error, so it adds none), then the rest in the ranking's order.
TEST_F(FamiliesTest, TheShortlistHedgesWithinEachFamilysRankingError) {
  auto plan = PlanFamilies(Families(/*top_k=*/20), m().device, {"M=8448", "N=8192", "K=8192", "ELT=2"}, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->choice.winner, PlainFamily());
  ASSERT_EQ(plan->shortlist.size(), 20u);
  auto at = [&](const FamilyRank& r) -> const RankedConfig& { return plan->plans[r.family].shortlist[r.index]; };
  const FamilyRank& first = plan->top.front();
  EXPECT_EQ(at(plan->shortlist.front()).index, plan->plans[first.family].top[first.index].index);
  const double limit =
      at(plan->shortlist.front()).perf.time_s * (1 + plan->plans[PlainFamily()].ranking_error_permille / 1000.0);
  size_t hedges = 1;
  while (hedges < plan->shortlist.size() && at(plan->shortlist[hedges]).hedge != Hedge::kNone) ++hedges;
  ASSERT_GE(hedges, 2u) << "other block shapes of the plain family are within its ranking error";
  for (size_t i = 1; i < plan->shortlist.size(); ++i) {
    const FamilyRank& r = plan->shortlist[i];
    if (i < hedges) {
      EXPECT_EQ(r.family, PlainFamily()) << i;
      EXPECT_LE(at(r).perf.time_s, limit) << i;
    } else {
      EXPECT_EQ(at(r).hedge, Hedge::kNone) << i;
    }
    if (i != hedges) EXPECT_FALSE(RankKeyOf(at(r)) < RankKeyOf(at(plan->shortlist[i - 1]))) << i;
  }
}

// The winner's summary and the choice: ratios to the best, and the part that decides is the
// larger of the two parts of the difference.
TEST_F(FamiliesTest, TheChoiceNamesTheLargerPartOfTheDifference) {
  auto plan = PlanBoth({"M=16", "N=4096", "K=14336"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const FamilyChoice& c = plan->choice;
  EXPECT_DOUBLE_EQ(plan->summaries[c.winner].ratio, 1.0);
  const double gain = plan->summaries[c.runner_up].best_time_s - plan->summaries[c.winner].best_time_s;
  EXPECT_GT(gain, 0);
  EXPECT_EQ(c.decides, c.exposed_gain_s > c.bound_gain_s ? FamilyTerm::kExposed : c.runner_up_bound);
  // The two parts are the whole difference.
  EXPECT_NEAR(c.bound_gain_s + c.exposed_gain_s, gain, 1e-12);
  EXPECT_EQ(plan->order, (std::vector<int>{c.winner, c.runner_up}));
}

// --set applies to the families that have the parameter: SPLIT_K fixes the split-K family only.
TEST_F(FamiliesTest, ASetAppliesToTheFamiliesThatHaveIt) {
  auto plan = PlanBoth({"SPLIT_K=8", "M=64"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const ParamAxis& a : plan->plans[SplitFamily()].axes) EXPECT_NE(a.name, "SPLIT_K");
  EXPECT_EQ(plan->plans[SplitFamily()].base_values[m().split.symbols.Find("SPLIT_K")], 8);
  EXPECT_EQ(plan->plans[PlainFamily()].base_values[m().plain.symbols.Find("M")], 64);
  EXPECT_EQ(plan->plans[SplitFamily()].base_values[m().split.symbols.Find("M")], 64);
}

// --param sweeps a parameter in the families that have it; the others sweep their own space.
TEST_F(FamiliesTest, AParamOnlyOneFamilyHasSweepsThatFamilyAlone) {
  auto plan = PlanBoth({}, {"SPLIT_K=2,8"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->plans[SplitFamily()].space_size, 288u * 2);
  EXPECT_EQ(plan->plans[PlainFamily()].space_size, 288u);
}

TEST_F(FamiliesTest, ASetNoFamilyHasIsAnErrorNamingIt) {
  auto plan = PlanBoth({"SPLITK=4"});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("--set SPLITK=4: no graph given has a parameter 'SPLITK'"));
  EXPECT_THAT(plan.status().message(), HasSubstr("triton_matmul_splitk: BLOCK_M"));
  auto param = PlanBoth({}, {"SPLITK=2..4"});
  ASSERT_FALSE(param.ok());
  EXPECT_THAT(param.status().message(), HasSubstr("--param 'SPLITK=2..4': no graph given has a parameter 'SPLITK'"));
}

TEST_F(FamiliesTest, TwoFamiliesOfOneNameAreAnError) {
  std::vector<KernelFamily> families = Families();
  families[1].graph = &m().plain;
  auto plan = PlanFamilies(families, m().device, {}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("the graph is named 'triton_matmul'"));
  EXPECT_THAT(plan.status().message(), HasSubstr("each kernel family needs a name of its own"));
}

// The families compare on their best even where no configuration is asked for.
TEST_F(FamiliesTest, TopZeroStillComparesTheFamilies) {
  auto plan = PlanFamilies(Families(/*top_k=*/0), m().device, {"M=16", "N=4096", "K=14336"}, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->top.empty());
  EXPECT_EQ(plan->choice.winner, SplitFamily());
}

TEST_F(FamiliesTest, AGraphWithoutANameIsAnError) {
  const CompiledGraph nameless = CompileGraphText(absl::StrReplaceAll(
      absl::StrFormat(kBlockSweepGraph, ""), {{"name: \"block_sweep\"", ""}}));
  std::vector<KernelFamily> families = Families();
  families[1].graph = &nameless;
  auto plan = PlanFamilies(families, m().device, {}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("test.pbtxt: the graph has no name"));
}

// Where no family has a configuration that fits, there is no ranking and no winner.
TEST_F(FamiliesTest, NothingThatFitsLeavesNoWinner) {
  auto plan = PlanBoth({"NUM_WARPS=4"}, {"BLOCK_M=256", "BLOCK_N=256", "BLOCK_K=128", "NUM_STAGES=4"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fitting, 0u);
  EXPECT_EQ(plan->choice.winner, -1);
  EXPECT_TRUE(plan->top.empty());
}

}  // namespace
}  // namespace scratchsim
