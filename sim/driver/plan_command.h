// `simulate plan`: sweeps a kernel's tile parameters on a device and prints the configurations
// that fit, fastest first (text, JSON for autotuners, CSV), and what pruned the rest.
#ifndef SCRATCHSIM_SIM_DRIVER_PLAN_COMMAND_H_
#define SCRATCHSIM_SIM_DRIVER_PLAN_COMMAND_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "sim/flags.h"
#include "sim/frontend.h"
#include "sim/planner/planner.h"

namespace scratchsim {

// One line for `simulate --help`.
inline constexpr char kPlanSummary[] =
    "Sweep a kernel's tile parameters on a device: what fits, ranked by an analytic model.";

// `args` are the words after `plan`. Exit codes: 0 some configuration fits, 1 none does,
// 2 bad input or usage.
int RunPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The flags `simulate plan` takes.
FlagSpec PlanFlags();

// What `simulate plan` is asked for, typed (the flags, or the Python module's arguments).
struct PlanRequest {
  std::vector<std::string> sets;    // --set NAME=VALUE: fixed values
  std::vector<std::string> params;  // --param NAME=...: the axes to sweep (none: the graph's ranges)
  std::string format = "text";      // text, json, csv
  int64_t top = 10;                 // --top: 0..100000
  int64_t threads = 0;              // --threads: 0..1024 (0: the hardware's)
  // --allow-spills, --compute-dtype, --policy (top_k and threads come from the fields above).
  PlanOptions planner;
  std::string calibration;          // --calibration FILE, applied to the device already: names it in notes
  // --registers FILE (repeatable): a compiler's registers per configuration, each for the planned
  // graph it names; (the file, its figures).
  std::vector<std::pair<std::string, CompiledRegisters>> compiled_registers;
  int64_t progress_seconds = 5;     // --progress-seconds: 0..86400
  bool stats = false;               // --stats
  bool map = false;                 // --map: draw the plan map
  std::string map_path;             // --map FILE.svg
  std::string map_axes;             // --map-axes X,Y (empty: the first two swept)
  Spelling spelling;                // how messages name sets and params (the flags, or Python's)
};

// The request the flags make, each value checked.
absl::StatusOr<PlanRequest> PlanRequestFromFlags(const ParsedFlags& flags);

// `simulate plan` on kernels already loaded: one is PlanKernel; several are kernel families of one
// problem (sim/planner/families: --set and --param apply to each family that has the parameter),
// planned and ranked together. --map takes one kernel.
absl::StatusOr<int> PlanKernels(std::vector<Kernel> kernels, const DeviceModel& device, const PlanRequest& request,
                                std::ostream& out, std::ostream& err, std::string* map_svg = nullptr);

// `simulate plan` on a kernel already loaded (sim/pipeline LoadKernel), compiled and bound by the
// pipeline. With `map_svg` the plan map comes back as text (and is written only where
// request.map_path names a file). Returns the exit code as RunPlanCommand does.
absl::StatusOr<int> PlanKernel(Kernel kernel, const DeviceModel& device, const PlanRequest& request,
                               std::ostream& out, std::ostream& err, std::string* map_svg = nullptr);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_PLAN_COMMAND_H_
