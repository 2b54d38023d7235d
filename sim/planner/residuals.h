// Measured per-configuration corrections of the planner's estimates (ConfigResidual): what
// `simulate calibrate --residuals` learns from a timed sweep and `simulate plan` applies.
#ifndef SCRATCHSIM_SIM_PLANNER_RESIDUALS_H_
#define SCRATCHSIM_SIM_PLANNER_RESIDUALS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "sim/config_index.h"
#include "sim/graph.h"

namespace scratchsim {

// The residuals `device` carries for `graph` planned with `compute_dtype` (empty: the graph's
// own), looked up by parameter values. Every residual of one table names the same parameters
// (those of the configuration `simulate calibrate` read: all but the shape).
class ResidualTable {
 public:
  ResidualTable() = default;

  // Errors: a residual of this graph and dtype names a parameter the graph lacks, or other
  // parameters than the first one does.
  static absl::StatusOr<ResidualTable> Build(const CompiledGraph& graph, const DeviceModel& device,
                                             const std::string& compute_dtype);

  // The factor for a configuration's parameter values (one per graph symbol); none where the
  // table has no residual for it (the model's estimate stands).
  std::optional<double> Factor(absl::Span<const int64_t> values) const;

  bool empty() const { return index_.empty(); }
  int size() const { return index_.size(); }
  // The parameters a residual is keyed by, in the graph's order of symbols.
  const std::vector<std::string>& parameters() const { return index_.parameters(); }

 private:
  ConfigIndex index_;
  std::vector<double> factors_;  // per entry of index_
};

// The residual key of a timed configuration: its configuration sets (NAME=VALUE, the shape left
// out), those of `params` only where that is not empty, sorted.
std::vector<std::string> ResidualKey(const std::vector<std::string>& config_sets,
                                     const std::vector<std::string>& params = {});

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_RESIDUALS_H_
