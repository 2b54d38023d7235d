// The words for every limit the fit engine checks: its name, label and colour in reports and
// pictures, and each breach as the toolchain that would hit it prints it (Triton's OutOfResources,
// ptxas, XLA's RESOURCE_EXHAUSTED, the CUDA launch error).
#ifndef SCRATCHSIM_SIM_LIMITS_H_
#define SCRATCHSIM_SIM_LIMITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/engine.h"

namespace scratchsim {

// The engine's name of a limit, as reports and plan tables print it ("shared memory", "scoped
// vmem", "register spills"; Violation.limit).
absl::string_view LimitName(Limit limit);

// A limit in a picture's few words (a plan map cell: "static shared", "scoped VMEM"), with
// shared memory called LDS on a device whose space is LDS.
std::string LimitLabel(Limit limit, const DeviceModel& device);

// The pale fill of a cell a limit pruned, in pictures (under a common hatch).
absl::string_view LimitFill(Limit limit);

// What was needed against what there is, in the limit's unit: "245760 B > 232448 B", "1280
// threads > 1024". Limit::kInvalid has no figures: `invalid_detail` (the broken requirement or
// the failed expression) is the detail.
std::string LimitDetail(Limit limit, int64_t required, int64_t available, absl::string_view invalid_detail);

// The same comparison in a picture cell's few characters: "240K > 227K" (bytes in KiB),
// "1280 > 1024"; empty for Limit::kInvalid and kNoResidency, which have no figures.
std::string LimitFigure(Limit limit, int64_t required, int64_t available);

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
