// How long the pictures take for big graphs: the memory timeline (SVG) and the trace (Chrome
// trace JSON) of a 100,000-buffer graph, rendered from its report and written to a file, and the
// report with what they read (SimulateOptions.keep_buffers). docs/performance.md has the numbers.
// `picture_bench --write-graph FILE.{pb,pbtxt,json} [BUFFERS]` writes the graph instead, to time the command
// line (`simulate --graph FILE.pb --timeline ...`).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/simulator.h"
#include "sim/timeline.h"
#include "sim/trace.h"

namespace scratchsim {
namespace {

// Two buffers an op, each read by the next three ops, and one in 500 also read 2,000 ops later
// (an accumulator or a reused operand): mostly short live ranges too thin to see at 100,000
// buffers, some long ones that stay visible, sizes 256 B to 8 KiB.
KernelGraph WideGraph(int64_t num_buffers) {
  std::mt19937_64 rng(num_buffers);
  std::uniform_int_distribution<int> extent(1, 32);
  KernelGraph graph;
  graph.set_name(absl::StrCat("wide_", num_buffers));
  const int64_t num_ops = (num_buffers + 1) / 2;
  std::vector<std::vector<int64_t>> reads(num_ops);
  for (int64_t b = 0; b < num_buffers; ++b) {
    Buffer* buffer = graph.add_buffers();
    buffer->set_name(absl::StrCat("buf", b));
    buffer->add_shape("16");
    buffer->add_shape(absl::StrCat(4 * extent(rng)));
    buffer->set_dtype("f32");
    buffer->set_memory_space("smem");
    for (int64_t o = b / 2 + 1; o <= b / 2 + 3 && o < num_ops; ++o) reads[o].push_back(b);
    if (b % 500 == 0) reads[std::min(num_ops - 1, b / 2 + 2000)].push_back(b);
  }
  for (int64_t o = 0; o < num_ops; ++o) {
    Op* op = graph.add_ops();
    op->set_name(absl::StrCat("op", o));
    for (int64_t b = 2 * o; b < 2 * o + 2 && b < num_buffers; ++b) op->add_writes(absl::StrCat("buf", b));
    for (int64_t b : reads[o]) op->add_reads(absl::StrCat("buf", b));
  }
  graph.mutable_launch()->set_num_warps("4");
  return graph;
}

const DeviceModel& H100() {
  static const DeviceModel* device = [] {
    absl::StatusOr<DeviceModel> d = LoadDevice(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/devices/h100.textproto"));
    return new DeviceModel(d.ok() ? *d : DeviceModel());
  }();
  return *device;
}

// The report `simulate --timeline` draws: every placement, every buffer described, ops named.
absl::StatusOr<Report> PictureReport(int64_t num_buffers) {
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(WideGraph(num_buffers), "bench");
  if (!compiled.ok()) return compiled.status();
  SimulateOptions options;
  options.keep_buffers = true;
  options.suggest = false;  // the search for fixes is not part of drawing
  return Simulate(*compiled, H100(), compiled->defaults, options);
}

const Report& CachedReport(int64_t num_buffers) {
  static std::map<int64_t, Report>* reports = new std::map<int64_t, Report>;
  auto it = reports->find(num_buffers);
  if (it == reports->end()) {
    absl::StatusOr<Report> report = PictureReport(num_buffers);
    it = reports->emplace(num_buffers, report.ok() ? *report : Report()).first;
  }
  return it->second;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::string OutPath(const char* name) { return absl::StrCat("/tmp/scratchsim_bench_", name); }

void Sizes(benchmark::internal::Benchmark* b) { b->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond); }

// The timeline: rendered from the report and written to a file.
void BM_TimelineSvg(benchmark::State& state) {
  const Report& report = CachedReport(state.range(0));
  if (report.spaces().empty()) {
    state.SkipWithError("the synthetic graph did not simulate");
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string svg = RenderTimelineSvg(report, H100());
    WriteFile(OutPath("timeline.svg"), svg);
    bytes = svg.size();
  }
  state.counters["placements"] = report.spaces(0).placements_size();
  state.counters["svg_MB"] = bytes / 1e6;
}
BENCHMARK(BM_TimelineSvg)->Apply(Sizes);

// The largest SVG the merging allows: 100,000 placements with long names, 10,000 of them big
// enough to draw (more than the 4,000 drawn one by one), 90,000 one op wide, in a checkerboard
// of 2 x 2 px cells where merged.
void BM_TimelineSvgWorstCase(benchmark::State& state) {
  Report report;
  report.set_kernel("worst");
  SpaceReport* space = report.add_spaces();
  space->set_space("smem");
  space->set_limit_bytes(232448);
  for (int i = 0; i < 100000; ++i) {
    Placement* p = space->add_placements();
    p->set_buffer(absl::StrCat("a_rather_long_buffer_name_to_make_titles_heavy_", i));
    p->set_offset((i % 100) * 8192);
    p->set_size_bytes(8192);
    const int start = i < 10000 ? 10 * (i / 100) : 1000 + (i - 10000) / 100;
    p->set_live_start(start);
    p->set_live_end(i < 10000 ? start + 9 : start);
  }
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string svg = RenderTimelineSvg(report, H100());
    WriteFile(OutPath("worst.svg"), svg);
    bytes = svg.size();
  }
  state.counters["placements"] = 100000;
  state.counters["svg_MB"] = bytes / 1e6;
}
BENCHMARK(BM_TimelineSvgWorstCase)->Unit(benchmark::kMillisecond);

// The trace: rendered from the report and written to a file.
void BM_TraceJson(benchmark::State& state) {
  const Report& report = CachedReport(state.range(0));
  if (report.spaces().empty()) {
    state.SkipWithError("the synthetic graph did not simulate");
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string json = RenderTraceJson(report);
    WriteFile(OutPath("trace.json"), json);
    bytes = json.size();
  }
  state.counters["placements"] = report.spaces(0).placements_size();
  state.counters["json_MB"] = bytes / 1e6;
}
BENCHMARK(BM_TraceJson)->Apply(Sizes);

// What the pictures add to simulating: the report with every buffer described and ops named,
// against the plain report (both keep every placement).
void BM_SimulateForPictures(benchmark::State& state, bool keep_buffers) {
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(WideGraph(state.range(0)), "bench");
  if (!compiled.ok()) {
    state.SkipWithError(std::string(compiled.status().message()).c_str());
    return;
  }
  SimulateOptions options;
  options.keep_buffers = keep_buffers;
  options.suggest = false;
  for (auto _ : state) {
    absl::StatusOr<Report> report = Simulate(*compiled, H100(), compiled->defaults, options);
    if (!report.ok()) {
      state.SkipWithError(std::string(report.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(report->spaces(0).placements_size());
  }
}
BENCHMARK_CAPTURE(BM_SimulateForPictures, plain, false)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_SimulateForPictures, keep_buffers, true)->Apply(Sizes);

}  // namespace
}  // namespace scratchsim

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--write-graph") == 0) {
    const int64_t buffers = argc >= 4 ? std::atoll(argv[3]) : 100000;
    const scratchsim::KernelGraph graph = scratchsim::WideGraph(buffers);
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    // The format follows the name, as `simulate --graph` reads it: .pbtxt text, .json JSON, else binary.
    std::string text;
    if (absl::EndsWith(argv[2], ".pbtxt")) {
      if (!google::protobuf::TextFormat::PrintToString(graph, &text)) return 1;
    } else if (absl::EndsWith(argv[2], ".json")) {
      if (!google::protobuf::util::MessageToJsonString(graph, &text).ok()) return 1;
    } else {
      return graph.SerializeToOstream(&out) ? 0 : 1;
    }
    out << text;
    return out.good() ? 0 : 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
