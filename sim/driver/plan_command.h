// `simulate plan`: sweeps a kernel's tile parameters on a device and prints the configurations
// that fit, fastest first (text, JSON for autotuners, CSV), and what pruned the rest.
#ifndef SCRATCHSIM_SIM_DRIVER_PLAN_COMMAND_H_
#define SCRATCHSIM_SIM_DRIVER_PLAN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "sim/flags.h"
#include "sim/frontend.h"

namespace scratchsim {

// One line for `simulate --help`.
inline constexpr char kPlanSummary[] =
    "Sweep a kernel's tile parameters on a device: what fits, ranked by an analytic model.";

// `args` are the words after `plan`. Exit codes: 0 some configuration fits, 1 none does,
// 2 bad input or usage.
int RunPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The flags `simulate plan` takes.
FlagSpec PlanFlags();

// `simulate plan` on a kernel already loaded (LoadKernel, ReadKernel): --param, --set, --top,
// --format and the planner's options from `flags`. Returns the exit code as RunPlanCommand does.
absl::StatusOr<int> PlanKernel(const Kernel& kernel, const DeviceModel& device, const ParsedFlags& flags,
                               std::ostream& out, std::ostream& err);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_PLAN_COMMAND_H_
