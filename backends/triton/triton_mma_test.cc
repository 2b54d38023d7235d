#include "backends/triton/triton_mma.h"

#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

TEST(PipelineRingSlots, AsyncMmaKeepsOneSlotPerStage) {
  for (TritonMma mma : {TritonMma::kWgmma, TritonMma::kTcgen05}) {
    const RingSlots rule = PipelineRingSlots(mma);
    EXPECT_EQ(rule.Slots(3), 3);
    EXPECT_EQ(rule.Stages(3), 3);
    EXPECT_EQ(rule.Expression("NUM_STAGES"), "NUM_STAGES");
  }
}

TEST(PipelineRingSlots, MmaSyncKeepsOneFewerAtLeastOne) {
  const RingSlots rule = PipelineRingSlots(TritonMma::kMmaV2);
  EXPECT_EQ(rule.Slots(4), 3);
  EXPECT_EQ(rule.Slots(1), 1);
  EXPECT_EQ(rule.Stages(3), 4);
  EXPECT_EQ(rule.Expression("NUM_STAGES"), "max(1, NUM_STAGES - 1)");
}

}  // namespace
}  // namespace scratchsim::triton
