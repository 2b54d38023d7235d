// Launches one real kernel configuration and reads back what the CUDA runtime says about it.
#include "backends/cuda/measure.h"

#include <algorithm>
#include <map>
#include <vector>

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace scratchsim::cuda {
namespace {

absl::Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

// The function's MaxDynamicSharedMemorySize before this process changed it: configurations
// that do not opt in are measured against it, whatever an earlier configuration set.
absl::StatusOr<int> DefaultMaxDynamicShared(const void* function) {
  static std::map<const void*, int>* defaults = new std::map<const void*, int>();
  auto it = defaults->find(function);
  if (it != defaults->end()) return it->second;
  cudaFuncAttributes attributes;
  RETURN_IF_ERROR(CudaStatus(cudaFuncGetAttributes(&attributes, function), "cudaFuncGetAttributes"));
  (*defaults)[function] = attributes.maxDynamicSharedSizeBytes;
  return attributes.maxDynamicSharedSizeBytes;
}

// Errors that leave the context unusable: measuring further would report garbage.
bool IsSticky(cudaError_t error) {
  return error == cudaErrorIllegalAddress || error == cudaErrorLaunchFailure ||
         error == cudaErrorMisalignedAddress || error == cudaErrorIllegalInstruction ||
         error == cudaErrorHardwareStackError || error == cudaErrorUnknown ||
         error == cudaErrorLaunchTimeout;
}

}  // namespace

bool DevicePresent() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

absl::StatusOr<Measurement> Measure(KernelCase& kernel, const MeasureOptions& options) {
  if (!DevicePresent()) return absl::FailedPreconditionError("no CUDA device present");
  Measurement m;
  m.instance = kernel.name();
  m.threads = kernel.threads_per_block();
  m.dynamic_shared_bytes = kernel.dynamic_shared_bytes();
  const void* function = kernel.function();

  ASSIGN_OR_RETURN(int default_max_dynamic, DefaultMaxDynamicShared(function));
  if (options.opt_in) {
    cudaError_t error = cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(m.dynamic_shared_bytes));
    m.opt_in_error = cudaGetErrorName(error);
    cudaGetLastError();  // a refused attribute is a result, not a harness failure
  } else {
    m.opt_in_error = "not requested";
    RETURN_IF_ERROR(CudaStatus(
        cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, default_max_dynamic),
        "restoring MaxDynamicSharedMemorySize"));
  }

  cudaFuncAttributes attributes;
  RETURN_IF_ERROR(CudaStatus(cudaFuncGetAttributes(&attributes, function), "cudaFuncGetAttributes"));
  m.static_shared_bytes = static_cast<int64_t>(attributes.sharedSizeBytes);
  m.registers = attributes.numRegs;
  m.local_bytes = static_cast<int64_t>(attributes.localSizeBytes);
  m.max_threads_per_block = attributes.maxThreadsPerBlock;

  int blocks = 0;
  cudaError_t occupancy = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, function, m.threads, static_cast<size_t>(m.dynamic_shared_bytes));
  m.occupancy_error = cudaGetErrorName(occupancy);
  m.occupancy_api_blocks = occupancy == cudaSuccess ? blocks : 0;
  cudaGetLastError();

  RETURN_IF_ERROR(CudaStatus(kernel.Prepare(), "preparing inputs"));
  RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "before launch"));
  cudaError_t launch = kernel.Launch(nullptr);
  m.launch_error = cudaGetErrorName(launch);
  m.launched = launch == cudaSuccess;
  m.blocks_per_sm = m.launched ? m.occupancy_api_blocks : 0;
  if (!m.launched) {
    m.correctness = "not run";
    if (IsSticky(launch)) return CudaStatus(launch, "launch (sticky)");
    return m;
  }
  cudaError_t finished = cudaDeviceSynchronize();
  if (finished != cudaSuccess) {
    return CudaStatus(finished, absl::StrCat("running ", m.instance).c_str());
  }
  std::string check = kernel.Check();
  m.correctness = check.empty() ? "ok" : check;

  cudaEvent_t start, stop;
  RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
  std::vector<float> times;
  for (int i = 0; i < options.timed_launches; ++i) {
    cudaEventRecord(start);
    cudaError_t error = kernel.Launch(nullptr);
    cudaEventRecord(stop);
    if (error != cudaSuccess) break;
    if (cudaEventSynchronize(stop) != cudaSuccess) break;
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "after timing"));
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    m.time_ms = times[times.size() / 2];
  }
  return m;
}

}  // namespace scratchsim::cuda
