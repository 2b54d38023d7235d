#include "sim/placement.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim {
namespace {

PlacementResult PlaceOrDie(PlacementPolicyKind kind, const std::vector<Block>& blocks) {
  auto result = MakePlacementPolicy(kind)->Place(blocks);
  EXPECT_TRUE(result.ok()) << result.status();
  return *result;
}

// No two blocks live at the same time may overlap in memory, and each offset is aligned.
void ExpectValid(const std::vector<Block>& blocks, const PlacementResult& result) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(result.offsets[i] % blocks[i].alignment, 0) << i;
    EXPECT_LE(result.offsets[i] + blocks[i].size, result.peak);
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      bool live_together = blocks[i].start <= blocks[j].end && blocks[j].start <= blocks[i].end;
      bool overlap = result.offsets[i] < result.offsets[j] + blocks[j].size &&
                     result.offsets[j] < result.offsets[i] + blocks[i].size;
      if (blocks[i].size > 0 && blocks[j].size > 0) EXPECT_FALSE(live_together && overlap) << i << " " << j;
    }
  }
}

TEST(PlacementTest, DeadBuffersAreReused) {
  std::vector<Block> blocks = {{1000, 16, 0, 1}, {1000, 16, 2, 3}, {500, 16, 1, 2}};
  PlacementResult result = PlaceOrDie(PlacementPolicyKind::kFirstFitDecreasing, blocks);
  ExpectValid(blocks, result);
  EXPECT_EQ(result.offsets[0], 0);
  EXPECT_EQ(result.offsets[1], 0);  // same address: the first is dead by then
  EXPECT_EQ(result.offsets[2], 1008);
  EXPECT_EQ(result.peak, 1508);
}

TEST(PlacementTest, AlignmentIsHonoured) {
  std::vector<Block> blocks = {{100, 1, 0, 0}, {64, 128, 0, 0}};
  PlacementResult result = PlaceOrDie(PlacementPolicyKind::kFirstFitDecreasing, blocks);
  ExpectValid(blocks, result);
  EXPECT_EQ(result.offsets[0], 0);
  EXPECT_EQ(result.offsets[1], 128);
  EXPECT_EQ(result.peak, 192);
}

TEST(PlacementTest, BestFitTakesTheSmallestGap) {
  // Short-lived blocks leave a 250-byte hole at 300 and a 100-byte hole at 750 once dead;
  // the last 50-byte block goes into the first hole under first-fit, the tighter one under
  // best-fit.
  std::vector<Block> blocks = {
      {300, 1, 0, 4},  // [0,300)
      {250, 1, 0, 1},  // [300,550), dead after 1
      {200, 1, 0, 4},  // [550,750)
      {100, 1, 0, 1},  // [750,850), dead after 1
      {90, 1, 0, 4},   // [850,940)
      {50, 1, 2, 3},
  };
  PlacementResult first = PlaceOrDie(PlacementPolicyKind::kFirstFitDecreasing, blocks);
  PlacementResult best = PlaceOrDie(PlacementPolicyKind::kBestFitDecreasing, blocks);
  ExpectValid(blocks, first);
  ExpectValid(blocks, best);
  EXPECT_EQ(first.offsets[5], 300);
  EXPECT_EQ(best.offsets[5], 750);
  EXPECT_EQ(first.peak, 940);
}

TEST(PlacementTest, RandomBlocksNeverOverlap) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Block> blocks;
    for (int i = 0; i < 60; ++i) {
      int64_t start = rng() % 40;
      blocks.push_back({static_cast<int64_t>(rng() % 5000), int64_t{1} << (rng() % 8), start,
                        start + static_cast<int64_t>(rng() % 10)});
    }
    for (auto kind : {PlacementPolicyKind::kFirstFitDecreasing, PlacementPolicyKind::kBestFitDecreasing}) {
      ExpectValid(blocks, PlaceOrDie(kind, blocks));
    }
  }
}

// Every way the policy finds conflicts (closed form, scan of placed blocks, interference graph,
// segment tree) gives the same placement, on many and few blocks, overlapping and not, with and
// without universal blocks (live throughout, as an untouched buffer is: kept as their union).
TEST(PlacementTest, EveryConflictPathAgrees) {
  std::mt19937_64 rng(11);
  const PlacementTuning paths[] = {
      {kDefaultMaxOverlapPairs, kDefaultScanBlocks, true},  // the default: shortcuts where they apply
      {kDefaultMaxOverlapPairs, 1 << 30, false},            // always the scan
      {kDefaultMaxOverlapPairs, 0, false},                  // always the interference graph
      {0, 0, false},                                        // always the segment tree
  };
  for (int round = 0; round < 120; ++round) {
    const int n = round < 90 ? 1 + static_cast<int>(rng() % 40) : 100 + static_cast<int>(rng() % 500);
    const bool all_overlap = round % 4 == 0;
    const bool aligned_sizes = round % 8 == 0;
    std::vector<Block> blocks;
    const bool with_universal = round % 3 == 1;
    for (int i = 0; i < n; ++i) {
      int64_t start = all_overlap ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % 500);
      int64_t end = all_overlap ? 10 + static_cast<int64_t>(rng() % 5) : start + static_cast<int64_t>(rng() % 30);
      if (with_universal && rng() % 3 == 0) {
        start = 0;
        end = 600;
      }
      const int64_t size = aligned_sizes ? 32 * static_cast<int64_t>(rng() % 128) : static_cast<int64_t>(rng() % 4096);
      blocks.push_back({size, int64_t{1} << (rng() % 6), start, end});
    }
    for (auto kind : {PlacementPolicyKind::kFirstFitDecreasing, PlacementPolicyKind::kBestFitDecreasing}) {
      auto reference = MakePlacementPolicy(kind, paths[2])->Place(blocks);
      ASSERT_TRUE(reference.ok());
      ExpectValid(blocks, *reference);
      for (const PlacementTuning& path : paths) {
        auto placed = MakePlacementPolicy(kind, path)->Place(blocks);
        ASSERT_TRUE(placed.ok());
        EXPECT_EQ(placed->offsets, reference->offsets) << "round " << round;
        EXPECT_EQ(placed->peak, reference->peak) << "round " << round;
        PlacementResult peak_only;
        peak_only.offsets_needed = false;
        ASSERT_TRUE(MakePlacementPolicy(kind, path)->PlaceInto(blocks, &peak_only).ok());
        EXPECT_EQ(peak_only.peak, reference->peak) << "round " << round << " (peak only)";
      }
    }
  }
}

TEST(PlacementTest, RejectsBadBlocks) {
  auto policy = MakePlacementPolicy(PlacementPolicyKind::kFirstFitDecreasing);
  EXPECT_FALSE(policy->Place(std::vector<Block>{{-1, 1, 0, 0}}).ok());
  EXPECT_FALSE(policy->Place(std::vector<Block>{{8, 3, 0, 0}}).ok());
  EXPECT_FALSE(policy->Place(std::vector<Block>{{8, 1, 2, 1}}).ok());
}

TEST(PlacementTest, ParsesPolicyNames) {
  EXPECT_TRUE(ParsePlacementPolicy("first-fit").ok());
  EXPECT_TRUE(ParsePlacementPolicy("best-fit").ok());
  EXPECT_FALSE(ParsePlacementPolicy("worst-fit").ok());
}

}  // namespace
}  // namespace scratchsim
