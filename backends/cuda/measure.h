// Launches one real kernel configuration and reads back what the CUDA runtime says about it:
// function attributes, the opt-in and launch errors, occupancy, correctness and time.
#ifndef SCRATCHSIM_BACKENDS_CUDA_MEASURE_H_
#define SCRATCHSIM_BACKENDS_CUDA_MEASURE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "backends/cuda/kernel_case.h"

namespace scratchsim::cuda {

struct Measurement {
  std::string instance;               // KernelCase::name()
  int threads = 0;                    // threads per block of the launch
  // cudaFuncGetAttributes.
  int64_t static_shared_bytes = 0;    // sharedSizeBytes
  int64_t dynamic_shared_bytes = 0;   // what the launch asks for
  int registers = 0;                  // numRegs
  int64_t local_bytes = 0;            // localSizeBytes (spill and stack per thread)
  int max_threads_per_block = 0;      // the compiled limit (__launch_bounds__)
  // cudaFuncSetAttribute(MaxDynamicSharedMemorySize): "cudaSuccess", an error name, or
  // "not requested" when the configuration does not opt in.
  std::string opt_in_error;
  std::string launch_error;           // cudaGetErrorName of the launch
  bool launched = false;
  // Blocks resident per SM: cudaOccupancyMaxActiveBlocksPerMultiprocessor when the launch
  // succeeds, else 0. The API alone does not check the compiled thread limit: for a block
  // larger than __launch_bounds__ it still answers > 0 although the launch fails.
  int blocks_per_sm = 0;
  int occupancy_api_blocks = 0;       // the API's raw answer (0 when it reports an error)
  std::string occupancy_error;
  // "ok", "not run" (no launch), or what differs from the CPU reference.
  std::string correctness;
  double time_ms = -1;                // median of the timed launches; -1 when not launched
};

struct MeasureOptions {
  bool opt_in = true;       // raise MaxDynamicSharedMemorySize to the launch's dynamic bytes
  int timed_launches = 3;
};

// Whether a CUDA device is present (false, not an error, on machines without one).
bool DevicePresent();

// Measures `kernel`: errors of the configuration itself (it does not launch) are results;
// only failures of the harness (no device, a sticky CUDA error) are a non-OK status.
absl::StatusOr<Measurement> Measure(KernelCase& kernel, const MeasureOptions& options);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_MEASURE_H_
