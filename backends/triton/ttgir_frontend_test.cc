#include "backends/triton/ttgir_frontend.h"

#include <fstream>
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

}  // namespace
}  // namespace scratchsim::triton
