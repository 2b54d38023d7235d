#include "sim/limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/status/status.h"
#include "sim/checked_math.h"

namespace scratchsim {
namespace {

// Triton's OutOfResources text: "out of resource: {name}, Required: {n}, Hardware limit: {m}".
std::string OutOfResource(absl::string_view resource, int64_t required, int64_t limit) {
  return absl::StrCat("out of resource: ", resource, ", Required: ", required, ", Hardware limit: ", limit);
}

Violation MakeViolation(absl::string_view resource, std::string message, int64_t required, int64_t available,
                        absl::string_view space, const std::vector<std::string>& culprits, bool fatal) {
  Violation v;
  v.set_resource(std::string(resource));
  v.set_message(std::move(message));
  v.set_required(required);
  v.set_available(available);
  v.set_space(std::string(space));
  for (const std::string& c : culprits) v.add_culprits(c);
  v.set_fatal(fatal);
  return v;
}

}  // namespace

absl::StatusOr<int64_t> SpaceFootprint(const MemorySpace& space, int64_t first_group_peak,
                                       int64_t second_group_peak, absl::string_view origin) {
  int64_t second = second_group_peak;
  if ((space.kind() == SHARED_MEMORY || space.kind() == LDS) && second > 0) {
    auto aligned = CheckedRoundUp(second, std::max<int64_t>(space.alignment_bytes(), 1));
    if (!aligned) return absl::OutOfRangeError(absl::StrCat(origin, ": static shared memory size overflows"));
    second = *aligned;
  }
  auto peak = CheckedAdd(first_group_peak, second);
  if (!peak) return absl::OutOfRangeError(absl::StrCat(origin, ": ", space.name(), " peak overflows 64 bits"));
  return *peak;
}

std::vector<Violation> CheckSharedMemory(const MemorySpace& space, int64_t static_bytes, int64_t total_bytes,
                                         bool opt_in, const std::vector<std::string>& culprits) {
  std::vector<Violation> out;
  int64_t limit = opt_in && space.per_block_optin_bytes() > 0 ? space.per_block_optin_bytes()
                                                              : space.per_block_default_bytes();
  if (limit <= 0) limit = space.capacity_per_core_bytes();
  if (total_bytes > limit) {
    out.push_back(MakeViolation("shared memory", OutOfResource("shared memory", total_bytes, limit), total_bytes,
                                limit, space.name(), culprits, true));
  }
  // Static __shared__ arrays cannot opt in: ptxas rejects more than the default per block.
  if (static_bytes > space.per_block_default_bytes() && space.per_block_default_bytes() > 0) {
    out.push_back(MakeViolation(
        "static shared memory",
        absl::StrFormat("ptxas error   : Entry function uses too much shared data (0x%x bytes, 0x%x max)",
                        static_bytes, space.per_block_default_bytes()),
        static_bytes, space.per_block_default_bytes(), space.name(), culprits, true));
  }
  return out;
}

std::optional<Violation> CheckTensorMemory(const MemorySpace& space, int64_t columns,
                                           const std::vector<std::string>& culprits) {
  if (columns <= space.columns()) return std::nullopt;
  return MakeViolation("tensor memory", OutOfResource("tensor memory", columns, space.columns()), columns,
                       space.columns(), space.name(), culprits, true);
}

std::vector<Violation> CheckVmem(const MemorySpace& space, int64_t scoped_bytes, int64_t scoped_limit,
                                 absl::string_view scoped_limit_source, int64_t program_bytes,
                                 const std::vector<std::string>& culprits) {
  std::vector<Violation> out;
  if (scoped_bytes > scoped_limit) {
    out.push_back(MakeViolation(
        "vmem",
        absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack: "
                        "scoped allocation of %d bytes exceeds the scoped Vmem limit of %d bytes (%s) by %d bytes",
                        scoped_bytes, scoped_limit, scoped_limit_source, scoped_bytes - scoped_limit),
        scoped_bytes, scoped_limit, space.name(), culprits, true));
  }
  int64_t total = program_bytes + std::min(scoped_limit, space.capacity_per_core_bytes());
  if (program_bytes > 0 && total > space.capacity_per_core_bytes()) {
    out.push_back(MakeViolation(
        "vmem",
        absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem: program-scoped allocations of "
                        "%d bytes plus the scoped region of %d bytes exceed %d bytes of VMEM by %d bytes",
                        program_bytes, scoped_limit, space.capacity_per_core_bytes(),
                        total - space.capacity_per_core_bytes()),
        total, space.capacity_per_core_bytes(), space.name(), culprits, true));
  }
  return out;
}

std::optional<Violation> CheckCapacity(const MemorySpace& space, int64_t bytes,
                                       const std::vector<std::string>& culprits) {
  if (bytes <= space.capacity_per_core_bytes()) return std::nullopt;
  return MakeViolation(space.name(),
                       absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space %s: %d bytes "
                                       "exceed %d bytes by %d bytes",
                                       space.name(), bytes, space.capacity_per_core_bytes(),
                                       bytes - space.capacity_per_core_bytes()),
                       bytes, space.capacity_per_core_bytes(), space.name(), culprits, true);
}

std::optional<Violation> CheckThreads(const ThreadBudget& threads) {
  if (threads.required_threads() <= threads.limit_threads()) return std::nullopt;
  std::vector<std::string> culprits;
  for (const ParameterValue& p : threads.partition_warps()) {
    culprits.push_back(absl::StrCat(p.name(), " (", p.value(), " warps)"));
  }
  return MakeViolation("threads", OutOfResource("threads", threads.required_threads(), threads.limit_threads()),
                       threads.required_threads(), threads.limit_threads(), "", culprits, true);
}

std::optional<Violation> CheckRegisters(const RegisterBudget& registers) {
  if (registers.spill_bytes_per_thread() <= 0) return std::nullopt;
  return MakeViolation(
      "registers",
      absl::StrFormat("ptxas info    : %d bytes spill stores, %d bytes spill loads (predicted: %d registers "
                      "needed per thread, budget %d)",
                      registers.spill_bytes_per_thread(), registers.spill_bytes_per_thread(),
                      registers.demand_per_thread(), registers.budget_per_thread()),
      registers.demand_per_thread(), registers.budget_per_thread(), "", {}, false);
}

int32_t ComputeRegisterBudget(const DeviceModel& device, int64_t threads, int64_t min_blocks, int64_t declared_cap) {
  const ExecutionLimits& limits = device.limits();
  int64_t budget = limits.max_registers_per_thread() > 0 ? limits.max_registers_per_thread() : 255;
  if (declared_cap > 0) budget = std::min(budget, declared_cap);
  if (threads > 0 && limits.registers_per_block() > 0 && limits.warp_size() > 0) {
    // Registers go to whole warps in units of register_allocation_unit per warp, so the
    // per-thread figure moves in steps of unit / warp_size (8 on NVIDIA).
    int64_t warps = CeilDiv(threads, limits.warp_size()) * std::max<int64_t>(min_blocks, 1);
    int64_t pool = min_blocks > 1 ? limits.registers_per_core() : limits.registers_per_block();
    int64_t per_warp = pool / warps;
    int64_t unit = std::max(limits.register_allocation_unit(), 1);
    per_warp = per_warp / unit * unit;
    budget = std::min(budget, per_warp / limits.warp_size());
  }
  return static_cast<int32_t>(std::max<int64_t>(budget, 0));
}

}  // namespace scratchsim
