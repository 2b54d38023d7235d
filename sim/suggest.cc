#include "sim/suggest.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr int kMaxCandidatesPerParameter = 64;
constexpr int kMaxGreedySteps = 24;

// How far over its limits a report is: the sum of required/available over fatal violations.
double Pressure(const Report& report) {
  double pressure = 0;
  for (const Violation& v : report.violations()) {
    if (v.fatal() && v.available() > 0) pressure += static_cast<double>(v.required()) / v.available();
  }
  return pressure;
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Smaller values worth trying for parameter `slot`, largest first.
std::vector<int64_t> SmallerValues(const Parameter& parameter, int64_t value) {
  std::vector<int64_t> out;
  int64_t floor = std::max<int64_t>(parameter.min(), 1);
  if (parameter.power_of_two() || (IsPowerOfTwo(value) && value > 8)) {
    for (int64_t v = value / 2; v >= floor && static_cast<int>(out.size()) < kMaxCandidatesPerParameter; v /= 2) {
      out.push_back(v);
    }
  } else {
    for (int64_t v = value - 1; v >= floor && static_cast<int>(out.size()) < kMaxCandidatesPerParameter; --v) {
      out.push_back(v);
    }
  }
  return out;
}

std::string Describe(const CompiledGraph& graph, absl::Span<const int64_t> from, absl::Span<const int64_t> to) {
  std::vector<std::string> changes;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != to[i]) changes.push_back(absl::StrCat(graph.symbols.names()[i], " ", from[i], " -> ", to[i]));
  }
  return absl::StrJoin(changes, ", ");
}

// What the change does to the resource that failed: "smem 263168 B of 232448 B".
std::string ResultingFigure(const Report& failing, const Report& result, int64_t* bytes) {
  const Violation* first = nullptr;
  for (const Violation& v : failing.violations()) {
    if (v.fatal()) {
      first = &v;
      break;
    }
  }
  *bytes = 0;
  if (first != nullptr && first->resource() == "threads") {
    return absl::StrFormat("%d of %d threads", result.threads().required_threads(), result.threads().limit_threads());
  }
  for (const SpaceReport& space : result.spaces()) {
    if (first == nullptr || space.space() == first->space()) {
      *bytes = space.peak_bytes();
      return absl::StrFormat("%s %d B of %d B", space.space(), space.peak_bytes(), space.limit_bytes());
    }
  }
  return "";
}

Suggestion MakeSuggestion(const CompiledGraph& graph, absl::Span<const int64_t> from, absl::Span<const int64_t> to,
                          const Report& failing, const Report& result) {
  Suggestion s;
  int64_t bytes = 0;
  std::string figure = ResultingFigure(failing, result, &bytes);
  s.set_text(absl::StrCat(Describe(graph, from, to), ": fits (", figure, ")"));
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i]) continue;
    ParameterValue* p = s.add_parameters();
    p->set_name(graph.symbols.names()[i]);
    p->set_value(to[i]);
  }
  s.set_resulting_bytes(bytes);
  return s;
}

}  // namespace

absl::StatusOr<std::vector<Suggestion>> SuggestFixes(const CompiledGraph& graph, const DeviceModel& device,
                                                     absl::Span<const int64_t> values, const Report& failing,
                                                     const SimulateOptions& options) {
  std::vector<Suggestion> out;
  SimulateOptions quiet = options;
  quiet.suggest = false;
  quiet.keep_placements = false;
  std::vector<int64_t> base(values.begin(), values.end());

  // One parameter at a time: the largest smaller value that fits.
  const auto& parameters = graph.graph.parameters();
  for (int slot = 0; slot < parameters.size(); ++slot) {
    if (parameters[slot].problem_size()) continue;
    for (int64_t candidate : SmallerValues(parameters[slot], base[slot])) {
      std::vector<int64_t> trial = base;
      trial[slot] = candidate;
      auto report = SimulateOnce(graph, device, trial, quiet);
      if (!report.ok()) break;  // e.g. a tile below what a shape allows
      if (report->fits()) {
        out.push_back(MakeSuggestion(graph, base, trial, failing, *report));
        break;
      }
    }
  }

  // No single change fits: lower whichever tuning parameter relieves the most pressure,
  // repeatedly, from `start`. Returns the fitting values and their report, if any.
  auto greedy = [&](std::vector<int64_t> current, double pressure)
      -> std::optional<std::pair<std::vector<int64_t>, Report>> {
    for (int step = 0; step < kMaxGreedySteps; ++step) {
      int best_slot = -1;
      int64_t best_value = 0;
      double best_pressure = pressure;
      std::optional<Report> best_report;
      for (int slot = 0; slot < parameters.size(); ++slot) {
        if (parameters[slot].problem_size()) continue;
        std::vector<int64_t> smaller = SmallerValues(parameters[slot], current[slot]);
        if (smaller.empty()) continue;
        std::vector<int64_t> trial = current;
        trial[slot] = smaller.front();
        auto report = SimulateOnce(graph, device, trial, quiet);
        if (!report.ok()) continue;
        double p = Pressure(*report);
        if (p < best_pressure) {
          best_pressure = p;
          best_slot = slot;
          best_value = smaller.front();
          best_report = std::move(*report);
        }
      }
      if (best_slot < 0) return std::nullopt;
      current[best_slot] = best_value;
      pressure = best_pressure;
      if (best_report->fits()) return std::make_pair(current, std::move(*best_report));
    }
    return std::nullopt;
  };
  if (out.empty()) {
    if (auto fit = greedy(base, Pressure(failing))) out.push_back(MakeSuggestion(graph, base, fit->first, failing, fit->second));
  }

  // Still nothing: the kernel's structure, not its tuning, is the problem. Say which problem
  // dimension would have to be tiled, and to what (with the tuning changes that then fit).
  if (out.empty()) {
    for (int slot = 0; slot < parameters.size(); ++slot) {
      if (!parameters[slot].problem_size()) continue;
      for (int64_t candidate : SmallerValues(parameters[slot], base[slot])) {
        std::vector<int64_t> trial = base;
        trial[slot] = candidate;
        auto report = SimulateOnce(graph, device, trial, quiet);
        if (!report.ok()) break;
        std::optional<std::pair<std::vector<int64_t>, Report>> fit;
        if (report->fits()) {
          fit = std::make_pair(trial, std::move(*report));
        } else {
          fit = greedy(trial, Pressure(*report));
        }
        if (fit) {
          Suggestion s = MakeSuggestion(graph, base, fit->first, failing, fit->second);
          s.set_text(absl::StrCat("no tuning parameter fits at any value; ", parameters[slot].name(),
                                  " is a problem dimension held whole in one block: split it into blocks of at most ",
                                  candidate, " (", s.text(), ")"));
          out.push_back(std::move(s));
          break;
        }
      }
    }
  }

  for (const Violation& v : failing.violations()) {
    if (!v.fatal()) continue;
    if (v.resource() == "threads") {
      int64_t warp_size = std::max(device.limits().warp_size(), 1);
      int64_t excess_warps = CeilDiv(v.required() - v.available(), warp_size);
      std::vector<std::string> partitions;
      for (const ParameterValue& p : failing.threads().partition_warps()) {
        if (p.name() != "default" && p.value() > excess_warps) {
          partitions.push_back(absl::StrCat(p.name(), " ", p.value(), " -> ", p.value() - excess_warps));
        }
      }
      Suggestion s;
      s.set_text(absl::StrCat(
          "remove ", excess_warps, " warps (", v.required() - v.available(), " threads) from the partitions",
          partitions.empty() ? "" : absl::StrCat(", e.g. ", absl::StrJoin(partitions, " or ")),
          "; or raise the kernel's thread limit to ", v.required(), " (hardware maximum ",
          device.limits().max_threads_per_block(), ")"));
      s.set_resulting_bytes(0);
      out.push_back(std::move(s));
    }
    if (v.resource() == "vmem") {
      const MemorySpace* vmem = FindSpace(device, v.space());
      int64_t mib = 1 << 20;
      int64_t needed = CeilDiv(v.required(), mib) * mib;
      Suggestion s;
      if (vmem != nullptr && needed <= std::max(vmem->max_scoped_limit_bytes(), vmem->capacity_per_core_bytes())) {
        s.set_text(absl::StrFormat("set vmem_limit_bytes=%d (%d MiB; the hardware allows up to %d B)", needed,
                                   needed / mib, std::max(vmem->max_scoped_limit_bytes(), vmem->capacity_per_core_bytes())));
      } else {
        s.set_text(absl::StrFormat("needs %d B of VMEM, more than the hardware has: shrink the blocks", v.required()));
      }
      s.set_resulting_bytes(needed);
      out.push_back(std::move(s));
    }
  }
  return out;
}

absl::StatusOr<Report> Simulate(const CompiledGraph& graph, const DeviceModel& device,
                                absl::Span<const int64_t> values, const SimulateOptions& options) {
  ASSIGN_OR_RETURN(Report report, SimulateOnce(graph, device, values, options));
  if (options.suggest && !report.fits()) {
    ASSIGN_OR_RETURN(std::vector<Suggestion> suggestions, SuggestFixes(graph, device, values, report, options));
    for (Suggestion& s : suggestions) *report.add_suggestions() = std::move(s);
  }
  return report;
}

}  // namespace scratchsim
