#include "sim/driver/calibrate_command.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/device.h"
#include "sim/driver/cli.h"
#include "sim/driver/pictures.h"
#include "sim/flags.h"
#include "sim/graph.h"
#include "sim/pipeline.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr char kCalibrateUsage[] = R"(usage:
  simulate calibrate --device DEV --timings FILE [--timings FILE ...] [--kernel auto|triton|cuda_gemm|generic]
                     [--graph FILE] [--terms T1,T2,...|none] [--residuals [--residual-params P1,P2,...]]
                     [--objective rank|time] [--near-best F]
                     [--name NAME] [--out FILE] [--force]
      Fits the performance terms of device model DEV (the clock, shared-memory bandwidth and
      latency, L2 bandwidth, DRAM latency, the peak of each compute dtype: every term the
      planner's ranking uses for the graph, or those --terms names) so that its estimates match
      the times of the configurations within --near-best (default 1.5) of their row's best
      (--objective time, the default) or so that the planner ranks the timed configurations as
      measured (--objective rank: the expected slowdown of its softened top-1, with a small
      weight on the time error), and writes a calibration file: a device model that inherits DEV and
      sets the fitted terms, each with its source. `simulate plan --calibration FILE` (or
      --device FILE) ranks with it; without one the shipped model stands.
      --timings: the CUDA backend's gemm-timing JSON, sweep_triton_matmul.py's JSON, or any JSON
      with "timings": [{"dtype", "M", "N", "K", "config": {PARAM: VALUE}, "ms"}] (docs/planner.md).
      At most 65536 timings in all files, 65536 bytes of JSON each; sizes and configuration
      values whole numbers, "ms" from 1e-06 to 3.6e+06 (1 ns to an hour), one time per
      configuration of a dtype and shape (docs/reliability.md).
      --graph: the kernel's graph (default: models/graphs/triton_matmul.pbtxt for Triton sweeps,
      models/graphs/gemm.pbtxt for gemm-timing).
      --residuals: also learn each timed configuration's residual (measured / estimated, over its
      row's median, the median over the rows it was timed in; at least 2 rows) and write them as
      config_residuals: the planner multiplies that configuration's estimate by it on DEV and on
      every device that inherits DEV. --terms none learns the residuals alone. --residual-params
      keys them by those configuration parameters only (the others pooled: e.g. leave out
      NUM_STAGES where pipeline depths measure alike).
      A calibration that ranks its own timings worse than DEV does (a higher expected top-1
      slowdown), or sets a term beyond the figure DEV documents (a clock above its boost clock, a
      peak above its datasheet's, a bandwidth above its memory's), is not written; the message
      says what to try. --force writes it anyway.
Exit codes: 0 written, 2 bad input or usage, or a calibration refused (without --force).
)";

FlagSpec CalibrateFlags() {
  FlagSpec spec;
  spec.values = {"device", "kernel", "graph", "terms", "near-best", "name", "out", "max-input-mib", "objective",
                 "residual-params"};
  spec.lists = {"timings"};
  spec.switches = {"help", "residuals", "force"};
  spec.outputs = {"out"};
  return spec;
}

// The shipped graphs: beside the shipped device models (models/graphs next to models/devices).
std::string ShippedGraph(const std::string& name) {
  const std::filesystem::path devices = DeviceModelDirs().back();
  return (devices.parent_path() / "graphs" / name).string();
}

// A timing file, followed member by member: never parsed whole, so that its size bounds its
// memory (a million rows parsed as one Struct took 2 GB).
struct TimingFile {
  std::string text;
  std::string kernel, device, date;  // its "kernel", "device" and "date" strings, where given
  bool triton = false;               // it has a "triton" member (sweep_triton_matmul.py's)
  std::vector<std::pair<size_t, size_t>> rows;  // each element of "timings": [begin, end) in text
};

// A member's value as a string; "" where it is no string.
std::string JsonStringValue(absl::string_view value) {
  google::protobuf::Value parsed;
  if (!google::protobuf::util::JsonStringToMessage(std::string(value), &parsed).ok()) return "";
  return parsed.string_value();
}

absl::StatusOr<TimingFile> ReadTimingFile(const std::string& path) {
  TimingFile file;
  ASSIGN_OR_RETURN(file.text, ReadFileToString(path));
  // Before anything follows it: nesting bounded, a key given twice refused.
  RETURN_IF_ERROR(CheckJsonStructure(file.text, path, false));
  const absl::string_view text = file.text;
  bool has_timings = false;
  RETURN_IF_ERROR(ForEachJsonMember(text, path, [&](absl::string_view key, absl::string_view value) -> absl::Status {
    if (key == "triton") file.triton = true;
    if (key == "kernel") file.kernel = JsonStringValue(value);
    if (key == "device") file.device = JsonStringValue(value);
    if (key == "date") file.date = JsonStringValue(value);
    if (key != "timings" || value.empty() || value.front() != '[') return absl::OkStatus();
    has_timings = true;
    const size_t base = value.data() - text.data();
    return ForEachJsonElement(value, path, [&](size_t index, absl::string_view row) -> absl::Status {
      if (index >= static_cast<size_t>(kMaxTimingRows)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": field 'timings' has more than ", kMaxTimingRows,
                                                       " rows, the most one calibration reads (split the sweep)"));
      }
      if (row.size() > kMaxTimingRowBytes) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": timings[", index, "]: ", row.size(),
                                                       " bytes, more than the ", kMaxTimingRowBytes, " a row may have"));
      }
      const size_t begin = base + (row.data() - value.data());
      file.rows.emplace_back(begin, begin + row.size());
      return absl::OkStatus();
    });
  }));
  if (!has_timings) return absl::InvalidArgumentError(absl::StrCat(path, ": field 'timings' is missing or not a list"));
  return file;
}

// A whole number a timing gives (a configuration's value, a shape's extent): a JSON number with
// no fraction, from `least` to 2^53 (where JSON's doubles stop being exact) in magnitude.
absl::StatusOr<int64_t> WholeNumber(const google::protobuf::Value& v, const std::string& where, double least) {
  constexpr double kMost = 9007199254740992.0;  // 2^53
  if (!v.has_number_value()) return absl::InvalidArgumentError(absl::StrCat(where, ": is not a number"));
  const double d = v.number_value();
  if (!std::isfinite(d) || d != std::trunc(d) || d < least || std::fabs(d) > kMost) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", absl::StrFormat("%.17g", d), " is not a whole number from ",
                                                   absl::StrFormat("%.0f", least), " to 2^53"));
  }
  return static_cast<int64_t>(d);
}

bool IsParameterName(absl::string_view name) {
  return !name.empty() && !absl::ascii_isdigit(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// One row of a timing file as a sample; false (and no error) for a row that is skipped: not
// run, or an occupancy run's padded kernel. Every field the sample takes is checked, naming it.
absl::StatusOr<bool> ParseTimingRow(const google::protobuf::Struct& row, const std::string& where, TimingKernel kernel,
                                    CalibrationSample* sample) {
  const auto& t = row.fields();
  if (!t.contains("ms") || t.contains("blocks_cap")) return false;
  const google::protobuf::Value& ms = t.at("ms");
  if (!ms.has_number_value() || !(ms.number_value() >= kMinTimingMs && ms.number_value() <= kMaxTimingMs)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ".ms must be a time from ", absl::StrFormat("%g", kMinTimingMs), " to ",
        absl::StrFormat("%g", kMaxTimingMs), " ms (1 ns to an hour), got ",
        ms.has_number_value() ? absl::StrFormat("%g", ms.number_value()) : "no number"));
  }
  if (!t.contains("config") || !t.at("config").has_struct_value()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".config is missing"));
  }
  const auto& config = t.at("config").struct_value().fields();
  if (config.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".config is empty (a timing names the configuration it ran)"));
  }
  sample->measured_s = ms.number_value() * 1e-3;
  for (const auto& [name, v] : config) {
    if (!IsParameterName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".config: '", absl::CHexEscape(name.substr(0, 64)), "' is not a parameter name"));
    }
    ASSIGN_OR_RETURN(const int64_t value, WholeNumber(v, absl::StrCat(where, ".config.", name), -9007199254740992.0));
    sample->config_sets.push_back(absl::StrCat(name, "=", value));
  }
  // Sorted: the configuration is a set, whatever order the file gave it in.
  std::sort(sample->config_sets.begin(), sample->config_sets.end());
  std::string shape;
  for (const char* dim : {"M", "N", "K"}) {
    if (!t.contains(dim)) continue;
    ASSIGN_OR_RETURN(const int64_t extent, WholeNumber(t.at(dim), absl::StrCat(where, ".", dim), 1));
    sample->sets.push_back(absl::StrCat(dim, "=", extent));
    absl::StrAppend(&shape, shape.empty() ? "" : "x", extent);
  }
  if (t.contains("dtype") && !t.at("dtype").has_string_value()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".dtype: is not a string"));
  }
  const std::string dtype = t.contains("dtype") ? t.at("dtype").string_value() : "";
  if (kernel == TimingKernel::kTriton) {
    if (dtype != "f16" && dtype != "f32" && dtype != "bf16") {
      return absl::InvalidArgumentError(absl::StrCat(where, ".dtype '", absl::CHexEscape(dtype.substr(0, 64)),
                                                     "': a Triton sweep has f16, bf16 or f32"));
    }
    sample->config_sets.push_back(dtype == "f32" ? "ELT=4" : "ELT=2");
    sample->compute_dtype = dtype == "f32" ? "tf32" : dtype;  // tl.dot on f32 operands uses tf32
  } else if (kernel == TimingKernel::kCudaGemm) {
    const int code = dtype == "f32" ? 0 : dtype == "f16" ? 1 : dtype == "bf16" ? 2 : -1;
    if (code < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".dtype '", absl::CHexEscape(dtype.substr(0, 64)), "': expected f32, f16 or bf16"));
    }
    sample->config_sets.push_back(absl::StrCat("DTYPE=", code));
    // gemm-timing wrote no SPLIT_K before split-K: those timings ran the plain kernel, one K
    // share. Said here, every timing's residual key names the same parameters.
    if (!config.contains("SPLIT_K")) sample->config_sets.push_back("SPLIT_K=1");
  }
  // The configuration (its residual's key) and the shape make the parameters it binds.
  sample->sets.insert(sample->sets.end(), sample->config_sets.begin(), sample->config_sets.end());
  sample->row = absl::StrCat(dtype, " ", shape);
  return true;
}

}  // namespace

absl::StatusOr<TimingKernel> DetectTimingKernel(const std::string& path) {
  ASSIGN_OR_RETURN(const TimingFile file, ReadTimingFile(path));
  if (absl::StrContains(file.kernel, "TiledGemmKernel")) return TimingKernel::kCudaGemm;
  if (file.triton) return TimingKernel::kTriton;
  return TimingKernel::kGeneric;
}

absl::StatusOr<std::vector<CalibrationSample>> ReadTimingSamples(const std::string& path, TimingKernel kernel,
                                                                 std::string* provenance) {
  ASSIGN_OR_RETURN(const TimingFile file, ReadTimingFile(path));
  std::vector<CalibrationSample> samples;
  // A configuration timed twice in one row (dtype and shape) must have one time: by its row and
  // sorted configuration, the first row that gave it and its time.
  absl::flat_hash_map<std::string, std::pair<size_t, double>> timed;
  for (size_t index = 0; index < file.rows.size(); ++index) {
    const std::string where = absl::StrCat(path, ": timings[", index, "]");
    const auto [begin, end] = file.rows[index];
    google::protobuf::Value value;
    const auto status = google::protobuf::util::JsonStringToMessage(file.text.substr(begin, end - begin), &value);
    if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": not JSON: ", std::string(status.message())));
    if (!value.has_struct_value()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
    CalibrationSample sample;
    ASSIGN_OR_RETURN(const bool taken, ParseTimingRow(value.struct_value(), where, kernel, &sample));
    if (!taken) continue;
    const std::string key = absl::StrCat(sample.row, " ", absl::StrJoin(sample.config_sets, ","));
    const auto [it, first] = timed.try_emplace(key, index, sample.measured_s);
    if (!first && it->second.second != sample.measured_s) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the same dtype, shape and config as timings[%d] with another time (%g ms, not %g ms): conflicting "
          "duplicate rows",
          where, it->second.first, sample.measured_s * 1e3, it->second.second * 1e3));
    }
    sample.row = absl::StrCat(path, " ", sample.row);
    sample.origin = where;
    samples.push_back(std::move(sample));
  }
  if (provenance != nullptr) {
    *provenance = absl::StrCat(std::filesystem::path(path).filename().string(), " (",
                               file.device.empty() ? "device not recorded" : file.device, file.date.empty() ? "" : ", ",
                               file.date, ")");
  }
  return samples;
}

namespace {

// The ways out of a refused calibration that remain: the ranking objective (unless it was the
// one), the fitted terms without those set beyond their documented figure, the residuals alone.
std::string WhatToTry(const CalibrationProblems& problems, const CalibrationOptions& options,
                      const CalibrationResult& result) {
  std::vector<std::string> tries;
  if (problems.ranks_worse && options.objective != CalibrationObjective::kRank) {
    tries.push_back("--objective rank (it fits the ranking, not the times)");
  }
  std::vector<std::string> kept;
  for (const TermFit& t : result.terms) {
    if (absl::c_find(problems.beyond_documented, t.term) == problems.beyond_documented.end()) kept.push_back(t.term);
  }
  if (!problems.beyond_documented.empty() && !kept.empty()) {
    tries.push_back(absl::StrCat("--terms ", absl::StrJoin(kept, ","), " (the device model's ",
                                 absl::StrJoin(problems.beyond_documented, ", "), " kept)"));
  }
  tries.push_back("--terms none --residuals (the device's terms kept, each configuration's residual learned)");
  return absl::StrCat("Try ", absl::StrJoin(tries, ", or "));
}

// What the calibration did, for the person who ran it: the samples, each term before and after,
// the residuals, and the ranking and error before and after.
std::string Summary(const CompiledGraph& graph, const DeviceModel& device, const std::string& objective,
                    const CalibrationOptions& options, const CalibrationResult& result) {
  std::ostringstream summary;
  summary << absl::StrFormat("calibrate %s on %s (objective %s): %d of %d timings fit and have an estimate, in %d rows; "
                             "%d within %.2fx of their row's best\n",
                             graph.graph.name(), device.name(), objective, result.samples_estimated, result.samples_total,
                             result.after.rows, result.samples_used, options.near_best);
  for (const TermFit& t : result.terms) {
    summary << absl::StrFormat("  %-22s %12.6g -> %12.6g (x %.3f)%s\n", t.term, t.before, t.after,
                               t.before > 0 ? t.after / t.before : 0.0, t.was_assumed ? "  [was a stand-in]" : "");
  }
  if (options.residuals) {
    summary << absl::StrFormat("  %d configuration residuals (of configurations timed in at least %d rows): top-1 within 10%% on %d, "
                               "best in the top 5 on %d of %d rows\n",
                               result.residuals.size(), options.residual_min_rows, result.with_residuals.top1_within_10,
                               result.with_residuals.best_in_top5, result.with_residuals.rows);
  }
  summary << absl::StrFormat("  expected top-1 slowdown %.2f%% -> %.2f%%; log-rms error %.3f -> %.3f; top-1 within 10%% on %d -> %d of %d rows; best in the top 5 on %d -> %d\n",
                             100 * std::expm1(result.before.expected_regret), 100 * std::expm1(result.after.expected_regret),
                             result.before.log_rms, result.after.log_rms, result.before.top1_within_10,
                             result.after.top1_within_10, result.after.rows, result.before.best_in_top5,
                             result.after.best_in_top5);
  return summary.str();
}

absl::StatusOr<int> Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(CalibrateFlags(), args));
  if (flags.Has("help")) {
    out << kCalibrateUsage;
    return 0;
  }
  if (!flags.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("calibrate: unexpected argument '", flags.positional().front(), "'"));
  }
  RETURN_IF_ERROR(ApplyInputLimit(flags));
  if (!flags.Has("device")) return absl::InvalidArgumentError("calibrate: --device is required");
  const std::vector<std::string> files = flags.GetList("timings");
  if (files.empty()) return absl::InvalidArgumentError("calibrate: --timings FILE is required (repeat it for more)");
  ASSIGN_OR_RETURN(DeviceModel device, LoadDevice(flags.Get("device")));
  // Checked before any work: it is written unescaped into the file, and names a model there.
  const std::string name = flags.Get("name", absl::StrCat(device.name(), "_calibrated"));
  if (!IsValidModelName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("--name: '", absl::CHexEscape(name.substr(0, 64)),
                                                   "' is not 1 to 64 letters, digits, '_', '.', '+' or '-' (the name of "
                                                   "the model the calibration file defines)"));
  }

  const std::string kernel_flag = flags.Get("kernel", "auto");
  if (kernel_flag != "auto" && kernel_flag != "triton" && kernel_flag != "cuda_gemm" && kernel_flag != "generic") {
    return absl::InvalidArgumentError(absl::StrCat("--kernel: '", kernel_flag, "' is not one of auto, triton, cuda_gemm, generic"));
  }
  std::vector<CalibrationSample> samples;
  std::vector<std::string> provenance;
  std::set<TimingKernel> kinds;
  for (const std::string& file : files) {
    TimingKernel kernel = kernel_flag == "triton"      ? TimingKernel::kTriton
                          : kernel_flag == "cuda_gemm" ? TimingKernel::kCudaGemm
                                                       : TimingKernel::kGeneric;
    if (kernel_flag == "auto") {
      ASSIGN_OR_RETURN(kernel, DetectTimingKernel(file));
    }
    kinds.insert(kernel);
    std::string from;
    ASSIGN_OR_RETURN(std::vector<CalibrationSample> more, ReadTimingSamples(file, kernel, &from));
    if (samples.size() + more.size() > static_cast<size_t>(kMaxTimingRows)) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": brings the timings to more than ", kMaxTimingRows,
                                                     ", the most one calibration reads"));
    }
    samples.insert(samples.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    provenance.push_back(from);
  }
  if (kinds.size() > 1) {
    return absl::InvalidArgumentError("calibrate: the timing files hold different kernels; calibrate one kernel at a time");
  }
  std::string graph_path = flags.Get("graph", "");
  if (graph_path.empty()) {
    if (*kinds.begin() == TimingKernel::kGeneric) {
      return absl::InvalidArgumentError("calibrate: --graph FILE is required for timings of another kernel");
    }
    graph_path = ShippedGraph(*kinds.begin() == TimingKernel::kTriton ? "triton_matmul.pbtxt" : "gemm.pbtxt");
  }
  ASSIGN_OR_RETURN(Kernel kernel, LoadKernel(KernelInput::GraphFile(graph_path), device, LoadOptions()));
  ASSIGN_OR_RETURN(CompiledKernel compiled, CompileKernel(std::move(kernel), {}));
  const CompiledGraph& graph = compiled.compiled;

  CalibrationOptions options;
  const std::string terms = flags.Get("terms", "");
  options.fit_terms = terms != "none";
  if (!terms.empty() && options.fit_terms) options.terms = absl::StrSplit(terms, ',', absl::SkipEmpty());
  options.residuals = flags.Has("residuals");
  if (flags.Has("residual-params")) {
    if (!options.residuals) return absl::InvalidArgumentError("calibrate: --residual-params needs --residuals");
    options.residual_params = absl::StrSplit(flags.Get("residual-params"), ',', absl::SkipEmpty());
    if (options.residual_params.empty()) return absl::InvalidArgumentError("--residual-params: no parameter named");
  }
  if (!options.fit_terms && !options.residuals) {
    return absl::InvalidArgumentError("calibrate: --terms none fits nothing; add --residuals");
  }
  if (flags.Has("near-best")) {
    const std::string text = flags.Get("near-best");
    if (!absl::SimpleAtod(text, &options.near_best) || !(options.near_best >= 1) || options.near_best > 100) {
      return absl::InvalidArgumentError(absl::StrCat("--near-best: '", text, "' is not a number from 1 to 100"));
    }
  }
  const std::string objective = flags.Get("objective", "time");
  if (objective != "rank" && objective != "time") {
    return absl::InvalidArgumentError(absl::StrCat("--objective: '", objective, "' is not one of rank, time"));
  }
  options.objective = objective == "time" ? CalibrationObjective::kTime : CalibrationObjective::kRank;
  ASSIGN_OR_RETURN(CalibrationResult result, Calibrate(graph, device, samples, options));

  const std::string summary = Summary(graph, device, objective, options, result);
  const CalibrationProblems problems = FindCalibrationProblems(result);
  if (!problems.sentences.empty() && !flags.Has("force")) {
    err << summary;
    return absl::InvalidArgumentError(absl::StrCat("calibrate: not written: ", absl::StrJoin(problems.sentences, "; "),
                                                   ". ", WhatToTry(problems, options, result), "; --force writes it anyway"));
  }
  std::string command = absl::StrCat("simulate calibrate ", absl::StrJoin(args, " "));
  const std::string date = absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());
  const std::string text = CalibrationTextproto(device, result, name, absl::StrJoin(provenance, "; "), command, date);
  // The summary goes where the file does not.
  if (flags.Has("out")) {
    RETURN_IF_ERROR(WriteOutputFile("out", flags.Get("out"), text));
    out << summary;
  } else {
    out << text;
    err << summary;
  }
  return 0;
}


}  // namespace

int RunCalibrateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto result = Run(args, out, err);
  if (!result.ok()) {
    err << "simulate calibrate: error: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  return *result;
}

}  // namespace scratchsim
