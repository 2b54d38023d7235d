#include "sim/driver/plan_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>

#include <chrono>
#include <cmath>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/device.h"
#include "sim/device_inherit.h"
#include "sim/driver/cli.h"
#include "sim/driver/pictures.h"
#include "sim/flags.h"
#include "sim/graph.h"
#include "sim/json_text.h"
#include "sim/limits.h"
#include "sim/pipeline.h"
#include "sim/planner/planner.h"
#include "sim/planner/perf_inputs.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr char kPlanUsage[] = R"(usage:
  simulate plan --device DEV --graph FILE [--param NAME=LO..HI[:pow2|:step=S] | NAME=V1,V2,... ...]
                [--set P=V ...] [--top K] [--format text|json|csv] [--threads N]
                [--compute-dtype DT] [--allow-spills] [--policy first-fit|best-fit] [--stats]
                [--progress-seconds S]
                [--map FILE.svg [--map-axes X,Y]]
                [--calibration FILE]
      Sweep the kernel's tile parameters on device DEV: every configuration that does not fit
      (shared memory / LDS / TMEM / VMEM, threads, registers and spills, no resident block) is
      pruned, the rest ranked by an analytic model (roofline over the device's peak for the
      compute dtype and its bandwidth, occupancy, waves over the grid, loads in flight).
      Without --param the graph's parameter ranges (min/max/power_of_two) are swept; --set fixes
      a parameter; problem-size parameters are never swept. --format json lists configurations
      with their parameters for autotuners (Triton prune_configs_by, Helion configs).
      --map FILE.svg draws the grid over two swept parameters (--map-axes X,Y; default the
      first two) with the others at the best configuration's values: each cell its estimated
      time or the limit that pruned it, the top configurations outlined with their rank.
      --calibration FILE: rank with the terms `simulate calibrate` fitted to timings of the
      device (or of a model it inherits), and with its measured configuration residuals
      (--residuals) for this graph: each configuration that has one has its estimate multiplied
      by it. The plan lists the device terms it used and where each
      came from, and warns about every term the device model does not give (a stand-in is used).
      Long sweeps report progress on stderr: a bar on a terminal, else a line every S seconds
      (--progress-seconds, default 5; 0: none). Ctrl-C (SIGINT) stops the sweep cleanly: what was
      evaluated so far is printed, marked partial.
Exit codes: 0 some configuration fits, 1 none fits, 2 bad input or usage, 130 interrupted
(the partial result is printed).
)";

}  // namespace

FlagSpec PlanFlags() {
  FlagSpec spec;
  spec.values = {"device", "graph", "top", "format", "threads", "compute-dtype", "policy", "max-input-mib", "calibration"};
  spec.values.insert("progress-seconds");
  spec.lists = {"param", "set"};
  spec.switches = {"help", "allow-spills", "stats", "any-target"};
  AddFrontEndFlags(&spec);
  AddPlanMapFlags(&spec);
  return spec;
}

namespace {

std::string Thousands(uint64_t v) {
  std::string digits = absl::StrCat(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Assignments(const PlanResult& plan, const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (size_t a = 0; a < plan.axes.size(); ++a) parts.push_back(absl::StrCat(plan.axes[a].name, "=", values[a]));
  return absl::StrJoin(parts, " ");
}

// One line on why a configuration ranks where it does.
std::string Why(const PlanResult& plan, const RankedConfig& c) {
  if (!c.estimated) return "no estimate: a performance expression failed for this configuration (see the notes)";
  const PerfEstimate& e = c.perf;
  std::vector<std::string> parts;
  const char* bound = e.latency_bound ? "latency" : e.smem_bound ? "shared-memory" : e.compute_bound ? "compute" : "memory";
  if (e.intensity > 0) {
    parts.push_back(absl::StrFormat("%s-bound (%.0f flop/B vs ridge %.0f)", bound, e.intensity, plan.model.ridge()));
  } else {
    parts.push_back(absl::StrCat(bound, "-bound"));
  }
  if (c.residual > 0) parts.push_back(absl::StrFormat("measured residual x%.3f applied", c.residual));
  if (e.issue_to_peak > 1.005) {
    parts.push_back(absl::StrFormat("math issue-limited at %.2fx the flops at the peak", e.issue_to_peak));
  }
  if (e.smem_s > 0 && e.compute_s > 0) {
    parts.push_back(absl::StrFormat("shared-memory banks at %.0f%% of the math time", 100.0 * e.smem_s / e.compute_s));
  }
  if (e.wait_s > 0 && e.core_s > 0 && !e.smem_bound) {
    // Per round: one block's block-wide waits and the round trips no other warp covered.
    parts.push_back(absl::StrFormat("unfilled waits %.0f%% of the on-chip time", 100.0 * e.wait_s / e.core_s));
  }
  if (e.sync_s > 0 && e.core_s > 0) {
    parts.push_back(absl::StrFormat("sync waits %.0f%% of the on-chip time", 100.0 * e.sync_s / e.core_s));
  }
  if (c.fit.has_occupancy) {
    parts.push_back(absl::StrFormat("%d block%s/SM (%s)", c.fit.blocks_per_core(), c.fit.blocks_per_core() == 1 ? "" : "s",
                                    OccupancyFactorName(c.fit.occupancy.first_factor())));
  }
  parts.push_back(absl::StrFormat("%d wave%s at %.0f%%", e.waves, e.waves == 1 ? "" : "s", 100 * e.wave_efficiency));
  if (e.time_s > 0 && e.exposed_s > 0) {
    parts.push_back(absl::StrFormat("%d load%s in flight, %.0f%% exposed", e.loads_in_flight,
                                    e.loads_in_flight == 1 ? "" : "s", 100 * e.exposed_s / e.time_s));
  } else {
    parts.push_back(absl::StrFormat("%d load%s in flight", e.loads_in_flight, e.loads_in_flight == 1 ? "" : "s"));
  }
  if (e.issue_efficiency < 1) parts.push_back(absl::StrFormat("%.0f%% of schedulers busy", 100 * e.issue_efficiency));
  // Only where it shows at the precision printed: "ready on 100%" would say nothing.
  if (e.ready_share < 0.995) parts.push_back(absl::StrFormat("a warp ready on %.0f%% of cycles", 100 * e.ready_share));
  return absl::StrJoin(parts, ", ");
}

std::string SpaceSummary(const PlanResult& plan, const DeviceModel& device, const FitResult& fit) {
  std::vector<std::string> parts;
  for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
    if (fit.spaces[s].peak < 0) continue;
    parts.push_back(absl::StrFormat("%s %.1fK", device.memory_spaces(s).name(), fit.spaces[s].peak / 1024.0));
  }
  return absl::StrJoin(parts, " ");
}

// What pruned the family, in the limit's unit (sim/limits).
std::string FamilyDetail(const PrunedFamily& f) { return LimitDetail(f.limit, f.required, f.available, f.message); }

std::string WholeValues(const PlanResult& plan, const PrunedFamily& f) {
  std::vector<std::string> parts;
  for (const auto& [axis, value] : f.whole_values) parts.push_back(absl::StrCat(plan.axes[axis].name, "=", value));
  return absl::StrJoin(parts, ", ");
}

// The device terms the ranking used, each with the model that gave it or "assumed".
std::string TermsLine(const PlanResult& plan) {
  std::vector<std::string> parts;
  for (const ModelTerm& t : plan.terms) {
    const std::string from = t.assumed ? "assumed" : t.inherited ? absl::StrCat("inherited from ", t.model) : t.model;
    parts.push_back(absl::StrCat(t.term, " ", FormatTermValue(t), " (", from, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

std::string TermsJson(const PlanResult& plan) {
  std::vector<std::string> terms;
  for (const ModelTerm& t : plan.terms) {
    terms.push_back(absl::StrCat("{\"term\": ", JsonString(t.term), ", \"value\": ", JsonNumber(t.value),
                                 ", \"unit\": ", JsonString(t.unit), ", \"use\": ", JsonString(t.use),
                                 t.assumed ? "" : absl::StrCat(", \"model\": ", JsonString(t.model)),
                                 t.file.empty() ? "" : absl::StrCat(", \"file\": ", JsonString(t.file)),
                                 ", \"inherited\": ", t.inherited ? "true" : "false",
                                 ", \"assumed\": ", t.assumed ? "true" : "false",
                                 t.assumed ? absl::StrCat(", \"assumption\": ", JsonString(t.assumption)) : "", "}"));
  }
  return absl::StrCat("[", absl::StrJoin(terms, ", "), "]");
}

void RenderText(const PlanResult& plan, const KernelGraph& graph, const SymbolTable& symbols, const DeviceModel& device,
                std::ostream& out) {
  out << absl::StrFormat("plan     %s on %s (%s)\n", graph.name(), device.name(), device.display_name());
  std::vector<std::string> fixed;
  std::vector<bool> swept(plan.base_values.size(), false);
  for (const ParamAxis& a : plan.axes) swept[a.slot] = true;
  // Fixed parameters, in the graph's order.
  for (const Parameter& p : graph.parameters()) {
    const int slot = symbols.Find(p.name());
    if (slot >= 0 && !swept[slot]) fixed.push_back(absl::StrCat(p.name(), "=", plan.base_values[slot]));
  }
  std::vector<std::string> axes;
  for (const ParamAxis& a : plan.axes) {
    std::vector<int64_t> v = a.values;
    axes.push_back(v.size() <= 6 ? absl::StrCat(a.name, "{", absl::StrJoin(v, ","), "}")
                                 : absl::StrCat(a.name, "{", v.front(), "..", v.back(), ": ", v.size(), "}"));
  }
  out << "sweep    " << (axes.empty() ? "(nothing: every parameter is fixed)" : absl::StrJoin(axes, " ")) << "\n";
  if (!fixed.empty()) out << "fixed    " << absl::StrJoin(fixed, " ") << "\n";
  if (plan.model.peak_flops() > 0) {
    out << absl::StrFormat("model    %s peak %.1f TFLOP/s, %.0f GB/s (ridge %.0f flop/B), %d cores\n",
                           plan.compute_dtype, plan.model.peak_flops() / 1e12, plan.model.bandwidth() / 1e9,
                           plan.model.ridge(), plan.model.num_cores());
  } else {
    out << absl::StrFormat("model    %.0f GB/s, %d cores\n", plan.model.bandwidth() / 1e9, plan.model.num_cores());
  }
  if (!plan.terms.empty()) out << "terms    " << TermsLine(plan) << "\n";
  for (const std::string& warning : plan.warnings) out << "warning  " << warning << "\n";
  for (const std::string& note : plan.notes) out << "note     " << note << "\n";
  if (plan.partial) {
    out << absl::StrFormat("partial  interrupted after %s of %s configurations: the counts and the ranking cover those\n",
                           Thousands(plan.evaluated), Thousands(plan.space_size));
  }
  out << absl::StrFormat("fits     %s of %s configurations (%.1f%%)\n", Thousands(plan.fitting),
                         Thousands(plan.space_size),
                         plan.space_size ? 100.0 * plan.fitting / plan.space_size : 0.0);
  if (plan.at_risk > 0) {
    out << absl::StrFormat("at risk  %s pruned: they fit only if an estimated allocation stays below its high bound\n",
                           Thousands(plan.at_risk));
  }
  if (!plan.pruned.empty()) {
    out << "\npruned (first limit each configuration breaks; example = first in sweep order)\n";
    for (const PrunedFamily& f : plan.pruned) {
      out << absl::StrFormat("  %-20s %12s (%5.1f%%)  e.g. %s: %s\n", LimitName(f.limit), Thousands(f.count),
                             100.0 * f.count / plan.space_size, Assignments(plan, f.example), FamilyDetail(f));
      if (f.count == plan.space_size) {
        out << "  " << std::string(20, ' ') << " every configuration in the space\n";
      } else if (!f.whole_values.empty()) {
        out << "  " << std::string(20, ' ') << " every configuration with " << WholeValues(plan, f) << "\n";
      }
    }
  }
  if (plan.top.empty()) return;
  out << absl::StrFormat("\ntop %d (estimated; fastest first)\n", plan.top.size());
  std::string header = "  rank";
  for (const ParamAxis& a : plan.axes) header += absl::StrFormat(" %*s", std::max<int>(a.name.size(), 4), a.name);
  header += absl::StrFormat(" %10s %8s  %s\n", "time(us)", plan.flops_known ? "TFLOP/s" : "GB/s", "on-chip");
  out << header;
  for (size_t r = 0; r < plan.top.size(); ++r) {
    const RankedConfig& c = plan.top[r];
    std::string row = absl::StrFormat("  %4d", r + 1);
    for (size_t a = 0; a < plan.axes.size(); ++a) {
      row += absl::StrFormat(" %*d", std::max<int>(plan.axes[a].name.size(), 4), c.values[a]);
    }
    row += c.estimated ? absl::StrFormat(" %10.1f %8.1f  %s\n", c.perf.time_s * 1e6, c.perf.score, SpaceSummary(plan, device, c.fit))
                       : absl::StrFormat(" %10s %8s  %s\n", "-", "-", SpaceSummary(plan, device, c.fit));
    out << row;
    out << "        why: " << Why(plan, c) << "\n";
  }
}

void RenderJson(const PlanResult& plan, const KernelGraph& graph, const SymbolTable& symbols, const DeviceModel& device,
                std::ostream& out) {
  out << "{\n";
  out << "  \"kernel\": " << JsonString(graph.name()) << ",\n";
  out << "  \"device\": " << JsonString(device.name()) << ",\n";
  out << "  \"compute_dtype\": " << JsonString(plan.compute_dtype) << ",\n";
  out << "  \"space_size\": " << plan.space_size << ",\n";
  if (plan.partial) out << "  \"partial\": true,\n  \"evaluated\": " << plan.evaluated << ",\n";
  out << "  \"fitting\": " << plan.fitting << ",\n";
  out << "  \"at_risk\": " << plan.at_risk << ",\n";
  std::vector<bool> swept(plan.base_values.size(), false);
  for (const ParamAxis& a : plan.axes) swept[a.slot] = true;
  std::vector<std::string> fixed;
  for (const Parameter& p : graph.parameters()) {
    const int slot = symbols.Find(p.name());
    if (slot >= 0 && !swept[slot]) fixed.push_back(absl::StrCat(JsonString(p.name()), ": ", plan.base_values[slot]));
  }
  out << "  \"fixed\": {" << absl::StrJoin(fixed, ", ") << "},\n";
  std::vector<std::string> axes;
  for (const ParamAxis& a : plan.axes) {
    axes.push_back(absl::StrCat("{\"name\": ", JsonString(a.name), ", \"values\": [", absl::StrJoin(a.values, ", "), "]}"));
  }
  out << "  \"axes\": [" << absl::StrJoin(axes, ", ") << "],\n";
  out << "  \"configs\": [";
  for (size_t r = 0; r < plan.top.size(); ++r) {
    const RankedConfig& c = plan.top[r];
    const PerfEstimate& e = c.perf;
    std::vector<std::string> params;
    for (size_t a = 0; a < plan.axes.size(); ++a) params.push_back(absl::StrCat(JsonString(plan.axes[a].name), ": ", c.values[a]));
    std::vector<std::string> spaces;
    for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
      if (c.fit.spaces[s].peak >= 0) spaces.push_back(absl::StrCat(JsonString(device.memory_spaces(s).name()), ": ", c.fit.spaces[s].peak));
    }
    // Without an estimate every figure of the model is unknown, not the empty estimate's zeros.
    auto model = [&c](const std::string& value) { return c.estimated ? value : std::string("null"); };
    out << (r ? ",\n" : "\n") << "    {\"rank\": " << r + 1 << ", \"params\": {" << absl::StrJoin(params, ", ") << "}"
        << ", \"estimated_us\": " << model(JsonNumber(e.time_s * 1e6))
        << ", \"score\": " << model(JsonNumber(e.score))
        << ", \"score_unit\": " << JsonString(plan.flops_known ? "TFLOP/s" : "GB/s")
        << ", \"bound\": " << model(JsonString(e.compute_bound ? "compute" : "memory"))
        << ", \"intensity\": " << model(JsonNumber(e.intensity))
        << ", \"grid_blocks\": " << model(absl::StrCat(e.grid_blocks)) << ", \"waves\": " << model(absl::StrCat(e.waves))
        << ", \"wave_efficiency\": " << model(JsonNumber(e.wave_efficiency))
        << ", \"loads_in_flight\": " << model(absl::StrCat(e.loads_in_flight))
        << ", \"residual\": " << (c.residual > 0 ? JsonNumber(c.residual) : std::string("null"));
    if (c.estimated) {
      // The model's terms for the busiest core, so a tool can see what the ranking weighed.
      out << ", \"terms_us\": {\"math\": " << JsonNumber(e.compute_s * 1e6) << ", \"banks\": " << JsonNumber(e.smem_s * 1e6)
          << ", \"unfilled_waits\": " << JsonNumber(e.wait_s * 1e6) << ", \"sync\": " << JsonNumber(e.sync_s * 1e6)
          << ", \"on_chip\": " << JsonNumber(e.core_s * 1e6) << ", \"dram\": " << JsonNumber(e.dram_s * 1e6)
          << ", \"l2\": " << JsonNumber(e.l2_s * 1e6) << ", \"latency\": " << JsonNumber(e.latency_s * 1e6)
          << ", \"exposed\": " << JsonNumber(e.exposed_s * 1e6) << "}";
    }
    out << ", \"peak_bytes\": {" << absl::StrJoin(spaces, ", ") << "}";
    if (c.fit.has_estimates) {
      // The figures with every estimate at its high bound: what the verdict held against the
      // limits, and for TPU VMEM the smallest vmem_limit_bytes that keeps the configuration FITS.
      std::vector<std::string> high;
      for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
        if (c.fit.spaces_high[s].peak < 0) continue;
        high.push_back(absl::StrCat(JsonString(device.memory_spaces(s).name()), ": ", c.fit.spaces_high[s].peak));
        if (device.memory_spaces(s).kind() == VMEM) {
          out << ", \"vmem_limit_bytes_needed\": " << c.fit.spaces_high[s].first;
        }
      }
      out << ", \"peak_bytes_high\": {" << absl::StrJoin(high, ", ") << "}";
    }
    if (c.fit.threads > 0) out << ", \"threads\": " << c.fit.threads;
    if (c.fit.register_demand >= 0) out << ", \"registers_per_thread\": " << c.fit.register_demand;
    if (c.fit.has_occupancy) {
      out << ", \"blocks_per_core\": " << c.fit.blocks_per_core() << ", \"occupancy_limit\": "
          << JsonString(OccupancyFactorName(c.fit.occupancy.first_factor()));
    }
    out << ", \"why\": " << JsonString(Why(plan, c)) << "}";
  }
  out << (plan.top.empty() ? "],\n" : "\n  ],\n");
  out << "  \"pruned\": [";
  for (size_t i = 0; i < plan.pruned.size(); ++i) {
    const PrunedFamily& f = plan.pruned[i];
    std::vector<std::string> example;
    for (size_t a = 0; a < plan.axes.size(); ++a) example.push_back(absl::StrCat(JsonString(plan.axes[a].name), ": ", f.example[a]));
    std::vector<std::string> whole;
    for (const auto& [axis, value] : f.whole_values) {
      whole.push_back(absl::StrCat("{", JsonString(plan.axes[axis].name), ": ", value, "}"));
    }
    out << (i ? ",\n" : "\n") << "    {\"limit\": " << JsonString(LimitName(f.limit)) << ", \"count\": " << f.count
        << ", \"example\": {" << absl::StrJoin(example, ", ") << "}, \"detail\": " << JsonString(FamilyDetail(f))
        << ", \"required\": " << f.required << ", \"available\": " << f.available
        << ", \"whole_values\": [" << absl::StrJoin(whole, ", ") << "]}";
  }
  out << (plan.pruned.empty() ? "],\n" : "\n  ],\n");
  std::vector<std::string> notes;
  for (const std::string& n : plan.notes) notes.push_back(JsonString(n));
  out << "  \"notes\": [" << absl::StrJoin(notes, ", ") << "],\n";
  std::vector<std::string> warnings;
  for (const std::string& w : plan.warnings) warnings.push_back(JsonString(w));
  out << "  \"warnings\": [" << absl::StrJoin(warnings, ", ") << "],\n";
  out << "  \"model_terms\": " << TermsJson(plan) << "\n}\n";
}

void RenderCsv(const PlanResult& plan, const DeviceModel& device, std::ostream& out) {
  std::vector<std::string> header = {"rank"};
  for (const ParamAxis& a : plan.axes) header.push_back(a.name);
  for (const char* h : {"estimated_us", "score", "bound", "blocks_per_core", "occupancy_limit", "waves",
                        "wave_efficiency", "loads_in_flight", "threads", "registers_per_thread"}) {
    header.push_back(h);
  }
  for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
    header.push_back(absl::StrCat(device.memory_spaces(s).name(), "_bytes"));
  }
  out << absl::StrJoin(header, ",") << "\n";
  for (size_t r = 0; r < plan.top.size(); ++r) {
    const RankedConfig& c = plan.top[r];
    std::vector<std::string> row = {absl::StrCat(r + 1)};
    for (int64_t v : c.values) row.push_back(absl::StrCat(v));
    // Without an estimate the model's columns are empty, not the empty estimate's zeros.
    auto model = [&c](const std::string& value) { return c.estimated ? value : std::string(); };
    row.push_back(model(absl::StrFormat("%.3f", c.perf.time_s * 1e6)));
    row.push_back(model(absl::StrFormat("%.3f", c.perf.score)));
    row.push_back(model(c.perf.compute_bound ? "compute" : "memory"));
    row.push_back(c.fit.has_occupancy ? absl::StrCat(c.fit.blocks_per_core()) : "");
    row.push_back(c.fit.has_occupancy ? OccupancyFactorName(c.fit.occupancy.first_factor()) : "");
    row.push_back(model(absl::StrCat(c.perf.waves)));
    row.push_back(model(absl::StrFormat("%.4f", c.perf.wave_efficiency)));
    row.push_back(model(absl::StrCat(c.perf.loads_in_flight)));
    row.push_back(c.fit.threads > 0 ? absl::StrCat(c.fit.threads) : "");
    row.push_back(c.fit.register_demand >= 0 ? absl::StrCat(c.fit.register_demand) : "");
    for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
      row.push_back(c.fit.spaces[s].peak >= 0 ? absl::StrCat(c.fit.spaces[s].peak) : "");
    }
    out << absl::StrJoin(row, ",") << "\n";
  }
}

absl::StatusOr<int> Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(PlanFlags(), args));
  if (flags.Has("help")) {
    out << kPlanUsage;
    return 0;
  }
  if (!flags.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("plan: unexpected argument '", flags.positional().front(), "' (see --help)"));
  }
  RETURN_IF_ERROR(ApplyInputLimit(flags));
  std::string format = flags.Get("format", "text");
  if (format != "text" && format != "json" && format != "csv") {
    return absl::InvalidArgumentError(absl::StrCat("--format: '", format, "' is not one of text, json, csv"));
  }
  if (!flags.Has("device")) return absl::InvalidArgumentError("plan: --device is required (see simulate --list-devices)");
  if (!HasKernelInput(flags)) return absl::InvalidArgumentError("plan: --graph FILE is required (see --help)");
  ASSIGN_OR_RETURN(const PlanRequest request, PlanRequestFromFlags(flags));
  ASSIGN_OR_RETURN(DeviceModel device, LoadDevice(flags.Get("device")));
  if (flags.Has("calibration")) {
    // The calibration's terms replace those the device takes from the model it was made for.
    const std::string path = flags.Get("calibration");
    DeviceModel calibration;
    RETURN_IF_ERROR(LoadProtoFile(path, &calibration));
    std::vector<std::string> kept;
    ASSIGN_OR_RETURN(device, ApplyCalibration(device, calibration, path, LoadDevice, &kept));
    RETURN_IF_ERROR(ValidateDevice(device, path));
    if (!kept.empty()) {
      err << "plan: " << path << ": " << device.name() << " sets " << absl::StrJoin(kept, ", ")
          << " itself; the calibration's value is not used\n";
    }
  }
  ASSIGN_OR_RETURN(Kernel kernel, LoadKernel(flags, device));
  return PlanKernel(std::move(kernel), device, request, out, err);
}

}  // namespace

namespace {

// SIGINT during a sweep: the planner stops at its next chunk and the command prints what it has.
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void OnSigint(int) { interrupted.store(true, std::memory_order_relaxed); }

// Installs OnSigint for its lifetime; the previous handler comes back after.
class SigintScope {
 public:
  SigintScope() {
    interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = OnSigint;
    sigemptyset(&action.sa_mask);
    installed_ = sigaction(SIGINT, &action, &previous_) == 0;
  }
  ~SigintScope() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

std::string Duration(double seconds) {
  if (!(seconds < 1e9)) return "a very long time";
  const int64_t s = static_cast<int64_t>(seconds);
  if (s >= 86400) return absl::StrFormat("%dd %dh", s / 86400, s % 86400 / 3600);
  if (s >= 3600) return absl::StrFormat("%dh %dm", s / 3600, s % 3600 / 60);
  if (s >= 60) return absl::StrFormat("%dm %ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

// Progress of a sweep on stderr: a bar on a terminal (sweeps of 2,000,000 configurations or
// more), else one line every `every` seconds (none when 0), so a long sweep in a log or a pipe
// says how far it is.
std::function<void(uint64_t, uint64_t)> ProgressReporter(std::ostream& err, bool terminal, uint64_t space,
                                                         double every) {
  if (terminal) {
    if (space < 2000000) return nullptr;
    return [&err](uint64_t done, uint64_t total) {
      const int width = 40;
      const int filled = total ? static_cast<int>(width * done / total) : width;
      err << "\rplan [" << std::string(filled, '#') << std::string(width - filled, ' ') << "] "
          << (total ? 100 * done / total : 100) << "%" << (done == total ? "\n" : "") << std::flush;
    };
  }
  if (every <= 0) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(start);
  return [&err, start, last, every](uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done == total || std::chrono::duration<double>(now - *last).count() < every) return;
    *last = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const double rate = elapsed > 0 ? done / elapsed : 0;
    err << absl::StrFormat("plan: %d of %d configurations (%.1f%%) in %s, %.0f per second, about %s left\n", done,
                           total, total ? 100.0 * done / total : 100.0, Duration(elapsed), rate,
                           rate > 0 ? Duration((total - done) / rate) : std::string("?"))
        << std::flush;
  };
}

}  // namespace

absl::Status CheckPlanRequest(const PlanRequest& request) {
  if (request.format != "text" && request.format != "json" && request.format != "csv") {
    return absl::InvalidArgumentError(absl::StrCat("--format: '", request.format, "' is not one of text, json, csv"));
  }
  if (request.top < 0 || request.top > 100000) {
    return absl::InvalidArgumentError(absl::StrCat("--top: must be 0..100000, got ", request.top));
  }
  if (request.threads < 0 || request.threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("--threads: must be 0..1024, got ", request.threads));
  }
  if (request.progress_seconds < 0 || request.progress_seconds > 86400) {
    return absl::InvalidArgumentError(absl::StrCat("--progress-seconds: must be 0..86400, got ", request.progress_seconds));
  }
  return absl::OkStatus();
}

absl::StatusOr<PlanRequest> PlanRequestFromFlags(const ParsedFlags& flags) {
  PlanRequest request;
  request.format = flags.Get("format", "text");
  request.sets = flags.GetList("set");
  request.params = flags.GetList("param");
  ASSIGN_OR_RETURN(request.top, flags.GetInt("top", 10));
  ASSIGN_OR_RETURN(request.threads, flags.GetInt("threads", 0));
  request.planner.allow_spills = flags.Has("allow-spills");
  request.planner.compute_dtype = flags.Get("compute-dtype", "");
  ASSIGN_OR_RETURN(request.planner.policy, ParsePlacementPolicy(flags.Get("policy", "first-fit")));
  request.calibration = flags.Get("calibration", "");
  ASSIGN_OR_RETURN(request.progress_seconds, flags.GetInt("progress-seconds", 5));
  request.stats = flags.Has("stats");
  request.map = flags.Has("map");
  request.map_path = flags.Get("map", "");
  if (flags.Has("map-axes")) {
    if (!request.map) return absl::InvalidArgumentError("--map-axes: give --map FILE.svg too");
    request.map_axes = flags.Get("map-axes");
  }
  RETURN_IF_ERROR(CheckPlanRequest(request));
  return request;
}

absl::StatusOr<int> PlanKernel(Kernel kernel, const DeviceModel& device, const PlanRequest& request,
                               std::ostream& out, std::ostream& err, std::string* map_svg) {
  RETURN_IF_ERROR(CheckPlanRequest(request));
  PlanOptions options = request.planner;
  options.top_k = static_cast<int>(request.top);
  options.threads = static_cast<int>(request.threads);
  options.policy_override = kernel.policy;
  ASSIGN_OR_RETURN(CompiledKernel bound, CompileKernel(std::move(kernel), request.sets));
  const CompiledGraph& compiled = bound.compiled;
  std::vector<int64_t> values = std::move(bound.values);
  // The device's measured residuals for this graph (a calibration file's config_residuals).
  const std::string rated = options.compute_dtype.empty() ? DefaultComputeDtype(compiled) : options.compute_dtype;
  ASSIGN_OR_RETURN(ResidualTable residuals, ResidualTable::Build(compiled, device, rated));
  if (!residuals.empty()) options.residuals = std::make_shared<const ResidualTable>(std::move(residuals));
  ASSIGN_OR_RETURN(std::vector<ParamAxis> axes, BuildParamSpace(compiled, request.params, request.sets));

  const bool terminal = &err == &std::cerr && isatty(STDERR_FILENO);
  uint64_t space = 1;
  for (const ParamAxis& a : axes) space = space * a.values.size();
  options.progress = ProgressReporter(err, terminal, space, static_cast<double>(request.progress_seconds));
  const auto start = std::chrono::steady_clock::now();
  SigintScope sigint;
  options.cancel = &interrupted;
  ASSIGN_OR_RETURN(PlanResult plan, Plan(compiled, device, std::move(axes), std::move(values), options));
  if (options.residuals) {
    int with = 0;
    for (const RankedConfig& c : plan.top) with += c.residual > 0;
    plan.notes.push_back(absl::StrFormat(
        "%d measured configuration residuals from %s (keyed by %s) for %s rated in %s (simulate calibrate --residuals): %d "
        "of the %d ranked configurations have one and their estimates include it; the others are the model's alone",
        options.residuals->size(), request.calibration.empty() ? device.name() : request.calibration,
        absl::StrJoin(options.residuals->parameters(), ", "),
        compiled.graph.name(), rated, with, plan.top.size()));
  }
  if (request.map) {
    ASSIGN_OR_RETURN(std::string svg, RenderPlanMapFor(request.map_axes, compiled, device, plan, options));
    if (!request.map_path.empty() || map_svg == nullptr) RETURN_IF_ERROR(WriteOutputFile("map", request.map_path, svg));
    if (map_svg != nullptr) *map_svg = std::move(svg);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (plan.partial) {
    err << absl::StrFormat("plan: interrupted after %d of %d configurations; printing what was evaluated\n",
                           plan.evaluated, plan.space_size);
  }
  if (request.stats) {
    err << absl::StrFormat("plan: %d configurations in %.3f s (%.0f per second, %d threads)\n", plan.space_size, seconds,
                           seconds > 0 ? plan.space_size / seconds : 0.0, plan.threads_used);
  }
  if (request.format == "json") {
    RenderJson(plan, compiled.graph, compiled.symbols, device, out);
  } else if (request.format == "csv") {
    RenderCsv(plan, device, out);
  } else {
    RenderText(plan, compiled.graph, compiled.symbols, device, out);
  }
  if (plan.partial) return kExitInterrupted;
  return plan.fitting > 0 ? kExitFits : kExitDoesNotFit;
}

int RunPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto result = Run(args, out, err);
  if (!result.ok()) {
    err << "simulate plan: error: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  return *result;
}

}  // namespace scratchsim
