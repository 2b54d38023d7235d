#include "sim/planner/residuals.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace scratchsim {

std::vector<std::string> ResidualKey(const std::vector<std::string>& config_sets,
                                     const std::vector<std::string>& params) {
  std::vector<std::string> key;
  for (const std::string& set : config_sets) {
    const std::string name = set.substr(0, set.find('='));
    if (params.empty() || std::find(params.begin(), params.end(), name) != params.end()) key.push_back(set);
  }
  std::sort(key.begin(), key.end());
  return key;
}

absl::StatusOr<ResidualTable> ResidualTable::Build(const CompiledGraph& graph, const DeviceModel& device,
                                                   const std::string& compute_dtype) {
  ResidualTable table;
  for (int i = 0; i < device.config_residuals_size(); ++i) {
    const ConfigResidual& r = device.config_residuals(i);
    if (r.graph() != graph.graph.name() || r.compute_dtype() != compute_dtype) continue;
    const std::vector<std::string> sets(r.sets().begin(), r.sets().end());
    ASSIGN_OR_RETURN(const ConfigIndex::Added added,
                     table.index_.Add(graph, sets, absl::StrCat(device.name(), ": config_residuals[", i, "].sets")));
    // A repeated configuration: the later residual stands.
    if (added.new_entry) table.factors_.push_back(r.factor());
    else table.factors_[added.entry] = r.factor();
  }
  return table;
}

std::optional<double> ResidualTable::Factor(absl::Span<const int64_t> values) const {
  const std::optional<int> entry = index_.Find(values);
  if (!entry) return std::nullopt;
  return factors_[*entry];
}

}  // namespace scratchsim
