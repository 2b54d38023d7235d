#include "sim/test_data.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::testing {
namespace {

using ::testing::HasSubstr;

TEST(TestDataTest, AMissingFileIsNamedAndAPresentOneIsNot) {
  EXPECT_EQ(MissingTestData({"models/graphs/mlp.pbtxt"}), "");
  const std::string missing = MissingTestData({"models/graphs/mlp.pbtxt", "tests/data/no_such_file.json"});
  EXPECT_THAT(missing, HasSubstr("tests/data/no_such_file.json"));
  EXPECT_THAT(missing, ::testing::Not(HasSubstr("mlp.pbtxt")));
}

TEST(TestDataTest, OnlyOneOptsOut) {
  unsetenv("SCRATCHSIM_ALLOW_MISSING_TEST_DATA");
  EXPECT_FALSE(AllowMissingTestData());
  setenv("SCRATCHSIM_ALLOW_MISSING_TEST_DATA", "0", 1);
  EXPECT_FALSE(AllowMissingTestData());
  setenv("SCRATCHSIM_ALLOW_MISSING_TEST_DATA", "1", 1);
  EXPECT_TRUE(AllowMissingTestData());
  unsetenv("SCRATCHSIM_ALLOW_MISSING_TEST_DATA");
}

TEST(TestDataTest, AGzipFixtureReadsAsItsPlainCopy) {
  auto text = ReadTestData("tests/data/tpu/plan_confirm.jsonl.gz");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->rfind("{", 0), 0u);
  auto copy = PlainTestDataCopy("tests/data/tpu/plan_confirm.jsonl.gz");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_THAT(*copy, ::testing::EndsWith("/plan_confirm.jsonl"));
  std::stringstream plain;
  plain << std::ifstream(*copy).rdbuf();
  EXPECT_EQ(plain.str(), *text);
  auto mlp = ReadTestData("models/graphs/mlp.pbtxt");  // a plain file reads as it is
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_FALSE(mlp->empty());
}

TEST(TestDataTest, AnUnreadableFileIsAnError) {
  EXPECT_FALSE(ReadTestData("tests/data/no_such_file.json.gz").ok());
}

}  // namespace
}  // namespace scratchsim::testing
