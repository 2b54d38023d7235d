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

constexpr int64_t kUnlimited = INT32_MAX;

int32_t ClampToInt32(int64_t value) { return static_cast<int32_t>(std::min(value, kUnlimited)); }

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
  if (input.registers_per_thread < 0) {
    return BadInput("registers_per_thread", absl::StrCat("must not be negative, got ", input.registers_per_thread));
  }
  if (input.static_shared_bytes < 0) {
    return BadInput("static_shared_bytes", absl::StrCat("must not be negative, got ", input.static_shared_bytes));
  }
  if (input.dynamic_shared_bytes < 0) {
    return BadInput("dynamic_shared_bytes", absl::StrCat("must not be negative, got ", input.dynamic_shared_bytes));
  }
  if (input.carveout_percent < -1 || input.carveout_percent > 100) {
    return BadInput("carveout_percent",
                    absl::StrCat("must be -1 (default) or 0..100, got ", input.carveout_percent));
  }
  if (input.block_barriers < 0) {
    return BadInput("block_barriers", absl::StrCat("must not be negative, got ", input.block_barriers));
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
  return absl::OkStatus();
}

// The smallest configurable shared-memory size (carveout step) holding `bytes`, as the driver
// picks it (cudaOccAlignUpShmemSizeVoltaPlus); nullopt if none is that large.
std::optional<int64_t> CarveoutStepAtLeast(const MemorySpace& space, int64_t bytes) {
  std::optional<int64_t> best;
  for (int64_t kib : space.carveout_kib()) {
    int64_t step = kib * 1024;
    if (step >= bytes && (!best.has_value() || step < *best)) best = step;
  }
  return best;
}

struct SharedMemoryLimit {
  int64_t blocks = 0;
  int64_t allocated_per_block = 0;
  int64_t bytes_per_core = 0;
  std::string reason;  // set when blocks is 0
};

absl::StatusOr<SharedMemoryLimit> SharedMemoryBlocks(const DeviceModel& device, const MemorySpace& space,
                                                     const OccupancyInput& input) {
  SharedMemoryLimit result;
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
  result.allocated_per_block = *allocated;

  // With the opt-in attribute set to the dynamic size, the per-block ceiling is the opt-in
  // maximum as soon as the block's footprint (reservation included, as cudaOccSMemPerBlock
  // compares it) passes the default; the driver's reservation comes on top of either ceiling.
  const bool above_default = *total > per_block_default;
  const int64_t per_block_limit =
      (input.shared_memory_opt_in && above_default ? per_block_optin : per_block_default) + reserved;
  if (*allocated > per_block_limit) {
    std::string ceiling = input.shared_memory_opt_in
                              ? absl::StrCat("the per-block opt-in maximum of ", per_block_optin, " B")
                              : absl::StrCat("the ", per_block_default,
                                             " B per-block default (the kernel does not opt in)");
    result.reason = absl::StrCat(
        "shared memory per block ", *allocated, " B (static ", input.static_shared_bytes, " + dynamic ",
        input.dynamic_shared_bytes, " + reserved ", reserved, ", rounded to ", space.allocation_granularity_bytes(),
        " B) exceeds ", ceiling, reserved > 0 ? absl::StrCat(" + ", reserved, " B reserved") : "");
    result.bytes_per_core = 0;
    return result;
  }

  if (space.carveout_kib().empty()) {
    // Fixed-size shared memory (pre-Volta, AMD LDS): the whole capacity is always there.
    result.bytes_per_core = space.capacity_per_core_bytes();
  } else {
    // The preferred carveout is honoured when a block fits in it; otherwise the driver raises
    // the carveout to the smallest step that holds one block.
    const int64_t capacity = space.capacity_per_core_bytes();
    const int64_t preferred_raw =
        input.carveout_percent < 0 ? capacity : input.carveout_percent * capacity / 100;
    std::optional<int64_t> preferred = CarveoutStepAtLeast(space, preferred_raw);
    if (!preferred.has_value()) {
      return BadDevice(device, absl::StrCat("memory_spaces[", space.name(), "].carveout_kib"),
                       absl::StrCat("has no step of at least ", preferred_raw, " B"));
    }
    if (*preferred >= *allocated) {
      result.bytes_per_core = *preferred;
    } else {
      std::optional<int64_t> raised = CarveoutStepAtLeast(space, *allocated);
      if (!raised.has_value()) {
        return BadDevice(device, absl::StrCat("memory_spaces[", space.name(), "].carveout_kib"),
                         absl::StrCat("has no step of at least ", *allocated,
                                      " B, though a block of that size passes the per-block limit"));
      }
      result.bytes_per_core = *raised;
    }
  }
  result.blocks = *allocated > 0 ? result.bytes_per_core / *allocated : kUnlimited;
  if (result.blocks == 0) {
    result.reason = absl::StrCat("shared memory per block ", *allocated, " B exceeds the ",
                                 result.bytes_per_core, " B of shared memory per core");
  }
  return result;
}

struct RegisterLimit {
  int64_t blocks = 0;
  int64_t allocated_per_block = 0;
  std::string reason;  // set when blocks is 0
};

RegisterLimit RegisterBlocks(const ExecutionLimits& limits, const OccupancyInput& input, int64_t warps_per_block) {
  RegisterLimit result;
  if (input.registers_per_thread > limits.max_registers_per_thread()) {
    result.reason = absl::StrCat("registers_per_thread ", input.registers_per_thread,
                                 " exceeds the device maximum of ", limits.max_registers_per_thread());
    return result;
  }
  // Registers are granted per warp in allocation units; registers_per_thread is bounded above
  // by max_registers_per_thread (255), so none of these products can overflow.
  const int64_t per_warp = *CheckedRoundUp(input.registers_per_thread * limits.warp_size(),
                                           limits.register_allocation_unit());
  const int64_t sub_partitions = limits.register_sub_partitions();
  result.allocated_per_block = per_warp * warps_per_block;
  // The hardware's per-block check assumes every sub-partition receives the same number of
  // warps, so it rounds the block's warps up to a multiple of the sub-partitions.
  const int64_t assumed_per_block = per_warp * *CheckedRoundUp(warps_per_block, sub_partitions);
  if (assumed_per_block > limits.registers_per_block() || result.allocated_per_block > limits.registers_per_block()) {
    result.reason = absl::StrCat("a block needs ", std::max(assumed_per_block, result.allocated_per_block),
                                 " registers (", input.registers_per_thread, " per thread, ", per_warp,
                                 " per warp) but a block may have ", limits.registers_per_block());
    return result;
  }
  if (per_warp == 0) {
    result.blocks = kUnlimited;
    return result;
  }
  // Each sub-partition holds its own share of the register file; warps cannot straddle them.
  const int64_t warps_per_sub_partition = limits.registers_per_core() / sub_partitions / per_warp;
  result.blocks = warps_per_sub_partition * sub_partitions / warps_per_block;
  if (result.blocks == 0) {
    result.reason = absl::StrCat("a block's ", result.allocated_per_block, " registers do not fit the ",
                                 limits.registers_per_core(), " registers per core");
  }
  return result;
}

}  // namespace

absl::StatusOr<Occupancy> ComputeOccupancy(const DeviceModel& device, const OccupancyInput& input) {
  const MemorySpace* space = FindSpaceOfKind(device, SHARED_MEMORY);
  if (space == nullptr) space = FindSpaceOfKind(device, LDS);
  RETURN_IF_ERROR(CheckDevice(device, space));
  RETURN_IF_ERROR(CheckInput(device, input));
  const ExecutionLimits& limits = device.limits();

  const int64_t warps_per_block = CeilDiv(input.threads_per_block, limits.warp_size());
  const int64_t max_warps = limits.max_threads_per_core() / limits.warp_size();
  const int64_t limit_warps = max_warps / warps_per_block;
  const RegisterLimit registers = RegisterBlocks(limits, input, warps_per_block);
  const int64_t limit_blocks = limits.max_blocks_per_core();
  ASSIGN_OR_RETURN(SharedMemoryLimit shared, SharedMemoryBlocks(device, *space, input));

  int64_t blocks = std::min({limit_warps, registers.blocks, shared.blocks, limit_blocks});
  int64_t limit_barriers = kUnlimited;
  if (limits.block_barriers_per_core() > 0 && input.block_barriers > 0) {
    limit_barriers = limits.block_barriers_per_core() / input.block_barriers;
    blocks = std::min(blocks, limit_barriers);
  }

  Occupancy occupancy;
  occupancy.set_blocks_per_core(ClampToInt32(blocks));
  // Unlike cuda_occupancy.h, which keeps the bits it set before the barrier limit lowered the
  // minimum, only factors that equal the final limit are named.
  const std::pair<const char*, int64_t> factors[] = {{kLimitWarps, limit_warps},
                                                     {kLimitRegisters, registers.blocks},
                                                     {kLimitSharedMemory, shared.blocks},
                                                     {kLimitBlocks, limit_blocks},
                                                     {kLimitBarriers, limit_barriers}};
  for (const auto& [name, limit] : factors) {
    if (limit == blocks) occupancy.add_limiting_factors(name);
  }
  occupancy.set_limiting_factor(occupancy.limiting_factors(0));
  occupancy.set_limit_warps(ClampToInt32(limit_warps));
  occupancy.set_limit_registers(ClampToInt32(registers.blocks));
  occupancy.set_limit_shared_memory(ClampToInt32(shared.blocks));
  occupancy.set_limit_blocks(ClampToInt32(limit_blocks));
  occupancy.set_limit_barriers(ClampToInt32(limit_barriers));
  occupancy.set_active_warps(ClampToInt32(blocks * warps_per_block));
  occupancy.set_max_warps(ClampToInt32(max_warps));
  occupancy.set_occupancy(max_warps > 0 ? static_cast<double>(blocks * warps_per_block) / max_warps : 0.0);
  occupancy.set_allocated_shared_bytes_per_block(shared.allocated_per_block);
  occupancy.set_allocated_registers_per_block(registers.allocated_per_block);
  occupancy.set_shared_bytes_per_core(shared.bytes_per_core);
  if (blocks == 0) {
    if (registers.blocks == 0) {
      occupancy.set_reason(registers.reason);
    } else if (shared.blocks == 0) {
      occupancy.set_reason(shared.reason);
    } else if (limit_barriers == 0) {
      occupancy.set_reason(absl::StrCat("block_barriers ", input.block_barriers, " exceeds the ",
                                        limits.block_barriers_per_core(), " block barriers per core"));
    } else {
      // Warps and blocks cannot reach 0 once the input checks pass; say so rather than guess.
      occupancy.set_reason(absl::StrCat("no block fits (limited by ", occupancy.limiting_factor(), ")"));
    }
  }
  return occupancy;
}

}  // namespace scratchsim
