// The device terms the planner's ranking needs for one graph, where each value comes from, and
// the stand-ins it uses where the device model gives none (docs/planner.md, "Device terms").
//
// The model has one shape on every device: a term the graph's fields call for (the bank time for
// smem_bytes, the ld.shared latency for smem_round_trips, the L2 bandwidth for L2 reuse, the DRAM
// latency for a pipelined loop, the clock for cycle counts) is never silently switched off. A
// device that gives it uses its own value (from its file, or inherited through `inherits`); a
// device that does not gets a stand-in scaled from the reference model, the h100 (whose terms
// were measured, docs/validation/planner-h100.md), and the plan carries a warning naming the
// term, the value assumed and how to measure it.
#ifndef SCRATCHSIM_SIM_PLANNER_MODEL_TERMS_H_
#define SCRATCHSIM_SIM_PLANNER_MODEL_TERMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "sim/graph.h"
#include "sim/planner/perf_inputs.h"

namespace scratchsim {

// The model whose measured terms stand in for a device's missing ones.
inline constexpr char kReferenceDevice[] = "h100";

struct ModelTerm {
  std::string term;   // a Performance field name ("l2_bandwidth_gbps")
  std::string unit;   // "MHz", "B/clk", "ns", "GB/s"
  std::string use;    // what in the graph needs it ("smem_bytes: bank time")
  double value = 0;   // what the ranking uses
  std::string model;  // the model whose file gave it; empty when assumed
  std::string file;
  bool inherited = false;  // given by an ancestor through `inherits`
  bool assumed = false;    // the device gives none: a stand-in (`assumption` says which)
  std::string assumption;
};

struct ModelTerms {
  std::vector<ModelTerm> terms;       // the terms this graph needs, in a fixed order
  std::vector<std::string> warnings;  // one per assumed term
  DeviceModel device;                 // the device with the stand-ins written in
};

// Which terms `graph` needs (by its performance fields and `perf`'s pipelined loop; the peak for
// `compute_dtype` when it gives flops) and their values on `device`. A TPU (vendor "google") needs none of the GPU on-chip terms. The reference
// model is loaded only when a term is missing; if it cannot be, the term is off and the warning
// says so.
ModelTerms ResolveModelTerms(const DeviceModel& device, const CompiledGraph& graph, const PerfExpressions& perf,
                             absl::string_view compute_dtype);

// "1980 MHz", "12,500 GB/s": a term's value as plans print it.
std::string FormatTermValue(const ModelTerm& term);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_MODEL_TERMS_H_
