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

class TpuFrontEnd : public FrontEnd {
 public:
  absl::string_view name() const override { return "tpu"; }

  bool Lowers(const KernelGraph& graph) const override { return graph.has_pallas(); }

  absl::StatusOr<Kernel> Lower(Kernel kernel, const DeviceModel& device) const override {
    ASSIGN_OR_RETURN(PallasLowering lowering, LowerPallas(kernel.graph, device));
    kernel.source = kernel.graph;
    kernel.graph = std::move(lowering.graph);
    return kernel;
  }

  absl::Status Word(const Kernel& kernel, const DeviceModel& device, Report* report) const override {
    // The lowering is a pure function of the source: redo it for its notes.
    ASSIGN_OR_RETURN(PallasLowering lowering, LowerPallas(kernel.source, device));
    return WordTpuReport(kernel.source, lowering, device, report);
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
