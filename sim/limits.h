// The words for every limit the fit engine checks: each breach as the toolchain that would hit
// it prints it (Triton's OutOfResources, ptxas, XLA's RESOURCE_EXHAUSTED, the CUDA launch error).
#ifndef SCRATCHSIM_SIM_LIMITS_H_
#define SCRATCHSIM_SIM_LIMITS_H_

#include <string>
#include <vector>

#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/engine.h"

namespace scratchsim {

// A memory space's breach (shared memory, static shared memory, tensor memory, scoped and
// program VMEM, capacity); `culprits` are the buffers live at the peak, largest first.
Violation DescribeSpaceBreach(Limit limit, const Breach& breach, const MemorySpace& space, const SpaceFigures& figures,
                              const std::vector<std::string>& culprits);

// Threads of all warp-specialized partitions against the kernel's or the hardware's maximum.
Violation DescribeThreadBreach(const Breach& breach, const ThreadBudget& threads);

// Register demand above the budget spills to local memory: a warning, not a failure.
Violation DescribeSpills(const RegisterBudget& registers);

// Every per-block limit holds but no block can be resident: the launch fails.
Violation DescribeNoResidency(const FitResult& fit, const Occupancy& occupancy);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_LIMITS_H_
