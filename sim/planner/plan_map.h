// The plan map: a grid over two of a sweep's parameters (the others at their best value), each
// cell the configuration's estimated time or the limit that pruned it, drawn as one SVG.
#ifndef SCRATCHSIM_SIM_PLANNER_PLAN_MAP_H_
#define SCRATCHSIM_SIM_PLANNER_PLAN_MAP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "sim/graph.h"
#include "sim/planner/planner.h"

namespace scratchsim {

struct PlanMapCell {
  int64_t x = 0;  // the two axes' values
  int64_t y = 0;
  PlanCell outcome;
  std::string pruned_by;  // does not fit: the limit, in the device's words ("shared memory", "LDS", "registers")
  std::string detail;     // does not fit: "245760 B > 232448 B", the broken requirement
  int rank = 0;           // 1-based rank among the plan's top configurations; 0: not among them
};

struct PlanMap {
  std::string kernel;
  std::string device;
  std::string x_name;
  std::string y_name;
  std::vector<int64_t> x_values;
  std::vector<int64_t> y_values;
  // The plan's other swept parameters, at the best configuration's values (at their defaults
  // when nothing fits: fixed_at_best false), then the parameters the plan did not sweep.
  std::vector<std::pair<std::string, int64_t>> others;
  std::vector<std::pair<std::string, int64_t>> fixed;
  bool fixed_at_best = false;
  std::vector<PlanMapCell> cells;  // row by row: y_values.size() rows of x_values.size() cells
  int top_total = 0;               // the plan's top configurations
  int top_elsewhere = 0;           // of them, those whose other parameters differ from this slice's
  const PlanMapCell& at(size_t yi, size_t xi) const { return cells[yi * x_values.size() + xi]; }
};

// Sweeps the grid of `x_axis` by `y_axis` (two of plan.axes, by name) with the other axes at the
// values of plan.top's first configuration, through Plan with PlanOptions::record_cells and the
// same options the plan ran with. An axis the plan did not sweep is InvalidArgument naming the
// swept ones.
absl::StatusOr<PlanMap> BuildPlanMap(const CompiledGraph& graph, const DeviceModel& device, const PlanResult& plan,
                                     absl::string_view x_axis, absl::string_view y_axis, const PlanOptions& options);

// The map as SVG: fitting cells coloured by estimated time (green fastest, on a log scale to the
// slowest), pruned cells hatched in the colour of their limit and named, the top configurations
// outlined with their rank, a legend. Hover titles give each cell's figures. No script, no
// external reference. Deterministic.
std::string RenderPlanMapSvg(const PlanMap& map);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_PLAN_MAP_H_
