// `simulate validate` and `simulate probe`.
#include "backends/cuda/validate_command.h"

#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "backends/cuda/kernel_registry.h"
#include "backends/cuda/measure.h"
#include "backends/cuda/memory_bench.h"
#include "backends/cuda/probe.h"
#include "backends/cuda/validate.h"
#include "sim/device.h"
#include "sim/flags.h"
#include "sim/graph.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

namespace scratchsim::cuda {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitNoDevice = 3;

constexpr char kValidateUsage[] = R"(usage: simulate validate --device DEV (--graph FILE [--sweep P=LO..HI|P=V1,V2,...] [--opt-in|--no-opt-in])...
                         [--plan FILE] [--replay CSV] [--csv FILE] [--json FILE] [--quiet]
  Predicts each configuration, then compiles and launches the matching CUDA kernel on the GPU and
  compares shared memory, registers, blocks per SM and the launch verdict. A sweep takes
  `simulate plan --param`'s values: P=LO..HI, P=LO..HI:pow2, P=LO..HI:step=S, P=V1,V2,...
  --replay CSV predicts the configurations of an earlier run again (no GPU needed).
Exit codes: 0 every prediction matches, 1 a mismatch, 2 bad input, 3 no GPU.
)";

constexpr char kProbeUsage[] = R"(usage: simulate probe [--out FILE] [--compare DEV] [--device-index N] [--measure-memory]
  Reads the live GPU's attributes into a DeviceModel textproto; --measure-memory adds measured
  L2/DRAM latency and bandwidth; --compare DEV lists where a shipped model differs.
Exit codes: 0 done (and no difference), 1 differences, 2 bad input, 3 no GPU.
)";

struct ValidateFlags {
  std::string device = "h100";
  std::vector<ValidateJob> jobs;
  std::string csv_path, json_path, replay_path;
  bool quiet = false;
};

// Parses job flags (--graph, --sweep, --no-opt-in, --opt-in) from `args` into `jobs`;
// other flags go to `rest`.
absl::Status ParseJobArgs(const std::vector<std::string>& args, const std::string& origin,
                          std::vector<ValidateJob>* jobs, std::vector<std::string>* rest) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](const char* flag) -> absl::StatusOr<std::string> {
      std::string prefix = absl::StrCat(flag, "=");
      if (absl::StartsWith(arg, prefix)) return arg.substr(prefix.size());
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", flag, " needs a value"));
      return args[++i];
    };
    if (arg == "--graph" || absl::StartsWith(arg, "--graph=")) {
      ASSIGN_OR_RETURN(std::string path, value("--graph"));
      jobs->push_back(ValidateJob{path, {}, std::nullopt});
    } else if (arg == "--sweep" || absl::StartsWith(arg, "--sweep=")) {
      ASSIGN_OR_RETURN(std::string sweep, value("--sweep"));
      if (jobs->empty()) return absl::InvalidArgumentError(absl::StrCat(origin, ": --sweep before any --graph"));
      jobs->back().sweeps.push_back(sweep);
    } else if (arg == "--no-opt-in" || arg == "--opt-in") {
      if (jobs->empty()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", arg, " before any --graph"));
      jobs->back().opt_in = arg == "--opt-in";
    } else {
      rest->push_back(arg);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ValidateFlags> ParseValidateFlags(const std::vector<std::string>& args) {
  ValidateFlags flags;
  std::vector<std::string> rest;
  RETURN_IF_ERROR(ParseJobArgs(args, "validate", &flags.jobs, &rest));
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    auto value = [&](const char* flag, std::string* out) -> absl::Status {
      std::string prefix = absl::StrCat(flag, "=");
      if (absl::StartsWith(arg, prefix)) {
        *out = arg.substr(prefix.size());
      } else if (i + 1 < rest.size()) {
        *out = rest[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("validate: ", flag, " needs a value"));
      }
      return absl::OkStatus();
    };
    auto is = [&](const char* flag) { return arg == flag || absl::StartsWith(arg, absl::StrCat(flag, "=")); };
    if (is("--device")) {
      RETURN_IF_ERROR(value("--device", &flags.device));
    } else if (is("--csv")) {
      RETURN_IF_ERROR(value("--csv", &flags.csv_path));
    } else if (is("--json")) {
      RETURN_IF_ERROR(value("--json", &flags.json_path));
    } else if (is("--replay")) {
      RETURN_IF_ERROR(value("--replay", &flags.replay_path));
    } else if (arg == "--quiet") {
      flags.quiet = true;
    } else if (is("--plan")) {
      std::string plan_path;
      RETURN_IF_ERROR(value("--plan", &plan_path));
      ASSIGN_OR_RETURN(std::string plan, ReadFileToString(plan_path));
      int line_number = 0;
      for (absl::string_view line : absl::StrSplit(plan, '\n')) {
        ++line_number;
        line = absl::StripAsciiWhitespace(line);
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
        std::vector<std::string> unknown;
        std::string origin = absl::StrCat(plan_path, ":", line_number);
        size_t before = flags.jobs.size();
        RETURN_IF_ERROR(ParseJobArgs(words, origin, &flags.jobs, &unknown));
        if (!unknown.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(origin, ": unknown word '", unknown[0], "'"));
        }
        if (flags.jobs.size() != before + 1) {
          return absl::InvalidArgumentError(absl::StrCat(origin, ": each line names exactly one --graph"));
        }
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("validate: unknown flag '", arg, "'"));
    }
  }
  if (flags.jobs.empty() && flags.replay_path.empty()) {
    return absl::InvalidArgumentError("validate: give --graph FILE (with --sweep), --plan FILE or --replay CSV");
  }
  return flags;
}

std::string Today() {
  std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d", std::gmtime(&now));
  return buffer;
}

struct LoadedGraph {
  KernelGraph graph;
};

absl::StatusOr<const KernelGraph*> CachedGraph(std::map<std::string, LoadedGraph>* cache,
                                               const std::string& path) {
  auto it = cache->find(path);
  if (it == cache->end()) {
    ASSIGN_OR_RETURN(KernelGraph graph, LoadGraph(path));
    it = cache->emplace(path, LoadedGraph{std::move(graph)}).first;
  }
  return &it->second.graph;
}

// Predicts `row` (graph path in row.graph) twice: from the graph alone, and with the
// compiler's register count in place of the graph's estimate.
absl::Status PredictRow(const KernelGraph& graph, const DeviceModel& device, std::optional<bool> opt_in,
                        ValidationRow& row) {
  ASSIGN_OR_RETURN(row.predicted, Predict(graph, row.graph, device, row.overrides, opt_in, std::nullopt));
  ASSIGN_OR_RETURN(Prediction with_compiled,
                   Predict(graph, row.graph, device, row.overrides, opt_in, row.measured.registers));
  row.predicted.blocks_per_sm_compiled_registers = with_compiled.blocks_per_sm;
  row.predicted.launches_compiled_registers = with_compiled.launches;
  CompareRow(row);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ValidationRow>> RunJobs(const ValidateFlags& flags, const DeviceModel& device,
                                                   bool* harness_failed) {
  std::map<std::string, LoadedGraph> cache;
  std::vector<ValidationRow> rows;
  for (const ValidateJob& job : flags.jobs) {
    ASSIGN_OR_RETURN(const KernelGraph* graph, CachedGraph(&cache, job.graph_path));
    RETURN_IF_ERROR(FindCaseFactory(graph->name()).status());
    ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> configs, ExpandSweeps(job.sweeps));
    for (const std::vector<std::string>& overrides : configs) {
      ValidationRow row;
      row.graph = job.graph_path;
      row.overrides = overrides;
      // The graph's own prediction first: it binds every parameter the kernel needs.
      ASSIGN_OR_RETURN(row.predicted, Predict(*graph, row.graph, device, overrides, job.opt_in, std::nullopt));
      ASSIGN_OR_RETURN(std::unique_ptr<KernelCase> kernel, MakeCase(graph->name(), row.predicted.params));
      MeasureOptions options;
      options.opt_in = row.predicted.opt_in;
      absl::StatusOr<Measurement> measured = Measure(*kernel, options);
      if (!measured.ok()) {
        *harness_failed = true;
        return absl::FailedPreconditionError(absl::StrCat(job.graph_path, " ", absl::StrJoin(overrides, " "),
                                                          ": ", measured.status().message()));
      }
      row.measured = *std::move(measured);
      RETURN_IF_ERROR(PredictRow(*graph, device, job.opt_in, row));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

absl::StatusOr<std::vector<ValidationRow>> Replay(const ValidateFlags& flags, const DeviceModel& device) {
  ASSIGN_OR_RETURN(std::string contents, ReadFileToString(flags.replay_path));
  ASSIGN_OR_RETURN(std::vector<ValidationRow> rows, ParseMeasuredCsv(contents, flags.replay_path));
  std::map<std::string, LoadedGraph> cache;
  for (ValidationRow& row : rows) {
    ASSIGN_OR_RETURN(const KernelGraph* graph, CachedGraph(&cache, row.graph));
    RETURN_IF_ERROR(PredictRow(*graph, device, row.predicted.opt_in, row));
  }
  return rows;
}

// Sizes of the memory measurements: the L2 chase and stream fit the 50 MiB L2 of an H100
// (with room for the rest of the working set), the DRAM ones are far beyond any L2.
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kChaseStrideBytes = 128;  // one L2 line per node
constexpr int64_t kL2ChaseBytes = 4 * kMiB;
constexpr int64_t kDramChaseBytes = 1024 * kMiB;
constexpr int64_t kL2StreamBytes = 16 * kMiB;
constexpr int64_t kDramStreamBytes = 2048 * kMiB;

std::string Footprint(int64_t bytes) {
  if (bytes >= 1024 * kMiB) return absl::StrCat(bytes / (1024 * kMiB), " GiB");
  return bytes >= kMiB ? absl::StrCat(bytes / kMiB, " MiB") : absl::StrCat(bytes / 1024, " KiB");
}

// Measures latency and bandwidth (memory_bench.h), writes the measured fields into
// `probed` and returns the table `probe --measure-memory` prints. `shipped` (may be null)
// supplies the model column.
absl::StatusOr<std::string> MeasureMemory(int ordinal, const DeviceModel* shipped, DeviceModel* probed) {
  ASSIGN_OR_RETURN(LatencyResult shared, MeasureSharedLatency(ordinal));
  ASSIGN_OR_RETURN(LatencyResult l2, MeasureLoadLatency(ordinal, kL2ChaseBytes, kChaseStrideBytes));
  ASSIGN_OR_RETURN(LatencyResult dram_paged, MeasureLoadLatency(ordinal, kDramChaseBytes, kChaseStrideBytes,
                                                                ChaseOrder::kRandomWithinPages));
  ASSIGN_OR_RETURN(LatencyResult dram_random, MeasureLoadLatency(ordinal, kDramChaseBytes, kChaseStrideBytes));
  ASSIGN_OR_RETURN(BandwidthResult l2_stream, MeasureReadBandwidth(ordinal, kL2StreamBytes));
  ASSIGN_OR_RETURN(BandwidthResult dram_stream, MeasureReadBandwidth(ordinal, kDramStreamBytes));

  Performance* performance = probed->mutable_performance();
  performance->set_smem_latency_ns(shared.median_ns);
  performance->set_l2_latency_ns(l2.median_ns);
  // Tiles are contiguous: their loads hit the TLB, so the page-local chase is the DRAM latency.
  performance->set_dram_latency_ns(dram_paged.median_ns);
  performance->set_l2_bandwidth_gbps(l2_stream.gbps);
  probed->add_sources(absl::StrFormat(
      "measured by `simulate probe --measure-memory` on %s: smem_latency_ns (ld.shared chase, 4 KiB ring), "
      "l2_latency_ns (%s chase, %s, %d B lines), "
      "dram_latency_ns (%s chase, %s), l2_bandwidth_gbps (ld.global.cg.v4 stream, %s; a lower bound: "
      "cp.async/TMA tile loads reached more on the H100); "
      "memory_bandwidth_gbps stays the clock-derived figure (measured stream %s: %.0f GB/s)",
      Today(), ChaseOrderName(l2.order), Footprint(kL2ChaseBytes), kChaseStrideBytes,
      ChaseOrderName(dram_paged.order), Footprint(kDramChaseBytes), Footprint(kL2StreamBytes),
      Footprint(kDramStreamBytes), dram_stream.gbps));

  const Performance* model = shipped != nullptr ? &shipped->performance() : nullptr;
  auto model_value = [&](const char* field, double value) {
    if (model == nullptr) return std::string("-");
    return absl::StrFormat("%s %g", field, value);
  };
  std::string table = absl::StrFormat("%-44s %9s %8s %8s %9s  %s\n", "memory measurement", "footprint", "cycles",
                                      "ns", "GB/s",
                                      shipped != nullptr ? absl::StrCat("model '", shipped->name(), "'") : "model");
  auto latency_row = [&](const std::string& what, const LatencyResult& r, const std::string& model_text) {
    absl::StrAppendFormat(&table, "%-44s %9s %8.1f %8.1f %9s  %s\n", what, Footprint(r.footprint_bytes),
                          r.median_cycles, r.median_ns, "-", model_text);
  };
  auto bandwidth_row = [&](const std::string& what, const BandwidthResult& r, const std::string& model_text) {
    absl::StrAppendFormat(&table, "%-44s %9s %8s %8s %9.0f  %s\n", what, Footprint(r.footprint_bytes), "-", "-",
                          r.gbps, model_text);
  };
  latency_row("shared-memory latency (ld.shared chase)", shared,
              model_value("smem_latency_ns", model != nullptr ? model->smem_latency_ns() : 0));
  latency_row("L2 hit latency (random chase)", l2,
              model_value("l2_latency_ns", model != nullptr ? model->l2_latency_ns() : 0));
  latency_row("DRAM latency (random within 2 MiB pages)", dram_paged,
              model_value("dram_latency_ns", model != nullptr ? model->dram_latency_ns() : 0));
  latency_row("DRAM latency (random over all pages, TLB)", dram_random, "(not in the model)");
  bandwidth_row("L2 read bandwidth (ld.global.cg.v4)", l2_stream,
                model_value("l2_bandwidth_gbps", model != nullptr ? model->l2_bandwidth_gbps() : 0));
  bandwidth_row("DRAM read bandwidth (ld.global.cg.v4)", dram_stream,
                model_value("memory_bandwidth_gbps", model != nullptr ? model->memory_bandwidth_gbps() : 0));
  absl::StrAppendFormat(&table, "probed memory_bandwidth_gbps (from memory clock and bus width, kept): %.1f\n",
                        performance->memory_bandwidth_gbps());
  absl::StrAppendFormat(&table,
                        "chase ld.shared 4 KiB ring: %d warm + %d timed loads in groups of %d, per load p10 %.1f / "
                        "median %.1f / p90 %.1f cycles, SM clock %.0f MHz\n",
                        shared.warm_loads, shared.timed_loads, shared.group_loads, shared.p10_cycles,
                        shared.median_cycles, shared.p90_cycles, shared.sm_clock_mhz);
  for (const LatencyResult* r : {&l2, &dram_paged, &dram_random}) {
    absl::StrAppendFormat(&table,
                          "chase %s %s: %d warm + %d timed loads in groups of %d, per load p10 %.1f / median %.1f "
                          "/ p90 %.1f cycles, SM clock %.0f MHz\n",
                          ChaseOrderName(r->order), Footprint(r->footprint_bytes), r->warm_loads, r->timed_loads,
                          r->group_loads, r->p10_cycles, r->median_cycles, r->p90_cycles, r->sm_clock_mhz);
  }
  for (const BandwidthResult* r : {&l2_stream, &dram_stream}) {
    absl::StrAppendFormat(&table,
                          "stream %s: best of %d launch shapes %d x %d threads, median of %d trials %.0f GB/s "
                          "(best trial %.0f), %d bytes in %.1f ms per trial\n",
                          Footprint(r->footprint_bytes), r->shapes_tried, r->blocks, r->threads, r->trials, r->gbps,
                          r->best_trial_gbps, r->bytes_per_trial, r->trial_ms);
  }
  return table;
}

}  // namespace

int RunValidateCommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (AsksForHelp(args)) {
    std::cout << kValidateUsage;
    return kExitOk;
  }
  absl::StatusOr<ValidateFlags> flags = ParseValidateFlags(args);
  if (!flags.ok()) {
    std::cerr << "error: " << flags.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<DeviceModel> device = LoadDevice(flags->device);
  if (!device.ok()) {
    std::cerr << "error: " << device.status().message() << "\n";
    return kExitBadInput;
  }
  std::string description;
  std::vector<ValidationRow> rows;
  if (!flags->replay_path.empty()) {
    absl::StatusOr<std::vector<ValidationRow>> replayed = Replay(*flags, *device);
    if (!replayed.ok()) {
      std::cerr << "error: " << replayed.status().message() << "\n";
      return kExitBadInput;
    }
    rows = *std::move(replayed);
    description = absl::StrCat("replay of ", flags->replay_path, " against model '", device->name(), "'");
  } else {
    if (!DevicePresent()) {
      std::cerr << "error: validate needs a CUDA device and none is present\n";
      return kExitNoDevice;
    }
    absl::StatusOr<std::string> described = DescribeDevice(0);
    description = absl::StrCat(described.ok() ? *described : "unknown device", ", ", Today(), ", model '",
                               device->name(), "'");
    bool harness_failed = false;
    absl::StatusOr<std::vector<ValidationRow>> measured = RunJobs(*flags, *device, &harness_failed);
    if (!measured.ok()) {
      std::cerr << "error: " << measured.status().message() << "\n";
      return harness_failed ? kExitNoDevice : kExitBadInput;
    }
    rows = *std::move(measured);
  }
  ValidationSummary summary = Summarize(rows);
  if (!flags->quiet) std::cout << RenderTable(rows);
  std::cout << "device: " << description << "\n" << SummaryLine(summary) << "\n";
  for (const auto& [path, contents] : {std::make_pair(flags->csv_path, RenderCsv(rows)),
                                       std::make_pair(flags->json_path, RenderJson(rows, summary, description))}) {
    if (path.empty()) continue;
    absl::Status written = WriteStringToFile(path, contents);
    if (!written.ok()) {
      std::cerr << "error: " << written.message() << "\n";
      return kExitBadInput;
    }
  }
  // Shared bytes from the graph alone; launch and occupancy given the registers ptxas chose
  // (the graph's register figure is an estimate, reported separately).
  bool all = summary.smem_exact == summary.configs &&
             summary.launch_compiled_match == summary.configs &&
             summary.blocks_compiled_match == summary.configs;
  return all ? kExitOk : kExitMismatch;
}

int RunProbeCommand(int argc, char** argv) {
  if (AsksForHelp(std::vector<std::string>(argv + 1, argv + argc))) {
    std::cout << kProbeUsage;
    return kExitOk;
  }
  std::string out_path, compare;
  int ordinal = 0;
  bool measure_memory = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string* out) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        *out = arg.substr(eq + 1);
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--measure-memory") {
      measure_memory = true;
    } else if (absl::StartsWith(arg, "--out")) {
      if (!value(&out_path)) {
        std::cerr << "error: --out needs a file\n";
        return kExitBadInput;
      }
    } else if (absl::StartsWith(arg, "--compare")) {
      if (!value(&compare)) {
        std::cerr << "error: --compare needs a device name or path\n";
        return kExitBadInput;
      }
    } else if (absl::StartsWith(arg, "--device-index")) {
      if (!value(&text) || !absl::SimpleAtoi(text, &ordinal) || ordinal < 0) {
        std::cerr << "error: --device-index needs a non-negative integer\n";
        return kExitBadInput;
      }
    } else {
      std::cerr << "error: probe: unknown flag '" << arg << "'\n";
      return kExitBadInput;
    }
  }
  if (!DevicePresent()) {
    std::cerr << "error: probe needs a CUDA device and none is present\n";
    return kExitNoDevice;
  }
  absl::StatusOr<DeviceModel> probed = ProbeDevice(ordinal);
  if (!probed.ok()) {
    std::cerr << "error: " << probed.status().message() << "\n";
    return kExitNoDevice;
  }
  // With --measure-memory the model is read before the GPU work (its values fill the table's
  // model column), so a bad --compare fails before seconds of measuring.
  std::optional<DeviceModel> shipped;
  auto load_shipped = [&]() -> bool {
    absl::StatusOr<DeviceModel> loaded = LoadDevice(compare);
    if (!loaded.ok()) {
      std::cerr << "error: " << loaded.status().message() << "\n";
      return false;
    }
    shipped = *std::move(loaded);
    return true;
  };
  if (measure_memory && !compare.empty() && !load_shipped()) return kExitBadInput;
  std::string measured_table;
  if (measure_memory) {
    absl::StatusOr<std::string> table = MeasureMemory(ordinal, shipped ? &*shipped : nullptr, &*probed);
    if (!table.ok()) {
      std::cerr << "error: --measure-memory: " << table.status().message() << "\n";
      return kExitNoDevice;
    }
    measured_table = *std::move(table);
    std::cerr << measured_table;
  }
  absl::StatusOr<std::string> text = SerializeProto(*probed, ProtoFormat::kText);
  if (!text.ok()) {
    std::cerr << "error: " << text.status().message() << "\n";
    return kExitBadInput;
  }
  std::string contents = absl::StrCat("# scratchsim.DeviceModel probed from the live device on ", Today(), "\n");
  for (absl::string_view line : absl::StrSplit(measured_table, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&contents, "# ", line, "\n");
  }
  absl::StrAppend(&contents, *text);
  if (out_path.empty()) {
    std::cout << contents;
  } else {
    absl::Status written = WriteStringToFile(out_path, contents);
    if (!written.ok()) {
      std::cerr << "error: " << written.message() << "\n";
      return kExitBadInput;
    }
  }
  if (compare.empty()) return kExitOk;
  if (!shipped && !load_shipped()) return kExitBadInput;
  std::vector<std::string> diffs = DiffAgainstProbe(*probed, *shipped);
  for (const std::string& diff : diffs) std::cerr << "differs: " << diff << "\n";
  std::cerr << "probe vs '" << shipped->name() << "': " << (diffs.empty() ? "agree" : "DISAGREE") << "\n";
  return diffs.empty() ? kExitOk : kExitMismatch;
}

}  // namespace scratchsim::cuda
