// Runs one configuration of every kernel family on the GPU and checks it against its CPU
// reference and its expected shared-memory footprint. Skips where no CUDA device is present.
#include <string>
#include <tuple>
#include <vector>

#include "backends/cuda/kernel_registry.h"
#include "backends/cuda/measure.h"
#include "gtest/gtest.h"

namespace scratchsim::cuda {
namespace {

struct Expected {
  const char* graph;
  ParamMap params;
  int64_t static_bytes;
  int64_t dynamic_bytes;
  int threads;
};

class KernelsTest : public ::testing::TestWithParam<Expected> {};

TEST_P(KernelsTest, LaunchesAndMatchesReference) {
  if (!DevicePresent()) GTEST_SKIP() << "no CUDA device";
  const Expected& e = GetParam();
  auto kernel = MakeCase(e.graph, e.params);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto m = Measure(**kernel, MeasureOptions{});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->launch_error, "cudaSuccess");
  EXPECT_EQ(m->correctness, "ok");
  EXPECT_EQ(m->static_shared_bytes, e.static_bytes);
  EXPECT_EQ(m->dynamic_shared_bytes, e.dynamic_bytes);
  EXPECT_EQ(m->threads, e.threads);
  EXPECT_GE(m->blocks_per_sm, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Families, KernelsTest,
    ::testing::Values(
        Expected{"gemm", {{"DTYPE", 0}, {"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"NUM_STAGES", 3}, {"NUM_WARPS", 4}},
                 0, 3 * (64 * 32 + 32 * 64) * 4, 128},
        Expected{"gemm", {{"DTYPE", 1}, {"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, {"NUM_STAGES", 1}, {"NUM_WARPS", 8}},
                 0, (128 * 32 + 32 * 128) * 2, 256},
        Expected{"gemm", {{"DTYPE", 2}, {"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"NUM_STAGES", 9}, {"NUM_WARPS", 4}},
                 0, 9 * (128 * 64 + 64 * 64) * 2, 128},
        // Split-K: 4 K shares of stages + 2 tiles each, added into C, checked in full; the same
        // shared memory as one share.
        Expected{"gemm", {{"DTYPE", 1}, {"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"NUM_STAGES", 3}, {"NUM_WARPS", 4},
                          {"SPLIT_K", 4}},
                 0, 3 * (64 * 32 + 32 * 64) * 2, 128},
        Expected{"geglu_mlp", {{"tile_t", 16}, {"tile_h", 16}, {"I_RED", 128}, {"num_warps", 4}, {"num_stages", 3}},
                 0, 2 * (16 * 16 + 2 * 16 * 128) * 4, 128},
        Expected{"softmax", {{"ROW", 5000}, {"NUM_WARPS", 8}}, 0, 20000 + 32, 256},
        Expected{"ws_producer_consumer",
                 {{"PRODUCER_WARPS", 2}, {"CONSUMER_WARPS", 4}, {"NUM_STAGES", 3}, {"TILE_BYTES", 4096}, {"LAUNCH_BOUND", 256}},
                 256, 3 * 4096, 192},
        Expected{"regheavy", {{"DEMAND", 128}, {"REG_CAP", 64}, {"NUM_WARPS", 4}}, 0, 0, 128}));

TEST(KernelsTest, UnknownInstanceIsAnErrorNamingWhatIsCompiled) {
  auto kernel = MakeCase("gemm", {{"DTYPE", 1}, {"BLOCK_M", 7}, {"BLOCK_N", 64}, {"BLOCK_K", 32},
                                  {"NUM_STAGES", 1}, {"NUM_WARPS", 4}});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("no compiled instance"), std::string::npos);
  EXPECT_FALSE(MakeCase("nonesuch", {}).ok());
  EXPECT_FALSE(MakeCase("softmax", {{"ROW", 0}, {"NUM_WARPS", 8}}).ok());
  EXPECT_FALSE(MakeCase("ws_producer_consumer", {{"PRODUCER_WARPS", 1}, {"CONSUMER_WARPS", 1},
                                                 {"NUM_STAGES", 1}, {"TILE_BYTES", 20},
                                                 {"LAUNCH_BOUND", 256}}).ok());
}

TEST(KernelsTest, GemmTimingCaseChecksItsProblemSize) {
  // 2 dtypes x (3 x 3 x 2 x 2 tiles + 10 of BLOCK_M 16), all constructible without a GPU.
  EXPECT_EQ(GemmTimingTiles().size(), 92u);
  std::string error;
  ParamMap params = {{"DTYPE", 0}, {"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, {"NUM_STAGES", 2},
                     {"NUM_WARPS", 4}, {"M", 1024}, {"N", 1024}, {"K", 1024}};
  auto kernel = MakeGemmTimingCase(params, &error);
  ASSERT_NE(kernel, nullptr) << error;
  EXPECT_EQ(kernel->name(), "gemm<f32,128,128,32,4>");
  EXPECT_EQ(kernel->grid().x, 8u);
  EXPECT_EQ(kernel->dynamic_shared_bytes(), 2 * (128 * 32 + 32 * 128) * 4);
  for (const auto& [name, value] : std::vector<std::pair<std::string, int64_t>>{
           {"M", 1000}, {"K", 0}, {"N", -128}, {"K", int64_t{1} << 21}}) {
    ParamMap bad = params;
    bad[name] = value;
    EXPECT_EQ(MakeGemmTimingCase(bad, &error), nullptr) << name;
    EXPECT_NE(error.find("multiples"), std::string::npos) << error;
  }
  ParamMap no_tile = params;
  no_tile["BLOCK_M"] = 256;
  EXPECT_EQ(MakeGemmTimingCase(no_tile, &error), nullptr);
  EXPECT_NE(error.find("no compiled timing instance"), std::string::npos) << error;
  ParamMap no_stages = params;
  no_stages["NUM_STAGES"] = 0;
  EXPECT_EQ(MakeGemmTimingCase(no_stages, &error), nullptr);
  EXPECT_NE(error.find("NUM_STAGES"), std::string::npos) << error;
  // Unused shared bytes (gemm-timing --blocks-per-sm) add to the launch's dynamic shared memory.
  ParamMap padded = params;
  padded["SHARED_PAD"] = 4096;
  kernel = MakeGemmTimingCase(padded, &error);
  ASSERT_NE(kernel, nullptr) << error;
  EXPECT_EQ(kernel->dynamic_shared_bytes(), 2 * (128 * 32 + 32 * 128) * 4 + 4096);
  padded["SHARED_PAD"] = -1;
  EXPECT_EQ(MakeGemmTimingCase(padded, &error), nullptr);
  EXPECT_NE(error.find("SHARED_PAD"), std::string::npos) << error;
}

TEST(KernelsTest, GemmTimingCaseSplitsK) {
  std::string error;
  ParamMap params = {{"DTYPE", 1}, {"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, {"NUM_STAGES", 3},
                     {"NUM_WARPS", 8}, {"M", 128}, {"N", 256}, {"K", 16384}};
  // SPLIT_K 1 (and no SPLIT_K) is the plain kernel every earlier timing ran; more shares are the
  // split-K instance, with the shares as the grid's z extent and the same shared memory.
  auto with_split = [&](int64_t split_k) {
    ParamMap split_params = params;
    split_params["SPLIT_K"] = split_k;
    return MakeGemmTimingCase(split_params, &error);
  };
  auto plain = MakeGemmTimingCase(params, &error);
  auto one = with_split(1);
  auto split = with_split(8);
  ASSERT_TRUE(plain != nullptr && one != nullptr && split != nullptr) << error;
  EXPECT_EQ(one->name(), "gemm<f16,128,128,32,8>");
  EXPECT_EQ(one->function(), plain->function());
  EXPECT_EQ(one->grid().z, 1u);
  EXPECT_EQ(split->name(), "gemm_split_k<f16,128,128,32,8>");
  EXPECT_NE(split->function(), plain->function());
  EXPECT_EQ(split->grid().x, 2u);
  EXPECT_EQ(split->grid().y, 1u);
  EXPECT_EQ(split->grid().z, 8u);
  EXPECT_EQ(split->dynamic_shared_bytes(), plain->dynamic_shared_bytes());
  for (const int64_t bad : {0, -1, 65}) {
    EXPECT_EQ(with_split(bad), nullptr) << bad;
    EXPECT_NE(error.find("SPLIT_K must be in [1, 64]"), std::string::npos) << error;
  }
  // K = 256 is 8 tiles of 32: a ninth share would have none.
  params["K"] = 256;
  EXPECT_EQ(with_split(9), nullptr);
  EXPECT_NE(error.find("SPLIT_K 9 exceeds the 8 K tiles"), std::string::npos) << error;
  EXPECT_FALSE(MakeCase("gemm", {{"DTYPE", 1}, {"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32},
                                 {"NUM_STAGES", 3}, {"NUM_WARPS", 4}, {"SPLIT_K", 0}}).ok());
}

// On the GPU: K-heavy shapes split evenly, unevenly (10 K tiles in shares of 3, 3, 3, 1) and with
// an empty last share (6 tiles in shares of 2, 2, 2, 0) match the CPU reference at the sampled
// outputs, C zeroed by each launch (the check follows the first, the timing repeats it).
TEST(KernelsTest, SplitKMatchesTheReference) {
  if (!DevicePresent()) GTEST_SKIP() << "no CUDA device";
  for (const auto& [dtype, k, split] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 16384, 8}, {0, 16384, 16}, {1, 320, 4}, {0, 192, 4}}) {
    std::string error;
    ParamMap params = {{"DTYPE", dtype}, {"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"NUM_STAGES", 3},
                       {"NUM_WARPS", 4}, {"M", 128}, {"N", 256}, {"K", k}, {"SPLIT_K", split}};
    auto kernel = MakeGemmTimingCase(params, &error);
    ASSERT_NE(kernel, nullptr) << error;
    MeasureOptions options;
    options.timed_launches = 3;
    auto m = Measure(*kernel, options);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->launch_error, "cudaSuccess") << k << " " << split;
    EXPECT_EQ(m->correctness, "ok") << k << " " << split;
    EXPECT_GT(m->time_ms, 0);
  }
}

TEST(KernelsTest, SpillsAppearAboveTheRegisterCap) {
  if (!DevicePresent()) GTEST_SKIP() << "no CUDA device";
  auto below = MakeCase("regheavy", {{"DEMAND", 32}, {"REG_CAP", 64}, {"NUM_WARPS", 4}});
  auto above = MakeCase("regheavy", {{"DEMAND", 128}, {"REG_CAP", 64}, {"NUM_WARPS", 4}});
  ASSERT_TRUE(below.ok() && above.ok());
  auto mb = Measure(**below, MeasureOptions{});
  auto ma = Measure(**above, MeasureOptions{});
  ASSERT_TRUE(mb.ok() && ma.ok());
  EXPECT_EQ(mb->local_bytes, 0);
  EXPECT_GT(ma->local_bytes, 0);
  EXPECT_EQ(ma->registers, 64);
  EXPECT_EQ(ma->correctness, "ok");
}

}  // namespace
}  // namespace scratchsim::cuda
