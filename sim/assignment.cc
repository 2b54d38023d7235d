#include "sim/assignment.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/checked_math.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// The powers of two in [lo, hi], ascending.
std::vector<int64_t> PowersOfTwo(int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  for (int shift = 0; shift < 63; ++shift) {
    const int64_t v = int64_t{1} << shift;
    if (v > hi) break;
    if (v >= lo) values.push_back(v);
  }
  return values;
}

// lo, lo + step, ... up to hi, without overflow at either end of the 64-bit range.
absl::StatusOr<std::vector<int64_t>> Steps(int64_t lo, int64_t hi, int64_t step, int64_t max_values) {
  const auto span = CheckedSub(hi, lo);
  if (!span || *span / step >= max_values) {
    return absl::InvalidArgumentError(absl::StrCat("more than ", max_values, " values"));
  }
  std::vector<int64_t> values;
  const int64_t count = *span / step + 1;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) values.push_back(lo + i * step);
  return values;
}

absl::Status NotAnInteger(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an integer"));
}

// LO..HI with its modifier (pow2, step=S), or FIRST:LAST[:STEP].
absl::StatusOr<std::vector<int64_t>> ParseRange(absl::string_view lo_text, absl::string_view hi_text,
                                                absl::string_view modifier, int64_t max_values) {
  int64_t lo, hi;
  if (!absl::SimpleAtoi(lo_text, &lo)) return NotAnInteger(lo_text);
  if (!absl::SimpleAtoi(hi_text, &hi)) return NotAnInteger(hi_text);
  if (lo > hi) return absl::InvalidArgumentError(absl::StrCat("the range is empty (", lo, " > ", hi, ")"));
  if (modifier == "pow2") {
    std::vector<int64_t> values = PowersOfTwo(lo, hi);
    if (values.empty()) return absl::InvalidArgumentError("no power of two in the range");
    return values;
  }
  int64_t step = 1;
  if (absl::ConsumePrefix(&modifier, "step=")) {
    if (!absl::SimpleAtoi(modifier, &step) || step <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("step '", modifier, "' is not a positive integer"));
    }
  } else if (!modifier.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown modifier '", modifier, "'"));
  }
  return Steps(lo, hi, step, max_values);
}

}  // namespace

std::optional<Assignment> ParseAssignment(absl::string_view text) {
  const size_t eq = text.find('=');
  Assignment out;
  if (eq == absl::string_view::npos || eq == 0 || !absl::SimpleAtoi(text.substr(eq + 1), &out.value)) return std::nullopt;
  out.name = std::string(text.substr(0, eq));
  return out;
}

absl::StatusOr<std::vector<int64_t>> ParseValueList(absl::string_view text, int64_t max_values) {
  std::vector<int64_t> values;
  if (const size_t dots = text.find(".."); dots != absl::string_view::npos) {
    absl::string_view rest = text.substr(dots + 2);
    const size_t colon = rest.find(':');
    ASSIGN_OR_RETURN(values, ParseRange(text.substr(0, dots), rest.substr(0, colon),
                                        colon == absl::string_view::npos ? "" : rest.substr(colon + 1), max_values));
  } else if (absl::StrContains(text, ':')) {
    std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
    if (parts.size() > 3) return absl::InvalidArgumentError("a range is LO..HI or FIRST:LAST[:STEP]");
    const std::string step = parts.size() == 3 ? absl::StrCat("step=", parts[2]) : "";
    ASSIGN_OR_RETURN(values, ParseRange(parts[0], parts[1], step, max_values));
  } else {
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      int64_t v;
      if (!absl::SimpleAtoi(item, &v)) return NotAnInteger(item);
      values.push_back(v);
    }
  }
  if (values.empty()) return absl::InvalidArgumentError("no values");
  if (static_cast<int64_t>(values.size()) > max_values) {
    return absl::InvalidArgumentError(absl::StrCat("more than ", max_values, " values"));
  }
  return values;
}

}  // namespace scratchsim
