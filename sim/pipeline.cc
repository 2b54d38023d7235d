#include "sim/pipeline.h"

#include <filesystem>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// A graph named by nothing takes its file's name.
void NameAfterOrigin(Kernel* kernel) {
  if (kernel->graph.name().empty()) kernel->graph.set_name(std::filesystem::path(kernel->origin).stem().string());
}

absl::StatusOr<Kernel> ReadGraph(const KernelInput& input) {
  Kernel kernel;
  if (input.contents.has_value()) {
    kernel.origin = input.origin;
    RETURN_IF_ERROR(ParseProto(*input.contents, input.format, input.origin, &kernel.graph));
  } else {
    kernel.origin = input.path;
    ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(kernel.origin));
    kernel.graph = std::move(file.graph);
    kernel.wire = std::move(file.wire);
  }
  NameAfterOrigin(&kernel);
  return kernel;
}

absl::StatusOr<Kernel> ReadWithFrontEnd(const FrontEnd& reader, const KernelInput& input, const DeviceModel& device,
                                        const LoadOptions& options) {
  Kernel kernel;
  if (input.contents.has_value()) {
    ASSIGN_OR_RETURN(kernel, reader.Read(*input.contents, input.origin, device, options));
  } else {
    ASSIGN_OR_RETURN(kernel, reader.Load(input.path, device, options));
  }
  kernel.front_end = &reader;
  return kernel;
}

// The advice an AT RISK or estimated DOES NOT FIT report ends with when the kernel's compiler
// could settle it on this host (and did not).
void AdviseSettlingWithCompiler(const std::string& compiler, Report* report) {
  if (compiler.empty() || report->has_confirmation()) return;
  if (report->verdict() == AT_RISK) {
    // After the fixes that change the kernel: this one changes nothing.
    Suggestion* settle = report->add_suggestions();
    settle->set_text(absl::StrCat("or keep it as it is and let ", compiler, " settle the AT RISK: --confirm at-risk ",
                                  "compiles it on this host and reports its verdict (Python: confirm=\"at_risk\")"));
    settle->set_settle_with_compiler(compiler);
  } else if (report->verdict() == FITS && !report->unsettled().empty()) {
    Suggestion* settle = report->add_suggestions();
    settle->set_text(absl::StrCat("let ", compiler, " settle this FITS: --confirm at-risk compiles it on this host and ",
                                  "reports its verdict (Python: confirm=\"at_risk\", pallas.check's default where ",
                                  compiler, " is installed)"));
    settle->set_settle_with_compiler(compiler);
  }
  const bool estimated = absl::c_any_of(report->spaces(), [](const SpaceReport& s) { return s.has_estimates(); });
  const bool limit_fix =
      absl::c_any_of(report->suggestions(), [](const Suggestion& s) { return s.raise_limit_bytes() > 0; });
  if (report->verdict() == DOES_NOT_FIT && estimated && limit_fix) {
    // The model's limit holds its estimates at their high bound: the compiler can measure the
    // one the kernel needs.
    report->add_notes(absl::StrCat("the limit to raise to holds the estimates at their high bound; --confirm always has ",
                                   compiler, " measure the one it needs on this host (Python: confirm=\"always\")"));
  }
}

absl::Status RefuseConfirmingPlainGraph(const Kernel& kernel, ConfirmPolicy confirm) {
  if (confirm == ConfirmPolicy::kNever || kernel.front_end != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--confirm: ", kernel.origin, " is a plain graph, which no compiler builds; a Pallas graph (pallas) can be confirmed"));
}

}  // namespace

KernelInput KernelInput::GraphFile(std::string path) {
  KernelInput input;
  input.path = std::move(path);
  return input;
}

absl::StatusOr<ConfirmPolicy> ParseConfirmPolicy(absl::string_view text, absl::string_view what) {
  if (text == "always") return ConfirmPolicy::kAlways;
  if (text == "at-risk" || text == "at_risk") return ConfirmPolicy::kAtRisk;
  return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' is not one of always, at-risk"));
}

absl::StatusOr<Kernel> LowerKernel(Kernel kernel, const DeviceModel& device) {
  for (const auto& front_end : FrontEnds()) {
    if (!front_end->Lowers(kernel.graph)) continue;
    if (!kernel.wire.empty()) {  // the front end rewrites the whole graph
      GraphFile file{std::move(kernel.graph), std::move(kernel.wire)};
      RETURN_IF_ERROR(DecodeGraphWire(&file, kernel.origin));
      kernel.graph = std::move(file.graph);
      kernel.wire.clear();
    }
    const std::string origin = kernel.origin;
    absl::StatusOr<Kernel> lowered = front_end->Lower(std::move(kernel), device);
    if (!lowered.ok()) {
      // Name the file as every other bad-input message does (the front end names the field).
      const std::string message(lowered.status().message());
      if (origin.empty() || absl::StartsWith(message, origin)) return lowered.status();
      return absl::Status(lowered.status().code(), absl::StrCat(origin, ": ", message));
    }
    kernel = *std::move(lowered);
    kernel.front_end = front_end.get();
  }
  if (kernel.graph.has_pallas()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kernel.origin, ": field 'pallas': this build has no TPU front end to lower it"));
  }
  return kernel;
}

absl::StatusOr<Kernel> LoadKernel(const KernelInput& input, const DeviceModel& device, const LoadOptions& options) {
  if (input.contents.has_value() && MaxInputBytes() >= 0 &&
      static_cast<int64_t>(input.contents->size()) > MaxInputBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(input.origin, ": ", input.contents->size(),
                                                   " bytes is larger than the input limit of ", MaxInputBytes(),
                                                   " bytes (raise it with --max-input-mib)"));
  }
  if (input.reader == "graph") {
    ASSIGN_OR_RETURN(Kernel kernel, ReadGraph(input));
    return LowerKernel(std::move(kernel), device);
  }
  for (const auto& front_end : FrontEnds()) {
    if (front_end->input_flag().empty() || front_end->input_flag() != input.reader) continue;
    ASSIGN_OR_RETURN(Kernel kernel, ReadWithFrontEnd(*front_end, input, device, options));
    return LowerKernel(std::move(kernel), device);
  }
  return absl::InvalidArgumentError(absl::StrCat("no front end of this build reads '", input.reader, "'"));
}

absl::StatusOr<CompiledKernel> CompileKernel(Kernel kernel, absl::Span<const std::string> sets,
                                             const Spelling& spelling) {
  CompiledKernel out;
  // A plain graph is compiled in place (a front end may still need its graph to word the
  // verdict): one copy of a large graph in memory, not two.
  ASSIGN_OR_RETURN(out.compiled, CompileGraph(kernel.front_end == nullptr ? std::move(kernel.graph) : kernel.graph,
                                              kernel.origin, std::move(kernel.wire)));
  ASSIGN_OR_RETURN(out.values, BindParameters(out.compiled, std::vector<std::string>(sets.begin(), sets.end()), spelling));
  out.kernel = std::move(kernel);
  return out;
}

absl::StatusOr<CompiledKernel> CompileGraphKernel(KernelGraph graph, std::string origin,
                                                  absl::Span<const std::string> sets) {
  Kernel kernel;
  kernel.graph = std::move(graph);
  kernel.origin = std::move(origin);
  return CompileKernel(std::move(kernel), sets);
}

absl::StatusOr<Report> AnalyzeKernel(const CompiledKernel& compiled, const DeviceModel& device,
                                     const AnalysisOptions& options) {
  const Kernel& kernel = compiled.kernel;
  RETURN_IF_ERROR(RefuseConfirmingPlainGraph(kernel, options.confirm));
  SimulateOptions simulate = options.simulate;
  simulate.policy_override = kernel.policy;
  ASSIGN_OR_RETURN(Report report, Simulate(compiled.compiled, device, compiled.values, simulate));
  if (kernel.front_end == nullptr) return report;

  const bool fits = report.fits();
  RETURN_IF_ERROR(kernel.front_end->Word(kernel, device, &report));
  if (report.fits() != fits) return absl::InternalError(absl::StrCat(kernel.front_end->name(), " changed the verdict"));
  // What the model cannot settle: an AT RISK, or a FITS its front end calls unsettled.
  const bool unsettled = report.verdict() == AT_RISK || (report.verdict() == FITS && !report.unsettled().empty());
  if (options.confirm == ConfirmPolicy::kAlways || (options.confirm == ConfirmPolicy::kAtRisk && unsettled)) {
    RETURN_IF_ERROR(kernel.front_end->Confirm(kernel, device, &report));
  } else if (options.confirm == ConfirmPolicy::kAtRisk) {
    report.add_notes("--confirm at-risk: the model settled the verdict (not AT RISK, not an unsettled FITS), so "
                     "nothing was compiled");
  }
  AdviseSettlingWithCompiler(kernel.front_end->ConfirmingCompiler(kernel), &report);
  return report;
}

absl::StatusOr<Report> Analyze(const KernelInput& input, const DeviceModel& device, const AnalysisOptions& options) {
  ASSIGN_OR_RETURN(Kernel kernel, LoadKernel(input, device, options.load));
  // Before compiling: a plain graph has nothing to confirm with.
  RETURN_IF_ERROR(RefuseConfirmingPlainGraph(kernel, options.confirm));
  ASSIGN_OR_RETURN(CompiledKernel compiled, CompileKernel(std::move(kernel), options.sets, options.load.spelling));
  return AnalyzeKernel(compiled, device, options);
}

}  // namespace scratchsim
