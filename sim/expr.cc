#include "sim/expr.h"

#include <cctype>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/checked_math.h"
#include "sim/status_macros.h"

namespace scratchsim {

int SymbolTable::Find(absl::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int SymbolTable::Add(std::string name) {
  int existing = Find(name);
  if (existing >= 0) return existing;
  names_.push_back(std::move(name));
  return static_cast<int>(names_.size()) - 1;
}

const Expr* ExprDefinitions::Find(absl::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return exprs_[i].get();
  }
  return nullptr;
}

void ExprDefinitions::Add(std::string name, Expr expr) {
  names_.push_back(std::move(name));
  exprs_.push_back(std::make_shared<const Expr>(std::move(expr)));
}

// Recursive-descent parser emitting postfix code:
//   logic := both ('||' both)*          both := top ('&&' top)*   (1 when it holds, else 0)
//   top := expr (('=='|'!='|'<='|'>='|'<'|'>') expr)?   (1 when it holds, else 0)
//   expr := term (('+'|'-') term)*      term := unary (('*'|'/'|'%') unary)*
//   unary := '-' unary | primary        primary := INT | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
// An expression as messages quote it: whole up to 80 characters, else its start and length, so
// that an error about a hostile 100,000-character expression stays one readable line.
static std::string QuoteExpression(absl::string_view text) {
  constexpr size_t kQuoted = 80;
  if (text.size() <= kQuoted) return std::string(text);
  return absl::StrCat(text.substr(0, kQuoted - 20), "... (", text.size(), " characters)");
}

class ExprParser {
 public:
  // The functions an expression may call: each name once, here.
  struct Function {
    const char* name;
    Expr::Op op;
    int arity;
  };
  static const Function* FindFunction(absl::string_view name) {
    static constexpr Function kFunctions[] = {{"min", Expr::Op::kMin, 2},
                                              {"max", Expr::Op::kMax, 2},
                                              {"cdiv", Expr::Op::kCeilDiv, 2},
                                              {"round_up", Expr::Op::kRoundUp, 2},
                                              {"pow2ceil", Expr::Op::kPow2Ceil, 1}};
    for (const Function& function : kFunctions) {
      if (name == function.name) return &function;
    }
    return nullptr;
  }

  ExprParser(absl::string_view text, const SymbolTable& symbols, const ExprDefinitions* definitions,
             Expr::Code& out)
      : text_(text), symbols_(symbols), definitions_(definitions), out_(out) {}

  absl::Status Parse() {
    RETURN_IF_ERROR(ParseLogic());
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected character");
    return absl::OkStatus();
  }

 private:
  using Op = Expr::Op;

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expression \"%s\": %s at column %d", QuoteExpression(text_), what, pos_ + 1));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Emit(Op op, int64_t operand = 0) { out_.push_back({op, operand}); }

  // Requirements combine conditions: "BM % 8 == 0 || BM == M". Both sides are evaluated.
  absl::Status ParseLogic() {
    RETURN_IF_ERROR(ParseBoth());
    while (AcceptToken("||")) {
      RETURN_IF_ERROR(ParseBoth());
      Emit(Op::kOr);
    }
    return absl::OkStatus();
  }

  absl::Status ParseBoth() {
    RETURN_IF_ERROR(ParseComparison());
    while (AcceptToken("&&")) {
      RETURN_IF_ERROR(ParseComparison());
      Emit(Op::kAnd);
    }
    return absl::OkStatus();
  }

  bool AcceptToken(absl::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  // Parentheses, calls and unary minus recurse: bound how deep, so a hostile expression is an
  // error and not a stack overflow.
  absl::Status Enter() {
    if (++depth_ > kMaxNesting) return Error(absl::StrCat("nested more than ", kMaxNesting, " levels deep"));
    return absl::OkStatus();
  }

  // One comparison at the top of an expression (or of a parenthesized one): requirements such
  // as "BLOCK_M % ROWS == 0" read as they would in the kernel's static_assert.
  absl::Status ParseComparison() {
    RETURN_IF_ERROR(ParseExpr());
    SkipSpace();
    static constexpr std::pair<absl::string_view, Op> kComparisons[] = {
        {"==", Op::kEq}, {"!=", Op::kNe}, {"<=", Op::kLe}, {">=", Op::kGe}, {"<", Op::kLt}, {">", Op::kGt}};
    for (const auto& [token, op] : kComparisons) {
      if (text_.substr(pos_, token.size()) != token) continue;
      pos_ += token.size();
      RETURN_IF_ERROR(ParseExpr());
      Emit(op);
      SkipSpace();
      if (pos_ < text_.size() && (text_[pos_] == '=' || text_[pos_] == '<' || text_[pos_] == '>' || text_[pos_] == '!')) {
        return Error("comparisons do not chain; write one per requirement");
      }
      return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  absl::Status ParseExpr() {
    RETURN_IF_ERROR(ParseTerm());
    while (true) {
      if (Accept('+')) {
        RETURN_IF_ERROR(ParseTerm());
        Emit(Op::kAdd);
      } else if (Accept('-')) {
        RETURN_IF_ERROR(ParseTerm());
        Emit(Op::kSub);
      } else {
        return absl::OkStatus();
      }
    }
  }

  absl::Status ParseTerm() {
    RETURN_IF_ERROR(ParseUnary());
    while (true) {
      Op op;
      if (Accept('*')) {
        op = Op::kMul;
      } else if (Accept('/')) {
        op = Op::kDiv;
      } else if (Accept('%')) {
        op = Op::kMod;
      } else {
        return absl::OkStatus();
      }
      RETURN_IF_ERROR(ParseUnary());
      Emit(op);
    }
  }

  absl::Status ParseUnary() {
    if (Accept('-')) {
      RETURN_IF_ERROR(Enter());
      RETURN_IF_ERROR(ParseUnary());
      --depth_;
      Emit(Op::kNeg);
      return absl::OkStatus();
    }
    return ParsePrimary();
  }

  absl::Status ParsePrimary() {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a number, name or '('");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      RETURN_IF_ERROR(Enter());
      RETURN_IF_ERROR(ParseLogic());
      if (!Accept(')')) return Error("expected ')'");
      --depth_;
      return absl::OkStatus();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        auto next = CheckedMul(value, 10);
        if (next) next = CheckedAdd(*next, text_[pos_] - '0');
        if (!next) return Error("integer literal overflows 64 bits");
        value = *next;
        ++pos_;
      }
      Emit(Op::kPush, value);
      return absl::OkStatus();
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      absl::string_view name = text_.substr(start, pos_ - start);
      if (Accept('(')) return ParseCall(name);
      int slot = symbols_.Find(name);
      if (slot < 0 && definitions_ != nullptr) {
        if (const Expr* definition = definitions_->Find(name); definition != nullptr) {
          // Postfix code composes: the definition's code leaves its one value on the stack.
          if (out_.size() + definition->body_->code.size() > Expr::kMaxCode) {
            pos_ = start;
            return Error(absl::StrCat("expands '", name, "' past ", Expr::kMaxCode, " operations"));
          }
          out_.insert(out_.end(), definition->body_->code.begin(), definition->body_->code.end());
          return absl::OkStatus();
        }
      }
      if (slot < 0) {
        pos_ = start;
        return Error(absl::StrCat("unknown parameter '", name, "'"));
      }
      Emit(Op::kLoad, slot);
      return absl::OkStatus();
    }
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  absl::Status ParseCall(absl::string_view name) {
    const Function* function = FindFunction(name);
    if (function == nullptr) return Error(absl::StrCat("unknown function '", name, "'"));
    const Op op = function->op;
    const int arity = function->arity;
    RETURN_IF_ERROR(Enter());
    for (int i = 0; i < arity; ++i) {
      if (i > 0 && !Accept(',')) return Error(absl::StrCat("'", name, "' takes ", arity, " arguments"));
      RETURN_IF_ERROR(ParseExpr());
    }
    if (!Accept(')')) return Error("expected ')'");
    --depth_;
    Emit(op);
    return absl::OkStatus();
  }

  static constexpr int kMaxNesting = Expr::kMaxNesting;
  absl::string_view text_;
  const SymbolTable& symbols_;
  const ExprDefinitions* definitions_;
  Expr::Code& out_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool Expr::IsFunction(absl::string_view name) { return ExprParser::FindFunction(name) != nullptr; }

Expr::Expr() {
  static const auto* const empty = new std::shared_ptr<const Body>(std::make_shared<const Body>());
  body_ = *empty;
}

Expr Expr::Constant(int64_t value) {
  auto body = std::make_shared<Body>();
  body->code.push_back({Op::kPush, value});
  body->text = absl::StrCat(value);
  return Expr(std::move(body));
}

absl::StatusOr<Expr> Expr::Parse(absl::string_view text, const SymbolTable& symbols,
                                 const ExprDefinitions* definitions) {
  auto body = std::make_shared<Body>();
  body->text = std::string(text);
  ExprParser parser(text, symbols, definitions, body->code);
  RETURN_IF_ERROR(parser.Parse());
  // Evaluate keeps a fixed stack: refuse here what it could not evaluate.
  int depth = 0, deepest = 0;
  for (const Instruction& instruction : body->code) {
    if (instruction.op == Op::kPush || instruction.op == Op::kLoad) {
      deepest = std::max(deepest, ++depth);
    } else if (instruction.op != Op::kNeg && instruction.op != Op::kPow2Ceil) {
      --depth;  // binary: two operands become one
    }
  }
  if (deepest > kMaxStack) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expression \"%s\": needs %d operands pending at once (at most %d); split it", text, deepest, kMaxStack));
  }
  return Expr(std::move(body));
}

absl::StatusOr<int64_t> Expr::EvaluateConstant(absl::string_view text) {
  absl::StatusOr<Expr> parsed = Parse(text, SymbolTable());
  if (!parsed.ok()) return parsed.status();
  return parsed->Evaluate({});
}

std::vector<int> Expr::Parameters() const {
  std::vector<int> slots;
  for (const Instruction& instruction : body_->code) {
    if (instruction.op == Op::kLoad) slots.push_back(static_cast<int>(instruction.operand));
  }
  return slots;
}

absl::StatusOr<int64_t> Expr::Evaluate(absl::Span<const int64_t> values) const {
  // Expressions are short; a fixed stack avoids allocation on the planner's hot path (Parse
  // refuses code that would need more).
  constexpr int kMaxDepth = kMaxStack;
  int64_t stack[kMaxDepth];
  int depth = 0;
  auto overflow = [this]() {
    return absl::OutOfRangeError(absl::StrFormat("expression \"%s\" overflows 64 bits", QuoteExpression(body_->text)));
  };
  for (const Instruction& instruction : body_->code) {
    if (instruction.op == Op::kPush || instruction.op == Op::kLoad) {
      if (depth == kMaxDepth) {
        return absl::InvalidArgumentError(absl::StrFormat("expression \"%s\" is nested too deeply", QuoteExpression(body_->text)));
      }
      if (instruction.op == Op::kPush) {
        stack[depth++] = instruction.operand;
      } else {
        if (instruction.operand >= static_cast<int64_t>(values.size())) {
          return absl::InternalError("expression evaluated without its parameters");
        }
        stack[depth++] = values[instruction.operand];
      }
      continue;
    }
    if (instruction.op == Op::kNeg || instruction.op == Op::kPow2Ceil) {
      int64_t a = stack[depth - 1];
      if (instruction.op == Op::kNeg) {
        auto r = CheckedSub(0, a);
        if (!r) return overflow();
        stack[depth - 1] = *r;
      } else {
        if (a > (int64_t{1} << 62)) return overflow();
        int64_t p = 1;
        while (p < a) p <<= 1;
        stack[depth - 1] = p;
      }
      continue;
    }
    int64_t b = stack[--depth];
    int64_t a = stack[depth - 1];
    std::optional<int64_t> r;
    switch (instruction.op) {
      case Op::kAdd: r = CheckedAdd(a, b); break;
      case Op::kSub: r = CheckedSub(a, b); break;
      case Op::kMul: r = CheckedMul(a, b); break;
      case Op::kMin: r = a < b ? a : b; break;
      case Op::kMax: r = a > b ? a : b; break;
      case Op::kAnd: r = (a != 0) && (b != 0); break;
      case Op::kOr: r = (a != 0) || (b != 0); break;
      case Op::kEq: r = a == b; break;
      case Op::kNe: r = a != b; break;
      case Op::kLt: r = a < b; break;
      case Op::kLe: r = a <= b; break;
      case Op::kGt: r = a > b; break;
      case Op::kGe: r = a >= b; break;
      case Op::kDiv:
      case Op::kMod:
      case Op::kCeilDiv:
      case Op::kRoundUp:
        if (b <= 0 || a < 0) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "expression \"%s\": division needs a positive divisor and a non-negative dividend "
              "(got %d and %d)", body_->text, a, b));
        }
        if (instruction.op == Op::kDiv) r = a / b;
        if (instruction.op == Op::kMod) r = a % b;
        if (instruction.op == Op::kCeilDiv) r = a / b + (a % b != 0);
        if (instruction.op == Op::kRoundUp) r = CheckedRoundUp(a, b);
        break;
      default: break;
    }
    if (!r) return overflow();
    stack[depth - 1] = *r;
  }
  return stack[0];
}

}  // namespace scratchsim
