// Layout conversions of small tiles under few warps, compiled by Triton 3.6.0 and 3.9.0 on the
// CPU (tests/data/triton/cvt: a tile stored transposed, num_warps 1, 2 and 4, sm_80, sm_90 and
// gfx942): the plan of each release's TTGIR, under that release's rules, is Triton's
// metadata.shared to the byte.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_layout.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CvtFixturesTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CvtFixturesTest, EveryConversionIsTritonsFigure) {
  const std::string version = GetParam();
  std::ifstream index(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/cvt/" + version + ".tsv");
  ASSERT_TRUE(index.good());
  absl::StatusOr<TritonRelease> release = ParseTritonRelease(version);
  ASSERT_TRUE(release.ok()) << release.status();
  PlanOptions options;
  options.release = *release;
  std::string line;
  std::getline(index, line);  // header
  int checked = 0;
  while (std::getline(index, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    ASSERT_EQ(f.size(), 6u) << line;
    int64_t shared = 0;
    ASSERT_TRUE(absl::SimpleAtoi(f[5], &shared)) << line;
    const std::string text =
        ReadFile(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_cvt/" + version + "/" + f[0] + ".ttgir");
    ASSERT_FALSE(text.empty()) << f[0];
    auto plan = PlanTtgir(text, f[0], options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->allocation.shared, shared) << version << " " << f[0];
    ++checked;
  }
  EXPECT_EQ(checked, 81);
}

INSTANTIATE_TEST_SUITE_P(Releases, CvtFixturesTest, ::testing::Values("3.6.0", "3.9.0"));

}  // namespace
}  // namespace scratchsim::triton
