// The pictures on the command line: `simulate --timeline FILE.svg --trace FILE.json` and
// `simulate plan --map FILE.svg --map-axes X,Y`, each file written from the report or the plan.
#ifndef SCRATCHSIM_SIM_DRIVER_PICTURES_H_
#define SCRATCHSIM_SIM_DRIVER_PICTURES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/flags.h"
#include "sim/graph.h"
#include "sim/planner/planner.h"

namespace scratchsim {

// --timeline and --trace, added to `spec`.
void AddPictureFlags(FlagSpec* spec);

// Whether the flags ask for a picture of the report (SimulateOptions.keep_buffers then).
bool WantsPictures(const ParsedFlags& flags);

// --timeline or --trace without a kernel (the occupancy what-if) is a usage error.
absl::Status RefusePicturesWithoutKernel(const ParsedFlags& flags);

// The pictures of a report as text (empty where not asked for).
struct ReportPictures {
  std::string timeline_svg;  // sim/timeline
  std::string trace_json;    // sim/trace
};

// Renders the pictures asked for from `report`, then drops what only the pictures read
// (SpaceReport.buffers, Report.ops), so that the report is the same with or without them.
ReportPictures TakePictures(bool timeline, bool trace, const DeviceModel& device, Report* report);

// Writes --timeline FILE (sim/timeline) and --trace FILE (sim/trace) from `report`, then drops
// what only the pictures read (SpaceReport.buffers, Report.ops), so that the report printed is
// the same with or without them. A file that cannot be written is InvalidArgument naming it.
absl::Status WritePictures(const ParsedFlags& flags, const DeviceModel& device, Report* report);

// --map and --map-axes, added to `spec`.
void AddPlanMapFlags(FlagSpec* spec);

// The map of `plan` (sim/planner/plan_map) over `map_axes` "X,Y" (empty: the first two swept
// parameters) as SVG, swept with the options the plan ran with. A malformed `map_axes`, or a plan
// of fewer than two swept parameters, is InvalidArgument.
absl::StatusOr<std::string> RenderPlanMapFor(absl::string_view map_axes, const CompiledGraph& graph,
                                             const DeviceModel& device, const PlanResult& plan,
                                             const PlanOptions& options);

// Writes `contents` to `path`; a failure names the flag and the file.
absl::Status WriteOutputFile(absl::string_view flag, const std::string& path, absl::string_view contents);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_PICTURES_H_
