// Every device limit as a check that yields a Violation in the words the real toolchain uses
// (Triton's OutOfResources, ptxas, XLA's RESOURCE_EXHAUSTED). One function per limit.
#ifndef SCRATCHSIM_SIM_LIMITS_H_
#define SCRATCHSIM_SIM_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "proto/device.pb.h"
#include "proto/report.pb.h"

namespace scratchsim {

// The footprint of one memory space from the peaks of its two placement groups: dynamic
// shared memory starts after the (aligned) static segment on GPUs; TPU scoped and program
// allocations simply add up. Overflow is an error naming `origin`.
absl::StatusOr<int64_t> SpaceFootprint(const MemorySpace& space, int64_t first_group_peak,
                                       int64_t second_group_peak, absl::string_view origin);

// Per-block shared memory (or LDS): static + dynamic against the opt-in maximum (or the
// default when the kernel does not opt in), and static alone against the default.
std::vector<Violation> CheckSharedMemory(const MemorySpace& space, int64_t static_bytes, int64_t total_bytes,
                                         bool opt_in, const std::vector<std::string>& culprits);

// Tensor memory in columns of the space's lanes.
std::optional<Violation> CheckTensorMemory(const MemorySpace& space, int64_t columns,
                                           const std::vector<std::string>& culprits);

// TPU VMEM: instruction-scoped bytes against the scoped limit, and program-scoped bytes plus
// the scoped limit against capacity.
std::vector<Violation> CheckVmem(const MemorySpace& space, int64_t scoped_bytes, int64_t scoped_limit,
                                 absl::string_view scoped_limit_source, int64_t program_bytes,
                                 const std::vector<std::string>& culprits);

// Any other space (TPU SMEM): capacity per core.
std::optional<Violation> CheckCapacity(const MemorySpace& space, int64_t bytes,
                                       const std::vector<std::string>& culprits);

// Threads of all warp-specialized partitions against the kernel's declared maximum and the
// hardware's.
std::optional<Violation> CheckThreads(const ThreadBudget& threads);

// Register demand above the compiler's budget spills; a warning, not a failure.
std::optional<Violation> CheckRegisters(const RegisterBudget& registers);

// The per-thread register budget the compiler works to: the hardware maximum, the kernel's
// own cap, and what lets `min_blocks` blocks of `threads` threads be resident.
int32_t ComputeRegisterBudget(const DeviceModel& device, int64_t threads, int64_t min_blocks, int64_t declared_cap);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_LIMITS_H_
