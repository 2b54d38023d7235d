#include "sim/planner/residuals.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/assignment.h"

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
  bool first = true;
  for (int i = 0; i < device.config_residuals_size(); ++i) {
    const ConfigResidual& r = device.config_residuals(i);
    if (r.graph() != graph.graph.name() || r.compute_dtype() != compute_dtype) continue;
    const std::string field = absl::StrCat(device.name(), ": config_residuals[", i, "].sets");
    std::vector<std::pair<int, int64_t>> assignment;  // (slot, value), by slot
    for (const std::string& set : r.sets()) {
      const std::optional<Assignment> a = ParseAssignment(set);
      const int slot = a.has_value() ? graph.symbols.Find(a->name) : -1;
      if (slot < 0) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": '", set, "' is not NAME=INTEGER of a parameter of graph '",
                                                       graph.graph.name(), "'"));
      }
      assignment.emplace_back(slot, a->value);
    }
    std::sort(assignment.begin(), assignment.end());
    std::vector<int> slots;
    std::vector<int64_t> key;
    for (const auto& [slot, value] : assignment) slots.push_back(slot), key.push_back(value);
    if (first) {
      table.slots_ = slots;
      for (int slot : slots) table.names_.push_back(graph.symbols.names()[slot]);
      first = false;
    } else if (slots != table.slots_) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": names other parameters than the first residual of graph '",
                                                     graph.graph.name(), "' (", absl::StrJoin(table.names_, ", "), ")"));
    }
    table.factors_[key] = r.factor();
  }
  return table;
}

std::optional<double> ResidualTable::Factor(absl::Span<const int64_t> values) const {
  if (factors_.empty()) return std::nullopt;
  std::vector<int64_t> key;
  key.reserve(slots_.size());
  for (int slot : slots_) key.push_back(slot < static_cast<int>(values.size()) ? values[slot] : 0);
  auto it = factors_.find(key);
  if (it == factors_.end()) return std::nullopt;
  return it->second;
}

}  // namespace scratchsim
