// Per-configuration tables keyed by "NAME=VALUE" sets of a graph's parameters (calibration
// residuals, a compiler's register counts): one parser and one lookup for every such table.
#ifndef SCRATCHSIM_SIM_CONFIG_INDEX_H_
#define SCRATCHSIM_SIM_CONFIG_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sim/graph.h"

namespace scratchsim {

// Entries are numbered in the order they are added; every entry names the same parameters (the
// first entry's), so a lookup reads those parameters' values and nothing else.
class ConfigIndex {
 public:
  struct Added {
    int entry = 0;     // the entry the sets name (an earlier one when they repeat its key)
    bool new_entry = false;
  };

  // Adds one configuration. `field` names its sets in errors: a set that is not NAME=INTEGER of a
  // parameter of `graph`, or parameters other than the first entry's.
  absl::StatusOr<Added> Add(const CompiledGraph& graph, absl::Span<const std::string> sets, const std::string& field);

  // The entry of a configuration's parameter values (one per graph symbol), if any.
  std::optional<int> Find(absl::Span<const int64_t> values) const;

  bool empty() const { return entries_.empty(); }
  int size() const { return static_cast<int>(entries_.size()); }
  // The parameters the entries are keyed by, in the graph's order of symbols.
  const std::vector<std::string>& parameters() const { return names_; }

 private:
  std::vector<int> slots_;  // graph symbol slots of the key's parameters
  std::vector<std::string> names_;
  // Ordered by value, and looked up by a span too: the engine asks once per configuration it
  // evaluates, and the lookup's key lives on the stack.
  struct KeyLess {
    using is_transparent = void;
    bool operator()(absl::Span<const int64_t> a, absl::Span<const int64_t> b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  std::map<std::vector<int64_t>, int, KeyLess> entries_;
};

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_CONFIG_INDEX_H_
