// "NAME=INTEGER" parameter assignments, as device models and calibration files spell them
// (ConfigResidual.sets): one parser for the device check and the planner's residual table.
#ifndef SCRATCHSIM_SIM_ASSIGNMENT_H_
#define SCRATCHSIM_SIM_ASSIGNMENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim {

struct Assignment {
  std::string name;
  int64_t value = 0;
};

// The name and the 64-bit value of "NAME=INTEGER"; none when there is no '=', the name is empty
// or the value is not an integer.
std::optional<Assignment> ParseAssignment(absl::string_view text);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_ASSIGNMENT_H_
