// The trace export: a Report's placements in the Chrome trace event format, which Perfetto and
// chrome://tracing open and zoom, for graphs too big to see in one picture (sim/timeline).
#ifndef SCRATCHSIM_SIM_TRACE_H_
#define SCRATCHSIM_SIM_TRACE_H_

#include <string>

#include "proto/report.pb.h"

namespace scratchsim {

// The report as a JSON trace ({"traceEvents": [...]}). The time axis is the op position: one
// microsecond per position of the replayed order (the format's unit; nothing is timed). A
// process per memory space (TPU program-scoped VMEM apart) holds a counter of the bytes live at
// each position, a counter of the limit, and one slice per placement (each copy of a
// multi-buffered buffer) named after its buffer, with its copy, offset, bytes, shape and dtype
// as arguments; overlapping placements go to separate tracks, as few as the overlap needs. A
// process "ops" names the op at each position when the report lists them (Report.ops).
// Deterministic.
std::string RenderTraceJson(const Report& report);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_TRACE_H_
