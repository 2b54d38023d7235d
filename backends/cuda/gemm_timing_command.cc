// `scratchsim_cuda gemm-timing`.
#include "backends/cuda/gemm_timing_command.h"

#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/cuda/kernel_case.h"
#include "backends/cuda/measure.h"
#include "backends/cuda/probe.h"
#include "sim/json_text.h"

namespace scratchsim::cuda {
namespace {

struct Shape {
  int64_t m, n, k;
};

bool ParseShapes(const std::string& text, std::vector<Shape>* shapes) {
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<std::string> dims = absl::StrSplit(part, 'x');
    Shape s;
    if (dims.size() != 3 || !absl::SimpleAtoi(dims[0], &s.m) || !absl::SimpleAtoi(dims[1], &s.n) ||
        !absl::SimpleAtoi(dims[2], &s.k) || s.m <= 0 || s.n <= 0 || s.k <= 0) {
      return false;
    }
    shapes->push_back(s);
  }
  return !shapes->empty();
}

}  // namespace

int RunGemmTimingCommand(int argc, char** argv) {
  std::vector<Shape> shapes;
  std::string out_path;
  int64_t stages_lo = 2, stages_hi = 4, launches = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--shapes" && value(&v)) {
      if (!ParseShapes(v, &shapes)) {
        std::cerr << "error: gemm-timing: --shapes '" << v << "': expected MxNxK[,MxNxK...] of positive integers\n";
        return 2;
      }
    } else if (arg == "--out" && value(&v)) {
      out_path = v;
    } else if (arg == "--stages" && value(&v)) {
      std::vector<std::string> range = absl::StrSplit(v, ':');
      if (range.size() != 2 || !absl::SimpleAtoi(range[0], &stages_lo) || !absl::SimpleAtoi(range[1], &stages_hi) ||
          stages_lo < 1 || stages_hi < stages_lo || stages_hi > 64) {
        std::cerr << "error: gemm-timing: --stages '" << v << "': expected LO:HI with 1 <= LO <= HI <= 64\n";
        return 2;
      }
    } else if (arg == "--launches" && value(&v)) {
      if (!absl::SimpleAtoi(v, &launches) || launches < 1 || launches > 1000) {
        std::cerr << "error: gemm-timing: --launches '" << v << "': expected 1..1000\n";
        return 2;
      }
    } else {
      std::cerr << "error: gemm-timing: unknown or incomplete flag '" << arg
                << "' (usage: --shapes MxNxK[,...] --out FILE.json [--stages LO:HI] [--launches N])\n";
      return 2;
    }
  }
  if (shapes.empty() || out_path.empty()) {
    std::cerr << "error: gemm-timing needs --shapes and --out\n";
    return 2;
  }
  if (!DevicePresent()) {
    std::cerr << "error: gemm-timing needs a CUDA device and none is present\n";
    return 3;
  }
  absl::StatusOr<std::string> device = DescribeDevice(0);
  MeasureOptions options;
  options.timed_launches = static_cast<int>(launches);
  std::vector<std::string> timings, compiled;
  const char* kDtypeNames[] = {"f32", "f16"};
  for (const GemmTile& tile : GemmTimingTiles()) {
    for (int64_t stages = stages_lo; stages <= stages_hi; ++stages) {
      const std::string config = absl::StrCat("{\"BLOCK_M\": ", tile.bm, ", \"BLOCK_N\": ", tile.bn, ", \"BLOCK_K\": ",
                                              tile.bk, ", \"NUM_STAGES\": ", stages, ", \"NUM_WARPS\": ", tile.warps, "}");
      bool first_shape = true;
      for (const Shape& s : shapes) {
        ParamMap params = {{"DTYPE", tile.dtype}, {"BLOCK_M", tile.bm}, {"BLOCK_N", tile.bn},
                           {"BLOCK_K", tile.bk},  {"NUM_WARPS", tile.warps}, {"NUM_STAGES", stages},
                           {"M", s.m},            {"N", s.n},           {"K", s.k}};
        std::string error;
        std::unique_ptr<KernelCase> kernel = MakeGemmTimingCase(params, &error);
        if (kernel == nullptr) {
          std::cerr << "skip: " << error << "\n";
          continue;
        }
        absl::StatusOr<Measurement> m = Measure(*kernel, options);
        if (!m.ok()) {
          std::cerr << "error: gemm-timing: " << m.status().message() << "\n";
          return 4;
        }
        if (first_shape) {
          compiled.push_back(absl::StrCat(
              "\"", kDtypeNames[tile.dtype], ":", tile.bm, ",", tile.bn, ",", tile.bk, ",", stages, ",", tile.warps,
              "\": {\"dtype\": \"", kDtypeNames[tile.dtype], "\", \"config\": ", config, ", \"status\": ",
              JsonString(m->launched ? "ok" : m->launch_error), ", \"instance\": ", JsonString(m->instance),
              ", \"n_regs\": ", m->registers, ", \"n_spills\": ", m->local_bytes, ", \"shared\": ",
              m->static_shared_bytes + m->dynamic_shared_bytes, "}"));
          first_shape = false;
        }
        if (!m->launched) continue;
        timings.push_back(absl::StrCat("{\"dtype\": \"", kDtypeNames[tile.dtype], "\", \"M\": ", s.m, ", \"N\": ", s.n,
                                       ", \"K\": ", s.k, ", \"config\": ", config, ", \"ms\": ", m->time_ms,
                                       ", \"correctness\": ", JsonString(m->correctness),
                                       ", \"blocks_per_sm\": ", m->blocks_per_sm, "}"));
        std::cerr << m->instance << " stages " << stages << " " << s.m << "x" << s.n << "x" << s.k << ": "
                  << m->time_ms << " ms " << m->correctness << "\n";
      }
    }
  }
  std::vector<std::string> shape_text;
  for (const Shape& s : shapes) shape_text.push_back(absl::StrCat("[", s.m, ", ", s.n, ", ", s.k, "]"));
  std::ofstream out(out_path);
  out << "{\"date\": " << JsonString(absl::FormatTime(absl::Now(), absl::UTCTimeZone())) << ",\n \"device\": "
      << JsonString(device.ok() ? *device : std::string(device.status().message()))
      << ",\n \"kernel\": \"backends/cuda/gemm_kernels.cu TiledGemmKernel (models/graphs/gemm.pbtxt)\""
      << ",\n \"shapes\": [" << absl::StrJoin(shape_text, ", ") << "],\n \"compiled\": {"
      << absl::StrJoin(compiled, ",\n  ") << "},\n \"timings\": [\n  " << absl::StrJoin(timings, ",\n  ")
      << "]}\n";
  if (!out) {
    std::cerr << "error: gemm-timing: cannot write " << out_path << "\n";
    return 2;
  }
  return 0;
}

}  // namespace scratchsim::cuda
