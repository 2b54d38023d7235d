// Sanity of the memory microbenchmarks on the live GPU (skipped without one), and their
// rejection of impossible sizes (no GPU needed).
#include "backends/cuda/memory_bench.h"

#include "backends/cuda/measure.h"
#include "gtest/gtest.h"

namespace scratchsim::cuda {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(MemoryBenchTest, RejectsImpossibleChases) {
  EXPECT_EQ(MeasureLoadLatency(0, 4 * kMiB, 4).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, 4 * kMiB, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, 4 * kMiB + 8, 128).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, 0, 128).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, 16 * 128, 128).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, int64_t{1} << 40, 128).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, 3 * kMiB, 128, ChaseOrder::kRandomWithinPages).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLoadLatency(0, 6 * kMiB, 192, ChaseOrder::kRandomWithinPages).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MemoryBenchTest, RejectsImpossibleStreams) {
  EXPECT_EQ(MeasureReadBandwidth(0, 4096).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureReadBandwidth(0, 4 * kMiB + 8).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MemoryBenchTest, L2HitIsFasterThanDram) {
  if (!DevicePresent()) GTEST_SKIP() << "no CUDA device";
  auto l2 = MeasureLoadLatency(0, 4 * kMiB, 128);
  ASSERT_TRUE(l2.ok()) << l2.status();
  auto dram = MeasureLoadLatency(0, 1024 * kMiB, 128, ChaseOrder::kRandomWithinPages);
  ASSERT_TRUE(dram.ok()) << dram.status();
  EXPECT_GT(l2->sm_clock_mhz, 100);
  EXPECT_LT(l2->median_cycles, dram->median_cycles);
  EXPECT_GE(l2->median_ns, 100);
  EXPECT_LE(l2->median_ns, 2000);
  EXPECT_GE(dram->median_ns, 100);
  EXPECT_LE(dram->median_ns, 2000);
  // Shared memory sits on the SM: a few tens of cycles, well under an L2 hit.
  auto shared = MeasureSharedLatency(0);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_GE(shared->median_cycles, 5);
  EXPECT_LT(shared->median_cycles, l2->median_cycles);
}

TEST(MemoryBenchTest, L2BandwidthExceedsDram) {
  if (!DevicePresent()) GTEST_SKIP() << "no CUDA device";
  auto l2 = MeasureReadBandwidth(0, 16 * kMiB);
  ASSERT_TRUE(l2.ok()) << l2.status();
  auto dram = MeasureReadBandwidth(0, 2048 * kMiB);
  ASSERT_TRUE(dram.ok()) << dram.status();
  EXPECT_GT(dram->gbps, 0);
  EXPECT_GT(l2->gbps, dram->gbps);
}

}  // namespace
}  // namespace scratchsim::cuda
