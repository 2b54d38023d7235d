#include "sim/assignment.h"

#include "absl/strings/numbers.h"

namespace scratchsim {

std::optional<Assignment> ParseAssignment(absl::string_view text) {
  const size_t eq = text.find('=');
  Assignment out;
  if (eq == absl::string_view::npos || eq == 0 || !absl::SimpleAtoi(text.substr(eq + 1), &out.value)) return std::nullopt;
  out.name = std::string(text.substr(0, eq));
  return out;
}

}  // namespace scratchsim
