#include "backends/triton/ttgir_frontend.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_import.h"
#include "backends/triton/ttgir_parser.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

// Replays a plan Triton's allocator made for the module the graph was imported from. The
// graph has one buffer per planned allocation, in plan order, so blocks map one to one.
class PlannedPolicy : public PlacementPolicy {
 public:
  explicit PlannedPolicy(SharedMemoryPlan plan) : plan_(std::move(plan)) {}

  absl::string_view name() const override { return "triton"; }

  absl::StatusOr<PlacementResult> Place(absl::Span<const Block> blocks) const override {
    if (blocks.size() != plan_.buffers.size()) {
      return absl::InternalError(absl::StrCat("TTGIR plan has ", plan_.buffers.size(), " buffers but ",
                                              blocks.size(), " blocks reached placement"));
    }
    PlacementResult result;
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].size != plan_.buffers[i].buffer.size) {
        return absl::InternalError(absl::StrCat("TTGIR plan buffer ", i, " is ", plan_.buffers[i].buffer.size,
                                                " bytes but its block is ", blocks[i].size));
      }
      result.offsets.push_back(plan_.allocation.offsets[i]);
    }
    result.peak = plan_.allocation.shared;
    return result;
  }

 private:
  SharedMemoryPlan plan_;
};

}  // namespace

absl::StatusOr<TtgirKernel> LoadTtgirKernel(absl::string_view path, const PlanOptions& options) {
  ASSIGN_OR_RETURN(std::string text, ReadTtgirFile(std::string_view(path.data(), path.size())));
  return LoadTtgirKernelFromText(text, path, options);
}

absl::StatusOr<TtgirKernel> LoadTtgirKernelFromText(absl::string_view text, absl::string_view origin,
                                                    const PlanOptions& options) {
  // One parse and one plan: the graph is imported from the module the plan was made for.
  ASSIGN_OR_RETURN(TtgirModule module, ParseTtgir(std::string_view(text.data(), text.size()),
                                                   std::string_view(origin.data(), origin.size())));
  ASSIGN_OR_RETURN(SharedMemoryPlan plan, PlanSharedMemory(module, options));
  TtgirKernel kernel;
  kernel.target = module.target;
  for (const std::string& n : module.unlisted) kernel.notes.push_back(absl::StrCat("Not modelled, assumed: ", n, "."));
  ASSIGN_OR_RETURN(kernel.graph, ImportTtgir(module, plan));
  kernel.policy = std::make_shared<PlannedPolicy>(std::move(plan));
  return kernel;
}

}  // namespace scratchsim::triton
