// Which real kernel family implements a graph.
#include "backends/cuda/kernel_registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace scratchsim::cuda {
namespace {

struct Entry {
  const char* graph_name;
  CaseFactory factory;
};

// "geglu_mlp" is models/graphs/mlp.pbtxt, the up-projection the fused GeGLU kernel implements.
constexpr Entry kEntries[] = {
    {"gemm", &MakeGemmCase},
    {"geglu_mlp", &MakeGegluCase},
    {"softmax", &MakeSoftmaxCase},
    {"ws_producer_consumer", &MakeWarpSpecializedCase},
    {"regheavy", &MakeRegHeavyCase},
};

}  // namespace

std::vector<std::string> KnownGraphNames() {
  std::vector<std::string> names;
  for (const Entry& entry : kEntries) names.push_back(entry.graph_name);
  return names;
}

absl::StatusOr<CaseFactory> FindCaseFactory(absl::string_view graph_name) {
  for (const Entry& entry : kEntries) {
    if (graph_name == entry.graph_name) return entry.factory;
  }
  return absl::NotFoundError(absl::StrCat("no CUDA kernel implements graph '", graph_name,
                                          "' (known: ", absl::StrJoin(KnownGraphNames(), ", "), ")"));
}

absl::StatusOr<std::unique_ptr<KernelCase>> MakeCase(absl::string_view graph_name,
                                                     const ParamMap& params) {
  absl::StatusOr<CaseFactory> factory = FindCaseFactory(graph_name);
  if (!factory.ok()) return factory.status();
  std::string error;
  std::unique_ptr<KernelCase> kernel = (*factory)(params, &error);
  if (kernel == nullptr) return absl::InvalidArgumentError(error);
  return kernel;
}

}  // namespace scratchsim::cuda
