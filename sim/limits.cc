#include "sim/limits.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scratchsim {
namespace {

// One row per Limit, in Limit order: the one place a limit's name, label and colour are written.
struct LimitWords {
  Limit limit;
  absl::string_view name;
  absl::string_view label;
  absl::string_view fill;
};

constexpr LimitWords kLimitWords[] = {
    {Limit::kInvalid, "invalid", "invalid", "#e0e0e0"},
    {Limit::kThreads, "threads", "threads", "#d6eaf8"},
    {Limit::kSharedMemory, "shared memory", "shared memory", "#f5c6c2"},
    {Limit::kStaticSharedMemory, "static shared memory", "static shared", "#f9d9d5"},
    {Limit::kTensorMemory, "tensor memory", "tensor memory", "#fbe2c4"},
    {Limit::kVmemScoped, "scoped vmem", "scoped VMEM", "#f5c6c2"},
    {Limit::kVmemProgram, "program vmem", "VMEM", "#f9d9d5"},
    {Limit::kCapacity, "capacity", "capacity", "#f2e6c9"},
    {Limit::kRegisterSpill, "register spills", "registers", "#e3d3ee"},
    {Limit::kNoResidency, "no resident block", "no residency", "#d9dde0"},
};
static_assert(std::size(kLimitWords) == kNumLimits, "every Limit has one row of words");

constexpr bool RowsInLimitOrder() {
  for (int l = 0; l < kNumLimits; ++l) {
    if (static_cast<int>(kLimitWords[l].limit) != l) return false;
  }
  return true;
}
static_assert(RowsInLimitOrder(), "kLimitWords is indexed by Limit");

const LimitWords& WordsOf(Limit limit) { return kLimitWords[static_cast<int>(limit)]; }

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

absl::string_view LimitName(Limit limit) { return WordsOf(limit).name; }

std::string LimitLabel(Limit limit, const DeviceModel& device) {
  if (limit == Limit::kSharedMemory) {
    for (const MemorySpace& s : device.memory_spaces()) {
      if (s.kind() == LDS) return "LDS";
    }
  }
  return std::string(WordsOf(limit).label);
}

absl::string_view LimitFill(Limit limit) { return WordsOf(limit).fill; }

std::string LimitDetail(Limit limit, int64_t required, int64_t available, absl::string_view invalid_detail) {
  switch (limit) {
    case Limit::kInvalid: return std::string(invalid_detail);
    case Limit::kThreads: return absl::StrCat(required, " threads > ", available);
    case Limit::kTensorMemory: return absl::StrCat(required, " columns > ", available);
    case Limit::kRegisterSpill: return absl::StrCat(required, " registers/thread needed > budget ", available);
    case Limit::kNoResidency: return "no block of it can be resident on a core";
    default: return absl::StrCat(required, " B > ", available, " B");
  }
}

std::string LimitFigure(Limit limit, int64_t required, int64_t available) {
  switch (limit) {
    case Limit::kInvalid:
    case Limit::kNoResidency: return "";
    case Limit::kThreads:
    case Limit::kTensorMemory:
    case Limit::kRegisterSpill: return absl::StrCat(required, " > ", available);
    default: break;
  }
  // KiB, as few digits as tell the two apart; bytes where even a tenth of a KiB does not.
  const double r = static_cast<double>(required) / 1024.0, a = static_cast<double>(available) / 1024.0;
  std::string rs = absl::StrFormat("%.0fK", r), as = absl::StrFormat("%.0fK", a);
  if (rs == as) {
    rs = absl::StrFormat("%.1fK", r);
    as = absl::StrFormat("%.1fK", a);
  }
  if (rs == as) return absl::StrCat(required, " > ", available);
  return absl::StrCat(rs, " > ", as);
}

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
