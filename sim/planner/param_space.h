// The planner's parameter space: the axes a sweep walks, from --param specs and the graph's
// own parameter ranges (min/max, power_of_two). Problem-size parameters are never swept.
#ifndef SCRATCHSIM_SIM_PLANNER_PARAM_SPACE_H_
#define SCRATCHSIM_SIM_PLANNER_PARAM_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sim/graph.h"

namespace scratchsim {

// At most this many values on one axis.
inline constexpr int64_t kMaxAxisValues = 1 << 20;

// One swept parameter and the values it takes, in sweep order.
struct ParamAxis {
  std::string name;
  int slot = -1;                 // index into the graph's parameter values
  std::vector<int64_t> values;
  bool from_graph = false;       // the graph's min/max/power_of_two, not --param
};

// Parses a --param spec: NAME=LO..HI, NAME=LO..HI:pow2, NAME=LO..HI:step=S or NAME=V1,V2,...
// Unknown or problem-size parameters, malformed numbers, empty ranges and ranges of more than
// kMaxAxisValues values are errors that quote the spec.
absl::StatusOr<ParamAxis> ParseParamSpec(absl::string_view spec, const CompiledGraph& graph,
                                         const Spelling& spelling = {});

// The space to sweep: every --param spec, then every other tuning parameter the graph gives a
// range (min/max, power_of_two) that --set does not fix. Problem-size parameters stay fixed.
absl::StatusOr<std::vector<ParamAxis>> BuildParamSpace(const CompiledGraph& graph,
                                                       absl::Span<const std::string> param_specs,
                                                       absl::Span<const std::string> set_overrides,
                                                       const Spelling& spelling = {});

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_PARAM_SPACE_H_
