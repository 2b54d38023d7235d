// libFuzzer target: the expression engine. The first line is the expression, the rest gives the
// parameter values; Parse must refuse or compile, Evaluate must return a value or an error. Two
// definitions (TILE, TWICE) are in scope, so expanded definitions are fuzzed too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sim/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scratchsim;
  static const SymbolTable* symbols = [] {
    auto* table = new SymbolTable();
    for (const char* name : {"A", "B", "BLOCK_M", "NUM_STAGES", "WARP_SIZE"}) table->Add(name);
    return table;
  }();
  static const ExprDefinitions* definitions = [] {
    auto* table = new ExprDefinitions();
    table->Add("TILE", *Expr::Parse("BLOCK_M * NUM_STAGES + A", *symbols));
    table->Add("TWICE", *Expr::Parse("2 * TILE - B", *symbols, table));
    return table;
  }();
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const absl::string_view text = input.substr(0, newline);
  absl::string_view rest = newline == absl::string_view::npos ? absl::string_view() : input.substr(newline + 1);
  // Five values from the rest of the input, 8 bytes each (missing bytes are 0).
  std::vector<int64_t> values(symbols->names().size(), 0);
  for (size_t i = 0; i < values.size() && !rest.empty(); ++i) {
    const size_t n = std::min<size_t>(8, rest.size());
    std::memcpy(&values[i], rest.data(), n);
    rest.remove_prefix(n);
  }
  absl::StatusOr<Expr> expr = Expr::Parse(text, *symbols, definitions);
  if (!expr.ok()) return 0;
  (void)expr->Parameters();
  absl::StatusOr<int64_t> value = expr->Evaluate(values);
  // The same values again: evaluation is a pure function.
  absl::StatusOr<int64_t> again = expr->Evaluate(values);
  if (value.ok() != again.ok() || (value.ok() && *value != *again)) __builtin_trap();
  return 0;
}
