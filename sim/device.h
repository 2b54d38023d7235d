// Loads, validates and looks up device models: `--device h100` or a path to a textproto.
// Shipped models live in models/devices/; SCRATCHSIM_MODELS adds directories of one's own.
#ifndef SCRATCHSIM_SIM_DEVICE_H_
#define SCRATCHSIM_SIM_DEVICE_H_

#include <cstdint>
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

// A program that carries its own models (the Python package's scratchsim/models/devices) names
// their directory here: it replaces the search for the shipped models above (SCRATCHSIM_MODELS
// still comes first). Empty: search again.
void SetShippedModelsDir(std::string dir);

// `name_or_path` is a model's name or alias in any case ("h100", "H100", "tpu_v6e") or a file path.
absl::StatusOr<DeviceModel> LoadDevice(absl::string_view name_or_path);

// Every model of DeviceModelDirs(), sorted by name.
absl::StatusOr<std::vector<DeviceModel>> LoadShippedDevices();

// Bounds ValidateDevice holds every model to (docs/reliability.md): no memory space above 1 TiB,
// at most 8 memory spaces, performance figures finite and at most 1e12.
inline constexpr int64_t kMaxDeviceSpaceBytes = int64_t{1} << 40;
inline constexpr int kMaxDeviceMemorySpaces = 8;
inline constexpr double kMaxDeviceFigure = 1e12;

// Checks every number the engine, the occupancy calculator and the planner use: present where
// needed, in range (zero, negative, NaN and infinite values refused), powers of two where
// offsets and registers are rounded with them. The error is InvalidArgument naming `origin`
// (the file) and the field.
absl::Status ValidateDevice(const DeviceModel& device, absl::string_view origin);

// A device or memory-space name: 1 to 64 letters, digits, '_', '.', '+' or '-' (graphs and
// --device look it up, reports and model files print it unescaped).
bool IsValidModelName(absl::string_view name);

// The memory space called `name`, or nullptr.
const MemorySpace* FindSpace(const DeviceModel& device, absl::string_view name);

// What one program may use of a space per core: usable_per_core_bytes where the model gives it,
// else the whole capacity.
int64_t UsableBytesPerCore(const MemorySpace& space);

// The first memory space of `kind`, or nullptr.
const MemorySpace* FindSpaceOfKind(const DeviceModel& device, MemoryKind kind);

// The most registers one thread may have: the model's max_registers_per_thread, else 255 (the
// NVIDIA ISA's per-thread limit, which every GPU model without the field shares).
int64_t MaxRegistersPerThread(const DeviceModel& device);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DEVICE_H_
