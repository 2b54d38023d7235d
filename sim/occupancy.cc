#include "sim/occupancy.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/status_macros.h"

// The structure follows cuda_occupancy.h (CUDA 13.0): one block limit per resource (warps,
// registers, shared memory, blocks; barriers from compute capability 9.0 on), the occupancy is
// their minimum. Every number the header keeps in per-architecture switches comes from the
// DeviceModel instead: register_allocation_unit, register_sub_partitions, max_blocks_per_core,
// allocation_granularity_bytes, carveout_kib and block_barriers_per_core.
//
// AMD (LDS, 64-wide wavefronts) runs through the same code with the device's numbers. What
// differs there, and how the model expresses it:
//  - register_sub_partitions are the 4 SIMDs of a CU, each with its own VGPR file; waves of a
//    workgroup are spread over them, so "warps per sub-partition" is waves per SIMD by VGPRs.
//    registers_per_thread is the unified VGPR(+AGPR) count; the granule is
//    register_allocation_unit / warp_size VGPRs.
//  - NVIDIA's hardware check that rounds a block's warps up to a multiple of the sub-partitions
//    is kept; on AMD it only asks that each SIMD's share of the workgroup's waves fit its file.
//  - LDS has no L1 carveout (carveout_kib empty: the whole capacity_per_core_bytes is usable),
//    no driver reservation (reserved_per_block_bytes 0) and no opt-in step (per-block default
//    equals the opt-in maximum).
//  - No named-barrier limit (block_barriers_per_core 0); the waves-per-SIMD cap comes in through
//    max_threads_per_core / warp_size.

namespace scratchsim {
namespace {

int32_t ClampToInt32(int64_t value) { return static_cast<int32_t>(std::min(value, kUnlimitedBlocks)); }

absl::Status BadInput(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("occupancy: ", field, " ", problem));
}

absl::Status BadDevice(const DeviceModel& device, absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("device '", device.name(), "': ", field, " ", problem, " (needed for occupancy)"));
}

absl::Status CheckInput(const DeviceModel& device, const OccupancyInput& input) {
  if (input.threads_per_block <= 0) {
    return BadInput("threads_per_block", absl::StrCat("must be positive, got ", input.threads_per_block));
  }
  if (input.threads_per_block > device.limits().max_threads_per_block()) {
    return BadInput("threads_per_block",
                    absl::StrCat(input.threads_per_block, " exceeds the device's max_threads_per_block ",
                                 device.limits().max_threads_per_block(), " (", device.name(), ")"));
  }
  auto non_negative = [](absl::string_view field, int64_t value) -> absl::Status {
    if (value < 0) return BadInput(field, absl::StrCat("must not be negative, got ", value));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(non_negative("registers_per_thread", input.registers_per_thread));
  RETURN_IF_ERROR(non_negative("static_shared_bytes", input.static_shared_bytes));
  RETURN_IF_ERROR(non_negative("dynamic_shared_bytes", input.dynamic_shared_bytes));
  RETURN_IF_ERROR(non_negative("block_barriers", input.block_barriers));
  RETURN_IF_ERROR(non_negative("tensor_memory_columns", input.tensor_memory_columns));
  if (input.carveout_percent < -1 || input.carveout_percent > 100) {
    return BadInput("carveout_percent",
                    absl::StrCat("must be -1 (default) or 0..100, got ", input.carveout_percent));
  }
  return absl::OkStatus();
}

absl::Status CheckDevice(const DeviceModel& device, const MemorySpace* space) {
  const ExecutionLimits& limits = device.limits();
  auto positive = [&](absl::string_view field, int64_t value) -> absl::Status {
    if (value <= 0) return BadDevice(device, field, absl::StrCat("must be positive, got ", value));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(positive("limits.warp_size", limits.warp_size()));
  RETURN_IF_ERROR(positive("limits.max_threads_per_block", limits.max_threads_per_block()));
  RETURN_IF_ERROR(positive("limits.max_threads_per_core", limits.max_threads_per_core()));
  RETURN_IF_ERROR(positive("limits.max_blocks_per_core", limits.max_blocks_per_core()));
  RETURN_IF_ERROR(positive("limits.registers_per_core", limits.registers_per_core()));
  RETURN_IF_ERROR(positive("limits.registers_per_block", limits.registers_per_block()));
  RETURN_IF_ERROR(positive("limits.max_registers_per_thread", limits.max_registers_per_thread()));
  RETURN_IF_ERROR(positive("limits.register_allocation_unit", limits.register_allocation_unit()));
  RETURN_IF_ERROR(positive("limits.register_sub_partitions", limits.register_sub_partitions()));
  if (limits.block_barriers_per_core() < 0) {
    return BadDevice(device, "limits.block_barriers_per_core", "must not be negative");
  }
  if (space == nullptr) {
    return BadDevice(device, "memory_spaces", "has no SHARED_MEMORY or LDS space");
  }
  std::string field = absl::StrCat("memory_spaces[", space->name(), "].");
  RETURN_IF_ERROR(positive(field + "capacity_per_core_bytes", space->capacity_per_core_bytes()));
  RETURN_IF_ERROR(positive(field + "per_block_default_bytes", space->per_block_default_bytes()));
  RETURN_IF_ERROR(positive(field + "allocation_granularity_bytes", space->allocation_granularity_bytes()));
  if (space->reserved_per_block_bytes() < 0) {
    return BadDevice(device, field + "reserved_per_block_bytes", "must not be negative");
  }
  // The driver raises the carveout to the smallest step that holds one block, so a model with
  // steps must reach the whole capacity; checked here rather than at the first large block.
  if (!space->carveout_kib().empty()) {
    int64_t largest = 0;
    for (int64_t kib : space->carveout_kib()) {
      if (kib < 0 || kib > (int64_t{1} << 40)) {
        return BadDevice(device, field + "carveout_kib", absl::StrCat("has a step of ", kib, " KiB"));
      }
      largest = std::max(largest, kib * 1024);
    }
    if (largest < space->capacity_per_core_bytes()) {
      return BadDevice(device, field + "carveout_kib",
                       absl::StrCat("has no step of at least capacity_per_core_bytes ",
                                    space->capacity_per_core_bytes(), " B"));
    }
  }
  return absl::OkStatus();
}

// The smallest configurable shared-memory size (carveout step) holding `bytes`, as the driver
// picks it (cudaOccAlignUpShmemSizeVoltaPlus); -1 if none is that large.
int64_t CarveoutStepAtLeast(const MemorySpace& space, int64_t bytes) {
  int64_t best = -1;
  for (int64_t kib : space.carveout_kib()) {
    const int64_t step = kib * 1024;
    if (step >= bytes && (best < 0 || step < best)) best = step;
  }
  return best;
}

// What the shared memory of one block allows, and how much it takes.
struct SharedMemoryLimit {
  int64_t blocks = 0;
  int64_t allocated_per_block = 0;
  int64_t bytes_per_core = 0;
  int64_t per_block_ceiling = 0;  // what allocated_per_block was held against
};

// The carve-out the preference asks for before it is raised to hold a block: a percent of the
// capacity when set, else the cache preference's target where the device's rule measured one,
// else the whole capacity (cuda_occupancy.h's default).
int64_t PreferredCarveout(const MemorySpace& space, int64_t default_carveout, const OccupancyInput& input) {
  if (input.carveout_percent >= 0) {
    return CarveoutStepAtLeast(space, input.carveout_percent * space.capacity_per_core_bytes() / 100);
  }
  if (space.has_launch_carveout()) {
    const LaunchCarveoutRule& rule = space.launch_carveout();
    if (input.cache_preference == CachePreference::kPreferL1) return CarveoutStepAtLeast(space, rule.prefer_l1_bytes());
    if (input.cache_preference == CachePreference::kPreferEqual) {
      return CarveoutStepAtLeast(space, rule.prefer_equal_bytes());
    }
  }
  return default_carveout;
}

absl::Status SharedMemoryBlocks(const MemorySpace& space, int64_t static_cap, int64_t default_carveout,
                                const OccupancyInput& input, SharedMemoryLimit* result) {
  const int64_t reserved = space.reserved_per_block_bytes();
  const int64_t per_block_default = space.per_block_default_bytes();
  // A device without an opt-in step (AMD LDS) allows the default everywhere.
  const int64_t per_block_optin = std::max(space.per_block_optin_bytes(), per_block_default);

  std::optional<int64_t> static_with_reserve = CheckedAdd(input.static_shared_bytes, reserved);
  std::optional<int64_t> total =
      static_with_reserve ? CheckedAdd(*static_with_reserve, input.dynamic_shared_bytes) : std::nullopt;
  std::optional<int64_t> allocated =
      total ? CheckedRoundUp(*total, space.allocation_granularity_bytes()) : std::nullopt;
  if (!allocated.has_value()) {
    return BadInput("static_shared_bytes + dynamic_shared_bytes", "overflows 64 bits");
  }
  result->allocated_per_block = *allocated;

  // With the opt-in attribute set to the dynamic size, the per-block ceiling is the opt-in
  // maximum as soon as the block's footprint (reservation included, as cudaOccSMemPerBlock
  // compares it) passes the default; the driver's reservation comes on top of either ceiling.
  const bool above_default = *total > per_block_default;
  result->per_block_ceiling = (input.shared_memory_opt_in && above_default ? per_block_optin : per_block_default) + reserved;
  // Static __shared__ arrays cannot opt in: ptxas refuses more than the default per block.
  const bool static_over_cap = static_cap > 0 && input.static_shared_bytes > static_cap;
  if (*allocated > result->per_block_ceiling || static_over_cap) {
    result->blocks = 0;
    result->bytes_per_core = 0;
    return absl::OkStatus();
  }

  if (space.carveout_kib().empty()) {
    // Fixed-size shared memory (pre-Volta, AMD LDS): the whole capacity is always there.
    result->bytes_per_core = space.capacity_per_core_bytes();
  } else {
    // The preferred carveout is honoured when a block fits in it; otherwise the driver raises
    // the carveout to the smallest step that holds one block. CheckDevice made sure a step
    // holds the whole capacity, which bounds every block that passed the ceiling above.
    const int64_t preferred = PreferredCarveout(space, default_carveout, input);
    result->bytes_per_core = preferred >= *allocated ? preferred : CarveoutStepAtLeast(space, *allocated);
    if (result->bytes_per_core < 0) {
      return BadInput("static_shared_bytes + dynamic_shared_bytes",
                      absl::StrCat(*allocated, " B is above every carveout step of the device"));
    }
  }
  result->blocks = *allocated > 0 ? result->bytes_per_core / *allocated : kUnlimitedBlocks;
  return absl::OkStatus();
}

// The carve-out the driver configures at the default preference (MemorySpace.launch_carveout):
// room for min(headroom_factor x L, max_blocks) blocks, at most headroom_cap_bytes unless L
// blocks need more, one block's worth when L is 1; the smallest step that large, else the
// smallest step holding the most blocks. `other_limit` is L, the blocks every resource but
// shared memory allows. Measured: docs/validation/carveout.md.
int64_t DefaultLaunchCarveout(const MemorySpace& space, int64_t max_blocks, int64_t other_limit, int64_t per_block) {
  const LaunchCarveoutRule& rule = space.launch_carveout();
  const int64_t blocks = std::max<int64_t>(other_limit, 1);
  int64_t want = per_block;
  if (blocks > 1) {
    const int64_t headroom_blocks = std::min<int64_t>(rule.headroom_factor() * blocks, max_blocks);
    // blocks <= max_blocks_per_core (<= 2^20) and per_block passed the per-block ceiling (< 2^42): no overflow.
    want = std::max(blocks * per_block, std::min(headroom_blocks * per_block, rule.headroom_cap_bytes()));
  }
  const int64_t step = CarveoutStepAtLeast(space, want);
  if (step >= 0) return step;
  int64_t best_step = -1;
  int64_t best_blocks = -1;
  for (int64_t kib : space.carveout_kib()) {
    const int64_t bytes = kib * 1024;
    const int64_t held = per_block > 0 ? std::min(blocks, bytes / per_block) : blocks;
    if (held > best_blocks || (held == best_blocks && bytes < best_step)) {
      best_blocks = held;
      best_step = bytes;
    }
  }
  return best_step;
}

struct RegisterLimit {
  int64_t blocks = 0;
  int64_t allocated_per_block = 0;
  int64_t per_warp = 0;
  int64_t assumed_per_block = 0;  // the hardware's per-block check (warps rounded to sub-partitions)
};

RegisterLimit RegisterBlocks(const ExecutionLimits& limits, const OccupancyInput& input, int64_t warps_per_block) {
  RegisterLimit result;
  if (input.registers_per_thread > limits.max_registers_per_thread()) return result;
  // Registers are granted per warp in allocation units; registers_per_thread is bounded above
  // by max_registers_per_thread (255), so none of these products can overflow.
  result.per_warp = *CheckedRoundUp(input.registers_per_thread * limits.warp_size(), limits.register_allocation_unit());
  const int64_t sub_partitions = limits.register_sub_partitions();
  result.allocated_per_block = result.per_warp * warps_per_block;
  // The hardware's per-block check assumes every sub-partition receives the same number of
  // warps, so it rounds the block's warps up to a multiple of the sub-partitions.
  result.assumed_per_block = result.per_warp * *CheckedRoundUp(warps_per_block, sub_partitions);
  if (result.assumed_per_block > limits.registers_per_block() ||
      result.allocated_per_block > limits.registers_per_block()) {
    return result;
  }
  if (result.per_warp == 0) {
    result.blocks = kUnlimitedBlocks;
    return result;
  }
  // Each sub-partition holds its own share of the register file; warps cannot straddle them.
  const int64_t warps_per_sub_partition = limits.registers_per_core() / sub_partitions / result.per_warp;
  result.blocks = warps_per_sub_partition * sub_partitions / warps_per_block;
  return result;
}

}  // namespace

const char* CachePreferenceName(CachePreference preference) {
  switch (preference) {
    case CachePreference::kDefault: return "default";
    case CachePreference::kPreferShared: return "prefer_shared";
    case CachePreference::kPreferL1: return "prefer_l1";
    case CachePreference::kPreferEqual: return "prefer_equal";
  }
  return "?";
}

absl::StatusOr<CachePreference> ParseCachePreference(absl::string_view name) {
  for (CachePreference preference : {CachePreference::kDefault, CachePreference::kPreferShared,
                                     CachePreference::kPreferL1, CachePreference::kPreferEqual}) {
    if (name == CachePreferenceName(preference)) return preference;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not one of default, prefer_shared, prefer_l1, prefer_equal"));
}

CachePreference TritonLauncherPreference(int64_t shared_bytes) {
  constexpr int64_t kPreferSharedAboveBytes = 49152;
  return shared_bytes > kPreferSharedAboveBytes ? CachePreference::kPreferShared : CachePreference::kDefault;
}

const char* CarveoutBasisText(CarveoutBasis basis) {
  switch (basis) {
    case CarveoutBasis::kMeasuredRule: return "the driver's rule, measured (device model launch_carveout)";
    case CarveoutBasis::kFixedCapacity: return "fixed: the space has no carve-out steps";
    case CarveoutBasis::kAssumed:
      return "assumed: the preference's step as cuda_occupancy.h computes it; the driver's choice is not measured on "
             "this device";
    case CarveoutBasis::kNoSharedMemory:
      return "estimate: the measured rule was not validated for blocks without shared memory";
    case CarveoutBasis::kNotResident: return "no block fits: no carve-out";
  }
  return "?";
}

const char* OccupancyFactorName(OccupancyFactor factor) {
  switch (factor) {
    case OccupancyFactor::kWarps: return "warps";
    case OccupancyFactor::kRegisters: return "registers";
    case OccupancyFactor::kSharedMemory: return "shared memory";
    case OccupancyFactor::kBlocks: return "blocks";
    case OccupancyFactor::kBarriers: return "barriers";
    case OccupancyFactor::kTensorMemory: return "tensor memory";
  }
  return "?";
}

OccupancyFactor OccupancyFigures::first_factor() const {
  for (int f = 0; f < kNumOccupancyFactors; ++f) {
    if (limiting_mask & (1u << f)) return static_cast<OccupancyFactor>(f);
  }
  return OccupancyFactor::kWarps;
}

absl::StatusOr<OccupancyCalculator> OccupancyCalculator::Create(const DeviceModel& device) {
  OccupancyCalculator calculator;
  calculator.device_ = &device;
  calculator.shared_ = FindSpaceOfKind(device, SHARED_MEMORY);
  if (calculator.shared_ == nullptr) calculator.shared_ = FindSpaceOfKind(device, LDS);
  calculator.tensor_ = FindSpaceOfKind(device, TENSOR_MEMORY);
  RETURN_IF_ERROR(CheckDevice(device, calculator.shared_));
  // The driver's default preference is the whole capacity: its step, found once.
  calculator.default_carveout_ =
      CarveoutStepAtLeast(*calculator.shared_, calculator.shared_->capacity_per_core_bytes());
  return calculator;
}

int64_t StaticSharedCap(const MemorySpace& space) {
  return space.kind() == SHARED_MEMORY ? std::max<int64_t>(space.per_block_default_bytes(), 0) : 0;
}

absl::Status OccupancyCalculator::Compute(const OccupancyInput& input, OccupancyFigures* out) const {
  const DeviceModel& device = *device_;
  RETURN_IF_ERROR(CheckInput(device, input));
  const ExecutionLimits& limits = device.limits();
  *out = OccupancyFigures();
  out->warps_per_block = CeilDiv(input.threads_per_block, limits.warp_size());
  out->max_warps = limits.max_threads_per_core() / limits.warp_size();
  const RegisterLimit registers = RegisterBlocks(limits, input, out->warps_per_block);
  SharedMemoryLimit shared;
  RETURN_IF_ERROR(SharedMemoryBlocks(*shared_, StaticSharedCap(*shared_), default_carveout_, input, &shared));

  auto& limit = out->limits;
  limit.fill(kUnlimitedBlocks);
  limit[static_cast<int>(OccupancyFactor::kWarps)] = out->max_warps / out->warps_per_block;
  limit[static_cast<int>(OccupancyFactor::kRegisters)] = registers.blocks;
  limit[static_cast<int>(OccupancyFactor::kSharedMemory)] = shared.blocks;
  limit[static_cast<int>(OccupancyFactor::kBlocks)] = limits.max_blocks_per_core();
  if (limits.block_barriers_per_core() > 0 && input.block_barriers > 0) {
    limit[static_cast<int>(OccupancyFactor::kBarriers)] = limits.block_barriers_per_core() / input.block_barriers;
  }
  if (tensor_ != nullptr && input.tensor_memory_columns > 0) {
    limit[static_cast<int>(OccupancyFactor::kTensorMemory)] = tensor_->columns() / input.tensor_memory_columns;
  }
  out->blocks = *std::min_element(limit.begin(), limit.end());
  // Unlike cuda_occupancy.h, which keeps the bits it set before the barrier limit lowered the
  // minimum, only factors that equal the final limit are named.
  for (int f = 0; f < kNumOccupancyFactors; ++f) {
    if (limit[f] == out->blocks) out->limiting_mask |= 1u << f;
  }
  out->allocated_shared_per_block = shared.allocated_per_block;
  out->allocated_registers_per_block = registers.allocated_per_block;
  out->shared_bytes_per_core = shared.bytes_per_core;
  ResolveLaunchCarveout(input, out);
  return absl::OkStatus();
}

void OccupancyCalculator::ResolveLaunchCarveout(const OccupancyInput& input, OccupancyFigures* out) const {
  const MemorySpace& space = *shared_;
  out->launch_carveout_bytes = out->shared_bytes_per_core;
  if (out->blocks == 0) {
    out->launch_carveout_bytes = 0;
    out->launch_carveout_basis = CarveoutBasis::kNotResident;
    return;
  }
  if (space.carveout_kib().empty()) {
    out->launch_carveout_basis = CarveoutBasis::kFixedCapacity;
    return;
  }
  if (!space.has_launch_carveout()) {
    out->launch_carveout_basis = CarveoutBasis::kAssumed;
    return;
  }
  const int64_t per_block = out->allocated_shared_per_block;
  const bool driver_decides = input.carveout_percent < 0 && input.cache_preference == CachePreference::kDefault;
  out->launch_carveout_basis = CarveoutBasis::kMeasuredRule;
  if (driver_decides) {
    int64_t other_limit = kUnlimitedBlocks;
    for (int f = 0; f < kNumOccupancyFactors; ++f) {
      if (f != static_cast<int>(OccupancyFactor::kSharedMemory)) other_limit = std::min(other_limit, out->limits[f]);
    }
    out->launch_carveout_bytes =
        DefaultLaunchCarveout(space, device_->limits().max_blocks_per_core(), other_limit, per_block);
    const bool no_shared = input.static_shared_bytes == 0 && input.dynamic_shared_bytes == 0;
    if (no_shared) out->launch_carveout_basis = CarveoutBasis::kNoSharedMemory;
  }
  out->l1_bytes_per_core = space.launch_carveout().unified_bytes_per_core() - out->launch_carveout_bytes;
}

Occupancy OccupancyCalculator::Describe(const OccupancyInput& input, const OccupancyFigures& f) const {
  const ExecutionLimits& limits = device_->limits();
  Occupancy occupancy;
  occupancy.set_blocks_per_core(ClampToInt32(f.blocks));
  for (int i = 0; i < kNumOccupancyFactors; ++i) {
    if (f.limiting_mask & (1u << i)) occupancy.add_limiting_factors(OccupancyFactorName(static_cast<OccupancyFactor>(i)));
  }
  occupancy.set_limiting_factor(OccupancyFactorName(f.first_factor()));
  // "No limit" is left unset rather than written as INT32_MAX.
  auto set_limit = [&](OccupancyFactor factor, auto setter) {
    const int64_t value = f.limits[static_cast<int>(factor)];
    if (value < kUnlimitedBlocks) (occupancy.*setter)(static_cast<int32_t>(value));
  };
  set_limit(OccupancyFactor::kWarps, &Occupancy::set_limit_warps);
  set_limit(OccupancyFactor::kRegisters, &Occupancy::set_limit_registers);
  set_limit(OccupancyFactor::kSharedMemory, &Occupancy::set_limit_shared_memory);
  set_limit(OccupancyFactor::kBlocks, &Occupancy::set_limit_blocks);
  set_limit(OccupancyFactor::kBarriers, &Occupancy::set_limit_barriers);
  set_limit(OccupancyFactor::kTensorMemory, &Occupancy::set_limit_tensor_memory);
  occupancy.set_active_warps(ClampToInt32(f.blocks * f.warps_per_block));
  occupancy.set_max_warps(ClampToInt32(f.max_warps));
  occupancy.set_occupancy(f.max_warps > 0 ? static_cast<double>(f.blocks * f.warps_per_block) / f.max_warps : 0.0);
  occupancy.set_allocated_shared_bytes_per_block(f.allocated_shared_per_block);
  occupancy.set_allocated_registers_per_block(f.allocated_registers_per_block);
  occupancy.set_shared_bytes_per_core(f.shared_bytes_per_core);
  occupancy.set_launch_carveout_bytes(f.launch_carveout_bytes);
  occupancy.set_l1_bytes_per_core(f.l1_bytes_per_core);
  occupancy.set_launch_carveout_basis(
      f.launch_carveout_basis == CarveoutBasis::kMeasuredRule && !shared_->launch_carveout().source().empty()
          ? absl::StrCat("the driver's rule measured on ", shared_->launch_carveout().source())
          : CarveoutBasisText(f.launch_carveout_basis));
  if (f.blocks > 0) return occupancy;

  // Why not one block is resident, for the first factor at zero.
  const MemorySpace& space = *shared_;
  const int64_t reserved = space.reserved_per_block_bytes();
  std::string reason;
  switch (f.first_factor()) {
    case OccupancyFactor::kRegisters: {
      if (input.registers_per_thread > limits.max_registers_per_thread()) {
        reason = absl::StrCat("registers_per_thread ", input.registers_per_thread, " exceeds the device maximum of ",
                              limits.max_registers_per_thread());
        break;
      }
      const RegisterLimit r = RegisterBlocks(limits, input, f.warps_per_block);
      if (std::max(r.assumed_per_block, r.allocated_per_block) > limits.registers_per_block()) {
        reason = absl::StrCat("a block needs ", std::max(r.assumed_per_block, r.allocated_per_block), " registers (",
                              input.registers_per_thread, " per thread, ", r.per_warp,
                              " per warp) but a block may have ", limits.registers_per_block());
      } else {
        reason = absl::StrCat("a block's ", r.allocated_per_block, " registers do not fit the ",
                              limits.registers_per_core(), " registers per core");
      }
      break;
    }
    case OccupancyFactor::kSharedMemory: {
      const int64_t cap = StaticSharedCap(*shared_);
      if (cap > 0 && input.static_shared_bytes > cap) {
        reason = absl::StrCat("static __shared__ ", input.static_shared_bytes, " B exceeds the ", cap,
                              " B a block may declare statically (only dynamic shared memory can opt in above it)");
      } else if (f.shared_bytes_per_core == 0) {
        const int64_t per_block_default = space.per_block_default_bytes();
        const int64_t per_block_optin = std::max(space.per_block_optin_bytes(), per_block_default);
        std::string ceiling = input.shared_memory_opt_in
                                  ? absl::StrCat("the per-block opt-in maximum of ", per_block_optin, " B")
                                  : absl::StrCat("the ", per_block_default,
                                                 " B per-block default (the kernel does not opt in)");
        reason = absl::StrCat("shared memory per block ", f.allocated_shared_per_block, " B (static ",
                              input.static_shared_bytes, " + dynamic ", input.dynamic_shared_bytes, " + reserved ",
                              reserved, ", rounded to ", space.allocation_granularity_bytes(), " B) exceeds ", ceiling,
                              reserved > 0 ? absl::StrCat(" + ", reserved, " B reserved") : "");
      } else {
        reason = absl::StrCat("shared memory per block ", f.allocated_shared_per_block, " B exceeds the ",
                              f.shared_bytes_per_core, " B of shared memory per core");
      }
      break;
    }
    case OccupancyFactor::kBarriers:
      reason = absl::StrCat("block_barriers ", input.block_barriers, " exceeds the ", limits.block_barriers_per_core(),
                            " block barriers per core");
      break;
    case OccupancyFactor::kTensorMemory:
      reason = absl::StrCat(input.tensor_memory_columns, " tensor memory columns per block exceed the ",
                            tensor_ != nullptr ? tensor_->columns() : 0, " columns of a core");
      break;
    default:
      // Warps and blocks cannot reach 0 once the input checks pass; say so rather than guess.
      reason = absl::StrCat("no block fits (limited by ", occupancy.limiting_factor(), ")");
      break;
  }
  occupancy.set_reason(reason);
  return occupancy;
}

absl::StatusOr<Occupancy> ComputeOccupancy(const DeviceModel& device, const OccupancyInput& input) {
  ASSIGN_OR_RETURN(OccupancyCalculator calculator, OccupancyCalculator::Create(device));
  OccupancyFigures figures;
  RETURN_IF_ERROR(calculator.Compute(input, &figures));
  return calculator.Describe(input, figures);
}

}  // namespace scratchsim
