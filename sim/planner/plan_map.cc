#include "sim/planner/plan_map.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/limits.h"
#include "sim/status_macros.h"
#include "sim/svg_text.h"

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

// What pruned a cell, in the limit's unit (sim/limits).
std::string Detail(const CompiledGraph& graph, const PlanCell& c) {
  return LimitDetail(c.limit, c.required, c.available,
                     c.broken_requirement >= 0 ? BrokenRequirementMessage(graph, c.broken_requirement)
                                               : "an expression fails for this configuration");
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
        cell.pruned_by = LimitLabel(cell.outcome.limit, device);
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

namespace {

// Draws one PlanMap: the scale and the limits present are gathered first, then the header, the
// axes, the cells and the legend are written in that order.
class PlanMapSvg {
 public:
  explicit PlanMapSvg(const PlanMap& map)
      : map_(map), nx_(static_cast<int>(map.x_values.size())), ny_(static_cast<int>(map.y_values.size())) {
    // At most kMaxSvgElements cells: beyond, each drawn cell summarises a block of bx_ x by_
    // configurations, the longer side merged first.
    cols_ = nx_, rows_ = ny_;
    while (static_cast<int64_t>(cols_) * rows_ > kMaxSvgElements) {
      if (cols_ >= rows_) {
        ++bx_;
        cols_ = (nx_ + bx_ - 1) / bx_;
      } else {
        ++by_;
        rows_ = (ny_ + by_ - 1) / by_;
      }
    }
    if (bx_ > 1 || by_ > 1) top_ += 16;
  }

  std::string Render() {
    GatherScaleAndLimits();
    WriteHeader();
    WriteAxes();
    for (int row = 0; row < rows_; ++row) {
      for (int col = 0; col < cols_; ++col) {
        if (bx_ == 1 && by_ == 1) {
          WriteCell(map_.at(row, col), col, row, "");
        } else {
          WriteBlock(row, col);
        }
      }
    }
    WriteLegend();
    absl::StrAppend(&out_, "</svg>\n");
    return std::move(out_);
  }

 private:
  // A limit that pruned cells of the map, with its label and how many cells.
  struct PrunedBy {
    Limit limit;
    std::string label;
    int cells;
  };

  // The time scale over the cells that fit (at least kMinSpan wide) and the limits present, in
  // Limit order.
  void GatherScaleAndLimits() {
    for (const PlanMapCell& c : map_.cells) {
      if (c.outcome.fits && c.outcome.estimated) {
        fastest_ = fastest_ == 0 ? c.outcome.time_s : std::min(fastest_, c.outcome.time_s);
        slowest_ = std::max(slowest_, c.outcome.time_s);
      } else if (!c.outcome.fits) {
        auto it = std::find_if(limits_.begin(), limits_.end(), [&](const PrunedBy& l) { return l.limit == c.outcome.limit; });
        if (it == limits_.end()) {
          limits_.push_back({c.outcome.limit, c.pruned_by, 1});
        } else {
          ++it->cells;
        }
      }
    }
    // Estimates a few percent apart stay one colour: the scale runs to at least kMinSpan x the fastest.
    scale_end_ = std::max(slowest_, fastest_ * kMinSpan);
    std::sort(limits_.begin(), limits_.end(), [](const PrunedBy& a, const PrunedBy& b) { return a.limit < b.limit; });
  }

  // The document, its size, the hatch pattern and what the map is of.
  void WriteHeader() {
    const int legend_h = 24 + kScaleSize * 16 + 44 + static_cast<int>(limits_.size()) * 22 + 60;
    const int width = legend_x() + kLegendWidth;
    const int height = std::max(top_ + grid_h() + 56, top_ + legend_h);
    absl::StrAppend(&out_, SvgDocumentStart(width, height,
                                            absl::StrCat("plan map: ", map_.kernel, " on ", map_.device, ", ",
                                                         map_.x_name, " by ", map_.y_name),
                                            {"pruned", 7, 1.6, "#000000", 0.16}));

    int fitting = 0;
    for (const PlanMapCell& c : map_.cells) fitting += c.outcome.fits;
    absl::StrAppend(&out_, "<text x=\"16\" y=\"22\" font-size=\"14\" font-weight=\"bold\">", XmlEscape(map_.kernel),
                    " on ", XmlEscape(map_.device), ": ", XmlEscape(map_.x_name), " by ", XmlEscape(map_.y_name), ", ",
                    fitting, " of ", map_.cells.size(), " fit</text>\n");
    const std::string others = map_.others.empty()
                                   ? "no other swept parameter"
                                   : absl::StrCat(map_.fixed_at_best ? "at the best configuration's "
                                                                     : "nothing fits: at the defaults ",
                                                  Assignments(map_.others));
    absl::StrAppend(&out_, "<text x=\"16\" y=\"40\" fill=\"#444\">", XmlEscape(others),
                    map_.fixed.empty() ? "" : XmlEscape(absl::StrCat("; fixed ", Assignments(map_.fixed))),
                    "</text>\n");
    if (map_.top_total > 0) {
      absl::StrAppend(&out_, "<text x=\"16\" y=\"56\" fill=\"#444\">outlined: the plan's top ", map_.top_total,
                      " (rank #)",
                      map_.top_elsewhere > 0 ? absl::StrCat("; ", map_.top_elsewhere,
                                                            " of them differ in other parameters, not on this map")
                                             : "",
                      "</text>\n");
    }
    if (bx_ > 1 || by_ > 1) {
      absl::StrAppend(&out_, "<text x=\"16\" y=\"", kTop - 24, "\" fill=\"#c0392b\">summarised: ", nx_, " x ", ny_,
                      " configurations are more than the ", kMaxSvgElements, " cells drawn one by one; each cell is a block of up to ",
                      bx_, " x ", by_, " and shows its fastest configuration (or what pruned most of it)</text>\n");
    }
  }

  // The values of a column or row of the grid: one value, or the first and last of a block.
  static std::string Values(const std::vector<int64_t>& values, int first, int count) {
    const int last = std::min<int>(first + count, values.size()) - 1;
    return last == first ? absl::StrCat(values[first]) : absl::StrCat(values[first], "..", values[last]);
  }

  void WriteAxes() {
    absl::StrAppend(&out_, "<text x=\"", kLeft + grid_w() / 2, "\" y=\"", top_ - 26,
                    "\" text-anchor=\"middle\" font-weight=\"bold\">", XmlEscape(map_.x_name), "</text>\n");
    for (int col = 0; col < cols_; ++col) {
      const std::string label = Values(map_.x_values, col * bx_, bx_);
      absl::StrAppend(&out_, "<text x=\"", kLeft + col * kCellWidth + kCellWidth / 2, "\" y=\"", top_ - 8,
                      "\" text-anchor=\"middle\"", label.size() * kCharWidth < kCellWidth - 4 ? "" : " font-size=\"8\"",
                      ">", label, "</text>\n");
    }
    absl::StrAppend(&out_, "<text x=\"", kLeft - 56, "\" y=\"", top_ + grid_h() / 2,
                    "\" text-anchor=\"end\" font-weight=\"bold\">", XmlEscape(map_.y_name), "</text>\n");
    for (int row = 0; row < rows_; ++row) {
      absl::StrAppend(&out_, "<text x=\"", kLeft - 8, "\" y=\"", top_ + row * kCellHeight + kCellHeight / 2 + 4,
                      "\" text-anchor=\"end\">", Values(map_.y_values, row * by_, by_), "</text>\n");
    }
  }

  // A block of configurations drawn as one cell (the map is summarised): its fastest fitting
  // configuration, else one that fits with no estimate, else one pruned by the limit that
  // pruned most of the block; the best rank in it; the counts in its title.
  void WriteBlock(int row, int col) {
    const int x0 = col * bx_, x1 = std::min(x0 + bx_, nx_), y0 = row * by_, y1 = std::min(y0 + by_, ny_);
    const PlanMapCell* best = nullptr;
    int fitting = 0, rank = 0;
    std::vector<std::pair<Limit, int>> pruned;
    for (int yi = y0; yi < y1; ++yi) {
      for (int xi = x0; xi < x1; ++xi) {
        const PlanMapCell& c = map_.at(yi, xi);
        if (c.rank > 0 && (rank == 0 || c.rank < rank)) rank = c.rank;
        if (!c.outcome.fits) {
          auto it = std::find_if(pruned.begin(), pruned.end(), [&](const auto& p) { return p.first == c.outcome.limit; });
          if (it == pruned.end()) pruned.emplace_back(c.outcome.limit, 1); else ++it->second;
          continue;
        }
        ++fitting;
        const bool estimated = c.outcome.estimated, best_estimated = best != nullptr && best->outcome.estimated;
        if (best == nullptr || (estimated && (!best_estimated || c.outcome.time_s < best->outcome.time_s))) best = &c;
      }
    }
    if (best == nullptr) {
      const auto most = std::max_element(pruned.begin(), pruned.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      for (int yi = y0; yi < y1 && best == nullptr; ++yi) {
        for (int xi = x0; xi < x1 && best == nullptr; ++xi) {
          if (map_.at(yi, xi).outcome.limit == most->first) best = &map_.at(yi, xi);
        }
      }
    }
    PlanMapCell shown = *best;
    shown.rank = rank;
    const std::string head = absl::StrCat(map_.x_name, "=", Values(map_.x_values, x0, bx_), " ", map_.y_name, "=",
                                          Values(map_.y_values, y0, by_), ": ", (x1 - x0) * (y1 - y0),
                                          " configurations, ", fitting, " fit; shown: ");
    WriteCell(shown, col, row, head);
  }

  // One cell: its fill (the time's colour, or its limit's under the hatch), label, hover title
  // and, among the plan's top configurations, its outline and rank.
  // `head` opens the hover title of a cell that summarises a block (empty: a single configuration).
  void WriteCell(const PlanMapCell& c, int col, int row, absl::string_view head) {
    const int x = kLeft + col * kCellWidth, y = top_ + row * kCellHeight;
    std::string title = absl::StrCat(head, map_.x_name, "=", c.x, " ", map_.y_name, "=", c.y);
    if (!map_.others.empty()) absl::StrAppend(&title, " (", Assignments(map_.others), ")");
    std::string fill, label, figure;  // figure: a pruned cell's required > available
    if (c.outcome.fits && c.outcome.estimated) {
      fill = TimeFill(c.outcome.time_s, fastest_, scale_end_);
      label = absl::StrCat(Micros(c.outcome.time_s), " us");
      absl::StrAppend(&title, "\nfits: estimated ", Micros(c.outcome.time_s), " us",
                      fastest_ > 0 ? absl::StrFormat(" (%.2fx the fastest here)", c.outcome.time_s / fastest_) : "");
    } else if (c.outcome.fits) {
      fill = "#ffffff";
      label = "no estimate";
      absl::StrAppend(&title, "\nfits; no estimate: a performance expression failed for it");
    } else {
      fill = std::string(LimitFill(c.outcome.limit));
      label = c.pruned_by;
      figure = LimitFigure(c.outcome.limit, c.outcome.required, c.outcome.available);
      absl::StrAppend(&title, "\npruned by ", c.pruned_by, ": ", c.detail);
    }
    if (c.rank > 0) absl::StrAppend(&title, "\nrank ", c.rank, " of the plan");
    absl::StrAppend(&out_, "<g><title>", XmlEscape(title), "</title><rect x=\"", x, "\" y=\"", y, "\" width=\"",
                    kCellWidth, "\" height=\"", kCellHeight, "\" fill=\"", fill,
                    "\" stroke=\"#ffffff\" stroke-width=\"1\"/>");
    if (!c.outcome.fits) {
      absl::StrAppend(&out_, "<rect x=\"", x, "\" y=\"", y, "\" width=\"", kCellWidth, "\" height=\"", kCellHeight,
                      "\" fill=\"url(#pruned)\"/>");
    }
    const bool fits_width = label.size() * kCharWidth < kCellWidth - 4;
    // A pruned cell shows its figure under its limit (the rank's line, when it has one, is below).
    const int label_y = y + (c.rank > 0 || !figure.empty() ? 17 : 25);
    absl::StrAppend(&out_, "<text x=\"", x + kCellWidth / 2, "\" y=\"", label_y,
                    "\" text-anchor=\"middle\" fill=\"", c.outcome.fits ? "#111" : "#555", "\"",
                    fits_width ? "" : " font-size=\"9\"", ">", XmlEscape(label), "</text>");
    if (!figure.empty() && c.rank == 0) {
      absl::StrAppend(&out_, "<text x=\"", x + kCellWidth / 2, "\" y=\"", label_y + 16,
                      "\" text-anchor=\"middle\" fill=\"#333\" font-size=\"10\">", XmlEscape(figure), "</text>");
    }
    if (c.rank > 0) {
      absl::StrAppend(&out_, "<rect x=\"", x + 2, "\" y=\"", y + 2, "\" width=\"", kCellWidth - 4, "\" height=\"",
                      kCellHeight - 4, "\" fill=\"none\" stroke=\"#111\" stroke-width=\"2.5\"/><text x=\"",
                      x + kCellWidth / 2, "\" y=\"", y + 33, "\" text-anchor=\"middle\" font-weight=\"bold\">#",
                      c.rank, "</text>");
    }
    absl::StrAppend(&out_, "</g>\n");
  }

  // The time scale, then each limit that pruned a cell.
  void WriteLegend() {
    const int lx = legend_x();
    int y = top_;
    absl::StrAppend(&out_, "<text x=\"", lx, "\" y=\"", y, "\" font-weight=\"bold\">estimated time (fits)</text>\n");
    y += 10;
    for (int i = 0; i < kScaleSize; ++i) {
      absl::StrAppend(&out_, "<rect x=\"", lx, "\" y=\"", y + i * 16, "\" width=\"22\" height=\"16\" fill=\"",
                      kScale[i], "\"/>");
      if (fastest_ > 0 && (i == 0 || i == kScaleSize - 1 || i == kScaleSize / 2)) {
        const double t = fastest_ * std::pow(scale_end_ / fastest_, static_cast<double>(i) / (kScaleSize - 1));
        const char* note = i == 0                ? " (fastest)"
                           : i < kScaleSize - 1  ? ""
                           : slowest_ < scale_end_ ? " and above"
                                                   : " (slowest)";
        absl::StrAppend(&out_, "<text x=\"", lx + 30, "\" y=\"", y + i * 16 + 12, "\">", Micros(t), " us", note,
                        "</text>");
      }
      absl::StrAppend(&out_, "\n");
    }
    y += kScaleSize * 16 + 14;
    absl::StrAppend(&out_, "<text x=\"", lx, "\" y=\"", y, "\" fill=\"#555\">log scale, fastest to ",
                    slowest_ < scale_end_ ? absl::StrFormat("%.1fx", kMinSpan) : "slowest", "</text>\n");
    y += 30;
    if (!limits_.empty()) {
      absl::StrAppend(&out_, "<text x=\"", lx, "\" y=\"", y, "\" font-weight=\"bold\">pruned by</text>\n");
      y += 8;
      for (const PrunedBy& l : limits_) {
        absl::StrAppend(&out_, "<rect x=\"", lx, "\" y=\"", y, "\" width=\"22\" height=\"16\" fill=\"",
                        LimitFill(l.limit), "\"/><rect x=\"", lx, "\" y=\"", y,
                        "\" width=\"22\" height=\"16\" fill=\"url(#pruned)\"/><text x=\"", lx + 30, "\" y=\"", y + 12,
                        "\">", XmlEscape(l.label), " (", l.cells, " cell", l.cells == 1 ? "" : "s", ")</text>\n");
        y += 22;
      }
    }
    absl::StrAppend(&out_, "<text x=\"", lx, "\" y=\"", y + 18, "\" fill=\"#555\">point at a cell for its figures</text>\n");
  }

  int grid_w() const { return cols_ * kCellWidth; }
  int grid_h() const { return rows_ * kCellHeight; }
  int legend_x() const { return kLeft + grid_w() + kLegendGap; }

  const PlanMap& map_;
  const int nx_, ny_;
  int bx_ = 1, by_ = 1;  // configurations per drawn cell, along x and y
  int cols_ = 0, rows_ = 0;
  int top_ = kTop;  // the grid's top: one line lower when a line says the map is summarised
  double fastest_ = 0, slowest_ = 0, scale_end_ = 0;
  std::vector<PrunedBy> limits_;
  std::string out_;
};

}  // namespace

std::string RenderPlanMapSvg(const PlanMap& map) { return PlanMapSvg(map).Render(); }

}  // namespace scratchsim
