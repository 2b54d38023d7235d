// Occupancy: how many blocks of one kernel fit on an SM (CU) at once, and what limits them.
// Agrees with cuda_occupancy.h's cudaOccMaxActiveBlocksPerMultiprocessor, driven by DeviceModel numbers.
#ifndef SCRATCHSIM_SIM_OCCUPANCY_H_
#define SCRATCHSIM_SIM_OCCUPANCY_H_

#include <array>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

// The cache preference the launcher sets (cudaFuncSetCacheConfig); with a carve-out percent
// unset, it decides the carve-out the driver configures (MemorySpace.launch_carveout).
enum class CachePreference : int8_t { kDefault, kPreferShared, kPreferL1, kPreferEqual };
// "default", "prefer_shared", "prefer_l1", "prefer_equal".
const char* CachePreferenceName(CachePreference preference);
// The preference CachePreferenceName names; InvalidArgument listing the names otherwise.
absl::StatusOr<CachePreference> ParseCachePreference(absl::string_view name);
// What Triton's launcher sets for a kernel of `shared_bytes` (static + dynamic): PREFER_SHARED
// above 48 KiB, the default below (triton/backends/nvidia/driver.c, loadBinary).
CachePreference TritonLauncherPreference(int64_t shared_bytes);

struct OccupancyInput {
  int64_t threads_per_block = 0;
  int64_t registers_per_thread = 0;      // as compiled (cudaFuncAttributes.numRegs)
  int64_t static_shared_bytes = 0;       // sharedSizeBytes
  int64_t dynamic_shared_bytes = 0;
  bool shared_memory_opt_in = true;      // cudaFuncAttributeMaxDynamicSharedMemorySize set to dynamic size
  int64_t carveout_percent = -1;         // cudaFuncAttributePreferredSharedMemoryCarveout; -1 default
  CachePreference cache_preference = CachePreference::kDefault;
  int64_t block_barriers = 0;            // named barriers used (Hopper+)
  int64_t tensor_memory_columns = 0;     // TMEM columns a block allocates (Blackwell)
};

// The resources that bound blocks per core, in cuda_occupancy.h's bit order (OCC_LIMIT_WARPS,
// _REGISTERS, _SHARED_MEMORY, _BLOCKS, _BARRIERS), then tensor memory, which the header
// predates: a Blackwell SM's 512 TMEM columns are shared by its resident blocks.
enum class OccupancyFactor : int8_t {
  kWarps = 0,
  kRegisters,
  kSharedMemory,
  kBlocks,
  kBarriers,
  kTensorMemory,
};
inline constexpr int kNumOccupancyFactors = 6;
// "warps", "registers", "shared memory", "blocks", "barriers", "tensor memory".
const char* OccupancyFactorName(OccupancyFactor factor);

// A resource that does not bound residency at all (no registers, no shared memory, ...).
inline constexpr int64_t kUnlimitedBlocks = INT32_MAX;

// The most static (__shared__) bytes a block may declare: ptxas's per-block default (48 KiB on
// NVIDIA), above which only dynamic shared memory can opt in; 0 where no such cap exists (AMD
// declares LDS statically up to the whole per-block size).
int64_t StaticSharedCap(const MemorySpace& space);

// What the launch carve-out figure rests on.
enum class CarveoutBasis : int8_t {
  kMeasuredRule,     // the device model's launch_carveout rule
  kFixedCapacity,    // no carve-out steps (AMD LDS, pre-Volta): the capacity, exactly
  kAssumed,          // the device has no measured rule: the preference's step, as cuda_occupancy.h
  kNoSharedMemory,   // the rule, for a block without shared memory, where it was not validated
  kNotResident,      // no block fits: no carve-out is configured
};
// The report's words for a basis.
const char* CarveoutBasisText(CarveoutBasis basis);

// Blocks per core with no strings attached: what the fit engine evaluates per configuration.
struct OccupancyFigures {
  int64_t blocks = 0;
  std::array<int64_t, kNumOccupancyFactors> limits{};  // blocks each resource allows
  uint32_t limiting_mask = 0;            // bit f: limits[f] == blocks
  int64_t warps_per_block = 0;
  int64_t max_warps = 0;
  int64_t allocated_shared_per_block = 0;     // reservation and granularity included
  int64_t allocated_registers_per_block = 0;
  int64_t shared_bytes_per_core = 0;          // the carve-out the block limit is computed against
  int64_t launch_carveout_bytes = 0;          // the carve-out the driver configures at launch
  int64_t l1_bytes_per_core = 0;              // unified bytes less the launch carve-out; 0: unknown
  CarveoutBasis launch_carveout_basis = CarveoutBasis::kAssumed;
  OccupancyFactor first_factor() const;
};

// A device's occupancy rules, with the device's numbers checked once.
class OccupancyCalculator {
 public:
  // A device model lacking a number the calculation needs is InvalidArgument naming the
  // device and field.
  static absl::StatusOr<OccupancyCalculator> Create(const DeviceModel& device);

  // Invalid input (negative sizes, no threads, more threads than the device allows, a carveout
  // outside -1..100) is InvalidArgument naming the field. Allocation free.
  absl::Status Compute(const OccupancyInput& input, OccupancyFigures* out) const;

  // The report form: every figure, "no limit" fields left unset, and when no block can be
  // resident the reason in words.
  Occupancy Describe(const OccupancyInput& input, const OccupancyFigures& figures) const;

 private:
  // The carve-out the driver configures and the L1 it leaves, once the limits are known.
  void ResolveLaunchCarveout(const OccupancyInput& input, OccupancyFigures* out) const;

  const DeviceModel* device_ = nullptr;
  const MemorySpace* shared_ = nullptr;
  const MemorySpace* tensor_ = nullptr;
  int64_t default_carveout_ = -1;  // the carveout step the default preference picks
};

// Create + Compute + Describe, for one-off questions (the what-if mode, tests).
absl::StatusOr<Occupancy> ComputeOccupancy(const DeviceModel& device, const OccupancyInput& input);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_OCCUPANCY_H_
