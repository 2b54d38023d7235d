// Loads, validates and looks up device models: `--device h100` or a path to a textproto.
// Shipped models live in models/devices/; SCRATCHSIM_MODELS adds directories of one's own.
#ifndef SCRATCHSIM_SIM_DEVICE_H_
#define SCRATCHSIM_SIM_DEVICE_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/device.pb.h"

namespace scratchsim {

// Where device textprotos are read from, first match wins: every directory of
// SCRATCHSIM_MODELS (':'-separated), then the shipped models (the source tree, the install
// prefix, share/scratchsim/models/devices beside an installed binary, or ./models/devices).
std::vector<std::string> DeviceModelDirs();

// `name_or_path` is a model's name or alias in any case ("h100", "H100", "tpu_v6e") or a file path.
absl::StatusOr<DeviceModel> LoadDevice(absl::string_view name_or_path);

// Every model of DeviceModelDirs(), sorted by name.
absl::StatusOr<std::vector<DeviceModel>> LoadShippedDevices();

// Checks that the numbers a model gives are present and consistent; `origin` names the file.
absl::Status ValidateDevice(const DeviceModel& device, absl::string_view origin);

// The memory space called `name`, or nullptr.
const MemorySpace* FindSpace(const DeviceModel& device, absl::string_view name);

// The first memory space of `kind`, or nullptr.
const MemorySpace* FindSpaceOfKind(const DeviceModel& device, MemoryKind kind);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DEVICE_H_
