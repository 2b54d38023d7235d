#include "sim/assignment.h"

#include "gtest/gtest.h"

namespace scratchsim {
namespace {

TEST(AssignmentTest, ReadsNameAndInteger) {
  const std::optional<Assignment> a = ParseAssignment("BLOCK_M=128");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "BLOCK_M");
  EXPECT_EQ(a->value, 128);
  EXPECT_EQ(ParseAssignment("K=-3")->value, -3);
}

TEST(AssignmentTest, RefusesWhatIsNotNameEqualsInteger) {
  EXPECT_FALSE(ParseAssignment("BLOCK_M").has_value());
  EXPECT_FALSE(ParseAssignment("=128").has_value());
  EXPECT_FALSE(ParseAssignment("BLOCK_M=").has_value());
  EXPECT_FALSE(ParseAssignment("BLOCK_M=big").has_value());
  EXPECT_FALSE(ParseAssignment("BLOCK_M=99999999999999999999").has_value());
}

}  // namespace
}  // namespace scratchsim
