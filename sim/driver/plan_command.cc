#include "sim/driver/plan_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/device.h"
#include "sim/device_inherit.h"
#include "sim/driver/cli.h"
#include "sim/driver/pictures.h"
#include "sim/driver/plan_output.h"
#include "sim/flags.h"
#include "sim/graph.h"
#include "sim/pipeline.h"
#include "sim/planner/families.h"
#include "sim/planner/planner.h"
#include "sim/planner/perf_inputs.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr char kPlanUsage[] = R"(usage:
  simulate plan --device DEV --graph FILE [--graph FILE ...]
                [--param NAME=LO..HI[:pow2|:step=S] | NAME=V1,V2,... ...]
                [--set P=V ...] [--top K] [--format text|json|csv] [--threads N]
                [--compute-dtype DT] [--allow-spills] [--policy first-fit|best-fit] [--stats]
                [--progress-seconds S]
                [--map FILE.svg [--map-axes X,Y]]
                [--calibration FILE] [--registers FILE ...]
      Sweep the kernel's tile parameters on device DEV: every configuration that does not fit
      (shared memory / LDS / TMEM / VMEM, threads, registers and spills, no resident block) is
      pruned, the rest ranked by an analytic model (roofline over the device's peak for the
      compute dtype and its bandwidth, occupancy, waves over the grid, loads in flight).
      Without --param the graph's parameter ranges (min/max/power_of_two) are swept; --set fixes
      a parameter; problem-size parameters are never swept. --format json lists configurations
      with their parameters for autotuners (Triton prune_configs_by, Helion configs).
      Beside the ranking, the autotuning shortlist says what to time first: the pick, then the
      fastest configuration of each other block shape whose estimate is within the graph's
      ranking error of the pick's (ranking_error_permille), then the ranking's order (text:
      listed where it differs from the ranking; json: "shortlist").
      Several --graph are kernel families of one problem (the plain and the split-K matmul):
      each is swept, --set and --param apply to every graph that has the parameter (one that no
      graph has is an error), and the configurations of all rank together with a family column;
      a families line gives each family's best estimate against the best, and a why line the
      model term that decides.
      --map FILE.svg draws the grid over two swept parameters (--map-axes X,Y; default the
      first two) with the others at the best configuration's values: each cell its estimated
      time or the limit that pruned it, the top configurations outlined with their rank.
      --calibration FILE: rank with the terms `simulate calibrate` fitted to timings of the
      device (or of a model it inherits), and with its measured configuration residuals
      (--residuals) for this graph: each configuration that has one has its estimate multiplied
      by it. The plan lists the device terms it used and where each
      came from, and warns about every term the device model does not give (a stand-in is used).
      --registers FILE: a compiler's registers per configuration (a CompiledRegisters textproto,
      binary or JSON file, as scratchsim.triton.compiled_registers writes it from Triton's
      compiles for the device's architecture): each configuration it names has its occupancy and
      spills from what the compiler allocated, not from the graph's estimate. One file per
      graph, repeatable for kernel families; the plan notes how many ranked configurations use it.
      Long sweeps report progress on stderr: a bar on a terminal, else a line every S seconds
      (--progress-seconds, default 5; 0: none). Ctrl-C (SIGINT) stops the sweep cleanly: what was
      evaluated so far is printed, marked partial.
Exit codes: 0 some configuration fits, 1 none fits, 2 bad input or usage, 130 interrupted
(the partial result is printed).
)";

}  // namespace

FlagSpec PlanFlags() {
  FlagSpec spec;
  spec.values = {"device", "top", "format", "threads", "compute-dtype", "policy", "max-input-mib", "calibration"};
  spec.values.insert("progress-seconds");
  // Several --graph: kernel families of one problem, ranked together.
  spec.lists = {"param", "set", "graph", "registers"};
  spec.switches = {"help", "allow-spills", "stats", "any-target"};
  AddFrontEndFlags(&spec);
  AddPlanMapFlags(&spec);
  return spec;
}

namespace {

// The kernels the flags name: one per --graph (several are kernel families of one problem), or
// a front end's input.
absl::StatusOr<std::vector<Kernel>> LoadKernels(const ParsedFlags& flags, const DeviceModel& device) {
  std::vector<Kernel> kernels;
  const std::vector<std::string> graphs = flags.GetList("graph");
  if (graphs.size() <= 1) {
    ASSIGN_OR_RETURN(kernels.emplace_back(), LoadKernel(flags, device));
    return kernels;
  }
  RETURN_IF_ERROR(KernelInputFromFlags(flags).status());  // --graph and a front end's input are exclusive
  for (const std::string& path : graphs) {
    ASSIGN_OR_RETURN(kernels.emplace_back(), LoadKernel(KernelInput::GraphFile(path), device, LoadOptionsFromFlags(flags)));
  }
  return kernels;
}

absl::StatusOr<int> Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(PlanFlags(), args));
  if (flags.Has("help")) {
    out << kPlanUsage;
    return 0;
  }
  if (!flags.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("plan: unexpected argument '", flags.positional().front(), "' (see --help)"));
  }
  RETURN_IF_ERROR(ApplyInputLimit(flags));
  std::string format = flags.Get("format", "text");
  if (format != "text" && format != "json" && format != "csv") {
    return absl::InvalidArgumentError(absl::StrCat("--format: '", format, "' is not one of text, json, csv"));
  }
  if (!flags.Has("device")) return absl::InvalidArgumentError("plan: --device is required (see simulate --list-devices)");
  if (!HasKernelInput(flags)) return absl::InvalidArgumentError("plan: --graph FILE is required (see --help)");
  ASSIGN_OR_RETURN(const PlanRequest request, PlanRequestFromFlags(flags));
  ASSIGN_OR_RETURN(DeviceModel device, LoadDevice(flags.Get("device")));
  if (flags.Has("calibration")) {
    // The calibration's terms replace those the device takes from the model it was made for.
    const std::string path = flags.Get("calibration");
    DeviceModel calibration;
    RETURN_IF_ERROR(LoadProtoFile(path, &calibration));
    std::vector<std::string> kept;
    ASSIGN_OR_RETURN(device, ApplyCalibration(device, calibration, path, LoadDevice, &kept));
    RETURN_IF_ERROR(ValidateDevice(device, path));
    if (!kept.empty()) {
      err << "plan: " << path << ": " << device.name() << " sets " << absl::StrJoin(kept, ", ")
          << " itself; the calibration's value is not used\n";
    }
  }
  ASSIGN_OR_RETURN(std::vector<Kernel> kernels, LoadKernels(flags, device));
  return PlanKernels(std::move(kernels), device, request, out, err);
}

}  // namespace

namespace {

// SIGINT during a sweep: the planner stops at its next chunk and the command prints what it has.
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void OnSigint(int) { interrupted.store(true, std::memory_order_relaxed); }

// Installs OnSigint for its lifetime; the previous handler comes back after.
class SigintScope {
 public:
  SigintScope() {
    interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = OnSigint;
    sigemptyset(&action.sa_mask);
    installed_ = sigaction(SIGINT, &action, &previous_) == 0;
  }
  ~SigintScope() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

std::string Duration(double seconds) {
  if (!(seconds < 1e9)) return "a very long time";
  const int64_t s = static_cast<int64_t>(seconds);
  if (s >= 86400) return absl::StrFormat("%dd %dh", s / 86400, s % 86400 / 3600);
  if (s >= 3600) return absl::StrFormat("%dh %dm", s / 3600, s % 3600 / 60);
  if (s >= 60) return absl::StrFormat("%dm %ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

// Progress of a sweep on stderr: a bar on a terminal (sweeps of 2,000,000 configurations or
// more), else one line every `every` seconds (none when 0), so a long sweep in a log or a pipe
// says how far it is.
std::function<void(uint64_t, uint64_t)> ProgressReporter(std::ostream& err, bool terminal, double every) {
  if (terminal) {
    return [&err](uint64_t done, uint64_t total) {
      if (total < 2000000) return;
      const int width = 40;
      const int filled = total ? static_cast<int>(width * done / total) : width;
      err << "\rplan [" << std::string(filled, '#') << std::string(width - filled, ' ') << "] "
          << (total ? 100 * done / total : 100) << "%" << (done == total ? "\n" : "") << std::flush;
    };
  }
  if (every <= 0) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(start);
  return [&err, start, last, every](uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done == total || std::chrono::duration<double>(now - *last).count() < every) return;
    *last = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const double rate = elapsed > 0 ? done / elapsed : 0;
    err << absl::StrFormat("plan: %d of %d configurations (%.1f%%) in %s, %.0f per second, about %s left\n", done,
                           total, total ? 100.0 * done / total : 100.0, Duration(elapsed), rate,
                           rate > 0 ? Duration((total - done) / rate) : std::string("?"))
        << std::flush;
  };
}

}  // namespace

absl::Status CheckPlanRequest(const PlanRequest& request) {
  if (request.format != "text" && request.format != "json" && request.format != "csv") {
    return absl::InvalidArgumentError(absl::StrCat("--format: '", request.format, "' is not one of text, json, csv"));
  }
  if (request.top < 0 || request.top > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat(request.spelling.Option("top"), ": must be 0..100000, got ", request.top));
  }
  if (request.threads < 0 || request.threads > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat(request.spelling.Option("threads"), ": must be 0..1024, got ", request.threads));
  }
  if (request.progress_seconds < 0 || request.progress_seconds > 86400) {
    return absl::InvalidArgumentError(absl::StrCat("--progress-seconds: must be 0..86400, got ", request.progress_seconds));
  }
  return absl::OkStatus();
}

absl::StatusOr<PlanRequest> PlanRequestFromFlags(const ParsedFlags& flags) {
  PlanRequest request;
  request.format = flags.Get("format", "text");
  request.sets = flags.GetList("set");
  request.params = flags.GetList("param");
  ASSIGN_OR_RETURN(request.top, flags.GetInt("top", 10));
  ASSIGN_OR_RETURN(request.threads, flags.GetInt("threads", 0));
  request.planner.allow_spills = flags.Has("allow-spills");
  request.planner.compute_dtype = flags.Get("compute-dtype", "");
  ASSIGN_OR_RETURN(request.planner.policy, ParsePlacementPolicy(flags.Get("policy", "first-fit")));
  request.calibration = flags.Get("calibration", "");
  for (const std::string& path : flags.GetList("registers")) {
    auto& [origin, figures] = request.compiled_registers.emplace_back(path, CompiledRegisters());
    RETURN_IF_ERROR(LoadProtoFile(path, &figures));
  }
  ASSIGN_OR_RETURN(request.progress_seconds, flags.GetInt("progress-seconds", 5));
  request.stats = flags.Has("stats");
  request.map = flags.Has("map");
  request.map_path = flags.Get("map", "");
  if (flags.Has("map-axes")) {
    if (!request.map) return absl::InvalidArgumentError("--map-axes: give --map FILE.svg too");
    request.map_axes = flags.Get("map-axes");
  }
  RETURN_IF_ERROR(CheckPlanRequest(request));
  return request;
}

namespace {

// The sweep's options for one compiled kernel: the request's, the kernel's own allocator (a front
// end's), and the device's measured residuals for its graph (a calibration file's config_residuals).
absl::StatusOr<PlanOptions> OptionsFor(const PlanRequest& request, const CompiledGraph& compiled,
                                       const DeviceModel& device, std::shared_ptr<const PlacementPolicy> policy) {
  PlanOptions options = request.planner;
  options.top_k = static_cast<int>(request.top);
  options.threads = static_cast<int>(request.threads);
  options.policy_override = std::move(policy);
  ASSIGN_OR_RETURN(ResidualTable residuals,
                   ResidualTable::Build(compiled, device, PlanComputeDtype(compiled, options.compute_dtype)));
  if (!residuals.empty()) options.residuals = std::make_shared<const ResidualTable>(std::move(residuals));
  for (const auto& [origin, figures] : request.compiled_registers) {
    if (figures.graph() != compiled.graph.name()) continue;
    ASSIGN_OR_RETURN(CompiledRegisterTable table, CompiledRegisterTable::Build(compiled, device, figures, origin));
    options.compiled_registers = std::make_shared<const CompiledRegisterTable>(std::move(table));
  }
  return options;
}

// Every --registers file names one of the planned graphs, and no two name the same one: figures
// for none of them would be silently unused, and of two tables for one graph one would be.
absl::Status CheckRegistersNamePlannedGraphs(const PlanRequest& request, absl::Span<const CompiledGraph* const> graphs) {
  std::vector<std::string> names;
  for (const CompiledGraph* g : graphs) names.push_back(absl::StrCat("'", g->graph.name(), "'"));
  absl::flat_hash_map<std::string, std::string> file_of_graph;
  for (const auto& [origin, figures] : request.compiled_registers) {
    const std::string& named = figures.graph();
    if (const auto [it, inserted] = file_of_graph.emplace(named, origin); !inserted) {
      return absl::InvalidArgumentError(absl::StrCat("--registers ", origin, ": graph: '", named,
                                                     "' is named by --registers ", it->second,
                                                     " too: give one file per graph"));
    }
    if (std::none_of(graphs.begin(), graphs.end(),
                     [&named](const CompiledGraph* g) { return g->graph.name() == named; })) {
      return absl::InvalidArgumentError(absl::StrCat("--registers ", origin, ": graph: '", named,
                                                     "' is not a planned graph (", absl::StrJoin(names, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

// Says in the plan's notes how many of its ranked configurations have a compiler's registers.
void NoteCompiledRegisters(const CompiledGraph& compiled, const PlanOptions& options, PlanResult& plan) {
  if (!options.compiled_registers) return;
  const CompiledRegisterTable& table = *options.compiled_registers;
  int with = 0, other_problems = 0;
  for (const RankedConfig& c : plan.top) {
    with += c.fit.registers_compiled;
    other_problems += c.fit.registers_for_other_problems;
  }
  const std::vector<std::string> assumed = table.assumptions();
  plan.notes.push_back(absl::StrFormat(
      "registers of %d compiled configurations of %s from %s (%s, keyed by %s%s): %d of the %d ranked configurations "
      "have their occupancy and spills from what the compiler allocated; the others from the graph's estimate%s",
      table.size(), compiled.graph.name(), table.origin(), table.compiler().empty() ? "compiler not named" : table.compiler(),
      absl::StrJoin(table.parameters(), ", "),
      assumed.empty() ? "" : absl::StrCat(", compiled where ", absl::StrJoin(assumed, " and ")), with, plan.top.size(),
      other_problems == 0 ? ""
                          : absl::StrCat(" (", other_problems, " because this problem breaks ",
                                         absl::StrJoin(assumed, " or "), ": the compiler's kernel for it is another)")));
}

// Says in the plan's notes how many of its ranked configurations a measured residual corrects.
void NoteResiduals(const PlanRequest& request, const DeviceModel& device, const CompiledGraph& compiled,
                   const PlanOptions& options, PlanResult& plan) {
  if (!options.residuals) return;
  int with = 0;
  for (const RankedConfig& c : plan.top) with += c.residual > 0;
  plan.notes.push_back(absl::StrFormat(
      "%d measured configuration residuals from %s (keyed by %s) for %s rated in %s (simulate calibrate --residuals): %d "
      "of the %d ranked configurations have one and their estimates include it; the others are the model's alone",
      options.residuals->size(), request.calibration.empty() ? device.name() : request.calibration,
      absl::StrJoin(options.residuals->parameters(), ", "), compiled.graph.name(),
      PlanComputeDtype(compiled, options.compute_dtype), with, plan.top.size()));
}

// What stderr says after the sweeps: that they were interrupted, and with --stats how fast they ran.
void ReportSweeps(const PlanRequest& request, absl::Span<const PlanResult> plans, double seconds, std::ostream& err) {
  uint64_t space = 0, evaluated = 0;
  int threads = 1;
  bool partial = false;
  for (const PlanResult& plan : plans) {
    space += plan.space_size;
    evaluated += plan.evaluated;
    threads = std::max(threads, plan.threads_used);
    partial = partial || plan.partial;
  }
  if (partial) {
    err << absl::StrFormat("plan: interrupted after %d of %d configurations; printing what was evaluated\n", evaluated,
                           space);
  }
  if (request.stats) {
    err << absl::StrFormat("plan: %d configurations in %.3f s (%.0f per second, %d threads)\n", space, seconds,
                           seconds > 0 ? space / seconds : 0.0, threads);
  }
}

int ExitCodeOf(bool partial, uint64_t fitting) {
  if (partial) return kExitInterrupted;
  return fitting > 0 ? kExitFits : kExitDoesNotFit;
}

// Several kernels, each a family for one problem (sim/planner/families), planned and ranked
// together.
absl::StatusOr<int> PlanFamiliesOf(std::vector<Kernel> kernels, const DeviceModel& device, const PlanRequest& request,
                                   std::ostream& out, std::ostream& err) {
  if (request.map) {
    return absl::InvalidArgumentError(
        absl::StrCat("--map draws one graph's space: give one --graph, not ", kernels.size()));
  }
  std::vector<CompiledKernel> compiled;
  compiled.reserve(kernels.size());
  std::vector<KernelFamily> families;
  for (Kernel& kernel : kernels) {
    std::shared_ptr<const PlacementPolicy> policy = kernel.policy;
    // Each family binds the --set values it has (PlanFamilies), not all of them.
    ASSIGN_OR_RETURN(compiled.emplace_back(), CompileKernel(std::move(kernel), {}));
    ASSIGN_OR_RETURN(PlanOptions options, OptionsFor(request, compiled.back().compiled, device, std::move(policy)));
    families.push_back(KernelFamily{&compiled.back().compiled, std::move(options)});
  }
  {
    std::vector<const CompiledGraph*> planned;
    for (const KernelFamily& family : families) planned.push_back(family.graph);
    RETURN_IF_ERROR(CheckRegistersNamePlannedGraphs(request, planned));
  }
  const bool terminal = &err == &std::cerr && isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  SigintScope sigint;
  for (KernelFamily& family : families) {
    family.options.progress = ProgressReporter(err, terminal, static_cast<double>(request.progress_seconds));
    family.options.cancel = &interrupted;
  }
  ASSIGN_OR_RETURN(FamiliesPlan plan, PlanFamilies(families, device, request.sets, request.params, request.spelling));
  std::vector<const CompiledGraph*> graphs;
  for (size_t f = 0; f < families.size(); ++f) {
    NoteResiduals(request, device, *families[f].graph, families[f].options, plan.plans[f]);
    NoteCompiledRegisters(*families[f].graph, families[f].options, plan.plans[f]);
    graphs.push_back(families[f].graph);
  }
  ReportSweeps(request, plan.plans, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), err);
  RenderFamilies(plan, graphs, device, request.format, out);
  return ExitCodeOf(plan.partial, plan.fitting);
}


// Where no configuration fits, the way forward is the one `simulate` gives for the configuration
// the plan started from (its suggestions: a tuning change, or a problem dimension to split).
absl::StatusOr<std::vector<std::string>> WayForward(const CompiledKernel& bound, const DeviceModel& device,
                                                    const PlanRequest& request) {
  AnalysisOptions options;
  options.simulate.policy = request.planner.policy;
  options.simulate.suggest = true;
  std::vector<std::string> fixes;
  absl::StatusOr<Report> report = AnalyzeKernel(bound, device, options);
  // The defaults need not be a kernel: where a graph requirement breaks for every configuration
  // (a size no tile divides), it breaks at the defaults too. There is then no kernel to fix, and
  // the plan's pruned families name the requirement and the values it ruled out.
  if (absl::IsInvalidArgument(report.status())) return fixes;
  RETURN_IF_ERROR(report.status());
  for (const Suggestion& s : report->suggestions()) fixes.push_back(s.text());
  return fixes;
}

}  // namespace

absl::StatusOr<int> PlanKernel(Kernel kernel, const DeviceModel& device, const PlanRequest& request,
                               std::ostream& out, std::ostream& err, std::string* map_svg) {
  RETURN_IF_ERROR(CheckPlanRequest(request));
  std::shared_ptr<const PlacementPolicy> policy = kernel.policy;
  ASSIGN_OR_RETURN(CompiledKernel bound, CompileKernel(std::move(kernel), request.sets, request.spelling));
  const CompiledGraph& compiled = bound.compiled;
  // A compiler's module (a TTGIR) states its allocations, not its work: a ranking could only rest
  // on traffic derived from on-chip buffers, which is not the kernel's.
  if (bound.kernel.front_end != nullptr && !compiled.flops && !compiled.global_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: ", compiled.origin, " states no work (no flops, no global traffic), so its configurations cannot be "
        "ranked; `simulate` with the same input says what fits and what to change (to fit:), scratchsim.triton.check "
        "lowers whole configurations that fit, and `plan --graph` ranks a graph of the kernel "
        "(models/graphs/triton_matmul.pbtxt)"));
  }
  ASSIGN_OR_RETURN(PlanOptions options, OptionsFor(request, compiled, device, std::move(policy)));
  RETURN_IF_ERROR(CheckRegistersNamePlannedGraphs(request, {&compiled}));
  ASSIGN_OR_RETURN(std::vector<ParamAxis> axes, BuildParamSpace(compiled, request.params, request.sets, request.spelling));

  const bool terminal = &err == &std::cerr && isatty(STDERR_FILENO);
  options.progress = ProgressReporter(err, terminal, static_cast<double>(request.progress_seconds));
  const auto start = std::chrono::steady_clock::now();
  SigintScope sigint;
  options.cancel = &interrupted;
  ASSIGN_OR_RETURN(PlanResult plan, Plan(compiled, device, std::move(axes), bound.values, options));
  NoteResiduals(request, device, compiled, options, plan);
  NoteCompiledRegisters(compiled, options, plan);
  if (plan.fitting == 0 && !plan.partial) {
    ASSIGN_OR_RETURN(plan.to_fit, WayForward(bound, device, request));
  }
  if (request.map) {
    ASSIGN_OR_RETURN(std::string svg, RenderPlanMapFor(request.map_axes, compiled, device, plan, options));
    if (!request.map_path.empty() || map_svg == nullptr) RETURN_IF_ERROR(WriteOutputFile("map", request.map_path, svg));
    if (map_svg != nullptr) *map_svg = std::move(svg);
  }
  ReportSweeps(request, absl::MakeConstSpan(&plan, 1),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), err);
  RenderPlan(plan, compiled, device, request.format, out);
  return ExitCodeOf(plan.partial, plan.fitting);
}

absl::StatusOr<int> PlanKernels(std::vector<Kernel> kernels, const DeviceModel& device, const PlanRequest& request,
                                std::ostream& out, std::ostream& err, std::string* map_svg) {
  if (kernels.empty()) return absl::InvalidArgumentError("plan: no kernel given");
  if (kernels.size() == 1) return PlanKernel(std::move(kernels.front()), device, request, out, err, map_svg);
  RETURN_IF_ERROR(CheckPlanRequest(request));
  return PlanFamiliesOf(std::move(kernels), device, request, out, err);
}

int RunPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto result = Run(args, out, err);
  if (!result.ok()) {
    err << "simulate plan: error: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  return *result;
}

}  // namespace scratchsim
