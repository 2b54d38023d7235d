#include "sim/smem_banks.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace scratchsim {
namespace {

std::vector<int64_t> Strided(int lanes, int64_t stride) {
  std::vector<int64_t> out;
  for (int i = 0; i < lanes; ++i) out.push_back(i * stride);
  return out;
}

TEST(SharedWavefrontsTest, ConsecutiveWordsTakeOneWavefront) {
  EXPECT_EQ(*SharedWavefronts(Strided(32, 4), 4), 1);
}

TEST(SharedWavefrontsTest, OneBankWithDistinctWordsSerializes) {
  // 32 lanes 128 bytes apart: all in bank 0, 32 different words.
  EXPECT_EQ(*SharedWavefronts(Strided(32, 128), 4), 32);
  // Two lanes per bank (stride 8 bytes): 2-way.
  EXPECT_EQ(*SharedWavefronts(Strided(32, 8), 4), 2);
}

TEST(SharedWavefrontsTest, TheSameWordIsBroadcast) {
  EXPECT_EQ(*SharedWavefronts(std::vector<int64_t>(32, 256), 4), 1);
}

TEST(SharedWavefrontsTest, WideAccessesRunInPhases) {
  // 16-byte vectors, contiguous: 512 bytes in four quarter-warp phases, each conflict-free.
  EXPECT_EQ(*SharedWavefronts(Strided(32, 16), 16), 4);
  // 8-byte vectors, contiguous: two half-warp phases.
  EXPECT_EQ(*SharedWavefronts(Strided(32, 8), 8), 2);
  // 16-byte vectors 128 bytes apart: each phase's 8 lanes share banks 0-3.
  EXPECT_EQ(*SharedWavefronts(Strided(32, 128), 16), 4 * 8);
}

TEST(SharedWavefrontsTest, RefusesBadInput) {
  EXPECT_FALSE(SharedWavefronts(Strided(32, 4), 2).ok());
  EXPECT_FALSE(SharedWavefronts({4, 6}, 4).ok());
  EXPECT_FALSE(SharedWavefronts({-4}, 4).ok());
  EXPECT_FALSE(SharedWavefronts({}, 4).ok());
  EXPECT_FALSE(SharedWavefronts({0}, 4, 0).ok());
}

}  // namespace
}  // namespace scratchsim
