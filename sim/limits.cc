#include "sim/limits.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scratchsim {
namespace {

// Triton's OutOfResources text: "out of resource: {name}, Required: {n}, Hardware limit: {m}".
std::string OutOfResource(absl::string_view resource, int64_t required, int64_t limit) {
  return absl::StrCat("out of resource: ", resource, ", Required: ", required, ", Hardware limit: ", limit);
}

Violation MakeViolation(Limit limit, absl::string_view resource, std::string message, int64_t required,
                        int64_t available, absl::string_view space, const std::vector<std::string>& culprits,
                        bool fatal) {
  Violation v;
  v.set_limit(std::string(LimitName(limit)));
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

Violation DescribeSpaceBreach(Limit limit, const Breach& breach, const MemorySpace& space, const SpaceFigures& figures,
                              const std::vector<std::string>& culprits) {
  const int64_t required = breach.required, available = breach.available;
  switch (limit) {
    case Limit::kSharedMemory:
      return MakeViolation(limit, "shared memory", OutOfResource("shared memory", required, available), required, available,
                           space.name(), culprits, true);
    case Limit::kStaticSharedMemory:
      return MakeViolation(
          limit, "static shared memory",
          absl::StrFormat("ptxas error   : Entry function uses too much shared data (0x%x bytes, 0x%x max)", required,
                          available),
          required, available, space.name(), culprits, true);
    case Limit::kTensorMemory:
      return MakeViolation(limit, "tensor memory", OutOfResource("tensor memory", required, available), required, available,
                           space.name(), culprits, true);
    case Limit::kVmemScoped:
      return MakeViolation(
          limit, "vmem",
          absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack: "
                          "scoped allocation of %d bytes exceeds the scoped Vmem limit of %d bytes (%s) by %d bytes",
                          required, available, LimitSourceName(figures.limit_source), required - available),
          required, available, space.name(), culprits, true);
    case Limit::kVmemProgram:
      return MakeViolation(
          limit, "vmem",
          figures.second > 0
              ? absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem: program-scoped "
                                "allocations of %d bytes plus the scoped region of %d bytes exceed %d bytes of VMEM "
                                "by %d bytes",
                                figures.second, figures.limit, available, required - available)
              : absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem: scoped allocations of %d "
                                "bytes exceed the %d bytes of VMEM by %d bytes (the scoped limit %d is above it)",
                                required, available, required - available, figures.limit),
          required, available, space.name(), culprits, true);
    default:
      return MakeViolation(limit, space.name(),
                           absl::StrFormat("RESOURCE_EXHAUSTED: Ran out of memory in memory space %s: %d bytes "
                                           "exceed %d bytes by %d bytes",
                                           space.name(), required, available, required - available),
                           required, available, space.name(), culprits, true);
  }
}

Violation DescribeThreadBreach(const Breach& breach, const ThreadBudget& threads) {
  std::vector<std::string> culprits;
  for (const ParameterValue& p : threads.partition_warps()) {
    culprits.push_back(absl::StrCat(p.name(), " (", p.value(), " warps)"));
  }
  return MakeViolation(Limit::kThreads, "threads", OutOfResource("threads", breach.required, breach.available), breach.required,
                       breach.available, "", culprits, true);
}

Violation DescribeSpills(const RegisterBudget& registers) {
  return MakeViolation(
      Limit::kRegisterSpill, "registers",
      absl::StrFormat("ptxas info    : %d bytes spill stores, %d bytes spill loads (predicted: %d registers "
                      "needed per thread, budget %d)",
                      registers.spill_bytes_per_thread(), registers.spill_bytes_per_thread(),
                      registers.demand_per_thread(), registers.budget_per_thread()),
      registers.demand_per_thread(), registers.budget_per_thread(), "", {}, false);
}

Violation DescribeNoResidency(const FitResult& fit, const Occupancy& occupancy) {
  // cudaErrorLaunchOutOfResources, "too many resources requested for launch".
  return MakeViolation(Limit::kNoResidency, occupancy.limiting_factor(),
                       absl::StrCat("too many resources requested for launch: ", fit.threads, " threads x ",
                                    fit.registers_allocated, " registers do not fit one SM (",
                                    occupancy.limiting_factor(), ")"),
                       fit.registers_allocated, fit.register_budget, "", {}, true);
}

}  // namespace scratchsim
