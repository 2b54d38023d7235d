// Integer expressions over named parameters ("2*BLOCK_K + 4", "max(1, STAGES-1)").
// Compiled once to postfix code, evaluated many times with checked 64-bit arithmetic.
#ifndef SCRATCHSIM_SIM_EXPR_H_
#define SCRATCHSIM_SIM_EXPR_H_

#include <cstdint>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace scratchsim {

// Maps parameter names to slots of the value vector passed to Expr::Evaluate.
class SymbolTable {
 public:
  // Returns the slot of `name`, or -1.
  int Find(absl::string_view name) const;
  int Add(std::string name);
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

class Expr;

// Named sub-expressions an expression may use like parameters (KernelGraph.definitions). A
// definition's code is expanded where its name is used: evaluation is the same as if its text
// were written there, and Expr::Parameters() lists the parameters it reads.
class ExprDefinitions {
 public:
  // The definition named `name`, or nullptr.
  const Expr* Find(absl::string_view name) const;
  void Add(std::string name, Expr expr);

 private:
  std::vector<std::string> names_;
  std::vector<std::shared_ptr<const Expr>> exprs_;
};

class Expr {
 public:
  static constexpr int kMaxNesting = 256;
  static constexpr int kMaxStack = 64;  // operands pending at once during evaluation
  // Operations of one expression with its definitions expanded: definitions that use each other
  // twice over would otherwise double the code with every level.
  static constexpr size_t kMaxCode = size_t{1} << 16;

  // The empty expression (no code, no text).
  Expr();

  // A constant expression.
  static Expr Constant(int64_t value);

  // Parses `text`. Names must be in `symbols`; functions: min, max, cdiv, round_up,
  // pow2ceil (two, one argument resp. for the last). Operators: + - * / % and parentheses;
  // '/' truncates and requires non-negative operands. One comparison (== != < <= > >=) may
  // top an expression or a parenthesized part; it gives 1 when it holds, else 0; && and ||
  // (lowest, || below &&) combine such conditions. Nesting deeper than kMaxNesting levels
  // (parentheses, calls, unary minus) is an error.
  // A name in `definitions` (optional) stands for that definition; parameters are looked up first.
  static absl::StatusOr<Expr> Parse(absl::string_view text, const SymbolTable& symbols,
                                    const ExprDefinitions* definitions = nullptr);

  // Division by zero and overflow are errors, never wrapped values.
  absl::StatusOr<int64_t> Evaluate(absl::Span<const int64_t> values) const;

  // Whether `name` is one of the functions Parse knows (min, max, cdiv, round_up, pow2ceil).
  static bool IsFunction(absl::string_view name);

  // Parses and evaluates `text`, which names no parameters (a traced kernel's figures).
  static absl::StatusOr<int64_t> EvaluateConstant(absl::string_view text);

  bool IsConstant() const { return body_->code.size() == 1 && body_->code[0].op == Op::kPush; }
  const std::string& text() const { return body_->text; }
  // Slots of the parameters this expression reads.
  std::vector<int> Parameters() const;

 private:
  enum class Op : uint8_t {
    kPush, kLoad, kAdd, kSub, kMul, kDiv, kMod, kNeg, kMin, kMax, kCeilDiv, kRoundUp, kPow2Ceil,
    kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr
  };
  struct Instruction {
    Op op;
    int64_t operand;  // constant for kPush, slot for kLoad
  };
  using Code = absl::InlinedVector<Instruction, 3>;
  friend class ExprParser;

  // The compiled code and its text, immutable once parsed and shared by every copy: copying an
  // Expr is a reference, and a graph that says "64" a million times (CompileGraph reuses one
  // Expr per distinct text) holds it once.
  struct Body {
    Code code;  // most expressions are a name or a constant: short code inline
    std::string text;
  };
  explicit Expr(std::shared_ptr<const Body> body) : body_(std::move(body)) {}

  std::shared_ptr<const Body> body_;
};

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_EXPR_H_
