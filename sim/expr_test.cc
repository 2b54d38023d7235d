#include "sim/expr.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

class ExprTest : public ::testing::Test {
 protected:
  ExprTest() {
    symbols_.Add("BLOCK_M");
    symbols_.Add("STAGES");
  }
  int64_t Eval(const std::string& text, std::vector<int64_t> values = {128, 3}) {
    auto expr = Expr::Parse(text, symbols_);
    EXPECT_TRUE(expr.ok()) << expr.status();
    auto value = expr->Evaluate(values);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.value_or(-1);
  }
  SymbolTable symbols_;
};

TEST_F(ExprTest, ArithmeticAndPrecedence) {
  EXPECT_EQ(Eval("2*BLOCK_M + 4"), 260);
  EXPECT_EQ(Eval("2*(BLOCK_M + 4)"), 264);
  EXPECT_EQ(Eval("BLOCK_M / 3"), 42);
  EXPECT_EQ(Eval("BLOCK_M % 3"), 2);
  EXPECT_EQ(Eval("-STAGES + 10"), 7);
}

TEST_F(ExprTest, Functions) {
  EXPECT_EQ(Eval("max(1, STAGES - 1)"), 2);
  EXPECT_EQ(Eval("max(1, STAGES - 1)", {128, 1}), 1);
  EXPECT_EQ(Eval("min(BLOCK_M, 64)"), 64);
  EXPECT_EQ(Eval("cdiv(100, 16)"), 7);
  EXPECT_EQ(Eval("round_up(100, 16)"), 112);
  EXPECT_EQ(Eval("pow2ceil(1524)"), 2048);
}

TEST_F(ExprTest, ComparisonsGiveOneOrZero) {
  // BLOCK_M = 128, STAGES = 3.
  EXPECT_EQ(Eval("BLOCK_M % 32 == 0"), 1);
  EXPECT_EQ(Eval("BLOCK_M % 48 == 0"), 0);
  EXPECT_EQ(Eval("STAGES != 3"), 0);
  EXPECT_EQ(Eval("STAGES < 3"), 0);
  EXPECT_EQ(Eval("STAGES <= 3"), 1);
  EXPECT_EQ(Eval("BLOCK_M > 2 * 64"), 0);
  EXPECT_EQ(Eval("BLOCK_M >= 2 * 64"), 1);
  // Lowest precedence, and usable inside parentheses as a 0/1 factor.
  EXPECT_EQ(Eval("1 + 1 == 2"), 1);
  EXPECT_EQ(Eval("4 * (STAGES > 1) + 1"), 5);
  for (const char* text : {"1 < 2 < 3", "1 = 1", "1 ==", "== 1", "1 ! 2"}) {
    auto expr = Expr::Parse(text, symbols_);
    EXPECT_FALSE(expr.ok()) << text;
  }
  auto chained = Expr::Parse("1 < 2 < 3", symbols_);
  EXPECT_THAT(chained.status().message(), HasSubstr("do not chain"));
}

TEST_F(ExprTest, UnknownNameIsAnError) {
  auto expr = Expr::Parse("BLOCK_N * 2", symbols_);
  ASSERT_FALSE(expr.ok());
  EXPECT_THAT(expr.status().message(), HasSubstr("unknown parameter 'BLOCK_N'"));
}

TEST_F(ExprTest, SyntaxErrorsNameTheColumn) {
  for (const char* text : {"", "2 +", "(1", "1 2", "foo(1)", "max(1)", "3 $ 4"}) {
    auto expr = Expr::Parse(text, symbols_);
    EXPECT_FALSE(expr.ok()) << text;
    if (!expr.ok()) EXPECT_THAT(expr.status().message(), HasSubstr("column")) << text;
  }
}

TEST_F(ExprTest, OverflowIsAnErrorNotAWrap) {
  auto expr = Expr::Parse("BLOCK_M * BLOCK_M * BLOCK_M", symbols_);
  ASSERT_TRUE(expr.ok());
  auto value = expr->Evaluate({int64_t{1} << 30, 1});
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(), HasSubstr("overflows 64 bits"));
  EXPECT_FALSE(Expr::Parse("99999999999999999999", symbols_).ok());
}

TEST_F(ExprTest, DivisionByZeroIsAnError) {
  auto expr = Expr::Parse("BLOCK_M / (STAGES - 3)", symbols_);
  ASSERT_TRUE(expr.ok());
  EXPECT_FALSE(expr->Evaluate({128, 3}).ok());
}

TEST_F(ExprTest, EvaluateConstantTakesNoParameters) {
  EXPECT_EQ(*Expr::EvaluateConstant("round_up(4096 * 3 - 100, 4096)"), 12288);
  EXPECT_FALSE(Expr::EvaluateConstant("BLOCK_M * 2").ok());  // a name is unknown here
  EXPECT_FALSE(Expr::EvaluateConstant("1 / 0").ok());
}

TEST_F(ExprTest, ParametersListsSlots) {
  auto expr = Expr::Parse("STAGES * 2", symbols_);
  ASSERT_TRUE(expr.ok());
  EXPECT_THAT(expr->Parameters(), ::testing::ElementsAre(1));
  EXPECT_TRUE(Expr::Constant(5).IsConstant());
}


// A definition reads as if its text were written where its name is, and Parameters() sees
// through it to the parameters it reads.
TEST_F(ExprTest, ADefinitionStandsForItsExpression) {
  ExprDefinitions definitions;
  definitions.Add("TILE", *Expr::Parse("BLOCK_M * STAGES", symbols_));
  definitions.Add("TWICE", *Expr::Parse("2 * TILE", symbols_, &definitions));
  auto expr = Expr::Parse("TWICE + 1", symbols_, &definitions);
  ASSERT_TRUE(expr.ok()) << expr.status();
  EXPECT_EQ(*expr->Evaluate({128, 3}), 2 * 128 * 3 + 1);
  EXPECT_EQ(*Expr::Parse("TILE - BLOCK_M * STAGES", symbols_, &definitions)->Evaluate({64, 2}), 0);
  EXPECT_THAT(expr->Parameters(), ::testing::ElementsAre(0, 1));
  EXPECT_EQ(expr->text(), "TWICE + 1");
}

TEST_F(ExprTest, ADefinitionIsUnknownWithoutItsTable) {
  auto expr = Expr::Parse("TILE + 1", symbols_);
  ASSERT_FALSE(expr.ok());
  EXPECT_THAT(expr.status().message(), HasSubstr("unknown parameter 'TILE'"));
}

// Definitions that use the one before twice double with each level: the expansion is refused at
// its bound, not built.
TEST_F(ExprTest, DefinitionsThatDoubleEachLevelAreRefusedAtTheBound) {
  ExprDefinitions definitions;
  definitions.Add("D0", *Expr::Parse("BLOCK_M", symbols_));
  absl::Status last;
  for (int level = 1; level < 40 && last.ok(); ++level) {
    const std::string previous = "D" + std::to_string(level - 1);
    auto expr = Expr::Parse(previous + " + " + previous, symbols_, &definitions);
    if (!expr.ok()) {
      last = expr.status();
      break;
    }
    definitions.Add("D" + std::to_string(level), *expr);
  }
  ASSERT_FALSE(last.ok());
  EXPECT_THAT(last.message(), HasSubstr("past 65536 operations"));
}

// Reproducer of issue 17 (shared/reliability/expr_nested_parens.expr, generated here): 20,000
// nested '(' overflowed the parser's stack. Now an error at the bound, quoting the text briefly.
TEST_F(ExprTest, TwentyThousandNestedParenthesesAreRefusedInOneShortLine) {
  const std::string text = std::string(20000, '(') + "1" + std::string(20000, ')');
  auto expr = Expr::Parse(text, symbols_);
  ASSERT_FALSE(expr.ok());
  EXPECT_THAT(expr.status().message(), HasSubstr("nested more than 256 levels deep"));
  EXPECT_THAT(expr.status().message(), HasSubstr("(40001 characters)"));
  EXPECT_LT(expr.status().message().size(), 200u);
}

TEST_F(ExprTest, TwentyThousandNestedCallsAreRefused) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "min(";
  text += "1";
  for (int i = 0; i < 20000; ++i) text += ",16)";
  auto expr = Expr::Parse(text, symbols_);
  ASSERT_FALSE(expr.ok());
  EXPECT_THAT(expr.status().message(), HasSubstr("nested more than 256 levels deep"));
}

}  // namespace
}  // namespace scratchsim
