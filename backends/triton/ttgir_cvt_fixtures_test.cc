// Fixture sets compiled by Triton 3.6.0 and 3.9.0 on the CPU: the plan of each release's TTGIR,
// under that release's rules, is Triton's metadata.shared to the byte.
//   tests/data/triton/cvt: small tiles stored transposed under 1, 2 and 4 warps (sm_80, sm_90,
//     gfx942);
//   tests/data/triton/lds: conversions too large for the LDS (gfx942, gfx950), which AMD's
//     OptimizeLDSUsage splits (Triton 3.6 after the TTGIR is written, 3.9 before);
//   tests/data/triton/nvmma: attention with small heads, nvmma_shared tiles swizzled by 32 or 64
//     bytes (aligned below 1024; sm_100, sm_90);
//   tests/data/triton/atomic: atomics whose result is used, tensor and scalar, under 1, 2 and 4
//     warps (sm_80, sm_90, gfx942): Triton 3.9 broadcasts within a warp without shared memory;
//   tests/data/triton/xcta: reductions across a cluster's CTAs (num_ctas 2 and 4; sm_90, sm_100),
//     which Triton 3.9 exchanges through the per-CTA scratch: nothing estimated on top;
//   tests/data/triton/cvt_bcast: conversions out of a source every warp holds whole (sm_90, 2
//     warps), which Triton 3.9 does within each warp where the exchange allows it;
//   tests/data/triton/ops_registered: a kernel per registered op a kernel reaches (sm_90, sm_100,
//     gfx942, gfx950, gfx1250), the atomic loads, polls and shared-memory atomic scatters under
//     1, 2 and 4 warps.
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

struct FixtureSet {
  const char* set;      // tests/data/triton/<set>, unpacked into build/triton_<set>
  const char* version;
  int count;            // fixtures in the set's index
  // Every cross-CTA op of the set is sized by the release's rules: no cluster estimate is left.
  bool no_cluster_estimate = false;
};

class CvtFixturesTest : public ::testing::TestWithParam<FixtureSet> {};

TEST_P(CvtFixturesTest, EveryConversionIsTritonsFigure) {
  const std::string set = GetParam().set, version = GetParam().version;
  std::ifstream index(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/" + set + "/" + version + ".tsv");
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
    ASSERT_GE(f.size(), 2u) << line;
    int64_t shared = 0;
    ASSERT_TRUE(absl::SimpleAtoi(f.back(), &shared)) << line;
    const std::string text =
        ReadFile(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_" + set + "/" + version + "/" + f[0] + ".ttgir");
    ASSERT_FALSE(text.empty()) << f[0];
    auto plan = PlanTtgir(text, f[0], options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->allocation.shared, shared) << version << " " << f[0];
    if (GetParam().no_cluster_estimate) EXPECT_TRUE(plan->cross_cta_ops.empty()) << version << " " << f[0];
    ++checked;
  }
  EXPECT_EQ(checked, GetParam().count);
}

INSTANTIATE_TEST_SUITE_P(Releases, CvtFixturesTest,
                         ::testing::Values(FixtureSet{"cvt", "3.6.0", 81}, FixtureSet{"cvt", "3.9.0", 81},
                                           FixtureSet{"lds", "3.6.0", 132}, FixtureSet{"lds", "3.9.0", 132},
                                           FixtureSet{"nvmma", "3.6.0", 144}, FixtureSet{"nvmma", "3.9.0", 144},
                                           FixtureSet{"atomic", "3.6.0", 120}, FixtureSet{"atomic", "3.9.0", 120},
                                           FixtureSet{"xcta", "3.6.0", 24}, FixtureSet{"xcta", "3.9.0", 72, true},
                                           FixtureSet{"cvt_bcast", "3.6.0", 8}, FixtureSet{"cvt_bcast", "3.9.0", 8},
                                           FixtureSet{"ops_registered", "3.6.0", 13},
                                           FixtureSet{"ops_registered", "3.9.0", 96}));

}  // namespace
}  // namespace scratchsim::triton
