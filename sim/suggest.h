// Finds the smallest changes that make a failing configuration fit: one tunable parameter
// lowered, else a greedy combination; plus limit-specific fixes (warps, vmem_limit_bytes).
#ifndef SCRATCHSIM_SIM_SUGGEST_H_
#define SCRATCHSIM_SIM_SUGGEST_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/graph.h"
#include "sim/simulator.h"

namespace scratchsim {

absl::StatusOr<std::vector<Suggestion>> SuggestFixes(const CompiledGraph& graph, const DeviceModel& device,
                                                     absl::Span<const int64_t> values, const Report& failing,
                                                     const SimulateOptions& options);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SUGGEST_H_
