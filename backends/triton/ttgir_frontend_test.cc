#include "backends/triton/ttgir_frontend.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/triton/ttgir_lexer.h"
#include "backends/triton/ttgir_testdata.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::HasSubstr;

// The policy replays Triton's plan on the graph's buffers: offsets and the peak are the plan's.
TEST(TtgirFrontendTest, PolicyPlacesTheGraphsBuffersAsThePlan) {
  auto kernel = LoadTtgirKernel(TtgirTestdataPath("pipelined.ttgir"));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  ASSERT_EQ(kernel->graph.buffers_size(), 3);
  // The ring (2 x 128 x 64 f16), the barriers (2 x i64) and the conversion's scratch.
  std::vector<Block> blocks = {{32768, 1024, 0, 0}, {16, 8, 0, 0}, {std::stoll(kernel->graph.buffers(2).size_bytes()), 16, 0, 0}};
  auto placed = kernel->policy->Place(blocks);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->peak, 32768 + 16);
  EXPECT_EQ(placed->offsets[2], 0);  // the conversion's scratch reuses the pipeline buffer
}

// Fewer stages shrink the ring: Triton's allocator places the same intervals at the new sizes.
TEST(TtgirFrontendTest, ResizedRingIsPlacedByTritonsAllocator) {
  auto kernel = LoadTtgirKernel(TtgirTestdataPath("pipelined.ttgir"));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<Block> blocks = {{16384, 1024, 0, 0}, {16, 8, 0, 0}, {std::stoll(kernel->graph.buffers(2).size_bytes()), 16, 0, 0}};
  auto placed = kernel->policy->Place(blocks);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->peak, 16384 + 16);
  EXPECT_EQ(placed->offsets[0], 0);
}

TEST(TtgirFrontendTest, BlocksThatAreNotThePlansAreAnInternalError) {
  auto kernel = LoadTtgirKernel(TtgirTestdataPath("pipelined.ttgir"));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<Block> blocks = {{16, 16, 0, 0}};
  EXPECT_EQ(kernel->policy->Place(blocks).status().code(), absl::StatusCode::kInternal);
}

TEST(TtgirFrontendTest, MalformedFileNamesFileAndLine) {
  const std::string path = ::testing::TempDir() + "/frontend_bad.ttgir";
  std::ofstream(path) << "module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k() {\n  ???\n }\n}\n";
  auto kernel = LoadTtgirKernel(path);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(kernel.status().message(), HasSubstr(path + ":3: expected an operation"));
}

// The front end reads through ReadTtgirFile: a line past the 16 MiB limit stops the read.
TEST(TtgirFrontendTest, LineLongerThanTheLimitNamesFileAndLine) {
  const std::string path = ::testing::TempDir() + "/frontend_long.ttgir";
  std::ofstream(path) << "module {\n" << std::string(kMaxTtgirLineBytes + 1, 'x') << "\n}\n";
  auto kernel = LoadTtgirKernel(path);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(kernel.status().message(), HasSubstr(path + ":2: line longer than the maximum"));
}

// Cluster launches (tests/data/triton/cluster): the report says the kernel is one, and that the
// figure is per CTA; the cluster's own limits are checked.
std::string ClusterFixture(const std::string& name) {
  std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/cluster/3.9.0/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

absl::StatusOr<TtgirKernel> LoadCluster(const std::string& text) {
  PlanOptions options;
  options.release = TritonRelease::k3_9;
  return LoadTtgirKernelFromText(text, "c.ttgir", options);
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(TtgirFrontendTest, ClusterLaunchIsNamedAndSizedPerCta) {
  const std::string text = ClusterFixture("transpose_ctas2_sm_90.ttgir");
  ASSERT_FALSE(text.empty());
  auto kernel = LoadCluster(text);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_THAT(kernel->notes, ::testing::Contains(HasSubstr("Cluster launch: 2 CTAs per cluster")));
  EXPECT_THAT(kernel->notes, ::testing::Contains(HasSubstr("per CTA, and so is this figure")));
  for (const Buffer& b : kernel->graph.buffers()) EXPECT_FALSE(b.has_estimate()) << b.name();
}

// A conversion whose result is split over the cluster differently from its source moves data
// between CTAs: not sized by the per-CTA rules, so its whole-cluster scratch is an estimate.
TEST(TtgirFrontendTest, ConversionAcrossCtasIsAnEstimate) {
  std::string text = ClusterFixture("transpose_ctas2_sm_90.ttgir");
  const size_t second = text.find("#blocked1 = ");
  ASSERT_NE(second, std::string::npos);
  text.replace(text.find("CGALayout = [[1, 0]]", second), 20, "CGALayout = [[0, 1]]");
  auto kernel = LoadCluster(text);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const Buffer& gap = kernel->graph.buffers(kernel->graph.buffers_size() - 1);
  EXPECT_EQ(gap.name(), "cluster_gap");
  EXPECT_EQ(gap.estimate().low_bytes(), "0");
  EXPECT_EQ(gap.estimate().high_bytes(), "32768");  // the 128x64 f32 tile of the whole cluster
  EXPECT_THAT(gap.estimate().basis(), HasSubstr("ttg.convert_layout at line"));
}

TEST(TtgirFrontendTest, ClusterLimitsAreChecked) {
  const std::string text = ClusterFixture("transpose_ctas2_sm_90.ttgir");
  auto ampere = LoadCluster(Replaced(text, "cuda:90", "cuda:80"));
  EXPECT_EQ(ampere.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ampere.status().message(), HasSubstr("thread-block clusters need NVIDIA sm_90 or later"));
  auto too_many = LoadCluster(Replaced(text, "\"ttg.num-ctas\" = 2", "\"ttg.num-ctas\" = 32"));
  EXPECT_THAT(too_many.status().message(), HasSubstr("at most 16 CTAs"));
  // Another vendor's cluster is sized the same way, and says it is unchecked; with no release
  // told, the module is planned under both and the note stays.
  auto amd = LoadTtgirKernelFromText(Replaced(text, "cuda:90", "hip:gfx950"), "c.ttgir");
  ASSERT_TRUE(amd.ok()) << amd.status();
  EXPECT_THAT(amd->notes, ::testing::Contains(HasSubstr("which no fixture of this target checks")));
  auto non_portable = LoadCluster(Replaced(text, "\"ttg.num-ctas\" = 2", "\"ttg.num-ctas\" = 16"));
  ASSERT_TRUE(non_portable.ok()) << non_portable.status();
  EXPECT_THAT(non_portable->notes, ::testing::Contains(HasSubstr("past the portable 8")));
}

}  // namespace
}  // namespace scratchsim::triton
