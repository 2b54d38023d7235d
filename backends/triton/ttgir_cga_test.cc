#include "backends/triton/ttgir_cga.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "backends/triton/ttgir_allocation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::ElementsAre;

const std::map<std::string, std::string> kAliases = {
    {"#blocked", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], "
                 "order = [1, 0], CGALayout = [[0, 1], [0, 2]]}>"},
    {"#bcast", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], "
               "order = [1, 0], CGALayout = [[0, 0]]}>"},
    {"#mma", "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
             "CGALayout = [[0, 1], [1, 0]], instrShape = [16, 64, 16]}>"},
    {"#linear", "#ttg.linear<{register = [[0, 1]], lane = [[1, 0]], warp = [[16, 0]], block = [[0, 64], [64, 0]]}>"},
    {"#shared", "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, "
                "CGALayout = [[0, 0, 1]]}>"},
    {"#old", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0], "
             "CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>"},
    {"#plain", "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"},
};

std::vector<int64_t> Split(const std::string& enc, int rank) {
  auto s = CtaSplitNum(enc, kAliases, rank);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::vector<int64_t>{};
}

TEST(CtaSplitNumTest, CountsTheBasesPerDimension) {
  EXPECT_THAT(Split("#blocked", 2), ElementsAre(1, 4));
  EXPECT_THAT(Split("#bcast", 2), ElementsAre(1, 1));  // a zero basis replicates the tile
  EXPECT_THAT(Split("#mma", 2), ElementsAre(2, 2));
  EXPECT_THAT(Split("#linear", 2), ElementsAre(2, 2));
  EXPECT_THAT(Split("#plain", 1), ElementsAre(1));
  EXPECT_THAT(Split("#old", 2), ElementsAre(2, 1));
  EXPECT_THAT(Split("#shared", 3), ElementsAre(1, 1, 2));
}

TEST(CtaSplitNumTest, SliceDropsItsDimensionAndDotOperandNeverSplitsK) {
  EXPECT_THAT(Split("#ttg.slice<{dim = 0, parent = #blocked}>", 1), ElementsAre(4));
  EXPECT_THAT(Split("#ttg.slice<{dim = 1, parent = #blocked}>", 1), ElementsAre(1));
  EXPECT_THAT(Split("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", 2), ElementsAre(2, 1));
  EXPECT_THAT(Split("#ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>", 2), ElementsAre(1, 2));
}

TEST(ShapePerCtaTest, DividesCappedAtTheDimensionAndAlignsTrailing) {
  EXPECT_THAT(ShapePerCta({128, 64}, {1, 4}), ElementsAre(128, 16));
  EXPECT_THAT(ShapePerCta({128, 2}, {1, 4}), ElementsAre(128, 1));
  EXPECT_THAT(ShapePerCta({3, 128, 64}, {2, 1}), ElementsAre(3, 64, 64));
}

TEST(PerCtaOpTextTest, RewritesShapesAndFindsCrossings) {
  auto same = PerCtaOpText("ttg.convert_layout %x : tensor<64x256xf32, #blocked> -> tensor<64x256xf32, #blocked>",
                           "ttg.convert_layout", kAliases);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->changed);
  EXPECT_FALSE(same->crosses_ctas);
  EXPECT_EQ(same->text, "ttg.convert_layout %x : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked>");
  auto cross = PerCtaOpText("ttg.convert_layout %x : tensor<64x256xf32, #blocked> -> tensor<64x256xf32, #bcast>",
                            "ttg.convert_layout", kAliases);
  ASSERT_TRUE(cross.ok());
  EXPECT_TRUE(cross->crosses_ctas);
  auto reduce = PerCtaOpText(
      "\"tt.reduce\"(%x) <{axis = 1 : i32}> : (tensor<64x256xf32, #blocked>) -> "
      "tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>",
      "tt.reduce", kAliases);
  ASSERT_TRUE(reduce.ok());
  EXPECT_TRUE(reduce->crosses_ctas);  // axis 1 is split over 4 CTAs
}

// Kernels compiled by Triton with num_ctas = 2, 4, 8 and 16 for sm_90 and sm_100 (tests/data/triton/
// cluster/<release>/, bench/triton/make_cluster_fixtures.py): the plan is Triton's
// metadata.shared on each, under the release that compiled it, and no op crosses CTAs.
std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string JsonField(const std::string& json, const std::string& key) {
  const size_t k = json.find("\"" + key + "\": ");
  if (k == std::string::npos) return "";
  size_t v = k + key.size() + 4;
  if (json[v] == '"') return json.substr(v + 1, json.find('"', v + 1) - v - 1);
  size_t e = json.find_first_of(",\n}", v);
  return json.substr(v, e - v);
}

TEST(ClusterFixturesTest, PlansTritonsFigurePerCta) {
  const std::filesystem::path root = std::filesystem::path(SCRATCHSIM_SOURCE_DIR) / "tests/data/triton/cluster";
  int checked = 0;
  for (const auto& release_dir : std::filesystem::directory_iterator(root)) {
    if (!release_dir.is_directory()) continue;
    for (const auto& entry : std::filesystem::directory_iterator(release_dir.path())) {
      if (entry.path().extension() != ".json") continue;
      const std::string json = ReadFile(entry.path());
      std::filesystem::path ttgir = entry.path();
      ttgir.replace_extension(".ttgir");
      PlanOptions options;
      auto release = ParseTritonRelease(JsonField(json, "triton_version"));
      ASSERT_TRUE(release.ok()) << entry.path();
      options.release = *release;
      int64_t shared = -1;
      ASSERT_TRUE(absl::SimpleAtoi(JsonField(json, "shared"), &shared)) << entry.path();
      auto plan = PlanTtgir(ReadFile(ttgir), ttgir.filename().string(), options);
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->allocation.shared, shared) << ttgir;
      EXPECT_GT(plan->num_ctas, 1) << ttgir;
      EXPECT_TRUE(plan->cross_cta_ops.empty()) << ttgir;
      auto module = ParseTtgir(ReadFile(ttgir), ttgir.filename().string());
      ASSERT_TRUE(module.ok()) << module.status();
      auto tmem = PlanTensorMemory(*module);
      ASSERT_TRUE(tmem.ok()) << tmem.status();
      EXPECT_EQ(tmem->columns, std::stoll(JsonField(json, "tmem_size"))) << ttgir;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 64);
}

}  // namespace
}  // namespace scratchsim::triton
