#include "sim/cli.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/device.h"
#include "sim/flags.h"
#include "sim/graph.h"
#include "sim/occupancy.h"
#include "sim/plan_command.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/status_macros.h"

#ifdef SCRATCHSIM_HAVE_TRITON
#include "backends/triton/ttgir_frontend.h"
#endif
#ifdef SCRATCHSIM_HAVE_TPU
#include "backends/tpu/pallas_lowering.h"
#include "backends/tpu/xla_verdict.h"
#endif

namespace scratchsim {
namespace {

constexpr char kUsage[] = R"(usage:
  simulate --device DEV --graph FILE [--set P=V ...] [--format text|json] [--policy first-fit|best-fit]
      Predict the on-chip memory footprint, thread and register budgets and occupancy of the
      kernel in FILE (.pb, .pbtxt/.textproto or .json KernelGraph) on device DEV.
  simulate --device DEV --ttgir KERNEL.ttgir [--format text|json]
      The same for a kernel Triton compiled (the .ttgir in ~/.triton/cache/<hash>/): shared
      memory placed exactly as Triton's allocator does, so Required equals metadata.shared.
  simulate --device DEV --threads N [--regs R] [--smem BYTES] [--static-smem BYTES] [--no-opt-in]
      What-if occupancy without a graph, like NVIDIA's occupancy calculator.
  simulate --list-devices
      The shipped device models and their key limits.
  simulate validate ... | simulate probe ... | simulate plan ...
      See `simulate SUBCOMMAND --help`.

DEV is a shipped name (h100, a100, mi300x, tpu_v5e, ...) or a path to a DeviceModel textproto.
Exit codes: 0 fits, 1 simulated and does not fit, 2 bad input or usage.
)";

FlagSpec SimulateFlags() {
  FlagSpec spec;
  spec.values = {"device", "graph", "ttgir", "format", "policy", "threads", "regs", "smem", "static-smem", "carveout"};
  spec.lists = {"set"};
  spec.switches = {"list-devices", "help", "no-opt-in", "no-suggest"};
  return spec;
}

std::string ListDevices(const std::vector<DeviceModel>& devices) {
  std::string out = absl::StrFormat("%-10s %-8s %-34s %-6s %-28s %s\n", "name", "arch", "device", "cores",
                                    "scratchpad per block / core", "threads/block");
  for (const DeviceModel& d : devices) {
    std::string memory;
    for (const MemorySpace& s : d.memory_spaces()) {
      int64_t per_block = s.per_block_optin_bytes() > 0 ? s.per_block_optin_bytes() : s.default_scoped_limit_bytes();
      if (!memory.empty()) absl::StrAppend(&memory, ", ");
      if (s.kind() == TENSOR_MEMORY) {
        absl::StrAppend(&memory, s.name(), " ", s.columns(), " cols");
      } else if (per_block > 0) {
        absl::StrAppend(&memory, s.name(), " ", per_block / 1024, "/", s.capacity_per_core_bytes() / 1024, " KiB");
      } else {
        absl::StrAppend(&memory, s.name(), " ", s.capacity_per_core_bytes() / 1024, " KiB");
      }
    }
    std::string aliases = d.aliases().empty() ? "" : absl::StrCat(" (", absl::StrJoin(d.aliases(), ", "), ")");
    absl::StrAppendFormat(&out, "%-10s %-8s %-34s %-6d %-28s %s\n", d.name(), d.arch(),
                          absl::StrCat(d.display_name(), aliases), d.limits().num_cores(), memory,
                          d.limits().max_threads_per_block() > 0 ? absl::StrCat(d.limits().max_threads_per_block()) : "-");
  }
  return out;
}

absl::StatusOr<int> WhatIf(const ParsedFlags& flags, const DeviceModel& device, std::ostream& out) {
  OccupancyInput input;
  ASSIGN_OR_RETURN(input.threads_per_block, flags.GetInt("threads", 0));
  ASSIGN_OR_RETURN(input.registers_per_thread, flags.GetInt("regs", 0));
  ASSIGN_OR_RETURN(input.dynamic_shared_bytes, flags.GetInt("smem", 0));
  ASSIGN_OR_RETURN(input.static_shared_bytes, flags.GetInt("static-smem", 0));
  ASSIGN_OR_RETURN(int64_t carveout, flags.GetInt("carveout", -1));
  input.carveout_percent = static_cast<int>(carveout);
  input.shared_memory_opt_in = !flags.Has("no-opt-in");
  ASSIGN_OR_RETURN(Occupancy occupancy, ComputeOccupancy(device, input));
  Report report;
  report.set_device(device.name());
  *report.mutable_occupancy() = occupancy;
  if (flags.Get("format", "text") == "json") {
    ASSIGN_OR_RETURN(std::string json, RenderJson(report));
    out << json << "\n";
  } else {
    out << absl::StrFormat("device   %s (%s)\n", device.display_name(), device.name());
    out << absl::StrFormat("input    %d threads, %d registers/thread, %d B dynamic + %d B static shared memory%s\n",
                           input.threads_per_block, input.registers_per_thread, input.dynamic_shared_bytes,
                           input.static_shared_bytes, input.shared_memory_opt_in ? "" : " (no opt-in)");
    if (occupancy.blocks_per_core() == 0) {
      out << "occupancy: cannot launch: " << (occupancy.reason().empty() ? occupancy.limiting_factor() : occupancy.reason())
          << "\n";
    } else {
      out << absl::StrFormat("occupancy: %d blocks per SM, %d of %d warps (%.0f%%), limited by %s\n",
                             occupancy.blocks_per_core(), occupancy.active_warps(), occupancy.max_warps(),
                             100.0 * occupancy.occupancy(), occupancy.limiting_factor());
    }
    out << absl::StrFormat("limits:   warps %d, registers %d, shared memory %d, blocks %d (blocks per SM each allows)\n",
                           occupancy.limit_warps(), occupancy.limit_registers(), occupancy.limit_shared_memory(),
                           occupancy.limit_blocks());
    out << absl::StrFormat("allocated per block: %d B shared memory (reservation and granularity included), %d registers\n",
                           occupancy.allocated_shared_bytes_per_block(), occupancy.allocated_registers_per_block());
  }
  return occupancy.blocks_per_core() > 0 ? kExitFits : kExitDoesNotFit;
}

absl::StatusOr<int> SimulateAndPrint(KernelGraph graph, const std::string& path, const DeviceModel& device,
                                     const SimulateOptions& options, const ParsedFlags& flags, std::ostream& out);

absl::StatusOr<int> Run(const std::vector<std::string>& args, std::ostream& out) {
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(SimulateFlags(), args));
  if (flags.Has("help")) {
    out << kUsage;
    return kExitFits;
  }
  if (!flags.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", flags.positional().front(), "' (see --help)"));
  }
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
  SimulateOptions options;
  ASSIGN_OR_RETURN(options.policy, ParsePlacementPolicy(flags.Get("policy", "first-fit")));
  options.suggest = !flags.Has("no-suggest");
  if (flags.Has("ttgir")) {
    if (flags.Has("graph")) return absl::InvalidArgumentError("--graph and --ttgir are exclusive");
#ifdef SCRATCHSIM_HAVE_TRITON
    ASSIGN_OR_RETURN(triton::TtgirKernel kernel, triton::LoadTtgirKernel(flags.Get("ttgir")));
    options.policy_override = kernel.policy;
    return SimulateAndPrint(std::move(kernel.graph), flags.Get("ttgir"), device, options, flags, out);
#else
    return absl::UnimplementedError("--ttgir: this build has no Triton backend");
#endif
  }
  if (!flags.Has("graph")) {
    if (flags.Has("threads")) return WhatIf(flags, device, out);
    return absl::InvalidArgumentError("--graph FILE (or --threads for a what-if) is required (see --help)");
  }
  std::string path = flags.Get("graph");
  ASSIGN_OR_RETURN(KernelGraph graph, LoadGraph(path));
  if (graph.name().empty()) graph.set_name(std::filesystem::path(path).stem().string());
  return SimulateAndPrint(std::move(graph), path, device, options, flags, out);
}

absl::StatusOr<int> SimulateAndPrint(KernelGraph graph, const std::string& path, const DeviceModel& device,
                                     const SimulateOptions& options, const ParsedFlags& flags, std::ostream& out) {
  std::string format = flags.Get("format", "text");
  ASSIGN_OR_RETURN(KernelGraph lowered, LowerForDevice(graph, device, path));
  ASSIGN_OR_RETURN(CompiledGraph compiled, CompileGraph(std::move(lowered), path));
  ASSIGN_OR_RETURN(std::vector<int64_t> values, BindParameters(compiled, flags.GetList("set")));
  ASSIGN_OR_RETURN(Report report, Simulate(compiled, device, values, options));
#ifdef SCRATCHSIM_HAVE_TPU
  if (graph.has_pallas()) {
    KernelGraph original = graph;
    // The TPU backend words the verdict as XLA does; it evaluates the --set values itself.
    for (const std::string& assignment : flags.GetList("set")) {
      for (Parameter& parameter : *original.mutable_parameters()) {
        std::pair<std::string, std::string> parts = absl::StrSplit(assignment, absl::MaxSplits('=', 1));
        int64_t value;
        if (parameter.name() == parts.first && absl::SimpleAtoi(parts.second, &value)) parameter.set_default_value(value);
      }
    }
    RETURN_IF_ERROR(AnnotateTpuReport(original, device, &report));
    report.set_fits(std::none_of(report.violations().begin(), report.violations().end(),
                                 [](const Violation& v) { return v.fatal(); }));
  }
#endif
  if (format == "json") {
    ASSIGN_OR_RETURN(std::string json, RenderJson(report));
    out << json << "\n";
  } else {
    out << RenderText(report, device);
  }
  return report.fits() ? kExitFits : kExitDoesNotFit;
}

}  // namespace

absl::StatusOr<KernelGraph> LoadKernelGraph(const std::string& path, const DeviceModel& device) {
  ASSIGN_OR_RETURN(KernelGraph graph, LoadGraph(path));
  if (graph.name().empty()) graph.set_name(std::filesystem::path(path).stem().string());
  return LowerForDevice(std::move(graph), device, path);
}

absl::StatusOr<KernelGraph> LowerForDevice(KernelGraph graph, const DeviceModel& device, const std::string& path) {
  if (graph.has_pallas()) {
#ifdef SCRATCHSIM_HAVE_TPU
    ASSIGN_OR_RETURN(graph, LowerPallasCall(graph, device));
#else
    return absl::UnimplementedError(absl::StrCat(path, ": field 'pallas': this build has no TPU backend"));
#endif
  }
  return graph;
}

int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && args[0] == "plan") {
    return RunPlanCommand(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  }
  auto result = Run(args, out);
  if (!result.ok()) {
    err << "simulate: error: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  return *result;
}

}  // namespace scratchsim
