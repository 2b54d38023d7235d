#include "sim/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/report.h"
#include "sim/svg_text.h"

namespace scratchsim {
namespace {

// Layout, in px.
constexpr int kLeft = 84;         // the offset axis' labels
constexpr int kRight = 24;
constexpr int kDocHeader = 50;    // kernel, device, verdict; parameters
constexpr int kPanelHeader = 38;  // the space, its peak and limit; what is drawn
constexpr int kAxis = 44;         // op names or positions, the axis name
constexpr int kLegendRow = 18;
constexpr int kGap = 14;
constexpr double kCharWidth = 6.6;  // an 11 px sans-serif character, on average
constexpr int kMaxLegend = 24;      // buffers named below a panel; more are named on hover only
constexpr int kMaxNamedOps = 32;    // ops named on the axis; more get numbered ticks
constexpr int kCell = 2;            // merged placements: cells of kCell x kCell px
constexpr int64_t kFarAbove = 4;    // a line more than this many times the data's top is not drawn

// One panel: a memory space, or one region of it placed on its own (TPU program-scoped VMEM).
struct Panel {
  const SpaceReport* space = nullptr;
  bool program = false;
  std::vector<const Placement*> placements;
  int64_t top = 0;        // the highest placed byte
  int64_t limit = 0;      // 0: none
  std::string limit_label;
  bool draw_limit = true;
  int64_t capacity = 0;   // 0: no line (off the scale, or the limit itself)
  std::string note;       // the lines off the scale
  int budget = 0;         // placements drawn one by one
};

// Where a placement lands on the panel, in px relative to the plot's top left corner.
struct Box {
  double x0, x1, y0, y1;
  double area() const { return (x1 - x0) * (y1 - y0); }
};

// What the report says of one buffer: its figures (shape, copies) when it gives them.
struct BufferInfo {
  const BufferShare* share = nullptr;
  int64_t copies = 0;  // placements seen, when no share says
  int index = 0;       // in order of first placement: its colour
};

// The colour of the `index`-th buffer of the report: hues a golden angle apart, so neighbours in
// the graph differ, never red (which marks what is over the limit); lighter and darker for its
// pipeline copies.
std::string Fill(int index, int64_t copy) {
  static constexpr int kLightness[] = {62, 74, 50};
  const int hue = 25 + static_cast<int>(std::fmod(index * 137.508, 300.0));
  return absl::StrFormat("hsl(%d,60%%,%d%%)", hue, kLightness[copy % 3]);
}

std::string Num(double v) {
  std::string s = absl::StrFormat("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

// Axis labels: "128 KiB", "4 MiB"; exact multiples are the usual case.
std::string TickBytes(int64_t v) {
  if (v == 0) return "0";
  if (v % (int64_t{1} << 20) == 0) return absl::StrCat(v >> 20, " MiB");
  if (v % 1024 == 0) return absl::StrCat(v >> 10, " KiB");
  return ShortBytes(v);
}

// The step of 3 to 6 ticks up to `top`: a power of two bytes.
int64_t ByteStep(int64_t top) {
  int64_t step = 1;
  while (step < top / 5 && step < (int64_t{1} << 61)) step <<= 1;
  return step;
}

// 1, 2 or 5 times a power of ten, so that about `target` ticks cover `n`.
int64_t NiceStep(int64_t n, int target) {
  int64_t step = 1;
  for (;;) {
    for (int64_t m : {1, 2, 5}) {
      if (n / (step * m) <= target) return step * m;
    }
    step *= 10;
  }
}

std::string Truncate(absl::string_view text, double width_px) {
  const int fit = static_cast<int>(width_px / kCharWidth);
  if (static_cast<int>(text.size()) <= fit) return std::string(text);
  if (fit < 3) return "";
  return absl::StrCat(text.substr(0, fit - 2), "..");
}

const MemorySpace* FindSpace(const DeviceModel& device, absl::string_view name) {
  for (const MemorySpace& s : device.memory_spaces()) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

std::vector<Panel> MakePanels(const Report& report, const DeviceModel& device) {
  std::vector<Panel> panels;
  for (const SpaceReport& space : report.spaces()) {
    const MemorySpace* model = FindSpace(device, space.space());
    const int64_t capacity = model != nullptr ? model->capacity_per_core_bytes() : 0;
    Panel main, program;
    main.space = program.space = &space;
    program.program = true;
    for (const Placement& p : space.placements()) {
      Panel& panel = p.region() == "program" ? program : main;
      panel.placements.push_back(&p);
      panel.top = std::max(panel.top, p.offset() + p.size_bytes());
    }
    main.limit = space.limit_bytes();
    main.limit_label = absl::StrCat("limit ", ShortBytes(main.limit), " (", space.limit_name(), ")");
    main.capacity = capacity;
    if (!program.placements.empty()) {
      // Program-scoped buffers sit beside the whole scoped region: what is left of the core.
      program.limit = std::max<int64_t>(capacity - std::min(space.limit_bytes(), capacity), 0);
      program.limit_label = absl::StrCat("room beside the scoped limit ", ShortBytes(program.limit), " (capacity ",
                                         ShortBytes(capacity), " less ", ShortBytes(space.limit_bytes()), ")");
    }
    for (Panel* panel : {&main, &program}) {
      if (panel == &program && program.placements.empty()) continue;
      if (panel == &main && main.placements.empty() && !program.placements.empty()) continue;
      if (panel->capacity == panel->limit) panel->capacity = 0;
      // A line far above the data would squash it to a sliver: named instead of drawn.
      const int64_t far = kFarAbove * std::max<int64_t>(panel->top, 1);
      std::vector<std::string> notes;
      if (panel->limit > far) {
        notes.push_back(absl::StrCat(panel->limit_label, " off the scale"));
        panel->draw_limit = false;
      }
      if (panel->capacity > far) {
        notes.push_back(absl::StrCat("capacity ", ShortBytes(panel->capacity), " off the scale"));
        panel->capacity = 0;
      }
      panel->note = absl::StrJoin(notes, "; ");
      panels.push_back(std::move(*panel));
    }
  }
  return panels;
}

class SvgWriter {
 public:
  SvgWriter(const Report& report, const DeviceModel& device, const TimelineOptions& options)
      : report_(report), device_(device), options_(options) {
    for (const SpaceReport& space : report.spaces()) {
      for (const BufferShare& b : space.live_at_peak()) info_[b.buffer()].share = &b;
    }
    // Every buffer's own entry wins over its count at the peak.
    for (const SpaceReport& space : report.spaces()) {
      for (const BufferShare& b : space.buffers()) info_[b.buffer()].share = &b;
      for (const Placement& p : space.placements()) {
        auto [it, inserted] = info_.try_emplace(p.buffer());
        if (inserted || it->second.copies == 0) it->second.index = next_index_++;
        it->second.copies = std::max(it->second.copies, p.copy() + 1);
      }
    }
    positions_ = std::max<int64_t>(report.ops_size(), 1);
    for (const SpaceReport& space : report.spaces()) {
      for (const Placement& p : space.placements()) positions_ = std::max(positions_, p.live_end() + 1);
    }
  }

  std::string Render() {
    std::vector<Panel> panels = MakePanels(report_, device_);
    const int budget = std::max(options_.max_shapes, 0);
    for (Panel& panel : panels) panel.budget = budget / std::max<int>(panels.size(), 1);
    const int width = kLeft + options_.plot_width + kRight;
    int height = kDocHeader;
    for (const Panel& panel : panels) height += PanelHeight(panel) + kGap;
    if (panels.empty()) height += 30;

    absl::StrAppend(&out_, SvgDocumentStart(width, height,
                                            absl::StrCat("memory timeline: ", report_.kernel(), " on ", report_.device()),
                                            {"over", 8, 3, "#c0392b", 0.45}));
    Header();
    int y = kDocHeader;
    if (panels.empty()) {
      absl::StrAppend(&out_, "<text x=\"", kLeft, "\" y=\"", y + 16,
                      "\" fill=\"#555\">no buffer is placed in any memory space</text>\n");
    }
    for (const Panel& panel : panels) {
      DrawPanel(panel, y);
      y += PanelHeight(panel) + kGap;
    }
    absl::StrAppend(&out_, "</svg>\n");
    return std::move(out_);
  }

 private:
  int LegendRows(const Panel& panel) const {
    const int buffers = static_cast<int>(Distinct(panel).size());
    if (buffers > kMaxLegend) return 1;
    return (buffers + 2) / 3;
  }
  int PanelHeight(const Panel& panel) const {
    return kPanelHeader + options_.plot_height + kAxis + LegendRows(panel) * kLegendRow + 6;
  }

  // The panel's buffers, in order of first placement.
  std::vector<absl::string_view> Distinct(const Panel& panel) const {
    std::vector<absl::string_view> names;
    absl::flat_hash_map<absl::string_view, bool> seen;
    for (const Placement* p : panel.placements) {
      if (seen.emplace(p->buffer(), true).second) names.push_back(p->buffer());
    }
    return names;
  }

  void Header() {
    const std::string device = device_.display_name().empty()
                                   ? report_.device()
                                   : absl::StrCat(device_.display_name(), " (", report_.device(), ")");
    absl::StrAppend(&out_, "<text x=\"", kLeft, "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">",
                    XmlEscape(report_.kernel()), " on ", XmlEscape(device), ": <tspan fill=\"",
                    report_.fits() ? "#1e8449\">FITS" : "#c0392b\">DOES NOT FIT", "</tspan></text>\n");
    std::vector<std::string> params;
    for (const ParameterValue& p : report_.parameters()) params.push_back(absl::StrCat(p.name(), "=", p.value()));
    std::string line = params.empty() ? "" : absl::StrCat("params ", absl::StrJoin(params, " "), "   ");
    if (!report_.policy().empty()) absl::StrAppend(&line, "policy ", report_.policy());
    absl::StrAppend(&out_, "<text x=\"", kLeft, "\" y=\"38\" fill=\"#444\">",
                    XmlEscape(Truncate(line, options_.plot_width)), "</text>\n");
  }

  std::string Title(const Placement& p, bool program) const {
    auto it = info_.find(p.buffer());
    const BufferShare* share = it != info_.end() ? it->second.share : nullptr;
    const int64_t copies = share != nullptr ? std::max(share->copies(), p.copy() + 1)
                                            : (it != info_.end() ? it->second.copies : 1);
    std::string title = copies > 1 ? absl::StrCat(p.buffer(), ", copy ", p.copy(), " of ", copies) : p.buffer();
    if (share != nullptr && !share->shape().empty()) {
      absl::StrAppend(&title, "\n", share->shape(), share->dtype().empty() ? "" : absl::StrCat(" (", share->dtype(), ")"));
    }
    if (share != nullptr && !share->source().empty()) absl::StrAppend(&title, "\nsource: ", share->source());
    absl::StrAppend(&title, "\n", FormatBytes(p.size_bytes()), " at offset ", p.offset(), "..",
                    p.offset() + p.size_bytes() - 1);
    absl::StrAppend(&title, "\nlive ops ", p.live_start(), "..", p.live_end());
    if (report_.ops_size() > p.live_end() && p.live_start() >= 0) {
      absl::StrAppend(&title, " (", report_.ops(p.live_start()), " .. ", report_.ops(p.live_end()), ")");
    }
    if (p.region() == "static") absl::StrAppend(&title, "\nstatic __shared__ (laid out first)");
    if (program) absl::StrAppend(&title, "\nprogram-scoped");
    return title;
  }

  void DrawPanel(const Panel& panel, int top) {
    const SpaceReport& space = *panel.space;
    const double pw = options_.plot_width, ph = options_.plot_height;
    const int plot_top = top + kPanelHeader;
    int64_t ymax = std::max({panel.top, panel.draw_limit ? panel.limit : 0, panel.capacity, int64_t{1}});
    ymax = ymax + ymax / 16;
    const double ys = ph / static_cast<double>(ymax);
    const double xs = pw / static_cast<double>(positions_);
    auto X = [&](double position) { return kLeft + position * xs; };
    auto Y = [&](double bytes) { return plot_top + ph - bytes * ys; };

    // Header: what the space holds against what.
    const std::string name = absl::StrCat(space.space(), panel.program ? " (program-scoped)"
                                                         : space.program_scoped_bytes() > 0 ? " (scoped)"
                                                                                            : "");
    std::string verdict;
    if (panel.limit > 0 && panel.top > panel.limit) {
      verdict = absl::StrCat("OVER by ", ShortBytes(panel.top - panel.limit));
    } else if (panel.limit > 0) {
      verdict = absl::StrCat("fits, ", ShortBytes(panel.limit - panel.top), " to spare");
    }
    absl::StrAppend(&out_, "<text x=\"", kLeft, "\" y=\"", top + 14, "\" font-size=\"12.5\" font-weight=\"bold\">",
                    XmlEscape(name), ": top ", ShortBytes(panel.top), ", ",
                    XmlEscape(panel.limit > 0 ? panel.limit_label : "no limit"),
                    verdict.empty() ? "" : " \xe2\x80\x94 ",  // an em dash
                    "<tspan fill=\"", panel.limit > 0 && panel.top > panel.limit ? "#c0392b" : "#1e8449", "\">",
                    verdict, "</tspan></text>\n");

    // The placements: the largest on screen one by one, the rest merged.
    std::vector<Box> boxes;
    boxes.reserve(panel.placements.size());
    for (const Placement* p : panel.placements) {
      Box b{X(p->live_start()) - kLeft, X(p->live_end() + 1) - kLeft, Y(p->offset() + p->size_bytes()) - plot_top,
            Y(p->offset()) - plot_top};
      if (b.y1 - b.y0 < 2) b.y0 = b.y1 - 2;  // a sliver stays visible
      boxes.push_back(b);
    }
    std::vector<int> order(boxes.size());
    std::iota(order.begin(), order.end(), 0);
    std::vector<bool> drawn(boxes.size(), true);
    if (static_cast<int>(boxes.size()) > panel.budget) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return boxes[a].area() > boxes[b].area(); });
      int kept = 0;
      for (int i : order) {
        const Box& b = boxes[i];
        drawn[i] = kept < panel.budget && b.x1 - b.x0 >= 2 && b.y1 - b.y0 >= 2;
        if (drawn[i]) ++kept;
      }
      std::sort(order.begin(), order.end());
    }
    const int distinct = static_cast<int>(Distinct(panel).size());
    const int merged = static_cast<int>(std::count(drawn.begin(), drawn.end(), false));
    absl::StrAppend(&out_, "<text x=\"", kLeft, "\" y=\"", top + 30, "\" fill=\"#444\">", panel.placements.size(),
                    " placement", panel.placements.size() == 1 ? "" : "s", " of ", distinct, " buffer",
                    distinct == 1 ? "" : "s",
                    merged > 0 ? absl::StrCat(" (", merged, " too small to see at this scale, merged in grey)") : "",
                    "; x: op position in the replayed order, y: offset",
                    panel.note.empty() ? "" : absl::StrCat("; ", panel.note), "</text>\n");

    // Frame and grid.
    absl::StrAppend(&out_, "<rect x=\"", kLeft, "\" y=\"", plot_top, "\" width=\"", options_.plot_width, "\" height=\"",
                    options_.plot_height, "\" fill=\"#fbfbfb\" stroke=\"#999\" stroke-width=\"0.8\"/>\n");
    const int64_t step = ByteStep(ymax);
    for (int64_t v = 0; v <= ymax; v += step) {
      const double y = Y(static_cast<double>(v));
      absl::StrAppend(&out_, "<line x1=\"", kLeft, "\" x2=\"", kLeft + options_.plot_width, "\" y1=\"", Num(y),
                      "\" y2=\"", Num(y), "\" stroke=\"#e3e3e3\" stroke-width=\"0.8\"/>");
      absl::StrAppend(&out_, "<text x=\"", kLeft - 6, "\" y=\"", Num(y + 4), "\" text-anchor=\"end\" fill=\"#444\">",
                      TickBytes(v), "</text>\n");
      if (v > ymax - step) break;  // no overflow on the last step
    }
    if (positions_ <= 64) {
      for (int64_t p = 1; p < positions_; ++p) {
        absl::StrAppend(&out_, "<line x1=\"", Num(X(p)), "\" x2=\"", Num(X(p)), "\" y1=\"", plot_top, "\" y2=\"",
                        plot_top + options_.plot_height, "\" stroke=\"#ececec\" stroke-width=\"0.8\"/>\n");
      }
    }

    // The placements merged, under those drawn one by one.
    if (merged > 0) DrawMerged(panel, boxes, drawn, plot_top);
    absl::StrAppend(&out_, "<g stroke=\"#ffffff\" stroke-width=\"0.6\">\n");
    for (int i : order) {
      if (!drawn[i]) continue;
      const Placement& p = *panel.placements[i];
      const Box& b = boxes[i];
      absl::StrAppend(&out_, "<rect x=\"", Num(kLeft + b.x0), "\" y=\"", Num(plot_top + b.y0), "\" width=\"",
                      Num(b.x1 - b.x0), "\" height=\"", Num(b.y1 - b.y0), "\" fill=\"",
                      Fill(info_.at(p.buffer()).index, p.copy()),
                      "\"><title>", XmlEscape(Title(p, panel.program)), "</title></rect>\n");
    }
    absl::StrAppend(&out_, "</g>\n");

    // What lies above the limit: hatched, placement by placement.
    if (panel.limit > 0 && panel.top > panel.limit) {
      absl::StrAppend(&out_, "<g fill=\"url(#over)\" pointer-events=\"none\">\n");
      const double limit_y = Y(static_cast<double>(panel.limit)) - plot_top;
      for (int i : order) {
        const Placement& p = *panel.placements[i];
        if (!drawn[i] || p.offset() + p.size_bytes() <= panel.limit) continue;
        const Box& b = boxes[i];
        const double bottom = std::min(b.y1, limit_y);
        absl::StrAppend(&out_, "<rect x=\"", Num(kLeft + b.x0), "\" y=\"", Num(plot_top + b.y0), "\" width=\"",
                        Num(b.x1 - b.x0), "\" height=\"", Num(bottom - b.y0), "\"/>\n");
      }
      absl::StrAppend(&out_, "</g>\n");
    }

    // Labels where they fit, over the hatching.
    absl::StrAppend(&out_, "<g text-anchor=\"middle\" fill=\"#111\" pointer-events=\"none\">\n");
    for (int i : order) {
      if (!drawn[i]) continue;
      const Placement& p = *panel.placements[i];
      const Box& b = boxes[i];
      auto it = info_.find(p.buffer());
      const bool copies = it != info_.end() &&
                          (it->second.copies > 1 || (it->second.share != nullptr && it->second.share->copies() > 1));
      const std::string label = copies ? absl::StrCat(p.buffer(), " #", p.copy()) : p.buffer();
      if (b.y1 - b.y0 < 14 || b.x1 - b.x0 < label.size() * kCharWidth + 6) continue;
      absl::StrAppend(&out_, "<text x=\"", Num(kLeft + (b.x0 + b.x1) / 2), "\" y=\"",
                      Num(plot_top + (b.y0 + b.y1) / 2 + 4), "\">", XmlEscape(label), "</text>\n");
    }
    absl::StrAppend(&out_, "</g>\n");

    // The limit and the capacity.
    if (panel.limit > 0 && panel.draw_limit) {
      const double y = Y(static_cast<double>(panel.limit));
      absl::StrAppend(&out_, "<line x1=\"", kLeft, "\" x2=\"", kLeft + options_.plot_width, "\" y1=\"", Num(y),
                      "\" y2=\"", Num(y), "\" stroke=\"#c0392b\" stroke-width=\"1.6\" stroke-dasharray=\"7 4\"/>");
      absl::StrAppend(&out_, "<text x=\"", kLeft + options_.plot_width - 4, "\" y=\"", Num(y - 4),
                      "\" text-anchor=\"end\" fill=\"#c0392b\" font-weight=\"bold\" stroke=\"#ffffff\" "
                      "stroke-width=\"3\" paint-order=\"stroke\">",
                      XmlEscape(panel.limit_label), "</text>\n");
    }
    if (panel.capacity > 0) {
      const double y = Y(static_cast<double>(panel.capacity));
      absl::StrAppend(&out_, "<line x1=\"", kLeft, "\" x2=\"", kLeft + options_.plot_width, "\" y1=\"", Num(y),
                      "\" y2=\"", Num(y), "\" stroke=\"#333\" stroke-width=\"1.2\" stroke-dasharray=\"2 3\"/>");
      absl::StrAppend(&out_, "<text x=\"", kLeft + 4, "\" y=\"", Num(y - 4),
                      "\" fill=\"#333\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">capacity ",
                      ShortBytes(panel.capacity), " per core</text>\n");
    }

    DrawOpAxis(plot_top + options_.plot_height, xs);
    DrawLegend(panel, plot_top + options_.plot_height + kAxis);
  }

  // The placements not drawn one by one: the cells they touch, one path, one hover title.
  void DrawMerged(const Panel& panel, const std::vector<Box>& boxes, const std::vector<bool>& drawn, int plot_top) {
    const int cols = (options_.plot_width + kCell - 1) / kCell, rows = (options_.plot_height + kCell - 1) / kCell;
    std::vector<uint8_t> cell(static_cast<size_t>(cols) * rows, 0);
    int64_t bytes = 0, count = 0;
    for (size_t i = 0; i < boxes.size(); ++i) {
      if (drawn[i]) continue;
      ++count;
      bytes += panel.placements[i]->size_bytes();
      const Box& b = boxes[i];
      const int c0 = std::clamp(static_cast<int>(b.x0 / kCell), 0, cols - 1);
      const int c1 = std::clamp(std::max(c0, static_cast<int>(std::ceil(b.x1 / kCell)) - 1), 0, cols - 1);
      const int r0 = std::clamp(static_cast<int>(b.y0 / kCell), 0, rows - 1);
      const int r1 = std::clamp(std::max(r0, static_cast<int>(std::ceil(b.y1 / kCell)) - 1), 0, rows - 1);
      for (int r = r0; r <= r1; ++r) {
        uint8_t* row = &cell[static_cast<size_t>(r) * cols];
        std::fill(row + c0, row + c1 + 1, 1);
      }
    }
    std::string d;
    for (int r = 0; r < rows; ++r) {
      const uint8_t* row = &cell[static_cast<size_t>(r) * cols];
      for (int c = 0; c < cols;) {
        if (!row[c]) {
          ++c;
          continue;
        }
        int e = c;
        while (e < cols && row[e]) ++e;
        absl::StrAppend(&d, "M", c * kCell, " ", r * kCell, "h", (e - c) * kCell, "v", kCell, "h-", (e - c) * kCell, "z");
        c = e;
      }
    }
    absl::StrAppend(&out_, "<path transform=\"translate(", kLeft, ",", plot_top, ")\" fill=\"#7f8c8d\" d=\"", d,
                    "\"><title>", count, " placements (", XmlEscape(FormatBytes(bytes)),
                    " in all) too small to draw one by one at this scale, merged: simulate --trace FILE.json "
                    "zooms into each</title></path>\n");
  }

  void DrawOpAxis(int axis_y, double xs) {
    if (positions_ <= kMaxNamedOps && report_.ops_size() == positions_) {
      for (int64_t p = 0; p < positions_; ++p) {
        const std::string& op = report_.ops(p);
        absl::StrAppend(&out_, "<text x=\"", Num(kLeft + (p + 0.5) * xs), "\" y=\"", axis_y + 15,
                        "\" text-anchor=\"middle\" fill=\"#333\">", XmlEscape(Truncate(op, xs - 4)), "<title>",
                        XmlEscape(absl::StrCat("op ", p, ": ", op)), "</title></text>\n");
      }
    } else {
      const int64_t step = NiceStep(positions_, 10);
      for (int64_t p = 0; p <= positions_; p += step) {
        absl::StrAppend(&out_, "<line x1=\"", Num(kLeft + p * xs), "\" x2=\"", Num(kLeft + p * xs), "\" y1=\"", axis_y,
                        "\" y2=\"", axis_y + 4, "\" stroke=\"#666\"/><text x=\"", Num(kLeft + p * xs), "\" y=\"",
                        axis_y + 15, "\" text-anchor=\"middle\" fill=\"#333\">", p, "</text>\n");
      }
    }
    absl::StrAppend(&out_, "<text x=\"", kLeft + options_.plot_width / 2, "\" y=\"", axis_y + 32,
                    "\" text-anchor=\"middle\" fill=\"#666\">op position (replayed order)</text>\n");
  }

  void DrawLegend(const Panel& panel, int y) {
    const std::vector<absl::string_view> names = Distinct(panel);
    if (static_cast<int>(names.size()) > kMaxLegend) {
      absl::StrAppend(&out_, "<text x=\"", kLeft, "\" y=\"", y + 12, "\" fill=\"#444\">", names.size(),
                      " buffers: point at a rectangle for its name, shape and live range</text>\n");
      return;
    }
    const double column = options_.plot_width / 3.0;
    for (size_t i = 0; i < names.size(); ++i) {
      const double x = kLeft + (i % 3) * column;
      const int row_y = y + static_cast<int>(i / 3) * kLegendRow;
      auto it = info_.find(names[i]);
      std::string text(names[i]);
      if (it != info_.end() && it->second.share != nullptr) {
        const BufferShare& s = *it->second.share;
        absl::StrAppend(&text, "  ", s.shape());
        const int64_t copies = std::max(s.copies(), it->second.copies);
        if (copies > 1) absl::StrAppend(&text, " x", copies);
        // The space's allocation granule pads the copies the share counts.
        const int64_t padding = copies == s.copies() ? s.granule_padding_bytes() : 0;
        absl::StrAppend(&text, "  ", ShortBytes(s.bytes_per_copy() * copies + padding));
      } else if (it != info_.end() && it->second.copies > 1) {
        absl::StrAppend(&text, " x", it->second.copies);
      }
      absl::StrAppend(&out_, "<rect x=\"", Num(x), "\" y=\"", row_y + 2, "\" width=\"11\" height=\"11\" fill=\"",
                      Fill(it != info_.end() ? it->second.index : 0, 0),
                      "\" stroke=\"#666\" stroke-width=\"0.5\"/><text x=\"", Num(x + 16), "\" y=\"",
                      row_y + 12, "\" fill=\"#222\">", XmlEscape(Truncate(text, column - 22)), "</text>\n");
    }
  }

  const Report& report_;
  const DeviceModel& device_;
  const TimelineOptions& options_;
  absl::flat_hash_map<absl::string_view, BufferInfo> info_;
  int next_index_ = 0;
  int64_t positions_ = 1;
  std::string out_;
};

}  // namespace

std::string ShortBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return absl::StrFormat("%.1f GiB", bytes / 1073741824.0);
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

std::string RenderTimelineSvg(const Report& report, const DeviceModel& device, const TimelineOptions& options) {
  return SvgWriter(report, device, options).Render();
}

}  // namespace scratchsim
