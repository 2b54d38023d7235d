#include "sim/driver/cli.h"

#include <algorithm>
#include <filesystem>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/device.h"
#include "sim/engine.h"
#include "sim/driver/calibrate_command.h"
#include "sim/driver/pictures.h"
#include "sim/driver/plan_command.h"
#include "sim/frontend.h"
#include "sim/graph.h"
#include "sim/occupancy.h"
#include "sim/pipeline.h"
#include "sim/proto_io.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr char kUsage[] = R"(usage:
  simulate --device DEV --graph FILE [--set P=V ...] [--format text|json] [--policy first-fit|best-fit]
                                     [--timeline FILE.svg] [--trace FILE.json] [--confirm always|at-risk]
      Predict the on-chip memory footprint, thread and register budgets and occupancy of the
      kernel in FILE (.pb, .pbtxt/.textproto or .json KernelGraph) on device DEV.
      --timeline FILE.svg draws where each buffer sits over the ops, a panel per memory space;
      --trace FILE.json writes the same as a Chrome trace (Perfetto, chrome://tracing). Both
      work with every kernel input (--ttgir, Pallas graphs).
      --confirm always|at-risk compiles the kernel with its real compiler on this host, every
      time or only when the verdict is AT RISK, and reports the compiler's verdict (the model's
      beside it): a Pallas graph the tracer wrote (pallas.jax_export) with libtpu for the
      device's generation, no TPU needed ($SCRATCHSIM_PYTHON, else python3, with jax[tpu]).
      Where the compiler cannot run (or runs past $SCRATCHSIM_CONFIRM_TIMEOUT seconds, 1 to
      86400, default 900), the report says why and the model's verdict stands.
  simulate --device DEV --threads N [--regs R] [--smem BYTES] [--static-smem BYTES] [--carveout PCT]
           [--cache-config default|prefer_shared|prefer_l1|prefer_equal] [--no-opt-in]
      What-if occupancy without a graph, like NVIDIA's occupancy calculator, with the carve-out
      the driver configures at launch and the L1 it leaves.
  simulate --list-devices
      The shipped device models and their key limits.
)";

constexpr char kUsageTail[] = R"(
DEV is a shipped name (h100, a100, mi300x, tpu_v5e, ...; any case) or a path to a DeviceModel
textproto. SCRATCHSIM_MODELS=DIR adds DIR's models to the shipped ones.
Input files are regular files of at most 256 MiB (--max-input-mib raises it).
--any-target judges a kernel compiled for another GPU (--ttgir) on DEV anyway.
Exit codes: 0 fits, 1 simulated and does not fit or is AT RISK (an estimated allocation, TPU
register spills, might break a limit), 2 bad input or usage (the message names the file, the
field and the problem), 3 a subcommand needs a GPU and none is present, 130 `simulate plan`
stopped by SIGINT (what it evaluated is printed, marked partial).
)";

std::string Usage() {
  std::string out = kUsage;
  for (const auto& front_end : FrontEnds()) {
    if (front_end->input_flag().empty()) continue;
    absl::StrAppend(&out, "  simulate --device DEV --", front_end->input_flag(), " FILE [--format text|json]\n      ",
                    front_end->input_help(), "\n");
  }
  absl::StrAppend(&out, "  simulate plan ...\n      ", kPlanSummary, "\n");
  absl::StrAppend(&out, "  simulate calibrate ...\n      ", kCalibrateSummary, "\n");
  for (const auto& front_end : FrontEnds()) {
    for (const Subcommand& sub : front_end->subcommands()) {
      absl::StrAppend(&out, "  simulate ", sub.name, " ...\n      ", sub.summary, "\n");
    }
  }
  absl::StrAppend(&out, "  (`simulate SUBCOMMAND --help` for each)\n", kUsageTail);
  return out;
}

}  // namespace

FlagSpec SimulateFlags() {
  FlagSpec spec;
  spec.values = {"device", "graph", "format", "policy", "threads", "regs", "smem", "static-smem", "carveout",
                 "cache-config", "max-input-mib", "confirm"};
  spec.lists = {"set"};
  spec.switches = {"list-devices", "help", "no-opt-in", "no-suggest", "any-target"};
  AddFrontEndFlags(&spec);
  AddPictureFlags(&spec);
  return spec;
}

namespace {

// Units in the header, one column per figure, aligned to the widest entry.
std::string ListDevices(const std::vector<DeviceModel>& devices) {
  std::vector<std::vector<std::string>> rows = {
      {"name", "arch", "device", "cores", "scratchpad KiB per block / per core", "threads/block"}};
  for (const DeviceModel& d : devices) {
    std::vector<std::string> memory;
    for (const MemorySpace& s : d.memory_spaces()) {
      const int64_t per_block = s.per_block_optin_bytes() > 0 ? s.per_block_optin_bytes() : s.default_scoped_limit_bytes();
      if (s.kind() == TENSOR_MEMORY) {
        memory.push_back(absl::StrCat(s.name(), " ", s.columns(), " columns"));
      } else if (per_block > 0) {
        memory.push_back(absl::StrCat(s.name(), " ", per_block / 1024, " / ", s.capacity_per_core_bytes() / 1024));
      } else {
        memory.push_back(absl::StrCat(s.name(), " - / ", s.capacity_per_core_bytes() / 1024));
      }
    }
    std::string aliases = d.aliases().empty() ? "" : absl::StrCat(" (also: ", absl::StrJoin(d.aliases(), ", "), ")");
    rows.push_back({d.name(), d.arch(), absl::StrCat(d.display_name(), aliases), absl::StrCat(d.limits().num_cores()),
                    absl::StrJoin(memory, ", "),
                    d.limits().max_threads_per_block() > 0 ? absl::StrCat(d.limits().max_threads_per_block()) : "-"});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      // Numbers right-aligned, text left-aligned; the last column unpadded.
      const bool number = c == 3 || c == 5;
      if (c + 1 == row.size()) {
        absl::StrAppend(&line, number ? std::string(width[c] - row[c].size(), ' ') : "", row[c]);
      } else {
        absl::StrAppend(&line, number ? absl::StrFormat("%*s", width[c], row[c]) : absl::StrFormat("%-*s", width[c], row[c]),
                        "  ");
      }
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::StatusOr<int> WhatIf(const ParsedFlags& flags, const DeviceModel& device, std::ostream& out) {
  OccupancyInput input;
  ASSIGN_OR_RETURN(input.threads_per_block, flags.GetInt("threads", 0));
  ASSIGN_OR_RETURN(input.registers_per_thread, flags.GetInt("regs", 0));
  ASSIGN_OR_RETURN(input.dynamic_shared_bytes, flags.GetInt("smem", 0));
  ASSIGN_OR_RETURN(input.static_shared_bytes, flags.GetInt("static-smem", 0));
  ASSIGN_OR_RETURN(input.carveout_percent, flags.GetInt("carveout", -1));
  input.shared_memory_opt_in = !flags.Has("no-opt-in");
  absl::StatusOr<CachePreference> preference = ParseCachePreference(flags.Get("cache-config", "default"));
  if (!preference.ok()) return absl::InvalidArgumentError(absl::StrCat("--cache-config: ", preference.status().message()));
  input.cache_preference = *preference;
  // The engine judges the launch; the calculator words the engine's figures, as Explain does.
  ASSIGN_OR_RETURN(const FitResult fit, EvaluateLaunch(device, input));
  ASSIGN_OR_RETURN(const OccupancyCalculator calculator, OccupancyCalculator::Create(device));
  Occupancy occupancy = calculator.Describe(input, fit.occupancy);
  const bool fits = fit.fits;
  if (flags.Get("format", "text") == "json") {
    Report report;
    report.set_kernel(absl::StrFormat("what-if: %d threads, %d registers/thread, %d B dynamic + %d B static shared memory",
                                      input.threads_per_block, input.registers_per_thread, input.dynamic_shared_bytes,
                                      input.static_shared_bytes));
    report.set_device(device.name());
    report.set_fits(fits);
    *report.mutable_occupancy() = occupancy;
    out << RenderJson(report) << "\n";
    return fits ? kExitFits : kExitDoesNotFit;
  }
  auto limit = [](bool has, int32_t value) { return has ? absl::StrCat(value) : std::string("no limit"); };
  out << absl::StrFormat("device   %s (%s)\n", device.display_name(), device.name());
  out << absl::StrFormat("input    %d threads, %d registers/thread, %d B dynamic + %d B static shared memory%s\n",
                         input.threads_per_block, input.registers_per_thread, input.dynamic_shared_bytes,
                         input.static_shared_bytes, input.shared_memory_opt_in ? "" : " (no opt-in)");
  out << "verdict  " << (fits ? "FITS" : "DOES NOT FIT") << "\n";
  if (!fits) {
    out << "occupancy: cannot launch: " << (occupancy.reason().empty() ? occupancy.limiting_factor() : occupancy.reason())
        << "\n";
  } else {
    out << absl::StrFormat("occupancy: %d blocks per SM, %d of %d warps (%.0f%%), limited by %s\n",
                           occupancy.blocks_per_core(), occupancy.active_warps(), occupancy.max_warps(),
                           100.0 * occupancy.occupancy(), occupancy.limiting_factor());
  }
  out << "limits:   warps " << limit(occupancy.has_limit_warps(), occupancy.limit_warps()) << ", registers "
      << limit(occupancy.has_limit_registers(), occupancy.limit_registers()) << ", shared memory "
      << limit(occupancy.has_limit_shared_memory(), occupancy.limit_shared_memory()) << ", blocks "
      << limit(occupancy.has_limit_blocks(), occupancy.limit_blocks()) << " (blocks per SM each allows)\n";
  out << absl::StrFormat("allocated per block: %d B shared memory (reservation and granularity included), %d registers\n",
                         occupancy.allocated_shared_bytes_per_block(), occupancy.allocated_registers_per_block());
  out << LaunchCarveoutLine(occupancy);
  return fits ? kExitFits : kExitDoesNotFit;
}

absl::StatusOr<int> Run(const std::vector<std::string>& args, std::ostream& out) {
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(SimulateFlags(), args));
  if (flags.Has("help")) {
    out << Usage();
    return kExitFits;
  }
  if (!flags.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", flags.positional().front(), "' (see --help)"));
  }
  RETURN_IF_ERROR(ApplyInputLimit(flags));
  if (flags.Has("list-devices")) {
    ASSIGN_OR_RETURN(std::vector<DeviceModel> devices, LoadShippedDevices());
    out << ListDevices(devices);
    return kExitFits;
  }
  std::string format = flags.Get("format", "text");
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--format: '", format, "' is not one of text, json"));
  }
  if (!flags.Has("device")) return absl::InvalidArgumentError("--device is required (see --list-devices)");
  ASSIGN_OR_RETURN(DeviceModel device, LoadDevice(flags.Get("device")));
  if (!HasKernelInput(flags)) {
    if (flags.Has("threads")) {
      RETURN_IF_ERROR(RefusePicturesWithoutKernel(flags));
      return WhatIf(flags, device, out);
    }
    return absl::InvalidArgumentError("--graph FILE (or --threads for a what-if) is required (see --help)");
  }
  ASSIGN_OR_RETURN(Report report, SimulateKernel(flags, device));
  if (format == "json") {
    out << RenderJson(report) << "\n";
  } else {
    out << RenderText(report, device);
  }
  return report.fits() ? kExitFits : kExitDoesNotFit;
}

}  // namespace

absl::Status ApplyInputLimit(const ParsedFlags& flags) {
  ASSIGN_OR_RETURN(const int64_t mib, flags.GetInt("max-input-mib", kDefaultMaxInputBytes >> 20));
  if (mib < 1 || mib > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrCat("--max-input-mib: must be 1..1048576, got ", mib));
  }
  SetMaxInputBytes(mib << 20);
  return absl::OkStatus();
}

void AddFrontEndFlags(FlagSpec* spec) {
  for (const auto& front_end : FrontEnds()) {
    if (!front_end->input_flag().empty()) spec->values.insert(std::string(front_end->input_flag()));
  }
}

bool HasKernelInput(const ParsedFlags& flags) {
  if (flags.Has("graph")) return true;
  for (const auto& front_end : FrontEnds()) {
    if (!front_end->input_flag().empty() && flags.Has(front_end->input_flag())) return true;
  }
  return false;
}

absl::StatusOr<KernelInput> KernelInputFromFlags(const ParsedFlags& flags) {
  KernelInput input = KernelInput::GraphFile(flags.Get("graph", ""));
  for (const auto& front_end : FrontEnds()) {
    if (front_end->input_flag().empty() || !flags.Has(front_end->input_flag())) continue;
    if (input.reader != "graph" || flags.Has("graph")) {
      return absl::InvalidArgumentError(
          absl::StrCat("give one kernel: --graph and --", front_end->input_flag(), " are exclusive"));
    }
    input.reader = std::string(front_end->input_flag());
    input.path = flags.Get(input.reader);
  }
  return input;
}

LoadOptions LoadOptionsFromFlags(const ParsedFlags& flags) {
  LoadOptions options;
  options.any_target = flags.Has("any-target");
  return options;
}

absl::StatusOr<Kernel> LoadKernel(const ParsedFlags& flags, const DeviceModel& device) {
  ASSIGN_OR_RETURN(KernelInput input, KernelInputFromFlags(flags));
  return LoadKernel(input, device, LoadOptionsFromFlags(flags));
}

absl::StatusOr<AnalysisOptions> AnalysisOptionsFromFlags(const ParsedFlags& flags) {
  AnalysisOptions options;
  options.load = LoadOptionsFromFlags(flags);
  options.sets = flags.GetList("set");
  if (flags.Has("confirm")) {
    ASSIGN_OR_RETURN(options.confirm, ParseConfirmPolicy(flags.Get("confirm", "")));
  }
  ASSIGN_OR_RETURN(options.simulate.policy, ParsePlacementPolicy(flags.Get("policy", "first-fit")));
  options.simulate.suggest = !flags.Has("no-suggest");
  options.simulate.keep_buffers = WantsPictures(flags);
  // The text report shows no placements: keep them for JSON and the pictures only (a graph of a
  // million buffers has 130 MB of them).
  options.simulate.keep_placements = options.simulate.keep_buffers || flags.Get("format", "text") == "json";
  return options;
}

absl::StatusOr<Report> SimulateKernel(const ParsedFlags& flags, const DeviceModel& device) {
  ASSIGN_OR_RETURN(const AnalysisOptions options, AnalysisOptionsFromFlags(flags));
  ASSIGN_OR_RETURN(const KernelInput input, KernelInputFromFlags(flags));
  ASSIGN_OR_RETURN(Report report, Analyze(input, device, options));
  RETURN_IF_ERROR(WritePictures(flags, device, &report));
  return report;
}

int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // No arguments at all is a usage question, not a missing --device: answer it with the usage.
  if (args.empty()) {
    err << Usage();
    return kExitBadInput;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "plan") return RunPlanCommand(rest, out, err);
  if (args[0] == "calibrate") return RunCalibrateCommand(rest, out, err);
  for (const auto& front_end : FrontEnds()) {
    for (const Subcommand& sub : front_end->subcommands()) {
      if (sub.name == args[0]) return sub.run(rest, out, err);
    }
  }
  auto result = Run(args, out);
  if (!result.ok()) {
    err << "simulate: error: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  return *result;
}

}  // namespace scratchsim
