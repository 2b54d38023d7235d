// Device models that inherit: a model names another in `inherits` and gives only what differs
// (docs/devices.md, "Inheritance"). The loader resolves the chain before validating, and records
// which model's file gave each performance term (DeviceModel.term_origins).
#ifndef SCRATCHSIM_SIM_DEVICE_INHERIT_H_
#define SCRATCHSIM_SIM_DEVICE_INHERIT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"

namespace scratchsim {

// At most this many models in one `inherits` chain.
inline constexpr int kMaxInheritDepth = 8;

// `child` over `parent`: the child's set fields win (scalars that are not zero or empty, memory
// spaces by name, peaks by dtype, a non-empty carveout list replaces the parent's); name,
// display_name and aliases are the child's alone; sources are the child's, then the parent's
// marked as inherited. term_origins is not touched (ResolveInherits fills it).
DeviceModel MergeDeviceModels(const DeviceModel& parent, const DeviceModel& child);

// A raw (unresolved) model by name or alias (case-insensitive), and the file it came from;
// nullptr when there is none.
struct RawDevice {
  const DeviceModel* model = nullptr;
  std::string file;
};
using RawDeviceLookup = std::function<RawDevice(absl::string_view name)>;

// `device` (read from `file`) with its `inherits` chain resolved through `lookup`, and
// term_origins filled for every performance term it has. Errors name the file and the field
// 'inherits': an unknown parent, a cycle, a chain deeper than kMaxInheritDepth.
absl::StatusOr<DeviceModel> ResolveInherits(const DeviceModel& device, absl::string_view file,
                                            const RawDeviceLookup& lookup);

// A model by name or alias, resolved (LoadDevice).
using DeviceLoader = std::function<absl::StatusOr<DeviceModel>(absl::string_view name)>;

// `device` with a calibration applied (`simulate plan --calibration FILE`): `calibration` is the
// file's model as read (not resolved), which inherits the model X it was measured on. X must be
// `device` or one of its ancestors. Each performance term the calibration sets replaces the
// device's where the device takes that term from X or above (as if the calibration were merged
// into X), and is added where the device has none; a term the device (or a model between it and
// X) sets itself is kept and named in `kept`. term_origins name the calibration for the terms it
// gave. The calibration's config_residuals, if any, replace the device's. Errors name `file`.
absl::StatusOr<DeviceModel> ApplyCalibration(const DeviceModel& device, const DeviceModel& calibration,
                                             absl::string_view file, const DeviceLoader& load,
                                             std::vector<std::string>* kept);

// The performance terms a model can give, as term_origins names them: the Performance fields
// that are figures ("memory_bandwidth_gbps", "clock_mhz", ...) and "peak.<dtype>" per peak.
std::vector<std::string> PerformanceTermNames(const DeviceModel& device);

// The value of a term named as above (0 when the model does not give it).
double PerformanceTerm(const DeviceModel& device, absl::string_view term);
// Sets a term named as above (a peak is added if missing). False for an unknown name.
bool SetPerformanceTerm(DeviceModel* device, absl::string_view term, double value);

// The origin recorded for `term`, or nullptr.
const TermOrigin* FindTermOrigin(const DeviceModel& device, absl::string_view term);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DEVICE_INHERIT_H_
