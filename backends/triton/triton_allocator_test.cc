#include "backends/triton/triton_allocator.h"

#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

TEST(TritonAllocatorTest, DisjointLifetimesShareAddresses) {
  std::vector<TritonBuffer> b = {{1024, 16, 0, 5}, {512, 16, 5, 9}};
  auto a = AllocateLikeTriton(b);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->offsets[0], 0);
  EXPECT_EQ(a->offsets[1], 0);
  EXPECT_EQ(a->shared, 1024);
}

TEST(TritonAllocatorTest, OverlappingLifetimesStackLargestFirstWithAlignment) {
  // The 100-byte buffer goes first (largest); the 64-byte one lands at align(100, 1024).
  std::vector<TritonBuffer> b = {{64, 1024, 0, 10}, {100, 4, 2, 8}};
  auto a = AllocateLikeTriton(b);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->offsets[1], 0);
  EXPECT_EQ(a->offsets[0], 1024);
  EXPECT_EQ(a->shared, 1088);
}

TEST(TritonAllocatorTest, ConcurrentPartitionsNeverShare) {
  std::vector<TritonBuffer> b = {{256, 16, 0, 2}, {256, 16, 5, 7}};
  b[0].async_group = b[1].async_group = 0;
  b[0].async_region = 0;
  b[1].async_region = 1;
  auto a = AllocateLikeTriton(b);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shared, 512);
}

TEST(TritonAllocatorTest, RejectsBadInput) {
  EXPECT_FALSE(AllocateLikeTriton(std::vector<TritonBuffer>{{0, 16, 0, 1}}).ok());
  EXPECT_FALSE(AllocateLikeTriton(std::vector<TritonBuffer>{{8, 3, 0, 1}}).ok());
  EXPECT_FALSE(AllocateLikeTriton(std::vector<TritonBuffer>{{8, 4, 5, 1}}).ok());
}

TEST(TritonAllocatorTest, PlacementPolicyAdapter) {
  TritonPlacementPolicy p;
  std::vector<Block> blocks = {{128, 16, 0, 3}, {128, 16, 3, 5}};
  auto r = p.Place(blocks);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->peak, 256);  // inclusive ends: both live at position 3
}

}  // namespace
}  // namespace scratchsim::triton
