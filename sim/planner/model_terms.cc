#include "sim/planner/model_terms.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/device.h"
#include "sim/device_inherit.h"
#include "sim/planner/perf_model.h"

namespace scratchsim {
namespace {

struct Need {
  std::string term;
  std::string unit;
  std::string use;
};

std::string Figure(double v) {
  if (v >= 1000) {
    std::string digits = absl::StrFormat("%.0f", v);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  }
  return absl::StrFormat("%.4g", v);
}

}  // namespace

std::string FormatTermValue(const ModelTerm& term) { return absl::StrCat(Figure(term.value), " ", term.unit); }

ModelTerms ResolveModelTerms(const DeviceModel& device, const CompiledGraph& graph, const PerfExpressions& perf,
                             absl::string_view compute_dtype) {
  ModelTerms out;
  out.device = device;
  std::vector<Need> needs = {{"memory_bandwidth_gbps", "GB/s", "DRAM time"}};
  if (graph.flops && !compute_dtype.empty()) {
    needs.push_back({absl::StrCat("peak.", PeakDtypeName(compute_dtype)), "TFLOP/s", "math time"});
  }
  // The on-chip terms, by the graph fields that call for them (docs/planner.md, "Inputs"): cycle
  // counts on every device (a TPU's issue_slots are its vector unit's VLIW bundles), the rest on
  // GPUs.
  if (graph.smem_bytes || graph.issue_slots || graph.sync_cycles || graph.wait_cycles || graph.chain_latency_cycles) {
    needs.push_back(
        {"clock_mhz", "MHz", "cycle counts (smem_bytes, issue_slots, sync_cycles, wait_cycles, chain_latency_cycles)"});
  }
  if (device.vendor() != "google") {
    if (graph.smem_bytes) needs.push_back({"smem_bytes_per_clk", "B/clk", "smem_bytes: shared-memory bank time"});
    if (graph.smem_round_trips) needs.push_back({"smem_latency_ns", "ns", "smem_round_trips: ld.shared round trips"});
    if (graph.grid_row_bytes) needs.push_back({"l2_bandwidth_gbps", "GB/s", "grid_row_bytes: L2 reuse and L2 time"});
    if (perf.pipeline_trips) needs.push_back({"dram_latency_ns", "ns", "the pipelined loop: latency bound"});
  }

  // The reference model, read only if some term is missing.
  std::optional<DeviceModel> reference;
  bool reference_tried = false;
  auto ref = [&]() -> const DeviceModel* {
    if (!reference_tried) {
      reference_tried = true;
      auto loaded = LoadDevice(kReferenceDevice);
      if (loaded.ok()) reference = std::move(*loaded);
    }
    return reference ? &*reference : nullptr;
  };

  for (const Need& need : needs) {
    ModelTerm term;
    term.term = need.term;
    term.unit = need.unit;
    term.use = need.use;
    term.value = PerformanceTerm(device, need.term);
    if (term.value > 0) {
      if (const TermOrigin* origin = FindTermOrigin(device, need.term); origin != nullptr) {
        term.model = origin->model();
        term.file = origin->file();
        if (origin->assumed()) {
          term.assumed = true;
          term.assumption = absl::StrCat("given by ", origin->model(), "'s file as an assumption, no published figure");
        }
      } else {
        term.model = device.name();
      }
      term.inherited = term.model != device.name();
      out.terms.push_back(std::move(term));
      continue;
    }
    // Peaks and bandwidth have no stand-in: PerfModel::Create refuses a device without them.
    if (need.term == "memory_bandwidth_gbps" || need.term.rfind("peak.", 0) == 0) continue;
    term.assumed = true;
    const DeviceModel* r = ref();
    const double ref_value = r != nullptr ? PerformanceTerm(*r, need.term) : 0;
    const double ref_clock = r != nullptr ? r->performance().clock_mhz() : 0;
    const double ref_cores = r != nullptr ? r->limits().num_cores() : 0;
    // The clock the stand-ins scale with: the device's own, else the one assumed for it.
    const double clock = device.performance().clock_mhz() > 0 ? device.performance().clock_mhz() : ref_clock;
    if (ref_value > 0) {
      if (need.term == "smem_latency_ns" && clock > 0) {
        // The same number of cycles at this device's clock.
        term.value = ref_value * ref_clock / clock;
        term.assumption = absl::StrFormat("%s's %.1f cycles at %s MHz", kReferenceDevice, ref_value * ref_clock * 1e-3,
                                          Figure(clock));
      } else if (need.term == "l2_bandwidth_gbps" && clock > 0 && ref_cores > 0) {
        // The same bytes per clock and core.
        const double per_clock_core = ref_value * 1e9 / (ref_clock * 1e6 * ref_cores);
        term.value = per_clock_core * device.limits().num_cores() * clock * 1e6 / 1e9;
        term.assumption = absl::StrFormat("%s's %.1f B per clock per core at %d cores and %s MHz", kReferenceDevice,
                                          per_clock_core, device.limits().num_cores(), Figure(clock));
      } else {
        term.value = ref_value;
        term.assumption = absl::StrCat(kReferenceDevice, "'s value");
      }
      SetPerformanceTerm(&out.device, need.term, term.value);
      out.warnings.push_back(absl::StrCat(
          device.name(), " gives no ", need.term, " (", need.use, "): assumed ", FormatTermValue(term), ", ",
          term.assumption, "; measure it (simulate probe --measure-memory) or calibrate (simulate calibrate)"));
    } else {
      term.value = 0;
      term.assumption = "none: the term is off";
      out.warnings.push_back(absl::StrCat(device.name(), " gives no ", need.term, " (", need.use,
                                          ") and the reference model ", kReferenceDevice,
                                          " could not stand in: the term is off"));
    }
    out.terms.push_back(std::move(term));
  }
  return out;
}

}  // namespace scratchsim
