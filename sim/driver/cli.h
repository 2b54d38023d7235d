// The `simulate` command: flags in, a report and an exit code out (0 fits, 1 does not fit,
// 2 bad input or usage, 3 no GPU for a subcommand that needs one). Front ends plug in through sim/frontend.h.
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

// Reads the kernel the flags name (--graph FILE, or a front end's input flag) and lowers it for
// `device` with the front end that claims it (a Pallas call).
absl::StatusOr<Kernel> LoadKernel(const ParsedFlags& flags, const DeviceModel& device);

// The same for a kernel given as its contents rather than a file (the Python module): `input`
// is "graph" (a KernelGraph in `format`) or a front end's input flag ("ttgir"); `origin` names
// it in messages; --any-target comes from `flags`.
absl::StatusOr<Kernel> ReadKernel(absl::string_view input, absl::string_view contents, ProtoFormat format,
                                  absl::string_view origin, const ParsedFlags& flags, const DeviceModel& device);

// The flags `simulate` takes without a subcommand.
FlagSpec SimulateFlags();

// What `simulate` reports for a loaded kernel: --set, --policy and --no-suggest from `flags`, the
// verdict worded by the kernel's front end.
absl::StatusOr<Report> SimulateKernel(Kernel kernel, const DeviceModel& device, const ParsedFlags& flags);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_CLI_H_
