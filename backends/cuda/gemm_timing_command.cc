// `scratchsim_cuda gemm-timing`.
#include "backends/cuda/gemm_timing_command.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/cuda/kernel_case.h"
#include "backends/cuda/measure.h"
#include "backends/cuda/probe.h"
#include "sim/flags.h"
#include "sim/json_text.h"
#include "sim/status_macros.h"

namespace scratchsim::cuda {
namespace {

constexpr char kGemmTimingUsage[] = R"(usage: simulate gemm-timing --shapes MxNxK[,...] --out FILE.json [--stages LO:HI] [--launches N] [--blocks-per-sm C,...] [--split-k S,...]
  Times the CUDA backend's GEMM over its tile configurations (the planner's calibration data);
  --split-k times each one again at every SPLIT_K given (K shares added into C).
Exit codes: 0 done, 2 bad input, 3 no GPU, 4 a harness failure.
)";

struct Shape {
  int64_t m, n, k;
};

struct GemmTimingFlags {
  std::vector<Shape> shapes;
  std::string out_path;
  int64_t stages_lo = 2, stages_hi = 4, launches = 10;
  // --blocks-per-sm: time each configuration with at most this many blocks per SM (unused
  // dynamic shared memory keeps more out); empty: as the kernel is.
  std::vector<int64_t> blocks_caps;
  // --split-k: the K shares (SPLIT_K) each configuration is timed at; 1 alone, the plain kernel,
  // unless given.
  std::vector<int64_t> splits;
};

// The integers of every `--NAME A,B,...` given, each in [1, max].
absl::Status ParseCountList(const ParsedFlags& parsed, const std::string& name, int64_t max,
                            std::vector<int64_t>* out) {
  for (const std::string& text : parsed.GetList(name)) {
    for (absl::string_view part : absl::StrSplit(text, ',')) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(part, &value) || value < 1 || value > max) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " '", text, "': expected a list of integers in [1, ", max, "]"));
      }
      out->push_back(value);
    }
  }
  return absl::OkStatus();
}

// A split must leave every K share a tile at every compiled BLOCK_K: a shape with fewer K tiles
// at the largest BLOCK_K than a split is refused before any GPU time is spent.
absl::Status CheckSplitsFitShapes(const GemmTimingFlags& flags) {
  int64_t block_k = 1;
  for (const GemmTile& tile : GemmTimingTiles()) block_k = std::max<int64_t>(block_k, tile.bk);
  for (const Shape& s : flags.shapes) {
    for (const int64_t split : flags.splits) {
      if (split > s.k / block_k) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--split-k ", split, ": shape ", s.m, "x", s.n, "x", s.k, " has ", s.k / block_k, " K tiles at BLOCK_K ",
            block_k, ", fewer than the ", split, " K shares (each needs at least one)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ParseShapes(const std::string& text, std::vector<Shape>* shapes) {
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<std::string> dims = absl::StrSplit(part, 'x');
    Shape s;
    if (dims.size() != 3 || !absl::SimpleAtoi(dims[0], &s.m) || !absl::SimpleAtoi(dims[1], &s.n) ||
        !absl::SimpleAtoi(dims[2], &s.k) || s.m <= 0 || s.n <= 0 || s.k <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shapes '", text, "': expected MxNxK[,MxNxK...] of positive integers"));
    }
    shapes->push_back(s);
  }
  return absl::OkStatus();
}

absl::StatusOr<GemmTimingFlags> ParseGemmTimingFlags(const std::vector<std::string>& args) {
  FlagSpec spec;
  spec.values = {"out", "stages", "launches"};
  spec.outputs = {"out"};
  spec.lists = {"shapes", "blocks-per-sm", "split-k"};
  ASSIGN_OR_RETURN(ParsedFlags parsed, ParsedFlags::Parse(spec, args));
  if (!parsed.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", parsed.positional().front(), "'"));
  }
  GemmTimingFlags flags;
  for (const std::string& text : parsed.GetList("shapes")) RETURN_IF_ERROR(ParseShapes(text, &flags.shapes));
  flags.out_path = parsed.Get("out");
  if (flags.shapes.empty() || flags.out_path.empty()) return absl::InvalidArgumentError("needs --shapes and --out");
  if (parsed.Has("stages")) {
    const std::string v = parsed.Get("stages");
    std::vector<std::string> range = absl::StrSplit(v, ':');
    if (range.size() != 2 || !absl::SimpleAtoi(range[0], &flags.stages_lo) ||
        !absl::SimpleAtoi(range[1], &flags.stages_hi) || flags.stages_lo < 1 || flags.stages_hi < flags.stages_lo ||
        flags.stages_hi > 64) {
      return absl::InvalidArgumentError(absl::StrCat("--stages '", v, "': expected LO:HI with 1 <= LO <= HI <= 64"));
    }
  }
  RETURN_IF_ERROR(ParseCountList(parsed, "blocks-per-sm", 64, &flags.blocks_caps));
  RETURN_IF_ERROR(ParseCountList(parsed, "split-k", kMaxSplitK, &flags.splits));
  if (flags.splits.empty()) flags.splits.push_back(1);
  RETURN_IF_ERROR(CheckSplitsFitShapes(flags));
  ASSIGN_OR_RETURN(flags.launches, parsed.GetInt("launches", 10));
  if (flags.launches < 1 || flags.launches > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("--launches ", flags.launches, ": expected 1..1000"));
  }
  return flags;
}

// A shape at a cap on blocks per SM (0: no cap, the kernel as it is).
struct Run {
  size_t shape;
  int64_t cap;
};

// What the JSON lists: a "compiled" entry per configuration, a "timings" entry per run of it.
struct TimingOutput {
  std::vector<std::string> timings, compiled;
};

constexpr const char* kDtypeNames[] = {"f32", "f16"};

// Times one configuration (a tile, its pipeline depth and K shares) at every run. Errors are
// harness failures (exit 4); a configuration that cannot be made for a run is skipped with a note.
absl::Status TimeConfiguration(const GemmTile& tile, int64_t stages, int64_t split, const std::vector<Shape>& shapes,
                               const std::vector<Run>& runs, const MemorySpace& smem, const MeasureOptions& options,
                               TimingOutput* out) {
  const std::string config =
      absl::StrCat("{\"BLOCK_M\": ", tile.bm, ", \"BLOCK_N\": ", tile.bn, ", \"BLOCK_K\": ", tile.bk,
                   ", \"NUM_STAGES\": ", stages, ", \"NUM_WARPS\": ", tile.warps, ", \"SPLIT_K\": ", split, "}");
  bool first_shape = true;
  // Once fewer blocks than the cap fit, higher caps change nothing: skip them for this shape.
  size_t saturated = shapes.size();
  for (const auto& [shape_index, cap] : runs) {
    if (saturated == shape_index) continue;
    const Shape& s = shapes[shape_index];
    ParamMap params = {{"DTYPE", tile.dtype}, {"BLOCK_M", tile.bm},       {"BLOCK_N", tile.bn},
                       {"BLOCK_K", tile.bk},  {"NUM_WARPS", tile.warps}, {"NUM_STAGES", stages},
                       {"SPLIT_K", split},    {"M", s.m},                {"N", s.n},
                       {"K", s.k}};
    std::string error;
    std::unique_ptr<KernelCase> kernel = MakeGemmTimingCase(params, &error);
    if (kernel == nullptr) {
      std::cerr << "skip: " << error << "\n";
      continue;
    }
    int64_t pad = 0;
    if (cap > 0) {
      // The most each of `cap` blocks may hold so that `cap` fit an SM's shared memory and
      // `cap` + 1 do not; the kernel's own bytes come out of it.
      // Allocations are whole 128-byte units: without the rounding a cap can run one block
      // fewer than asked (docs/validation/h100.md, "Occupancy caps").
      constexpr int64_t kUnit = 128;
      const int64_t per_block =
          std::min((smem.capacity_per_core_bytes() / cap - smem.reserved_per_block_bytes()) / kUnit * kUnit,
                   smem.per_block_optin_bytes());
      pad = per_block - kernel->dynamic_shared_bytes();
      if (pad < 0) continue;  // not even `cap` blocks fit
      params["SHARED_PAD"] = pad;
      kernel = MakeGemmTimingCase(params, &error);
      if (kernel == nullptr) {
        std::cerr << "skip: " << error << "\n";
        continue;
      }
    }
    ASSIGN_OR_RETURN(const Measurement m, Measure(*kernel, options));
    if (first_shape) {
      // Keyed as before split-K for one share; the split-K instance's own registers get their own key.
      out->compiled.push_back(absl::StrCat(
          "\"", kDtypeNames[tile.dtype], ":", tile.bm, ",", tile.bn, ",", tile.bk, ",", stages, ",", tile.warps,
          split > 1 ? absl::StrCat(",", split) : "", "\": {\"dtype\": \"", kDtypeNames[tile.dtype],
          "\", \"config\": ", config, ", \"status\": ", JsonString(m.launched ? "ok" : m.launch_error),
          ", \"instance\": ", JsonString(m.instance), ", \"n_regs\": ", m.registers, ", \"n_spills\": ", m.local_bytes,
          ", \"shared\": ", m.static_shared_bytes + m.dynamic_shared_bytes - pad, "}"));
      first_shape = false;
    }
    if (!m.launched) continue;
    if (cap > 0 && m.blocks_per_sm < cap) saturated = shape_index;
    out->timings.push_back(absl::StrCat("{\"dtype\": \"", kDtypeNames[tile.dtype], "\", \"M\": ", s.m, ", \"N\": ", s.n,
                                        ", \"K\": ", s.k, ", \"config\": ", config, ", \"ms\": ", m.time_ms,
                                        ", \"correctness\": ", JsonString(m.correctness),
                                        ", \"blocks_per_sm\": ", m.blocks_per_sm,
                                        cap > 0 ? absl::StrCat(", \"blocks_cap\": ", cap, ", \"shared_pad\": ", pad) : "",
                                        "}"));
    std::cerr << m.instance << " stages " << stages << " split " << split << " " << s.m << "x" << s.n << "x" << s.k
              << ": " << m.time_ms << " ms " << m.correctness << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

int RunGemmTimingCommand(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (AsksForHelp(args)) {
    std::cout << kGemmTimingUsage;
    return 0;
  }
  absl::StatusOr<GemmTimingFlags> flags = ParseGemmTimingFlags(args);
  if (!flags.ok()) {
    std::cerr << "error: gemm-timing: " << flags.status().message() << "\n" << kGemmTimingUsage;
    return 2;
  }
  const std::vector<Shape>& shapes = flags->shapes;
  if (!DevicePresent()) {
    std::cerr << "error: gemm-timing needs a CUDA device and none is present\n";
    return 3;
  }
  absl::StatusOr<std::string> device = DescribeDevice(0);
  absl::StatusOr<DeviceModel> probed = ProbeDevice(0);
  if (!probed.ok()) {
    std::cerr << "error: gemm-timing: " << probed.status().message() << "\n";
    return 4;
  }
  std::vector<Run> runs;  // every shape at every cap
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (flags->blocks_caps.empty()) runs.push_back({i, 0});
    for (const int64_t cap : flags->blocks_caps) runs.push_back({i, cap});
  }
  MeasureOptions options;
  options.timed_launches = static_cast<int>(flags->launches);
  TimingOutput output;
  for (const GemmTile& tile : GemmTimingTiles()) {
    for (int64_t stages = flags->stages_lo; stages <= flags->stages_hi; ++stages) {
      for (const int64_t split : flags->splits) {
        const absl::Status status = TimeConfiguration(tile, stages, split, shapes, runs, probed->memory_spaces(0),
                                                      options, &output);
        if (!status.ok()) {
          std::cerr << "error: gemm-timing: " << status.message() << "\n";
          return 4;
        }
      }
    }
  }
  std::vector<std::string> shape_text;
  for (const Shape& s : shapes) shape_text.push_back(absl::StrCat("[", s.m, ", ", s.n, ", ", s.k, "]"));
  std::ofstream out(flags->out_path);
  out << "{\"date\": " << JsonString(absl::FormatTime(absl::Now(), absl::UTCTimeZone())) << ",\n \"device\": "
      << JsonString(device.ok() ? *device : std::string(device.status().message()))
      << ",\n \"kernel\": \"backends/cuda/gemm_kernels.cu TiledGemmKernel (models/graphs/gemm.pbtxt)\""
      << ",\n \"shapes\": [" << absl::StrJoin(shape_text, ", ") << "],\n \"compiled\": {"
      << absl::StrJoin(output.compiled, ",\n  ") << "},\n \"timings\": [\n  " << absl::StrJoin(output.timings, ",\n  ")
      << "]}\n";
  if (!out) {
    std::cerr << "error: gemm-timing: cannot write " << flags->out_path << "\n";
    return 2;
  }
  return 0;
}

}  // namespace scratchsim::cuda
