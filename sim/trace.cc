#include "sim/trace.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "sim/json_text.h"
#include "sim/svg_text.h"

namespace scratchsim {
namespace {

// One process of the trace: a memory space, or its program-scoped region.
struct Track {
  const SpaceReport* space = nullptr;
  bool program = false;
  std::vector<const Placement*> placements;
};

// Lanes so that no two placements of one lane overlap: by start, each into the lowest lane free
// by then (as few lanes as the most placements live at once).
std::vector<int> AssignLanes(const std::vector<const Placement*>& placements) {
  std::vector<int> order(placements.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return placements[a]->live_start() < placements[b]->live_start(); });
  using Busy = std::pair<int64_t, int>;  // (last position, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
  std::priority_queue<int, std::vector<int>, std::greater<int>> free;
  std::vector<int> lane(placements.size(), 0);
  int lanes = 0;
  for (int i : order) {
    const Placement& p = *placements[i];
    while (!busy.empty() && busy.top().first < p.live_start()) {
      free.push(busy.top().second);
      busy.pop();
    }
    if (free.empty()) {
      lane[i] = lanes++;
    } else {
      lane[i] = free.top();
      free.pop();
    }
    busy.emplace(p.live_end(), lane[i]);
  }
  return lane;
}

// Where a trace holds more than kMaxTraceSlices slices, the op axis is cut into at most
// `buckets` spans of `width` positions each: ops are named span by span, each memory space's live
// bytes sampled per span (the most live in it), and the placements beyond the largest ones
// merged per span.
struct Summary {
  bool on = false;
  int64_t width = 1;
  int64_t buckets = 0;
  size_t kept_per_track = 0;  // placements kept one by one in each track
  int64_t ops_merged = 0;        // ops named span by span (all of them, or none)
  size_t placements_merged = 0;
};

Summary PlanSummary(const Report& report, const std::vector<Track>& tracks, int64_t positions) {
  Summary summary;
  size_t slices = report.ops_size();
  for (const Track& t : tracks) slices += t.placements.size();
  if (slices <= static_cast<size_t>(kMaxTraceSlices)) return summary;
  summary.on = true;
  // Half the slices for the largest placements; the other half for the spans of the ops, the
  // samples of each track's live bytes and each track's merged placements.
  const int64_t spans = kMaxTraceSlices / 2 / (2 * static_cast<int64_t>(tracks.size()) + 1);
  summary.width = std::max<int64_t>(1, (positions + spans - 1) / spans);
  summary.buckets = (positions + summary.width - 1) / summary.width;
  summary.kept_per_track = kMaxTraceSlices / 2 / std::max<size_t>(tracks.size(), 1);
  if (report.ops_size() > kMaxTraceSlices / 4) summary.ops_merged = report.ops_size();
  for (const Track& t : tracks) summary.placements_merged += t.placements.size() - std::min(t.placements.size(), summary.kept_per_track);
  return summary;
}

// The largest placements of a track (bytes times live positions), at most `keep`, in the
// track's order; the rest in `merged`.
std::vector<const Placement*> KeepLargest(const std::vector<const Placement*>& placements, size_t keep,
                                          std::vector<const Placement*>* merged) {
  if (placements.size() <= keep) return placements;
  auto area = [](const Placement* p) {
    return static_cast<double>(p->size_bytes()) * static_cast<double>(p->live_end() - p->live_start() + 1);
  };
  std::vector<int> order(placements.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return area(placements[a]) > area(placements[b]); });
  std::vector<bool> kept(placements.size(), false);
  for (size_t i = 0; i < keep; ++i) kept[order[i]] = true;
  std::vector<const Placement*> out;
  for (size_t i = 0; i < placements.size(); ++i) (kept[i] ? out : *merged).push_back(placements[i]);
  return out;
}

class TraceWriter {
 public:
  explicit TraceWriter(const Report& report) : report_(report) {
    for (const SpaceReport& space : report.spaces()) {
      for (const BufferShare& b : space.live_at_peak()) shares_[b.buffer()] = &b;
    }
    for (const SpaceReport& space : report.spaces()) {
      for (const BufferShare& b : space.buffers()) shares_[b.buffer()] = &b;
    }
    positions_ = std::max<int64_t>(report.ops_size(), 1);
    for (const SpaceReport& space : report.spaces()) {
      Track main{&space, false, {}}, program{&space, true, {}};
      for (const Placement& p : space.placements()) {
        (p.region() == "program" ? program : main).placements.push_back(&p);
        positions_ = std::max(positions_, p.live_end() + 1);
      }
      if (!main.placements.empty() || program.placements.empty()) tracks_.push_back(std::move(main));
      if (!program.placements.empty()) tracks_.push_back(std::move(program));
    }
    summary_ = PlanSummary(report, tracks_, positions_);
  }

  std::string Render() {
    size_t placements = 0;
    for (const Track& t : tracks_) placements += t.placements.size();
    out_.reserve(256 * (std::min<size_t>(placements, kMaxTraceSlices) +
                        std::min<int64_t>(report_.ops_size(), kMaxTraceSlices)) + 4096);
    absl::StrAppend(&out_, "{\"otherData\": {\"kernel\": ", JsonString(report_.kernel()),
                    ", \"device\": ", JsonString(report_.device()), ", \"fits\": ", report_.fits() ? "true" : "false",
                    ", \"time axis\": \"op position in the replayed order: 1 us = 1 position\"");
    if (summary_.on) {
      absl::StrAppend(&out_, ", \"summarised\": ",
                      JsonString(absl::StrCat(summary_.ops_merged, " ops and ", summary_.placements_merged,
                                              " placements merged into spans of ", summary_.width,
                                              " positions, live bytes sampled per span (the most live): the trace "
                                              "holds at most ", kMaxTraceSlices, " slices one by one")));
    }
    absl::StrAppend(&out_, "},\n\"traceEvents\": [\n");
    Ops();
    for (size_t t = 0; t < tracks_.size(); ++t) WriteTrack(tracks_[t], static_cast<int>(t) + 1);
    absl::StrAppend(&out_, "\n]}\n");
    return std::move(out_);
  }

 private:
  void Event(absl::string_view text) {
    absl::StrAppend(&out_, first_ ? "" : ",\n", text);
    first_ = false;
  }
  void Metadata(int pid, int tid, absl::string_view what, absl::string_view name) {
    Event(absl::StrCat("{\"ph\": \"M\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"name\": \"", what,
                       "\", \"args\": {\"name\": ", JsonString(name), "}}"));
  }
  // A slice [ts, ts + dur) on a thread of a process.
  void Slice(int pid, int tid, int64_t ts, int64_t dur, absl::string_view name, absl::string_view args) {
    absl::StrAppend(&out_, ",\n{\"ph\": \"X\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"ts\": ", ts, ", \"dur\": ", dur,
                    ", \"name\": ", JsonString(name), ", \"args\": {", args, "}}");
  }
  void Counter(int pid, int64_t ts, absl::string_view name, int64_t bytes) {
    absl::StrAppend(&out_, ",\n{\"ph\": \"C\", \"pid\": ", pid, ", \"tid\": 0, \"ts\": ", ts, ", \"name\": ",
                    JsonString(name), ", \"args\": {\"bytes\": ", bytes, "}}");
  }

  // The op at each position; summarised: the ops of each span.
  void Ops() {
    if (report_.ops_size() == 0) return;
    Metadata(0, 0, "process_name", "ops");
    Metadata(0, 0, "thread_name", "replayed order");
    Event("{\"ph\": \"M\", \"pid\": 0, \"name\": \"process_sort_index\", \"args\": {\"sort_index\": 0}}");
    const int64_t ops = report_.ops_size();
    if (summary_.ops_merged == 0) {
      for (int64_t p = 0; p < ops; ++p) Slice(0, 0, p, 1, report_.ops(p), absl::StrCat("\"position\": ", p));
      return;
    }
    for (int64_t first = 0; first < ops; first += summary_.width) {
      const int64_t last = std::min(first + summary_.width, ops) - 1;
      Slice(0, 0, first, last - first + 1, absl::StrCat("ops ", first, "..", last),
            absl::StrCat("\"first\": ", JsonString(report_.ops(first)), ", \"last\": ", JsonString(report_.ops(last)),
                         ", \"ops\": ", last - first + 1));
    }
  }

  void LiveBytes(const Track& track, int pid, const std::string& name) {
    // Live bytes at each position where they change, then 0 past the end; summarised: the most
    // live in each span, at its start.
    std::vector<int64_t> delta(positions_ + 1, 0);
    for (const Placement* p : track.placements) {
      if (p->live_start() < 0 || p->live_end() < p->live_start()) continue;
      delta[p->live_start()] += p->size_bytes();
      delta[p->live_end() + 1] -= p->size_bytes();
    }
    const std::string live_name = absl::StrCat(name, " live");
    int64_t live = 0, last = -1;
    for (int64_t p = 0; p <= positions_;) {
      int64_t most = live + delta[p];
      live = most;
      const int64_t span_end = summary_.on ? std::min(p + summary_.width, positions_ + 1) : p + 1;
      for (int64_t q = p + 1; q < span_end; ++q) {
        live += delta[q];
        most = std::max(most, live);
      }
      if (most != last) Counter(pid, p, live_name, most);
      last = most;
      p = span_end;
    }
    if (summary_.on && last != live) Counter(pid, positions_, live_name, live);
  }

  void WriteTrack(const Track& track, int pid) {
    const SpaceReport& space = *track.space;
    const char* region = track.program ? " (program-scoped)" : space.program_scoped_bytes() > 0 ? " (scoped)" : "";
    const std::string name = absl::StrCat(space.space(), region);
    Metadata(pid, 0, "process_name", name);
    Event(absl::StrCat("{\"ph\": \"M\", \"pid\": ", pid, ", \"name\": \"process_sort_index\", \"args\": {\"sort_index\": ",
                       pid, "}}"));
    LiveBytes(track, pid, name);
    if (!track.program && space.limit_bytes() > 0) {
      for (int64_t p : {int64_t{0}, positions_}) Counter(pid, p, absl::StrCat(name, " limit"), space.limit_bytes());
    }
    std::vector<const Placement*> merged;
    const std::vector<const Placement*> kept =
        summary_.on ? KeepLargest(track.placements, summary_.kept_per_track, &merged) : track.placements;
    const std::vector<int> lanes = AssignLanes(kept);
    const int num_lanes = lanes.empty() ? 0 : *std::max_element(lanes.begin(), lanes.end()) + 1;
    for (int l = 0; l < num_lanes; ++l) Metadata(pid, l + 1, "thread_name", absl::StrCat("placements ", l + 1));
    for (size_t i = 0; i < kept.size(); ++i) PlacementSlice(*kept[i], pid, lanes[i] + 1);
    if (!merged.empty()) Merged(merged, pid, num_lanes + 1);
  }

  void PlacementSlice(const Placement& p, int pid, int tid) {
    auto it = shares_.find(p.buffer());
    const BufferShare* share = it != shares_.end() ? it->second : nullptr;
    std::string args = absl::StrCat("\"copy\": ", p.copy(), ", \"offset\": ", p.offset(), ", \"bytes\": ", p.size_bytes(),
                                    ", \"live\": \"", p.live_start(), "..", p.live_end(), "\"");
    if (share != nullptr) {
      absl::StrAppend(&args, ", \"copies\": ", share->copies(), ", \"shape\": ", JsonString(share->shape()),
                      ", \"dtype\": ", JsonString(share->dtype()));
    }
    if (!p.region().empty()) absl::StrAppend(&args, ", \"region\": ", JsonString(p.region()));
    Slice(pid, tid, p.live_start(), p.live_end() - p.live_start() + 1, p.buffer(), args);
  }

  // The placements not kept one by one: per span, how many start in it and their bytes.
  void Merged(const std::vector<const Placement*>& merged, int pid, int tid) {
    Metadata(pid, tid, "thread_name", "merged placements");
    std::vector<int64_t> count(summary_.buckets, 0), bytes(summary_.buckets, 0);
    for (const Placement* p : merged) {
      const int64_t b = std::clamp<int64_t>(p->live_start() / summary_.width, 0, summary_.buckets - 1);
      ++count[b];
      bytes[b] += p->size_bytes();
    }
    for (int64_t b = 0; b < summary_.buckets; ++b) {
      if (count[b] == 0) continue;
      Slice(pid, tid, b * summary_.width, summary_.width, absl::StrCat(count[b], " placements merged"),
            absl::StrCat("\"placements\": ", count[b], ", \"bytes\": ", bytes[b], ", \"starting at\": \"",
                         b * summary_.width, "..", (b + 1) * summary_.width - 1, "\""));
    }
  }

  const Report& report_;
  absl::flat_hash_map<absl::string_view, const BufferShare*> shares_;
  std::vector<Track> tracks_;
  int64_t positions_ = 1;
  Summary summary_;
  std::string out_;
  bool first_ = true;
};

}  // namespace

std::string RenderTraceJson(const Report& report) { return TraceWriter(report).Render(); }

}  // namespace scratchsim
