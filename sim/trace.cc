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

}  // namespace

std::string RenderTraceJson(const Report& report) {
  absl::flat_hash_map<absl::string_view, const BufferShare*> shares;
  for (const SpaceReport& space : report.spaces()) {
    for (const BufferShare& b : space.live_at_peak()) shares[b.buffer()] = &b;
  }
  for (const SpaceReport& space : report.spaces()) {
    for (const BufferShare& b : space.buffers()) shares[b.buffer()] = &b;
  }
  std::vector<Track> tracks;
  int64_t positions = std::max<int64_t>(report.ops_size(), 1);
  for (const SpaceReport& space : report.spaces()) {
    Track main{&space, false, {}}, program{&space, true, {}};
    for (const Placement& p : space.placements()) {
      (p.region() == "program" ? program : main).placements.push_back(&p);
      positions = std::max(positions, p.live_end() + 1);
    }
    if (!main.placements.empty() || program.placements.empty()) tracks.push_back(std::move(main));
    if (!program.placements.empty()) tracks.push_back(std::move(program));
  }

  std::string out;
  size_t placements = 0;
  for (const Track& t : tracks) placements += t.placements.size();
  out.reserve(256 * (placements + report.ops_size()) + 4096);
  absl::StrAppend(&out, "{\"otherData\": {\"kernel\": ", JsonString(report.kernel()),
                  ", \"device\": ", JsonString(report.device()), ", \"fits\": ", report.fits() ? "true" : "false",
                  ", \"time axis\": \"op position in the replayed order: 1 us = 1 position\"},\n");
  absl::StrAppend(&out, "\"traceEvents\": [\n");
  bool first = true;
  auto event = [&](const std::string& text) {
    absl::StrAppend(&out, first ? "" : ",\n", text);
    first = false;
  };
  auto metadata = [&](int pid, int tid, absl::string_view what, absl::string_view name) {
    event(absl::StrCat("{\"ph\": \"M\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"name\": \"", what,
                       "\", \"args\": {\"name\": ", JsonString(name), "}}"));
  };

  if (report.ops_size() > 0) {
    metadata(0, 0, "process_name", "ops");
    metadata(0, 0, "thread_name", "replayed order");
    event("{\"ph\": \"M\", \"pid\": 0, \"name\": \"process_sort_index\", \"args\": {\"sort_index\": 0}}");
    for (int p = 0; p < report.ops_size(); ++p) {
      absl::StrAppend(&out, ",\n{\"ph\": \"X\", \"pid\": 0, \"tid\": 0, \"ts\": ", p, ", \"dur\": 1, \"name\": ",
                      JsonString(report.ops(p)), ", \"args\": {\"position\": ", p, "}}");
    }
  }

  for (size_t t = 0; t < tracks.size(); ++t) {
    const Track& track = tracks[t];
    const SpaceReport& space = *track.space;
    const int pid = static_cast<int>(t) + 1;
    const char* region = track.program ? " (program-scoped)" : space.program_scoped_bytes() > 0 ? " (scoped)" : "";
    const std::string name = absl::StrCat(space.space(), region);
    metadata(pid, 0, "process_name", name);
    event(absl::StrCat("{\"ph\": \"M\", \"pid\": ", pid, ", \"name\": \"process_sort_index\", \"args\": {\"sort_index\": ",
                       pid, "}}"));

    // Live bytes at each position where they change, then 0 past the end.
    std::vector<int64_t> delta(positions + 1, 0);
    for (const Placement* p : track.placements) {
      if (p->live_start() < 0 || p->live_end() < p->live_start()) continue;
      delta[p->live_start()] += p->size_bytes();
      delta[p->live_end() + 1] -= p->size_bytes();
    }
    int64_t live = 0, last = -1;
    for (int64_t p = 0; p <= positions; ++p) {
      live += delta[p];
      if (live == last) continue;
      absl::StrAppend(&out, ",\n{\"ph\": \"C\", \"pid\": ", pid, ", \"tid\": 0, \"ts\": ", p, ", \"name\": ",
                      JsonString(absl::StrCat(name, " live")), ", \"args\": {\"bytes\": ", live, "}}");
      last = live;
    }
    if (!track.program && space.limit_bytes() > 0) {
      for (int64_t p : {int64_t{0}, positions}) {
        absl::StrAppend(&out, ",\n{\"ph\": \"C\", \"pid\": ", pid, ", \"tid\": 0, \"ts\": ", p, ", \"name\": ",
                        JsonString(absl::StrCat(name, " limit")), ", \"args\": {\"bytes\": ", space.limit_bytes(), "}}");
      }
    }

    const std::vector<int> lanes = AssignLanes(track.placements);
    const int num_lanes = lanes.empty() ? 0 : *std::max_element(lanes.begin(), lanes.end()) + 1;
    for (int l = 0; l < num_lanes; ++l) metadata(pid, l + 1, "thread_name", absl::StrCat("placements ", l + 1));
    for (size_t i = 0; i < track.placements.size(); ++i) {
      const Placement& p = *track.placements[i];
      auto it = shares.find(p.buffer());
      const BufferShare* share = it != shares.end() ? it->second : nullptr;
      absl::StrAppend(&out, ",\n{\"ph\": \"X\", \"pid\": ", pid, ", \"tid\": ", lanes[i] + 1, ", \"ts\": ",
                      p.live_start(), ", \"dur\": ", p.live_end() - p.live_start() + 1, ", \"name\": ",
                      JsonString(p.buffer()), ", \"args\": {\"copy\": ", p.copy(), ", \"offset\": ", p.offset(),
                      ", \"bytes\": ", p.size_bytes(), ", \"live\": \"", p.live_start(), "..", p.live_end(), "\"");
      if (share != nullptr) {
        absl::StrAppend(&out, ", \"copies\": ", share->copies(), ", \"shape\": ", JsonString(share->shape()),
                        ", \"dtype\": ", JsonString(share->dtype()));
      }
      if (!p.region().empty()) absl::StrAppend(&out, ", \"region\": ", JsonString(p.region()));
      absl::StrAppend(&out, "}}");
    }
  }
  absl::StrAppend(&out, "\n]}\n");
  return out;
}

}  // namespace scratchsim
