// The TPU front end: a graph with a Pallas call is lowered to plain buffers for the fit engine,
// the engine's verdict is worded as XLA words it, and libtpu confirms it on request (--confirm).
// Registered with the driver (sim/frontend.h).
#include <memory>
#include <string>

#include "backends/tpu/libtpu_confirm.h"
#include "backends/tpu/pallas_lowering.h"
#include "backends/tpu/xla_verdict.h"
#include "sim/frontend.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// What LowerPallas learned besides the plain graph (its notes, the semaphores), for Word.
struct PallasLoweringState : LoweringState {
  PallasLowering lowering;  // graph moved out into Kernel.graph
};

class TpuFrontEnd : public FrontEnd {
 public:
  absl::string_view name() const override { return "tpu"; }

  bool Lowers(const KernelGraph& graph) const override { return graph.has_pallas(); }

  absl::StatusOr<Kernel> Lower(Kernel kernel, const DeviceModel& device) const override {
    auto state = std::make_shared<PallasLoweringState>();
    ASSIGN_OR_RETURN(state->lowering, LowerPallas(kernel.graph, device));
    kernel.source = std::move(kernel.graph);
    kernel.graph = std::move(state->lowering.graph);
    state->lowering.graph.Clear();
    kernel.lowering = std::move(state);
    return kernel;
  }

  absl::Status Word(const Kernel& kernel, const DeviceModel& device, Report* report) const override {
    const auto* state = dynamic_cast<const PallasLoweringState*>(kernel.lowering.get());
    if (state == nullptr) return absl::InternalError("tpu: a Pallas kernel reached Word without its lowering");
    return WordTpuReport(kernel.source, state->lowering, device, report);
  }

  absl::Status Confirm(const Kernel& kernel, const DeviceModel& device, Report* report) const override {
    ASSIGN_OR_RETURN(CompilerConfirmation confirmation, ConfirmWithLibtpu(kernel.source, kernel.origin, device));
    ApplyLibtpuConfirmation(std::move(confirmation), device, report);
    return absl::OkStatus();
  }

  std::string ConfirmingCompiler(const Kernel& kernel) const override {
    return kernel.source.pallas().jax_export().empty() ? "" : "libtpu";
  }
};

const FrontEndRegistration registration(std::make_unique<TpuFrontEnd>());

}  // namespace
}  // namespace scratchsim
