#include "sim/config_index.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/assignment.h"

namespace scratchsim {

absl::StatusOr<ConfigIndex::Added> ConfigIndex::Add(const CompiledGraph& graph, absl::Span<const std::string> sets,
                                                    const std::string& field) {
  std::vector<std::pair<int, int64_t>> assignment;  // (slot, value), by slot
  for (const std::string& set : sets) {
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
  if (entries_.empty()) {
    slots_ = slots;
    names_.clear();
    for (int slot : slots) names_.push_back(graph.symbols.names()[slot]);
  } else if (slots != slots_) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": names other parameters than the first entry for graph '",
                                                   graph.graph.name(), "' (", absl::StrJoin(names_, ", "), ")"));
  }
  const auto [it, inserted] = entries_.try_emplace(std::move(key), size());
  return Added{it->second, inserted};
}

std::optional<int> ConfigIndex::Find(absl::Span<const int64_t> values) const {
  if (entries_.empty()) return std::nullopt;
  absl::InlinedVector<int64_t, 8> key;
  for (int slot : slots_) key.push_back(slot < static_cast<int>(values.size()) ? values[slot] : 0);
  auto it = entries_.find(absl::MakeConstSpan(key));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

}  // namespace scratchsim
