// The simulator's front door: one kernel configuration on one device in, a Report out.
// The fit engine decides; this explains its verdict (placements, live at peak, the toolchain's words) and suggests fixes.
#ifndef SCRATCHSIM_SIM_SIMULATOR_H_
#define SCRATCHSIM_SIM_SIMULATOR_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/engine.h"
#include "sim/graph.h"
#include "sim/placement.h"

namespace scratchsim {

// A report lists at most this many buffers live at a space's peak (largest first) and notes
// at most this many untouched buffers by name; the rest are counted.
inline constexpr size_t kMaxListedBuffers = 64;

struct SimulateOptions {
  PlacementPolicyKind policy = PlacementPolicyKind::kFirstFitDecreasing;
  // Search for parameter changes that would fit when a limit is exceeded.
  bool suggest = true;
  // Keep every placement in the report (large for big graphs).
  bool keep_placements = true;
  // Also describe every buffer of each space (SpaceReport.buffers: shape, dtype, copies) and
  // name the ops in their replayed order (Report.ops): what the pictures (sim/timeline,
  // sim/trace) label placements with. Off by default: it doubles a big graph's report.
  bool keep_buffers = false;
  // A front end's own allocator (Triton's, for imported TTGIR) instead of `policy`.
  std::shared_ptr<const PlacementPolicy> policy_override;
};

// Simulates `graph` with parameter `values` (see BindParameters) on `device`. With
// options.suggest, a configuration that does not fit comes with the smallest parameter
// changes that would fit. A configuration that breaks a graph requirement is InvalidArgument
// naming it.
absl::StatusOr<Report> Simulate(const CompiledGraph& graph, const DeviceModel& device,
                                absl::Span<const int64_t> values, const SimulateOptions& options);

// The same without the search for suggestions.
absl::StatusOr<Report> SimulateOnce(const CompiledGraph& graph, const DeviceModel& device,
                                    absl::Span<const int64_t> values, const SimulateOptions& options);

// The report of one configuration on an engine already built; `fit`, when given, receives the
// engine's result.
absl::StatusOr<Report> Explain(const FitEngine& engine, absl::Span<const int64_t> values,
                               const SimulateOptions& options, FitResult* fit = nullptr);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SIMULATOR_H_
