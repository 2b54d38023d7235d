// The `simulate --ttgir` front end: a TTGIR file becomes a KernelGraph plus the placement
// Triton's own allocator makes for it, so the report's figure is Triton's metadata.shared.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_FRONTEND_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_FRONTEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
// PlanTtgir and SharedMemoryPlan, for callers that check the front end against Triton's plan
// of the same file (tests/ttgir_cli_test.cc).
#include "backends/triton/ttgir_allocation.h"
#include "proto/graph.pb.h"
#include "sim/placement.h"

namespace scratchsim::triton {

struct TtgirKernel {
  KernelGraph graph;
  // The module's ttg.target: "cuda:90", "hip:gfx942" (empty when the module names none).
  std::string target;
  // Places the graph's blocks where Triton's allocator puts them. Triton's allocator runs on
  // the module itself, where it also sees warp-specialize regions (buffers of concurrent
  // partitions never share addresses), which Blocks cannot express.
  std::shared_ptr<const PlacementPolicy> policy;
  // Sentences the report carries besides the figure: what the rules took on an assumption
  // (TtgirModule::unlisted), each naming the construct and its line.
  std::vector<std::string> notes;
  // Tensor memory columns Triton allocates (PlanTensorMemory; 0: none). The caller, knowing the
  // device, adds it to the graph as one buffer of that many columns; the policy places a lone
  // block of another space at 0.
  int64_t tmem_columns = 0;
};

// A release named by its version string (Triton's __version__, a cache metadata's
// triton_version) `where` says who named it: its rules where modelled (options->release and
// release_source), else nothing changes and `note` says the named release is not modelled.
void ApplyNamedRelease(absl::string_view version, absl::string_view where, PlanOptions* options, std::string* note);

// `options.release`: whose allocation rules apply where the TTGIR does not tell its Triton
// release (PlanOptions; the graph's doc says which rules were used and why).
absl::StatusOr<TtgirKernel> LoadTtgirKernel(absl::string_view path, const PlanOptions& options = {});
// The same from the text of a .ttgir file; `origin` names it in messages ("origin:line: ...").
absl::StatusOr<TtgirKernel> LoadTtgirKernelFromText(absl::string_view text, absl::string_view origin,
                                                    const PlanOptions& options = {});

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_FRONTEND_H_
