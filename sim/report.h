// Renders a Report for people (aligned text a kernel author reads in ten seconds) and for
// tools (protobuf's JSON mapping with the .proto field names).
#ifndef SCRATCHSIM_SIM_REPORT_H_
#define SCRATCHSIM_SIM_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

std::string RenderText(const Report& report, const DeviceModel& device);
// The report in the JSON mapping of sim/json_text.h (the same as every other JSON the tools write).
// "carve-out at launch: ..." with the L1 it leaves and what the figure rests on; empty where
// the space has no carve-out (AMD LDS) or no block fits.
std::string LaunchCarveoutLine(const Occupancy& occupancy);

std::string RenderJson(const Report& report);

// "526336 B (514.0 KiB)".
std::string FormatBytes(int64_t bytes);
// The same figure in its unit alone, where a column has no room for both: "514.0 KiB",
// "28.5 MiB", "512 B".
std::string FormatBytesShort(int64_t bytes);

// Records what the real compiler said (simulate --confirm). Where it compiled, its verdict
// replaces the model's (kept as `confirmation.model_verdict`): FITS stays FITS, DOES_NOT_FIT
// and NOT_COMPILABLE become DOES_NOT_FIT. Where it did not (`error`), the model's verdict stands.
void ApplyConfirmation(CompilerConfirmation confirmation, Report* report);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_REPORT_H_
