// The `simulate` command: flags in, a report and an exit code out (0 fits, 1 does not fit,
// 2 bad input or usage, 3 no GPU for a subcommand that needs one): the flags turned into the
// pipeline's typed options (sim/pipeline). Front ends plug in through sim/frontend.h.
#ifndef SCRATCHSIM_SIM_DRIVER_CLI_H_
#define SCRATCHSIM_SIM_DRIVER_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/flags.h"
#include "sim/frontend.h"
#include "sim/pipeline.h"
#include "sim/proto_io.h"

namespace scratchsim {

inline constexpr int kExitFits = 0;
inline constexpr int kExitDoesNotFit = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNoDevice = 3;
// A command stopped by SIGINT (simulate plan) after printing its partial result: 128 + SIGINT.
inline constexpr int kExitInterrupted = 130;

// `simulate [SUBCOMMAND] ...`; `args` excludes argv[0].
int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// --max-input-mib (every command that reads files takes it): the input size limit.
absl::Status ApplyInputLimit(const ParsedFlags& flags);

// The flags front ends read their input from (--ttgir), added to `spec`.
void AddFrontEndFlags(FlagSpec* spec);

// Whether `flags` name a kernel: --graph or a front end's input flag.
bool HasKernelInput(const ParsedFlags& flags);

// The kernel the flags name: --graph FILE, or a front end's input flag (--ttgir FILE).
absl::StatusOr<KernelInput> KernelInputFromFlags(const ParsedFlags& flags);

// --any-target.
LoadOptions LoadOptionsFromFlags(const ParsedFlags& flags);

// Load and Lower (sim/pipeline) of the kernel the flags name, for `device`.
absl::StatusOr<Kernel> LoadKernel(const ParsedFlags& flags, const DeviceModel& device);

// The pipeline's options from --set, --policy, --no-suggest, --confirm, --format and the
// pictures' flags.
absl::StatusOr<AnalysisOptions> AnalysisOptionsFromFlags(const ParsedFlags& flags);

// The flags `simulate` takes without a subcommand.
FlagSpec SimulateFlags();

// What `simulate` reports for the kernel the flags name: the pipeline (sim/pipeline), then the
// pictures the flags ask for.
absl::StatusOr<Report> SimulateKernel(const ParsedFlags& flags, const DeviceModel& device);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_CLI_H_
