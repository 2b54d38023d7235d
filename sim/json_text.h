// Writing JSON by hand: a string as a quoted, escaped JSON string literal. Shared by every
// report and measurement file the tools write (plan, validate, gemm-timing).
#ifndef SCRATCHSIM_SIM_JSON_TEXT_H_
#define SCRATCHSIM_SIM_JSON_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim {

// "a\"b" for a"b: quotes and backslashes escaped, \n and \t as such, other control characters
// as \u00XX.
std::string JsonString(absl::string_view text);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_JSON_TEXT_H_
