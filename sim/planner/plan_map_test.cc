#include "sim/planner/plan_map.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/planner/param_space.h"
#include "sim/svg_text.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using namespace ::scratchsim::testing;

// BM x BN f32 in shared memory: 256 x 256 (256 KiB) is over the H100's 227 KiB; BN above 4 BM
// breaks a requirement; W (warps) is the third swept parameter.
constexpr char kGridGraph[] = R"pb(
  name: "grid"
  parameters { name: "BM" default_value: 64 min: 32 max: 256 power_of_two: true }
  parameters { name: "BN" default_value: 64 min: 32 max: 256 power_of_two: true }
  parameters { name: "W" default_value: 4 min: 4 max: 8 power_of_two: true }
  parameters { name: "M" default_value: 4096 problem_size: true }
  requirements { expr: "BN <= 4 * BM" doc: "the tile is not too thin" }
  buffers { name: "a" shape: "BM" shape: "BN" dtype: "f32" memory_space: "smem" role: OPERAND }
  ops { name: "load" writes: "a" }
  ops { name: "use" reads: "a" }
  launch { num_warps: "W" grid: "cdiv(M, BM) * cdiv(M, BN)" }
  flops: "2 * BM * BN * 4096"
  compute_dtype: "f16"
)pb";

struct Fixture {
  CompiledGraph graph = CompileGraphText(kGridGraph);
  DeviceModel device = ShippedDevice("h100");
  PlanOptions options;
  PlanResult plan;
  Fixture() {
    options.top_k = 5;
    options.threads = 1;
    auto axes = BuildParamSpace(graph, {}, {});
    EXPECT_TRUE(axes.ok()) << axes.status();
    auto values = BindParameters(graph, {});
    EXPECT_TRUE(values.ok()) << values.status();
    auto result = Plan(graph, device, *axes, *values, options);
    EXPECT_TRUE(result.ok()) << result.status();
    plan = *std::move(result);
  }
  PlanMap Map(const std::string& x = "BM", const std::string& y = "BN") {
    auto map = BuildPlanMap(graph, device, plan, x, y, options);
    EXPECT_TRUE(map.ok()) << map.status();
    return map.ok() ? *std::move(map) : PlanMap();
  }
};

TEST(PlanMapTest, CellsFollowTheTwoAxes) {
  Fixture f;
  const PlanMap map = f.Map();
  EXPECT_THAT(map.x_values, ElementsAre(32, 64, 128, 256));
  EXPECT_THAT(map.y_values, ElementsAre(32, 64, 128, 256));
  ASSERT_EQ(map.cells.size(), 16u);
  EXPECT_EQ(map.at(1, 2).x, 128);  // row BN=64, column BM=128
  EXPECT_EQ(map.at(1, 2).y, 64);
}

TEST(PlanMapTest, PrunedCellsNameTheirLimitInTheDevicesWords) {
  Fixture f;
  const PlanMap map = f.Map();
  const PlanMapCell& corner = map.at(3, 3);
  EXPECT_FALSE(corner.outcome.fits);
  EXPECT_EQ(corner.pruned_by, "shared memory");
  EXPECT_EQ(corner.detail, "262144 B > 232448 B");
}

TEST(PlanMapTest, ABrokenRequirementIsNamed) {
  Fixture f;
  const PlanMap map = f.Map();
  const PlanMapCell& thin = map.at(3, 0);  // BM=32, BN=256
  EXPECT_EQ(thin.pruned_by, "invalid");
  EXPECT_THAT(thin.detail, HasSubstr("BN <= 4 * BM"));
}

TEST(PlanMapTest, FittingCellsCarryAnEstimate) {
  Fixture f;
  const PlanMap map = f.Map();
  const PlanMapCell& c = map.at(0, 0);
  EXPECT_TRUE(c.outcome.fits);
  EXPECT_TRUE(c.outcome.estimated);
  EXPECT_GT(c.outcome.time_s, 0);
}

TEST(PlanMapTest, OtherAxesTakeTheBestConfigurationsValues) {
  Fixture f;
  ASSERT_FALSE(f.plan.top.empty());
  const PlanMap map = f.Map();
  EXPECT_TRUE(map.fixed_at_best);
  EXPECT_THAT(map.others, ElementsAre(Pair("W", f.plan.top[0].values[2])));
  EXPECT_THAT(map.fixed, ElementsAre(Pair("M", 4096)));
}

TEST(PlanMapTest, TheBestConfigurationIsRankOne) {
  Fixture f;
  const PlanMap map = f.Map();
  int ranked_one = 0;
  for (const PlanMapCell& c : map.cells) {
    if (c.rank != 1) continue;
    ++ranked_one;
    EXPECT_EQ(c.x, f.plan.top[0].values[0]);
    EXPECT_EQ(c.y, f.plan.top[0].values[1]);
  }
  EXPECT_EQ(ranked_one, 1);
  EXPECT_EQ(map.top_total, 5);
}

TEST(PlanMapTest, AnAxisThePlanDidNotSweepIsAnError) {
  Fixture f;
  auto map = BuildPlanMap(f.graph, f.device, f.plan, "BM", "M", f.options);
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.status().message(), "--map-axes: 'M' is not a swept parameter (swept: BM, BN, W)");
  EXPECT_FALSE(BuildPlanMap(f.graph, f.device, f.plan, "BM", "BM", f.options).ok());
}

TEST(PlanMapTest, SvgHasACellPerConfigurationAndALegend) {
  Fixture f;
  const std::string svg = RenderPlanMapSvg(f.Map());
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  size_t cells = 0;
  for (size_t at = svg.find("<g><title>"); at != std::string::npos; at = svg.find("<g><title>", at + 1)) ++cells;
  EXPECT_EQ(cells, 16u);
  EXPECT_THAT(svg, HasSubstr(">pruned by</text>"));
  EXPECT_THAT(svg, HasSubstr(">shared memory (1 cell)</text>"));
  EXPECT_THAT(svg, HasSubstr(">estimated time (fits)</text>"));
  EXPECT_THAT(svg, HasSubstr("BM=256 BN=256 (W="));
  EXPECT_THAT(svg, HasSubstr("pruned by shared memory: 262144 B &gt; 232448 B"));
  // The cell itself shows the figure, not only its hover title.
  EXPECT_THAT(svg, HasSubstr("font-size=\"10\">256K &gt; 227K</text>"));
  EXPECT_THAT(svg, HasSubstr(">#1</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
}

TEST(PlanMapTest, LdsOnAmdDevices) {
  Fixture f;
  f.device = ShippedDevice("mi300x");
  auto values = BindParameters(f.graph, {});
  ASSERT_TRUE(values.ok());
  // 256 x 256 f32 is 256 KiB, over the MI300X's 64 KiB of LDS; so is 128 x 256.
  auto plan = Plan(f.graph, f.device, *BuildParamSpace(f.graph, {}, {}), *values, f.options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto map = BuildPlanMap(f.graph, f.device, *plan, "BM", "BN", f.options);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->at(3, 3).pruned_by, "LDS");
}

// A map of `nx` x `ny` configurations: the time grows with x + y, every third diagonal pruned.
PlanMap SyntheticMap(int nx, int ny) {
  PlanMap map;
  map.kernel = "k";
  map.device = "h100";
  map.x_name = "BM";
  map.y_name = "BN";
  for (int x = 0; x < nx; ++x) map.x_values.push_back(x + 1);
  for (int y = 0; y < ny; ++y) map.y_values.push_back(y + 1);
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      PlanMapCell c;
      c.x = x + 1;
      c.y = y + 1;
      c.outcome.fits = (x + y) % 3 != 2;
      c.outcome.estimated = c.outcome.fits;
      c.outcome.time_s = 1e-6 * (1 + x + y);
      if (!c.outcome.fits) {
        c.outcome.limit = Limit::kSharedMemory;
        c.pruned_by = "shared memory";
        c.detail = "245760 B > 232448 B";
      }
      map.cells.push_back(std::move(c));
    }
  }
  map.cells[0].rank = 1;
  map.top_total = 1;
  return map;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// F15 (issue 37): 1024 x 1024 configurations drew a 505 MB SVG. Beyond kMaxSvgElements cells
// each cell is a block of configurations showing its fastest, and the picture says so.
TEST(PlanMapTest, AMapOfMoreCellsThanTheBoundIsDrawnInBlocks) {
  const std::string svg = RenderPlanMapSvg(SyntheticMap(300, 200));
  EXPECT_LE(Count(svg, "<g><title>"), static_cast<size_t>(kMaxSvgElements));
  EXPECT_GT(Count(svg, "<g><title>"), static_cast<size_t>(kMaxSvgElements) / 2);
  EXPECT_THAT(svg, HasSubstr("summarised: 300 x 200 configurations are more than the 4096 cells drawn one by one"));
  // The first block: BM 1..6, BN 1..4 (300 / 6 = 50 columns, 200 / 4 = 50 rows... at most 4096 cells).
  EXPECT_THAT(svg, ::testing::ContainsRegex("<title>BM=1\\.\\.[0-9]+ BN=1\\.\\.[0-9]+: [0-9]+ configurations, [0-9]+ fit; "
                                            "shown: BM=1 BN=1"));
  EXPECT_THAT(svg, HasSubstr(">#1</text>"));  // the block holding the best keeps its rank
  EXPECT_LT(svg.size(), size_t{4} << 20);
}

// A block where nothing fits shows what pruned it.
TEST(PlanMapTest, ABlockWhereNothingFitsShowsItsLimit) {
  PlanMap map = SyntheticMap(130, 130);
  for (PlanMapCell& c : map.cells) {
    if (c.x <= 8 && c.y <= 8) {
      c.outcome.fits = false;
      c.outcome.limit = Limit::kSharedMemory;
      c.pruned_by = "shared memory";
    }
  }
  const std::string svg = RenderPlanMapSvg(map);
  EXPECT_THAT(svg, ::testing::ContainsRegex("<title>BM=1\\.\\.[0-9]+ BN=1\\.\\.[0-9]+: [0-9]+ configurations, 0 fit; shown: "
                                            "BM=1 BN=1[^<]*pruned by shared memory"));
}

// Up to the bound every configuration is a cell of its own.
TEST(PlanMapTest, AMapAtTheBoundIsDrawnCellByCell) {
  const std::string svg = RenderPlanMapSvg(SyntheticMap(64, 64));
  EXPECT_EQ(Count(svg, "<g><title>"), 4096u);
  EXPECT_THAT(svg, Not(HasSubstr("summarised")));
}

}  // namespace
}  // namespace scratchsim
