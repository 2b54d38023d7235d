// The memory timeline: a Report's placements drawn as one self-contained SVG (x: op position in
// the replayed order, y: offset in the memory space), one panel per space or allocator region.
#ifndef SCRATCHSIM_SIM_TIMELINE_H_
#define SCRATCHSIM_SIM_TIMELINE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/report.pb.h"
#include "sim/svg_text.h"

namespace scratchsim {

struct TimelineOptions {
  int plot_width = 960;   // px of the op axis
  int plot_height = 300;  // px of each panel's offset axis
  // At most this many placements are drawn one by one, over all panels (those largest on screen
  // first, each at least 2 px both ways). The rest, too small to see or point at at this scale,
  // are merged per panel into one shape over the 2 x 2 px cells they touch.
  int max_shapes = kMaxSvgElements;
};

// The report as SVG: every placement (each copy of a multi-buffered buffer) a rectangle at its
// offset over its live range, labelled where the label fits, with a hover title (name, shape,
// dtype, bytes, copy, live range); the per-block limit and the capacity as horizontal lines; the
// part above the limit hatched. TPU program-scoped VMEM (Placement.region "program") gets a panel
// of its own. Shapes, dtypes and op names come from SpaceReport.buffers and Report.ops
// (SimulateOptions.keep_buffers) where present. No script, no external reference: it reads the
// same in a browser, an <img> tag and a Markdown viewer. Deterministic.
std::string RenderTimelineSvg(const Report& report, const DeviceModel& device, const TimelineOptions& options = {});

// "526336" -> "514.0 KiB"; below 1 KiB "1000 B". For labels where space is short.
std::string ShortBytes(int64_t bytes);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_TIMELINE_H_
