#include "sim/planner/plan_map.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// Layout, in px.
constexpr int kCellWidth = 92;
constexpr int kCellHeight = 42;
constexpr int kLeft = 150;     // the y axis' name and values
constexpr int kTop = 96;       // title, what is fixed, the x axis' name and values
constexpr int kLegendGap = 36;
constexpr int kLegendWidth = 300;
constexpr double kCharWidth = 6.4;
constexpr double kMinSpan = 1.5;  // the time scale's least span, as a ratio to the fastest

// Fastest to slowest.
constexpr const char* kScale[] = {"#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b", "#fdae61", "#f46d43"};
constexpr int kScaleSize = sizeof(kScale) / sizeof(kScale[0]);

// Pruned cells: a pale fill per limit under a common hatch.
const char* PrunedFill(Limit limit) {
  switch (limit) {
    case Limit::kInvalid: return "#e0e0e0";
    case Limit::kThreads: return "#d6eaf8";
    case Limit::kSharedMemory: return "#f5c6c2";
    case Limit::kStaticSharedMemory: return "#f9d9d5";
    case Limit::kTensorMemory: return "#fbe2c4";
    case Limit::kVmemScoped: return "#f5c6c2";
    case Limit::kVmemProgram: return "#f9d9d5";
    case Limit::kCapacity: return "#f2e6c9";
    case Limit::kRegisterSpill: return "#e3d3ee";
    case Limit::kNoResidency: return "#d9dde0";
  }
  return "#e0e0e0";
}

std::string LimitWords(Limit limit, const DeviceModel& device) {
  switch (limit) {
    case Limit::kInvalid: return "invalid";
    case Limit::kThreads: return "threads";
    case Limit::kSharedMemory:
      for (const MemorySpace& s : device.memory_spaces()) {
        if (s.kind() == LDS) return "LDS";
      }
      return "shared memory";
    case Limit::kStaticSharedMemory: return "static shared";
    case Limit::kTensorMemory: return "tensor memory";
    case Limit::kVmemScoped: return "scoped VMEM";
    case Limit::kVmemProgram: return "VMEM";
    case Limit::kCapacity: return "capacity";
    case Limit::kRegisterSpill: return "registers";
    case Limit::kNoResidency: return "no residency";
  }
  return "?";
}

std::string Detail(const CompiledGraph& graph, const PlanCell& c) {
  switch (c.limit) {
    case Limit::kInvalid:
      return c.broken_requirement >= 0 ? BrokenRequirementMessage(graph, c.broken_requirement)
                                       : "an expression fails for this configuration";
    case Limit::kThreads: return absl::StrCat(c.required, " threads > ", c.available);
    case Limit::kTensorMemory: return absl::StrCat(c.required, " columns > ", c.available);
    case Limit::kRegisterSpill: return absl::StrCat(c.required, " registers/thread needed > budget ", c.available);
    case Limit::kNoResidency: return "no block of it can be resident on a core";
    default: return absl::StrCat(c.required, " B > ", c.available, " B");
  }
}

std::string Escape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? '?' : c;
    }
  }
  return out;
}

std::string Micros(double seconds) {
  const double us = seconds * 1e6;
  if (us >= 100) return absl::StrFormat("%.0f", us);
  if (us >= 10) return absl::StrFormat("%.1f", us);
  return absl::StrFormat("%.2f", us);
}

// The colour of `t` on a log scale from `fastest` to `slowest`.
std::string TimeFill(double t, double fastest, double slowest) {
  double f = 0;
  if (slowest > fastest && t > fastest) f = std::log(t / fastest) / std::log(slowest / fastest);
  const int i = std::clamp(static_cast<int>(std::lround(f * (kScaleSize - 1))), 0, kScaleSize - 1);
  return kScale[i];
}

std::string Assignments(const std::vector<std::pair<std::string, int64_t>>& values) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrJoin(parts, " ");
}

}  // namespace

absl::StatusOr<PlanMap> BuildPlanMap(const CompiledGraph& graph, const DeviceModel& device, const PlanResult& plan,
                                     absl::string_view x_axis, absl::string_view y_axis, const PlanOptions& options) {
  auto find = [&](absl::string_view name) -> absl::StatusOr<int> {
    std::vector<std::string> swept;
    for (size_t a = 0; a < plan.axes.size(); ++a) {
      if (plan.axes[a].name == name) return static_cast<int>(a);
      swept.push_back(plan.axes[a].name);
    }
    return absl::InvalidArgumentError(absl::StrCat("--map-axes: '", name, "' is not a swept parameter (swept: ",
                                                   swept.empty() ? "none" : absl::StrJoin(swept, ", "), ")"));
  };
  ASSIGN_OR_RETURN(const int ix, find(x_axis));
  ASSIGN_OR_RETURN(const int iy, find(y_axis));
  if (ix == iy) {
    return absl::InvalidArgumentError(absl::StrCat("--map-axes: give two different parameters, not '", x_axis, "' twice"));
  }

  PlanMap map;
  map.kernel = graph.graph.name();
  map.device = device.name();
  map.x_name = plan.axes[ix].name;
  map.y_name = plan.axes[iy].name;
  map.x_values = plan.axes[ix].values;
  map.y_values = plan.axes[iy].values;
  std::vector<int64_t> base = plan.base_values;
  map.fixed_at_best = !plan.top.empty();
  std::vector<bool> swept(base.size(), false);
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    swept[plan.axes[a].slot] = true;
    if (static_cast<int>(a) == ix || static_cast<int>(a) == iy) continue;
    if (map.fixed_at_best) base[plan.axes[a].slot] = plan.top[0].values[a];
    map.others.emplace_back(plan.axes[a].name, base[plan.axes[a].slot]);
  }
  for (const Parameter& p : graph.graph.parameters()) {
    const int slot = graph.symbols.Find(p.name());
    if (slot >= 0 && !swept[slot]) map.fixed.emplace_back(p.name(), base[slot]);
  }

  PlanOptions slice_options = options;
  slice_options.record_cells = true;
  slice_options.top_k = 0;
  slice_options.progress = nullptr;
  std::vector<ParamAxis> slice_axes = {plan.axes[iy], plan.axes[ix]};  // rows, then columns (the last axis fastest)
  ASSIGN_OR_RETURN(PlanResult slice, Plan(graph, device, std::move(slice_axes), base, slice_options));
  map.cells.resize(slice.cells.size());
  for (size_t yi = 0; yi < map.y_values.size(); ++yi) {
    for (size_t xi = 0; xi < map.x_values.size(); ++xi) {
      PlanMapCell& cell = map.cells[yi * map.x_values.size() + xi];
      cell.x = map.x_values[xi];
      cell.y = map.y_values[yi];
      cell.outcome = slice.cells[yi * map.x_values.size() + xi];
      if (!cell.outcome.fits) {
        cell.pruned_by = LimitWords(cell.outcome.limit, device);
        cell.detail = Detail(graph, cell.outcome);
      }
    }
  }
  map.top_total = static_cast<int>(plan.top.size());
  for (size_t r = 0; r < plan.top.size(); ++r) {
    const RankedConfig& c = plan.top[r];
    bool here = true;
    for (size_t a = 0; a < plan.axes.size(); ++a) {
      if (static_cast<int>(a) != ix && static_cast<int>(a) != iy && c.values[a] != base[plan.axes[a].slot]) here = false;
    }
    if (!here) {
      ++map.top_elsewhere;
      continue;
    }
    const auto xi = std::find(map.x_values.begin(), map.x_values.end(), c.values[ix]) - map.x_values.begin();
    const auto yi = std::find(map.y_values.begin(), map.y_values.end(), c.values[iy]) - map.y_values.begin();
    PlanMapCell& cell = map.cells[yi * map.x_values.size() + xi];
    if (cell.rank == 0) cell.rank = static_cast<int>(r) + 1;
  }
  return map;
}

std::string RenderPlanMapSvg(const PlanMap& map) {
  const int nx = static_cast<int>(map.x_values.size()), ny = static_cast<int>(map.y_values.size());
  double fastest = 0, slowest = 0;  // over the cells that fit; the scale spans at least kMinSpan
  std::vector<std::pair<Limit, std::string>> limits;  // in Limit order, those present
  std::vector<int> limit_count;
  for (const PlanMapCell& c : map.cells) {
    if (c.outcome.fits && c.outcome.estimated) {
      fastest = fastest == 0 ? c.outcome.time_s : std::min(fastest, c.outcome.time_s);
      slowest = std::max(slowest, c.outcome.time_s);
    } else if (!c.outcome.fits) {
      auto it = std::find_if(limits.begin(), limits.end(), [&](const auto& l) { return l.first == c.outcome.limit; });
      if (it == limits.end()) {
        limits.emplace_back(c.outcome.limit, c.pruned_by);
        limit_count.push_back(1);
      } else {
        ++limit_count[it - limits.begin()];
      }
    }
  }
  // Estimates a few percent apart stay one colour: the scale runs to at least kMinSpan x the fastest.
  const double scale_end = std::max(slowest, fastest * kMinSpan);
  std::vector<int> order(limits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return limits[a].first < limits[b].first; });

  const int grid_w = nx * kCellWidth, grid_h = ny * kCellHeight;
  const int legend_x = kLeft + grid_w + kLegendGap;
  const int legend_h = 24 + kScaleSize * 16 + 44 + static_cast<int>(limits.size()) * 22 + 60;
  const int width = legend_x + kLegendWidth;
  const int height = std::max(kTop + grid_h + 56, kTop + legend_h);
  std::string out;
  absl::StrAppend(&out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", width, "\" height=\"", height,
                  "\" viewBox=\"0 0 ", width, " ", height,
                  "\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" font-size=\"11\">\n");
  absl::StrAppend(&out, "<title>", Escape(absl::StrCat("plan map: ", map.kernel, " on ", map.device, ", ", map.x_name,
                                                       " by ", map.y_name)),
                  "</title>\n");
  absl::StrAppend(&out,
                  "<defs><pattern id=\"pruned\" width=\"7\" height=\"7\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\"><rect width=\"1.6\" height=\"7\" fill=\"#000000\" "
                  "fill-opacity=\"0.16\"/></pattern></defs>\n");
  absl::StrAppend(&out, "<rect width=\"", width, "\" height=\"", height, "\" fill=\"#ffffff\"/>\n");

  // What the map is of.
  int fitting = 0;
  for (const PlanMapCell& c : map.cells) fitting += c.outcome.fits;
  absl::StrAppend(&out, "<text x=\"16\" y=\"22\" font-size=\"14\" font-weight=\"bold\">", Escape(map.kernel), " on ",
                  Escape(map.device), ": ", Escape(map.x_name), " by ", Escape(map.y_name), ", ", fitting, " of ",
                  map.cells.size(), " fit</text>\n");
  const std::string others = map.others.empty()
                                 ? "no other swept parameter"
                                 : absl::StrCat(map.fixed_at_best ? "at the best configuration's "
                                                                  : "nothing fits: at the defaults ",
                                                Assignments(map.others));
  absl::StrAppend(&out, "<text x=\"16\" y=\"40\" fill=\"#444\">", Escape(others),
                  map.fixed.empty() ? "" : Escape(absl::StrCat("; fixed ", Assignments(map.fixed))), "</text>\n");
  if (map.top_total > 0) {
    absl::StrAppend(&out, "<text x=\"16\" y=\"56\" fill=\"#444\">outlined: the plan's top ", map.top_total, " (rank #)",
                    map.top_elsewhere > 0 ? absl::StrCat("; ", map.top_elsewhere, " of them differ in other parameters, "
                                                         "not on this map")
                                          : "",
                    "</text>\n");
  }

  // Axes.
  absl::StrAppend(&out, "<text x=\"", kLeft + grid_w / 2, "\" y=\"", kTop - 26,
                  "\" text-anchor=\"middle\" font-weight=\"bold\">", Escape(map.x_name), "</text>\n");
  for (int xi = 0; xi < nx; ++xi) {
    absl::StrAppend(&out, "<text x=\"", kLeft + xi * kCellWidth + kCellWidth / 2, "\" y=\"", kTop - 8,
                    "\" text-anchor=\"middle\">", map.x_values[xi], "</text>\n");
  }
  absl::StrAppend(&out, "<text x=\"", kLeft - 56, "\" y=\"", kTop + grid_h / 2,
                  "\" text-anchor=\"end\" font-weight=\"bold\">", Escape(map.y_name), "</text>\n");
  for (int yi = 0; yi < ny; ++yi) {
    absl::StrAppend(&out, "<text x=\"", kLeft - 8, "\" y=\"", kTop + yi * kCellHeight + kCellHeight / 2 + 4,
                    "\" text-anchor=\"end\">", map.y_values[yi], "</text>\n");
  }

  // Cells.
  for (int yi = 0; yi < ny; ++yi) {
    for (int xi = 0; xi < nx; ++xi) {
      const PlanMapCell& c = map.at(yi, xi);
      const int x = kLeft + xi * kCellWidth, y = kTop + yi * kCellHeight;
      std::string title = absl::StrCat(map.x_name, "=", c.x, " ", map.y_name, "=", c.y);
      if (!map.others.empty()) absl::StrAppend(&title, " (", Assignments(map.others), ")");
      std::string fill, label;
      if (c.outcome.fits && c.outcome.estimated) {
        fill = TimeFill(c.outcome.time_s, fastest, scale_end);
        label = absl::StrCat(Micros(c.outcome.time_s), " us");
        absl::StrAppend(&title, "\nfits: estimated ", Micros(c.outcome.time_s), " us",
                        fastest > 0 ? absl::StrFormat(" (%.2fx the fastest here)", c.outcome.time_s / fastest) : "");
      } else if (c.outcome.fits) {
        fill = "#ffffff";
        label = "no estimate";
        absl::StrAppend(&title, "\nfits; no estimate: a performance expression failed for it");
      } else {
        fill = PrunedFill(c.outcome.limit);
        label = c.pruned_by;
        absl::StrAppend(&title, "\npruned by ", c.pruned_by, ": ", c.detail);
      }
      if (c.rank > 0) absl::StrAppend(&title, "\nrank ", c.rank, " of the plan");
      absl::StrAppend(&out, "<g><title>", Escape(title), "</title><rect x=\"", x, "\" y=\"", y, "\" width=\"",
                      kCellWidth, "\" height=\"", kCellHeight, "\" fill=\"", fill,
                      "\" stroke=\"#ffffff\" stroke-width=\"1\"/>");
      if (!c.outcome.fits) {
        absl::StrAppend(&out, "<rect x=\"", x, "\" y=\"", y, "\" width=\"", kCellWidth, "\" height=\"", kCellHeight,
                        "\" fill=\"url(#pruned)\"/>");
      }
      const bool fits_width = label.size() * kCharWidth < kCellWidth - 4;
      absl::StrAppend(&out, "<text x=\"", x + kCellWidth / 2, "\" y=\"", y + (c.rank > 0 ? 17 : 25),
                      "\" text-anchor=\"middle\" fill=\"", c.outcome.fits ? "#111" : "#555", "\"",
                      fits_width ? "" : " font-size=\"9\"", ">", Escape(label), "</text>");
      if (c.rank > 0) {
        absl::StrAppend(&out, "<rect x=\"", x + 2, "\" y=\"", y + 2, "\" width=\"", kCellWidth - 4, "\" height=\"",
                        kCellHeight - 4, "\" fill=\"none\" stroke=\"#111\" stroke-width=\"2.5\"/><text x=\"",
                        x + kCellWidth / 2, "\" y=\"", y + 33, "\" text-anchor=\"middle\" font-weight=\"bold\">#",
                        c.rank, "</text>");
      }
      absl::StrAppend(&out, "</g>\n");
    }
  }

  // Legend: the time scale, then each limit that pruned a cell.
  int y = kTop;
  absl::StrAppend(&out, "<text x=\"", legend_x, "\" y=\"", y, "\" font-weight=\"bold\">estimated time (fits)</text>\n");
  y += 10;
  for (int i = 0; i < kScaleSize; ++i) {
    absl::StrAppend(&out, "<rect x=\"", legend_x, "\" y=\"", y + i * 16, "\" width=\"22\" height=\"16\" fill=\"",
                    kScale[i], "\"/>");
    if (fastest > 0 && (i == 0 || i == kScaleSize - 1 || i == kScaleSize / 2)) {
      const double t = fastest * std::pow(scale_end / fastest, static_cast<double>(i) / (kScaleSize - 1));
      const char* note = i == 0 ? " (fastest)" : i < kScaleSize - 1 ? "" : slowest < scale_end ? " and above" : " (slowest)";
      absl::StrAppend(&out, "<text x=\"", legend_x + 30, "\" y=\"", y + i * 16 + 12, "\">", Micros(t), " us", note,
                      "</text>");
    }
    absl::StrAppend(&out, "\n");
  }
  y += kScaleSize * 16 + 14;
  absl::StrAppend(&out, "<text x=\"", legend_x, "\" y=\"", y, "\" fill=\"#555\">log scale, fastest to ",
                  slowest < scale_end ? absl::StrFormat("%.1fx", kMinSpan) : "slowest", "</text>\n");
  y += 30;
  if (!limits.empty()) {
    absl::StrAppend(&out, "<text x=\"", legend_x, "\" y=\"", y, "\" font-weight=\"bold\">pruned by</text>\n");
    y += 8;
    for (int i : order) {
      absl::StrAppend(&out, "<rect x=\"", legend_x, "\" y=\"", y, "\" width=\"22\" height=\"16\" fill=\"",
                      PrunedFill(limits[i].first), "\"/><rect x=\"", legend_x, "\" y=\"", y,
                      "\" width=\"22\" height=\"16\" fill=\"url(#pruned)\"/><text x=\"", legend_x + 30, "\" y=\"",
                      y + 12, "\">", Escape(limits[i].second), " (", limit_count[i], " cell",
                      limit_count[i] == 1 ? "" : "s", ")</text>\n");
      y += 22;
    }
  }
  absl::StrAppend(&out, "<text x=\"", legend_x, "\" y=\"", y + 18,
                  "\" fill=\"#555\">point at a cell for its figures</text>\n");
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace scratchsim
