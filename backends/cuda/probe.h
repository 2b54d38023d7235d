// Reads the live CUDA device (cudaDeviceProp and attributes) into a DeviceModel, and compares
// a shipped model with it field by field.
#ifndef SCRATCHSIM_BACKENDS_CUDA_PROBE_H_
#define SCRATCHSIM_BACKENDS_CUDA_PROBE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"

namespace scratchsim::cuda {

// The model of device `ordinal` as far as the runtime reports it. Facts the runtime cannot
// report (allocation granularities, carveout steps, alignment) stay unset; `sources` says so.
absl::StatusOr<DeviceModel> ProbeDevice(int ordinal);

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 13.0, runtime 13.0" for reports.
absl::StatusOr<std::string> DescribeDevice(int ordinal);

// One line per field the probe sets whose value in `shipped` differs ("limits.num_cores:
// probed 114, shipped 132"); empty when they agree. Bandwidth and clock agree within 0.5%.
std::vector<std::string> DiffAgainstProbe(const DeviceModel& probed, const DeviceModel& shipped);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_PROBE_H_
