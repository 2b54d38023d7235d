// The simulator's front door: one kernel configuration on one device in, a Report out.
// Binds parameters, expands multi-buffering, derives liveness, places buffers, checks limits.
#ifndef SCRATCHSIM_SIM_SIMULATOR_H_
#define SCRATCHSIM_SIM_SIMULATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/graph.h"
#include "sim/placement.h"

namespace scratchsim {

struct SimulateOptions {
  PlacementPolicyKind policy = PlacementPolicyKind::kFirstFitDecreasing;
  // Search for parameter changes that would fit when a limit is exceeded.
  bool suggest = true;
  // Keep every placement in the report (large for big graphs).
  bool keep_placements = true;
  // A front end's own allocator (Triton's, for imported TTGIR) instead of `policy`.
  std::shared_ptr<const PlacementPolicy> policy_override;
};

// Simulates `graph` with parameter `values` (see BindParameters) on `device`. With
// options.suggest, a configuration that does not fit comes with the smallest parameter
// changes that would fit (found by re-simulating).
absl::StatusOr<Report> Simulate(const CompiledGraph& graph, const DeviceModel& device,
                                absl::Span<const int64_t> values, const SimulateOptions& options);

// The same without the search for suggestions.
absl::StatusOr<Report> SimulateOnce(const CompiledGraph& graph, const DeviceModel& device,
                                    absl::Span<const int64_t> values, const SimulateOptions& options);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SIMULATOR_H_
