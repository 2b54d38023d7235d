#include "sim/planner/param_space.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/assignment.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

absl::Status BadSpecError(absl::string_view spec, absl::string_view problem, const Spelling& spelling) {
  return absl::InvalidArgumentError(absl::StrCat(spelling.Param(spec), ": ", problem,
                                                 " (expected NAME=LO..HI, NAME=LO..HI:pow2, "
                                                 "NAME=LO..HI:step=S or NAME=V1,V2,...)"));
}

}  // namespace

absl::StatusOr<ParamAxis> ParseParamSpec(absl::string_view spec, const CompiledGraph& graph,
                                         const Spelling& spelling) {
  auto BadSpec = [&](absl::string_view spec, absl::string_view problem) {
    return BadSpecError(spec, problem, spelling);
  };
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(spec, absl::MaxSplits('=', 1));
  if (spec.find('=') == absl::string_view::npos || parts.first.empty() || parts.second.empty()) {
    return BadSpec(spec, "missing NAME= or values");
  }
  ParamAxis axis;
  axis.name = std::string(parts.first);
  axis.slot = graph.symbols.Find(axis.name);
  if (axis.slot < 0 || IsDeviceSymbol(graph, axis.slot)) {
    std::vector<std::string> names;
    for (const Parameter& p : graph.graph.parameters()) names.push_back(p.name());
    return BadSpec(spec, absl::StrCat("the graph has no parameter '", axis.name, "' (it has: ",
                                      absl::StrJoin(names, ", "), ")"));
  }
  for (const Parameter& p : graph.graph.parameters()) {
    if (p.name() == axis.name && p.problem_size()) {
      return absl::InvalidArgumentError(absl::StrCat(spelling.Param(spec), ": '", axis.name,
                                                     "' is a problem size; fix it with ", spelling.SetHint(axis.name)));
    }
  }
  absl::StatusOr<std::vector<int64_t>> values = ParseValueList(parts.second, kMaxAxisValues);
  if (!values.ok()) return BadSpec(spec, values.status().message());
  axis.values = *std::move(values);
  std::vector<int64_t> sorted = axis.values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return BadSpec(spec, "a value repeats");
  return axis;
}

absl::StatusOr<std::vector<ParamAxis>> BuildParamSpace(const CompiledGraph& graph,
                                                       absl::Span<const std::string> param_specs,
                                                       absl::Span<const std::string> set_overrides,
                                                       const Spelling& spelling) {
  std::vector<ParamAxis> axes;
  std::vector<bool> taken(graph.symbols.names().size(), false);
  for (const std::string& assignment : set_overrides) {
    std::string name = assignment.substr(0, assignment.find('='));
    int slot = graph.symbols.Find(name);
    if (slot >= 0) taken[slot] = true;
  }
  for (const std::string& spec : param_specs) {
    ASSIGN_OR_RETURN(ParamAxis axis, ParseParamSpec(spec, graph, spelling));
    if (taken[axis.slot]) {
      return absl::InvalidArgumentError(absl::StrCat(spelling.Param(spec), ": '", axis.name, "' is already fixed by ",
                                                     spelling.SetKind(), " or swept by another ",
                                                     spelling.ParamKind(), " entry"));
    }
    taken[axis.slot] = true;
    axes.push_back(std::move(axis));
  }
  for (const Parameter& p : graph.graph.parameters()) {
    int slot = graph.symbols.Find(p.name());
    if (slot < 0 || taken[slot] || p.problem_size() || p.max() <= 0) continue;
    ParamAxis axis;
    axis.name = p.name();
    axis.slot = slot;
    axis.from_graph = true;
    int64_t lo = p.min(), hi = p.max();
    if (lo > hi) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": parameter '", p.name(), "': min ", lo,
                                                     " is above max ", hi));
    }
    absl::StatusOr<std::vector<int64_t>> values =
        ParseValueList(absl::StrCat(lo, "..", hi, p.power_of_two() ? ":pow2" : ""), kMaxAxisValues);
    if (!values.ok() && p.power_of_two()) continue;  // no power of two in the range: nothing to sweep
    if (!values.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": parameter '", p.name(), "': range ", lo, "..",
                                                     hi, " has more than ", kMaxAxisValues, " values; narrow it with ",
                                                     spelling.ParamKind()));
    }
    axis.values = *std::move(values);
    taken[slot] = true;
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace scratchsim
