#include "sim/planner/param_space.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/checked_math.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {


absl::Status BadSpec(absl::string_view spec, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("--param '", spec, "': ", problem,
                                                 " (expected NAME=LO..HI, NAME=LO..HI:pow2, "
                                                 "NAME=LO..HI:step=S or NAME=V1,V2,...)"));
}

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
absl::StatusOr<std::vector<int64_t>> Steps(int64_t lo, int64_t hi, int64_t step) {
  const auto span = CheckedSub(hi, lo);
  if (!span || *span / step >= kMaxAxisValues) {
    return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxAxisValues, " values"));
  }
  std::vector<int64_t> values;
  const int64_t count = *span / step + 1;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) values.push_back(lo + i * step);
  return values;
}

}  // namespace

absl::StatusOr<ParamAxis> ParseParamSpec(absl::string_view spec, const CompiledGraph& graph) {
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
      return absl::InvalidArgumentError(absl::StrCat("--param '", spec, "': '", axis.name,
                                                     "' is a problem size; fix it with --set ", axis.name, "=V"));
    }
  }
  absl::string_view body = parts.second;
  size_t dots = body.find("..");
  if (dots == absl::string_view::npos) {
    for (absl::string_view item : absl::StrSplit(body, ',')) {
      int64_t v;
      if (!absl::SimpleAtoi(item, &v)) return BadSpec(spec, absl::StrCat("'", item, "' is not an integer"));
      axis.values.push_back(v);
    }
  } else {
    absl::string_view lo_text = body.substr(0, dots);
    absl::string_view rest = body.substr(dots + 2);
    absl::string_view hi_text = rest;
    absl::string_view modifier;
    if (size_t colon = rest.find(':'); colon != absl::string_view::npos) {
      hi_text = rest.substr(0, colon);
      modifier = rest.substr(colon + 1);
    }
    int64_t lo, hi;
    if (!absl::SimpleAtoi(lo_text, &lo)) return BadSpec(spec, absl::StrCat("'", lo_text, "' is not an integer"));
    if (!absl::SimpleAtoi(hi_text, &hi)) return BadSpec(spec, absl::StrCat("'", hi_text, "' is not an integer"));
    if (lo > hi) return BadSpec(spec, absl::StrCat("the range is empty (", lo, " > ", hi, ")"));
    int64_t step = 1;
    bool pow2 = false;
    if (modifier == "pow2") {
      pow2 = true;
    } else if (absl::ConsumePrefix(&modifier, "step=")) {
      if (!absl::SimpleAtoi(modifier, &step) || step <= 0) {
        return BadSpec(spec, absl::StrCat("step '", modifier, "' is not a positive integer"));
      }
    } else if (!modifier.empty()) {
      return BadSpec(spec, absl::StrCat("unknown modifier '", modifier, "'"));
    }
    if (pow2) {
      axis.values = PowersOfTwo(lo, hi);
      if (axis.values.empty()) return BadSpec(spec, "no power of two in the range");
    } else {
      auto steps = Steps(lo, hi, step);
      if (!steps.ok()) return BadSpec(spec, steps.status().message());
      axis.values = *std::move(steps);
    }
  }
  if (axis.values.empty()) return BadSpec(spec, "no values");
  if (static_cast<int64_t>(axis.values.size()) > kMaxAxisValues) {
    return BadSpec(spec, absl::StrCat("more than ", kMaxAxisValues, " values"));
  }
  std::vector<int64_t> sorted = axis.values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return BadSpec(spec, "a value repeats");
  return axis;
}

absl::StatusOr<std::vector<ParamAxis>> BuildParamSpace(const CompiledGraph& graph,
                                                       absl::Span<const std::string> param_specs,
                                                       absl::Span<const std::string> set_overrides) {
  std::vector<ParamAxis> axes;
  std::vector<bool> taken(graph.symbols.names().size(), false);
  for (const std::string& assignment : set_overrides) {
    std::string name = assignment.substr(0, assignment.find('='));
    int slot = graph.symbols.Find(name);
    if (slot >= 0) taken[slot] = true;
  }
  for (const std::string& spec : param_specs) {
    ASSIGN_OR_RETURN(ParamAxis axis, ParseParamSpec(spec, graph));
    if (taken[axis.slot]) {
      return absl::InvalidArgumentError(absl::StrCat("--param '", spec, "': '", axis.name,
                                                     "' is already fixed by --set or swept by another --param"));
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
    if (p.power_of_two()) {
      axis.values = PowersOfTwo(lo, hi);
    } else {
      auto values = Steps(lo, hi, 1);
      if (!values.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": parameter '", p.name(), "': range ", lo,
                                                       "..", hi, " has more than ", kMaxAxisValues,
                                                       " values; narrow it with --param"));
      }
      axis.values = *std::move(values);
    }
    if (axis.values.empty()) continue;
    taken[slot] = true;
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace scratchsim
