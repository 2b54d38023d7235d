// The analysis pipeline every client runs (the `simulate` command, plan, calibrate, validate, the
// Python module, tests): Load -> Lower -> Compile -> Bind -> Simulate/Explain -> Word -> Confirm.
#ifndef SCRATCHSIM_SIM_PIPELINE_H_
#define SCRATCHSIM_SIM_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "proto/report.pb.h"
#include "sim/frontend.h"
#include "sim/graph.h"
#include "sim/proto_io.h"
#include "sim/simulator.h"

namespace scratchsim {

// Where a kernel comes from: a file, or its contents handed over in memory (the Python module).
struct KernelInput {
  // "graph" (a KernelGraph) or a front end's input flag ("ttgir").
  std::string reader = "graph";
  // The file to read; unused when `contents` is set.
  std::string path;
  // The kernel itself; `format` says how a graph is written, `origin` names it in messages.
  std::optional<std::string> contents;
  ProtoFormat format = ProtoFormat::kText;
  std::string origin;

  static KernelInput GraphFile(std::string path);
};

// When the toolchain's real compiler settles the verdict (simulate --confirm). kAtRisk compiles
// what the model cannot settle: an AT RISK, and a FITS its front end calls unsettled
// (Report.unsettled).
enum class ConfirmPolicy { kNever, kAlways, kAtRisk };

// "always" or "at-risk" ("at_risk", the Python spelling, too); anything else names `what`.
absl::StatusOr<ConfirmPolicy> ParseConfirmPolicy(absl::string_view text, absl::string_view what = "--confirm");

// Every choice the pipeline's stages take, typed.
struct AnalysisOptions {
  LoadOptions load;                // Load: --any-target
  std::vector<std::string> sets;   // Bind: NAME=VALUE overrides (--set)
  // Simulate/Explain: policy, suggestions, what the report keeps. policy_override comes from the
  // kernel (a front end's own allocator), not from here.
  SimulateOptions simulate;
  ConfirmPolicy confirm = ConfirmPolicy::kNever;  // Confirm
};

// A kernel compiled and bound: what the engine, the planner and the validators evaluate. For a
// plain graph `kernel.graph` has been moved into `compiled` (one copy of a large graph, not two);
// a front end's kernel keeps its graph for Word.
struct CompiledKernel {
  Kernel kernel;
  CompiledGraph compiled;
  std::vector<int64_t> values;  // BindParameters: the defaults with the overrides applied
};

// Load: reads `input` (a graph file or contents, or a front end's own input) and lowers it.
absl::StatusOr<Kernel> LoadKernel(const KernelInput& input, const DeviceModel& device, const LoadOptions& options);

// Lower: a graph carrying a front end's description (a Pallas call) becomes plain buffers for
// `device`, once; the front end keeps what it learned in `Kernel.lowering` for Word.
absl::StatusOr<Kernel> LowerKernel(Kernel kernel, const DeviceModel& device);

// Compile -> Bind; a bad override is named as `spelling` writes it.
absl::StatusOr<CompiledKernel> CompileKernel(Kernel kernel, absl::Span<const std::string> sets,
                                             const Spelling& spelling = {});

// The same for a graph no front end owns (the validators', the tests'): `origin` names it.
absl::StatusOr<CompiledKernel> CompileGraphKernel(KernelGraph graph, std::string origin,
                                                  absl::Span<const std::string> sets = {});

// Simulate/Explain -> Word -> Confirm: the report of one configuration, worded by the kernel's
// front end. Confirm: the compiler's verdict is the verdict and the model's stays beside it
// (Report.confirmation, ApplyConfirmation); fixes are the compiler's where it measured them.
absl::StatusOr<Report> AnalyzeKernel(const CompiledKernel& kernel, const DeviceModel& device,
                                     const AnalysisOptions& options);

// The whole pipeline: Load -> ... -> Confirm.
absl::StatusOr<Report> Analyze(const KernelInput& input, const DeviceModel& device, const AnalysisOptions& options);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PIPELINE_H_
