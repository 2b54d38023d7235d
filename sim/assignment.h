// "NAME=INTEGER" parameter assignments, as device models and calibration files spell them
// (ConfigResidual.sets), and the value lists a sweep takes: one parser of each for every client.
#ifndef SCRATCHSIM_SIM_ASSIGNMENT_H_
#define SCRATCHSIM_SIM_ASSIGNMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "absl/strings/string_view.h"

namespace scratchsim {

struct Assignment {
  std::string name;
  int64_t value = 0;
};

// The name and the 64-bit value of "NAME=INTEGER"; none when there is no '=', the name is empty
// or the value is not an integer.
std::optional<Assignment> ParseAssignment(absl::string_view text);

// The values of one swept parameter, as `simulate plan --param` and `simulate validate --sweep`
// take them: LO..HI, LO..HI:pow2 (the powers of two in it), LO..HI:step=S, V1,V2,..., and
// FIRST:LAST[:STEP] (LO..HI:step=S as validate first spelled it). More than `max_values` values,
// malformed numbers and empty ranges are errors saying which (the caller names the sweep).
absl::StatusOr<std::vector<int64_t>> ParseValueList(absl::string_view text, int64_t max_values);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_ASSIGNMENT_H_
