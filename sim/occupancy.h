// Occupancy: how many blocks of one kernel fit on an SM (CU) at once, and what limits them.
// Agrees with cuda_occupancy.h's cudaOccMaxActiveBlocksPerMultiprocessor, driven by DeviceModel numbers.
#ifndef SCRATCHSIM_SIM_OCCUPANCY_H_
#define SCRATCHSIM_SIM_OCCUPANCY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

struct OccupancyInput {
  int64_t threads_per_block = 0;
  int64_t registers_per_thread = 0;      // as compiled (cudaFuncAttributes.numRegs)
  int64_t static_shared_bytes = 0;       // sharedSizeBytes
  int64_t dynamic_shared_bytes = 0;
  bool shared_memory_opt_in = true;      // cudaFuncAttributeMaxDynamicSharedMemorySize set to dynamic size
  int carveout_percent = -1;             // cudaFuncAttributePreferredSharedMemoryCarveout; -1 default
  int64_t block_barriers = 0;            // named barriers used (Hopper+)
};

// The factor names Occupancy.limiting_factor takes, in cuda_occupancy.h's bit order
// (OCC_LIMIT_WARPS, _REGISTERS, _SHARED_MEMORY, _BLOCKS, _BARRIERS); ties pick the first.
inline constexpr const char* kLimitWarps = "warps";
inline constexpr const char* kLimitRegisters = "registers";
inline constexpr const char* kLimitSharedMemory = "shared memory";
inline constexpr const char* kLimitBlocks = "blocks";
inline constexpr const char* kLimitBarriers = "barriers";

// Blocks per SM/CU and the limiting factor, equal to cuda_occupancy.h's
// cudaOccMaxActiveBlocksPerMultiprocessor for NVIDIA devices (see proto Occupancy in report.proto).
// A configuration that cannot launch at all gives blocks_per_core 0 and Occupancy.reason.
// Invalid input (negative sizes, no threads, more threads than the device allows, a carveout
// outside -1..100) is InvalidArgument naming the field; a device model lacking a number the
// calculation needs is InvalidArgument naming the device and field.
absl::StatusOr<Occupancy> ComputeOccupancy(const DeviceModel& device, const OccupancyInput& input);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_OCCUPANCY_H_
