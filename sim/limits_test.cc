#include "sim/limits.h"

#include "gtest/gtest.h"

namespace scratchsim {
namespace {

TEST(LimitFigureTest, BytesInKibWithTheFewestDigitsThatTellThemApart) {
  EXPECT_EQ(LimitFigure(Limit::kSharedMemory, 262144, 232448), "256K > 227K");
  EXPECT_EQ(LimitFigure(Limit::kVmemScoped, 16 * 1024 * 1024 + 512, 16 * 1024 * 1024), "16384.5K > 16384.0K");
}

TEST(LimitFigureTest, BytesWhereATenthOfAKibIsTooCoarse) {
  EXPECT_EQ(LimitFigure(Limit::kSharedMemory, 232449, 232448), "232449 > 232448");
}

TEST(LimitFigureTest, CountsStayCounts) {
  EXPECT_EQ(LimitFigure(Limit::kThreads, 1280, 1024), "1280 > 1024");
  EXPECT_EQ(LimitFigure(Limit::kTensorMemory, 1024, 512), "1024 > 512");
}

TEST(LimitFigureTest, LimitsWithoutFiguresHaveNone) {
  EXPECT_EQ(LimitFigure(Limit::kInvalid, 0, 0), "");
  EXPECT_EQ(LimitFigure(Limit::kNoResidency, 0, 0), "");
}

}  // namespace
}  // namespace scratchsim
