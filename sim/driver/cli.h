// The `simulate` command: flags in, a report and an exit code out (0 fits, 1 does not fit,
// 2 bad input or usage). Subcommands live beside it; main only dispatches.
#ifndef SCRATCHSIM_SIM_CLI_H_
#define SCRATCHSIM_SIM_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"

namespace scratchsim {

inline constexpr int kExitFits = 0;
inline constexpr int kExitDoesNotFit = 1;
inline constexpr int kExitBadInput = 2;

// `simulate [--device DEV] [--graph FILE | what-if flags] ...`; `args` excludes argv[0].
int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Reads the kernel a user names (a graph file, or a front end's input) and lowers front-end
// descriptions (Pallas calls) for `device`.
absl::StatusOr<KernelGraph> LoadKernelGraph(const std::string& path, const DeviceModel& device);

// Lowers front-end descriptions inside `graph` (a Pallas call) to plain buffers for `device`.
absl::StatusOr<KernelGraph> LowerForDevice(KernelGraph graph, const DeviceModel& device, const std::string& path);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_CLI_H_
