#include "sim/driver/plan_output.h"

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/planner/param_space.h"
#include "sim/planner/planner_test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::scratchsim::testing;

// The plain and the split-K Triton matmul planned together on the H200 for a shape both rank in
// the top 30 of (split-K first: 128 x 256 tiles are 6 x 16, 96 blocks for the 132 SMs),
// and the plain one alone, once for every test.
class PlanOutputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    PlanOptions options;
    options.top_k = 30;
    options.threads = 1;
    const std::vector<std::string> sets = {"M=768", "N=4096", "K=4096"};
    auto families = PlanFamilies({KernelFamily{&m().plain, options}, KernelFamily{&m().split, options}}, m().device,
                                 sets, {});
    ASSERT_TRUE(families.ok()) << families.status();
    families_ = new FamiliesPlan(*std::move(families));
    auto values = BindParameters(m().plain, sets);
    auto axes = BuildParamSpace(m().plain, {}, sets);
    ASSERT_TRUE(values.ok() && axes.ok());
    auto single = Plan(m().plain, m().device, *axes, *values, options);
    ASSERT_TRUE(single.ok()) << single.status();
    single_ = new PlanResult(*std::move(single));
  }
  static void TearDownTestSuite() {
    delete families_;
    delete single_;
  }

  static const MatmulFamilies& m() { return SharedMatmulFamilies(); }
  static std::string Families(const std::string& format) {
    std::ostringstream out;
    RenderFamilies(*families_, {&m().plain, &m().split}, m().device, format, out);
    return out.str();
  }
  static std::string Single(const std::string& format) {
    std::ostringstream out;
    RenderPlan(*single_, m().plain, m().device, format, out);
    return out.str();
  }

  static FamiliesPlan* families_;
  static PlanResult* single_;
};

FamiliesPlan* PlanOutputTest::families_ = nullptr;
PlanResult* PlanOutputTest::single_ = nullptr;

TEST_F(PlanOutputTest, TextRanksWithAFamilyColumn) {
  const std::string text = Families("text");
  EXPECT_THAT(text, HasSubstr("plan     triton_matmul on h200"));
  EXPECT_THAT(text, HasSubstr("plan     triton_matmul_splitk on h200"));
  EXPECT_THAT(text, HasSubstr("  rank family               BLOCK_M BLOCK_N BLOCK_K NUM_STAGES NUM_WARPS SPLIT_K"));
  EXPECT_THAT(text, HasSubstr("     1 triton_matmul_splitk "));
}

// The families line lists each family's best, fastest first, with its ratio to the best; the why
// line names the winner and the term that decides.
TEST_F(PlanOutputTest, TextSaysWhichFamilyWinsAndWhy) {
  const std::string text = Families("text");
  EXPECT_THAT(text, ::testing::ContainsRegex("\nfamilies triton_matmul_splitk [0-9.]+ us \\(best\\); "
                                             "triton_matmul [0-9.]+ us \\([0-9.]+x\\)\n"));
  EXPECT_THAT(text, HasSubstr("\nwhy      triton_matmul_splitk's best is "));
  EXPECT_THAT(text, HasSubstr("faster than triton_matmul's"));
  EXPECT_THAT(text, HasSubstr("decided by "));
}

// A family sweeps parameters the other lacks: its rows of the ranking show "-" there.
TEST_F(PlanOutputTest, TextShowsADashForAParameterAFamilyLacks) {
  const std::string all = Families("text");
  const std::string text = all.substr(0, all.find("\nautotune shortlist"));
  const std::regex plain_row("^ +[0-9]+ triton_matmul +");
  const std::regex dash_for_split_k("^ +[0-9]+ triton_matmul +( +[0-9]+){5} +- +[0-9.]+ +[0-9.]+  smem");
  int rows = 0;
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(text, '\n'))) {
    if (!std::regex_search(line, plain_row)) continue;
    ++rows;
    EXPECT_TRUE(std::regex_search(line, dash_for_split_k)) << line;
  }
  EXPECT_GT(rows, 0) << text;
}

TEST_F(PlanOutputTest, JsonGivesEachConfigItsFamilyAndSummarizesTheFamilies) {
  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(Families("json"), &json).ok()) << Families("json");
  const auto& fields = json.fields();
  ASSERT_TRUE(fields.contains("configs"));
  for (const auto& config : fields.at("configs").list_value().values()) {
    const std::string family = config.struct_value().fields().at("family").string_value();
    EXPECT_TRUE(family == "triton_matmul" || family == "triton_matmul_splitk") << family;
  }
  const auto& families = fields.at("families").list_value().values();
  ASSERT_EQ(families.size(), 2);
  EXPECT_EQ(families[0].struct_value().fields().at("family").string_value(), "triton_matmul_splitk");
  EXPECT_EQ(families[0].struct_value().fields().at("ratio_to_best").number_value(), 1.0);
  EXPECT_GT(families[1].struct_value().fields().at("ratio_to_best").number_value(), 1.0);
  EXPECT_TRUE(families[1].struct_value().fields().contains("pruned"));
  const auto& choice = fields.at("choice").struct_value().fields();
  EXPECT_EQ(choice.at("winner").string_value(), "triton_matmul_splitk");
  EXPECT_EQ(choice.at("runner_up").string_value(), "triton_matmul");
  EXPECT_THAT(choice.at("why").string_value(), HasSubstr("decided by"));
}

// Where the autotuning shortlist is not the ranking's order, the text lists it with each
// configuration's place in the ranking and why a hedge is there.
TEST_F(PlanOutputTest, TextListsTheShortlistWithEachPlaceInTheRanking) {
  const std::string text = Single("text");
  EXPECT_THAT(text, HasSubstr("\nautotune shortlist: the pick and, where co-resident blocks share sync waits, the "
                              "ranking's second; then, with each block's sync waits its own, that reading's pick and "
                              "the fastest configuration of each other block shape whose estimate is within the "
                              "model's ranking error (30.2%) of it, each followed by the fastest at more blocks/SM if "
                              "their sync waits were filled, where that would make it faster"));
  EXPECT_THAT(text, HasSubstr("   try BLOCK_M BLOCK_N BLOCK_K NUM_STAGES NUM_WARPS   time(us)   rank\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("\n +3( +[0-9]+){5} +[0-9.]+ +[0-9]+  the fastest of its block shape\n"));
}

// The JSON gives the ranking error and the shortlist, its hedges marked.
TEST_F(PlanOutputTest, JsonGivesTheShortlistAndMarksItsHedges) {
  google::protobuf::Struct json;
  const std::string text = Single("json");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &json).ok()) << text;
  const auto& fields = json.fields();
  EXPECT_DOUBLE_EQ(fields.at("ranking_error").number_value(), 0.302);
  const auto& shortlist = fields.at("shortlist").list_value().values();
  ASSERT_EQ(shortlist.size(), 30);
  EXPECT_FALSE(shortlist[0].struct_value().fields().contains("hedge"));
  EXPECT_FALSE(shortlist[1].struct_value().fields().contains("hedge"));
  EXPECT_EQ(shortlist[1].struct_value().fields().at("rank").number_value(), 2);
  EXPECT_TRUE(shortlist[2].struct_value().fields().at("hedge").bool_value());
  EXPECT_EQ(shortlist[2].struct_value().fields().at("hedge_reason").string_value(), "block_shape");
  EXPECT_EQ(shortlist[2].struct_value().fields().at("rank").number_value(), 3);
  const auto& families = Families("json");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(families, &json).ok()) << families;
  EXPECT_EQ(json.fields().at("shortlist").list_value().values_size(), 30);
}

TEST_F(PlanOutputTest, CsvHasAFamilyColumn) {
  const std::string csv = Families("csv");
  EXPECT_THAT(csv, ::testing::StartsWith("rank,family,BLOCK_M,BLOCK_N,BLOCK_K,NUM_STAGES,NUM_WARPS,SPLIT_K,estimated_us"));
  EXPECT_THAT(csv, HasSubstr("\n1,triton_matmul_splitk,"));
}

// One graph's plan has no family anywhere: its output is what it was before families.
// Each `why` states the model's comparison plainly: never "compute-bound (16 flop/B vs ridge
// 148)", which reads as a contradiction; the ridge is compared in words where it decides.
TEST_F(PlanOutputTest, BoundWordingStatesTheComparison) {
  const std::string text = Single("text");
  EXPECT_THAT(text, Not(HasSubstr("vs ridge")));
  const std::regex why(R"(why: (compute|memory|latency|shared-memory)-bound: )");
  int whys = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find("why: ") == absl::string_view::npos) continue;
    ++whys;
    EXPECT_TRUE(std::regex_search(std::string(line), why)) << line;
    const bool memory = line.find("memory-bound: ") != absl::string_view::npos;
    if (line.find("the ridge of") != absl::string_view::npos && line.find("though") == absl::string_view::npos) {
      EXPECT_EQ(memory, line.find("is below the ridge") != absl::string_view::npos) << line;
    }
  }
  EXPECT_GT(whys, 0);
}

TEST_F(PlanOutputTest, OneGraphHasNoFamilyColumn) {
  EXPECT_THAT(Single("text"), Not(HasSubstr("family")));
  EXPECT_THAT(Single("json"), Not(HasSubstr("family")));
  EXPECT_THAT(Single("csv"), ::testing::StartsWith("rank,BLOCK_M,"));
}

}  // namespace
}  // namespace scratchsim
