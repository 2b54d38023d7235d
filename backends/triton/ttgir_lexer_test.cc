#include "backends/triton/ttgir_lexer.h"

#include <chrono>
#include <deque>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::HasSubstr;

// Statements view the text: it must outlive them, hence the text kept by each test.
absl::StatusOr<TtgirStatements> Split(const std::string& text, std::deque<std::string>& pieces) {
  return SplitTtgirStatements(text, "x.ttgir", pieces);
}

TEST(TtgirLexerTest, JoinsAStatementSpreadOverLinesAtItsFirstLine) {
  std::deque<std::string> pieces;
  const std::string text = "module {\n  tt.func @k(%a: i32,\n      %b: i32) {\n";
  auto s = Split(text, pieces);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->statements.size(), 2u);
  EXPECT_EQ(s->statements[1].line, 2);
  EXPECT_EQ(s->statements[1].text, "tt.func @k(%a: i32, %b: i32) {");
  EXPECT_EQ(s->num_lines, 4);
}

TEST(TtgirLexerTest, DropsLocationsCommentsAndTheLocTable) {
  std::deque<std::string> pieces;
  const std::string text =
      "// a comment\n  %a = tt.foo %b loc(#loc1)\n"
      "%c = tt.bar %d loc(\"x\"(#loc)) : i32 loc(#loc2)\n#loc1 = loc(\"f\":1:2)\n\n";
  auto s = Split(text, pieces);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->statements.size(), 2u);
  EXPECT_EQ(s->statements[0].text, "%a = tt.foo %b");
  EXPECT_EQ(s->statements[1].text, "%c = tt.bar %d : i32");
  EXPECT_EQ(s->statements[1].line, 3);
}

TEST(TtgirLexerTest, BracketsInsideStringsDoNotOpenAStatement) {
  std::deque<std::string> pieces;
  const std::string text = "%a = tt.foo {note = \"((\"} : i32\n%b = tt.bar\n";
  auto s = Split(text, pieces);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->statements.size(), 2u);
}

// A statement longer than the vector scan's 127-block flush (127 x 16 characters), spread over
// lines, still closes where its brackets do.
TEST(TtgirLexerTest, BalanceHoldsPastTheVectorScansFlush) {
  std::string args;
  for (int i = 0; i < 200; ++i) args += "%arg" + std::to_string(i) + ": i32 {tt.divisibility = 16 : i32}, ";
  std::deque<std::string> pieces;
  const std::string text = "tt.func @k(" + args + "\n   %last: i32) {\n%x = tt.foo\n";
  auto s = Split(text, pieces);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->statements.size(), 2u);
  EXPECT_GT(s->statements[0].text.size(), 127u * 16u);
  EXPECT_EQ(s->statements[1].line, 3);
}

TEST(TtgirLexerTest, AStatementNeverClosedNamesItsFirstLine) {
  std::deque<std::string> pieces;
  const std::string text = "module {\n tt.func @k( {\n";
  auto s = Split(text, pieces);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("x.ttgir:2: unbalanced parentheses"));
}

TEST(TtgirLexerTest, BracketBalanceCarriesAStringAcrossParts) {
  BracketBalance b;
  b.Add("%q = tt.foo( \"a");
  EXPECT_EQ(b.depth(), 1);
  b.Add("(b\" [");  // the '(' is inside the string the first part opened
  EXPECT_EQ(b.depth(), 2);
  b.Add("] )");
  EXPECT_EQ(b.depth(), 0);
}

// Reproducer of issue 17 (shared/reliability/ttgir_quadratic_balance.ttgir, generated here): one
// statement over 100,000 continuation lines rescanned the joined text per line (20,000 lines
// 3.6 s, 100,000 over a minute). Linear, it takes milliseconds; the bound leaves room for slow
// builds and a loaded machine without letting the quadratic scan pass.
TEST(TtgirLexerTest, AStatementOfManyLinesIsJoinedInLinearTime) {
  std::string text = "%q = \"tt.foo\"(\n";
  for (int i = 0; i < 100000; ++i) text += "\"x\"\n";
  text += ")\ntt.return\n";
  std::deque<std::string> pieces;
  const auto start = std::chrono::steady_clock::now();
  auto s = Split(text, pieces);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->statements.size(), 2u);
  EXPECT_EQ(s->statements[0].text.size(), 14u + 4u * 100000u + 2u);
  EXPECT_EQ(s->statements[1].line, 100003);
  EXPECT_LT(seconds, 5.0);
}

// Issue 17: one 1 GiB line cost 2.4 GB. A line past the limit is refused naming its line.
TEST(TtgirLexerTest, LineLongerThanTheLimitNamesTheLine) {
  const std::string text = "%a = tt.foo\n%z = tt.foo " + std::string(kMaxTtgirLineBytes, 'x') + "\n";
  std::deque<std::string> pieces;
  auto s = Split(text, pieces);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("x.ttgir:2: line of 16777228 bytes is longer than the maximum"));
}

TEST(TtgirLexerTest, JoinedStatementLongerThanTheLimitNamesItsFirstLine) {
  const std::string half(kMaxTtgirLineBytes / 2, 'x');
  const std::string text = "%a = tt.foo\n%z = tt.foo(\n" + half + "\n" + half + "\n)\n";
  std::deque<std::string> pieces;
  auto s = Split(text, pieces);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("x.ttgir:2: statement (its lines joined) of"));
}

TEST(TtgirLexerTest, IntAttrReadsTheValueAfterTheKey) {
  EXPECT_EQ(IntAttr("module attributes {\"ttg.num-warps\" = 8 : i32}", "\"ttg.num-warps\""), 8);
  EXPECT_EQ(IntAttr("{alignment = -16}", "alignment"), -16);
  EXPECT_EQ(IntAttr("{other = 1}", "alignment"), std::nullopt);
}

TEST(TtgirLexerTest, ValueTokensAreTheValuesOfAText) {
  EXPECT_THAT(ValueTokens("(%a, %b#1, %arg_2) %"), ::testing::ElementsAre("%a", "%b#1", "%arg_2"));
}

}  // namespace
}  // namespace scratchsim::triton
