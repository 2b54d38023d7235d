#include "sim/driver/pictures.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/planner/plan_map.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"
#include "sim/timeline.h"
#include "sim/trace.h"

namespace scratchsim {

void AddPictureFlags(FlagSpec* spec) {
  spec->values.insert("timeline");
  spec->values.insert("trace");
  spec->outputs.insert("timeline");
  spec->outputs.insert("trace");
}

bool WantsPictures(const ParsedFlags& flags) { return flags.Has("timeline") || flags.Has("trace"); }

absl::Status RefusePicturesWithoutKernel(const ParsedFlags& flags) {
  for (const char* flag : {"timeline", "trace"}) {
    if (flags.Has(flag)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, " draws a kernel's buffers: give --graph FILE"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFile(absl::string_view flag, const std::string& path, absl::string_view contents) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": give a file name"));
  const absl::Status written = WriteStringToFile(path, contents);
  if (!written.ok()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", written.message()));
  return absl::OkStatus();
}

ReportPictures TakePictures(bool timeline, bool trace, const DeviceModel& device, Report* report) {
  ReportPictures pictures;
  if (!timeline && !trace) return pictures;
  if (timeline) pictures.timeline_svg = RenderTimelineSvg(*report, device);
  if (trace) pictures.trace_json = RenderTraceJson(*report);
  report->clear_ops();
  for (SpaceReport& space : *report->mutable_spaces()) space.clear_buffers();
  return pictures;
}

absl::Status WritePictures(const ParsedFlags& flags, const DeviceModel& device, Report* report) {
  const ReportPictures pictures = TakePictures(flags.Has("timeline"), flags.Has("trace"), device, report);
  if (flags.Has("timeline")) RETURN_IF_ERROR(WriteOutputFile("timeline", flags.Get("timeline"), pictures.timeline_svg));
  if (flags.Has("trace")) RETURN_IF_ERROR(WriteOutputFile("trace", flags.Get("trace"), pictures.trace_json));
  return absl::OkStatus();
}

void AddPlanMapFlags(FlagSpec* spec) {
  spec->values.insert("map");
  spec->values.insert("map-axes");
  spec->outputs.insert("map");
}

absl::StatusOr<std::string> RenderPlanMapFor(absl::string_view map_axes, const CompiledGraph& graph,
                                             const DeviceModel& device, const PlanResult& plan,
                                             const PlanOptions& options) {
  std::string x, y;
  if (!map_axes.empty()) {
    const std::vector<std::string> names = absl::StrSplit(map_axes, ',');
    if (names.size() != 2 || names[0].empty() || names[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--map-axes: expected two swept parameters as X,Y (e.g. BLOCK_M,BLOCK_N), got '", map_axes, "'"));
    }
    x = names[0];
    y = names[1];
  } else {
    if (plan.axes.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("--map: a map needs two swept parameters, the plan sweeps ",
                                                     plan.axes.size()));
    }
    x = plan.axes[0].name;
    y = plan.axes[1].name;
  }
  ASSIGN_OR_RETURN(PlanMap map, BuildPlanMap(graph, device, plan, x, y, options));
  return RenderPlanMapSvg(map);
}

}  // namespace scratchsim
