// Reads the live CUDA device into a DeviceModel.
#include "backends/cuda/probe.h"

#include <cctype>
#include <cmath>

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace scratchsim::cuda {
namespace {

absl::Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

absl::StatusOr<int> Attribute(cudaDeviceAttr attribute, int ordinal, const char* name) {
  int value = 0;
  RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&value, attribute, ordinal), name));
  return value;
}

std::string VersionString(int version) {
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace

absl::StatusOr<DeviceModel> ProbeDevice(int ordinal) {
  cudaDeviceProp prop;
  RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties"));
  DeviceModel model;
  std::string name = "probed_";
  for (const char* c = prop.name; *c != '\0'; ++c) {
    name += std::isalnum(static_cast<unsigned char>(*c)) ? static_cast<char>(std::tolower(*c)) : '_';
  }
  model.set_name(name);
  model.set_display_name(prop.name);
  model.set_vendor("nvidia");
  model.set_arch(absl::StrCat("sm_", prop.major, prop.minor));

  MemorySpace* smem = model.add_memory_spaces();
  smem->set_name("smem");
  smem->set_kind(SHARED_MEMORY);
  smem->set_capacity_per_core_bytes(static_cast<int64_t>(prop.sharedMemPerMultiprocessor));
  smem->set_per_block_default_bytes(static_cast<int64_t>(prop.sharedMemPerBlock));
  smem->set_per_block_optin_bytes(static_cast<int64_t>(prop.sharedMemPerBlockOptin));
  smem->set_reserved_per_block_bytes(static_cast<int64_t>(prop.reservedSharedMemPerBlock));

  ExecutionLimits* limits = model.mutable_limits();
  limits->set_warp_size(prop.warpSize);
  limits->set_max_threads_per_block(prop.maxThreadsPerBlock);
  limits->set_max_threads_per_core(prop.maxThreadsPerMultiProcessor);
  limits->set_max_blocks_per_core(prop.maxBlocksPerMultiProcessor);
  limits->set_registers_per_core(prop.regsPerMultiprocessor);
  limits->set_registers_per_block(prop.regsPerBlock);
  limits->set_num_cores(prop.multiProcessorCount);
  limits->set_compute_major(prop.major);
  limits->set_compute_minor(prop.minor);

  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes still report them.
  ASSIGN_OR_RETURN(int clock_khz, Attribute(cudaDevAttrClockRate, ordinal, "cudaDevAttrClockRate"));
  ASSIGN_OR_RETURN(int memory_khz,
                   Attribute(cudaDevAttrMemoryClockRate, ordinal, "cudaDevAttrMemoryClockRate"));
  Performance* performance = model.mutable_performance();
  performance->set_clock_mhz(clock_khz / 1000.0);
  // Double data rate: two transfers per memory clock over the whole bus.
  performance->set_memory_bandwidth_gbps(2.0 * memory_khz * 1e3 * (prop.memoryBusWidth / 8.0) / 1e9);
  performance->set_l2_bytes(prop.l2CacheSize);

  model.add_sources(absl::StrCat("probed with cudaGetDeviceProperties and cudaDeviceGetAttribute on '",
                                 prop.name, "' (device ", ordinal, ")"));
  model.add_sources(
      "not reported by the runtime, left unset: allocation granularity, alignment, carveout "
      "steps, register allocation unit and sub-partitions, max registers per thread, peaks");
  return model;
}

absl::StatusOr<std::string> DescribeDevice(int ordinal) {
  cudaDeviceProp prop;
  RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties"));
  int driver = 0, runtime = 0;
  RETURN_IF_ERROR(CudaStatus(cudaDriverGetVersion(&driver), "cudaDriverGetVersion"));
  RETURN_IF_ERROR(CudaStatus(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion"));
  return absl::StrCat(prop.name, " (sm_", prop.major, prop.minor, ", ", prop.multiProcessorCount,
                      " SMs), CUDA driver API ", VersionString(driver), ", runtime ",
                      VersionString(runtime));
}

std::vector<std::string> DiffAgainstProbe(const DeviceModel& probed, const DeviceModel& shipped) {
  std::vector<std::string> diffs;
  auto compare = [&](const std::string& field, int64_t p, int64_t s) {
    if (p != s) diffs.push_back(absl::StrCat(field, ": probed ", p, ", shipped ", s));
  };
  auto compare_close = [&](const std::string& field, double p, double s) {
    if (std::fabs(p - s) > 0.005 * std::fabs(p)) {
      diffs.push_back(absl::StrCat(field, ": probed ", p, ", shipped ", s));
    }
  };
  if (probed.arch() != shipped.arch()) {
    diffs.push_back(absl::StrCat("arch: probed ", probed.arch(), ", shipped ", shipped.arch()));
  }
  for (const MemorySpace& p : probed.memory_spaces()) {
    const MemorySpace* s = nullptr;
    for (const MemorySpace& candidate : shipped.memory_spaces()) {
      if (candidate.name() == p.name()) s = &candidate;
    }
    if (s == nullptr) {
      diffs.push_back(absl::StrCat("memory space '", p.name(), "': missing in the shipped model"));
      continue;
    }
    const std::string prefix = absl::StrCat("memory_spaces[", p.name(), "].");
    compare(prefix + "capacity_per_core_bytes", p.capacity_per_core_bytes(), s->capacity_per_core_bytes());
    compare(prefix + "per_block_default_bytes", p.per_block_default_bytes(), s->per_block_default_bytes());
    compare(prefix + "per_block_optin_bytes", p.per_block_optin_bytes(), s->per_block_optin_bytes());
    compare(prefix + "reserved_per_block_bytes", p.reserved_per_block_bytes(), s->reserved_per_block_bytes());
  }
  const ExecutionLimits& p = probed.limits();
  const ExecutionLimits& s = shipped.limits();
  compare("limits.warp_size", p.warp_size(), s.warp_size());
  compare("limits.max_threads_per_block", p.max_threads_per_block(), s.max_threads_per_block());
  compare("limits.max_threads_per_core", p.max_threads_per_core(), s.max_threads_per_core());
  compare("limits.max_blocks_per_core", p.max_blocks_per_core(), s.max_blocks_per_core());
  compare("limits.registers_per_core", p.registers_per_core(), s.registers_per_core());
  compare("limits.registers_per_block", p.registers_per_block(), s.registers_per_block());
  compare("limits.num_cores", p.num_cores(), s.num_cores());
  compare("limits.compute_major", p.compute_major(), s.compute_major());
  compare("limits.compute_minor", p.compute_minor(), s.compute_minor());
  compare("performance.l2_bytes", probed.performance().l2_bytes(), shipped.performance().l2_bytes());
  compare_close("performance.clock_mhz", probed.performance().clock_mhz(), shipped.performance().clock_mhz());
  compare_close("performance.memory_bandwidth_gbps", probed.performance().memory_bandwidth_gbps(),
                shipped.performance().memory_bandwidth_gbps());
  return diffs;
}

}  // namespace scratchsim::cuda
