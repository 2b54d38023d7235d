// Which real kernel family implements a graph: the graph's name picks the factory that turns
// parameter values into a launchable KernelCase.
#ifndef SCRATCHSIM_BACKENDS_CUDA_KERNEL_REGISTRY_H_
#define SCRATCHSIM_BACKENDS_CUDA_KERNEL_REGISTRY_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cuda/kernel_case.h"

namespace scratchsim::cuda {

// The factory for graphs named `graph_name` ("gemm", "geglu_mlp", "softmax",
// "ws_producer_consumer", "regheavy").
absl::StatusOr<CaseFactory> FindCaseFactory(absl::string_view graph_name);

// Names FindCaseFactory accepts, for messages.
std::vector<std::string> KnownGraphNames();

// The case for `params`, or InvalidArgument naming the graph and why.
absl::StatusOr<std::unique_ptr<KernelCase>> MakeCase(absl::string_view graph_name,
                                                     const ParamMap& params);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_KERNEL_REGISTRY_H_
