// The Triton front end: `simulate --ttgir FILE` reads the TritonGPU IR Triton writes to its cache
// and places it with Triton's own allocation. Registered with the driver (sim/frontend.h).
#include <memory>
#include <string>

#include "backends/triton/ttgir_frontend.h"
#include "sim/frontend.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

class TritonFrontEnd : public FrontEnd {
 public:
  absl::string_view name() const override { return "triton"; }
  absl::string_view input_flag() const override { return "ttgir"; }
  absl::string_view input_help() const override {
    return "A kernel Triton compiled (the .ttgir in ~/.triton/cache/<hash>/): shared memory placed exactly as "
           "Triton's allocator does, so Required equals metadata.shared.";
  }

  absl::StatusOr<Kernel> Load(absl::string_view path, const DeviceModel& device,
                              const LoadOptions& options) const override {
    ASSIGN_OR_RETURN(triton::TtgirKernel loaded, triton::LoadTtgirKernel(path));
    Kernel kernel;
    kernel.origin = std::string(path);
    kernel.graph = std::move(loaded.graph);
    kernel.source = kernel.graph;
    kernel.policy = std::move(loaded.policy);
    return kernel;
  }
};

const FrontEndRegistration registration(std::make_unique<TritonFrontEnd>());

}  // namespace
}  // namespace scratchsim
