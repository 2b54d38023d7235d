// Pipelining depth per MMA kind, measured on Triton 3.6 (tests/data/triton, 2026-11-25, H200
// and compile-only sm_80/100/120 targets): with mma.sync the loads go through cp.async and the
// pipeliner keeps num_stages - 1 buffers; with wgmma and tcgen05 the MMA itself reads shared
// memory asynchronously and the pipeliner keeps num_stages buffers.
#include "backends/triton/pipeline_model.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace scratchsim::triton {

const char* TritonMmaName(TritonMma mma) {
  switch (mma) {
    case TritonMma::kMmaV2: return "mma.sync (cp.async pipelining)";
    case TritonMma::kWgmma: return "wgmma";
    case TritonMma::kTcgen05: return "tcgen05";
  }
  return "?";
}

absl::StatusOr<TritonMma> SelectMma(const DotLoop& loop) {
  if (loop.target_cc < 80) {
    return absl::InvalidArgumentError(
        absl::StrCat("sm_", loop.target_cc, ": the Triton model covers sm_80 and newer"));
  }
  if (loop.num_warps <= 0 || loop.block_m <= 0 || loop.num_stages <= 0) {
    return absl::InvalidArgumentError("num_warps, block_m and num_stages must be positive");
  }
  const int major = loop.target_cc / 10;
  if (major == 9 && loop.block_m >= 64 && loop.num_warps % 4 == 0) return TritonMma::kWgmma;
  if (major == 10 && loop.block_m >= 64) return TritonMma::kTcgen05;
  return TritonMma::kMmaV2;
}

absl::StatusOr<PipelineDepth> PipelineCopies(const DotLoop& loop) {
  auto mma = SelectMma(loop);
  if (!mma.ok()) return mma.status();
  PipelineDepth d;
  d.mma = *mma;
  d.assumptions.push_back(absl::StrCat("MMA: ", TritonMmaName(d.mma), " (sm_", loop.target_cc,
                                       ", BLOCK_M=", loop.block_m, ", num_warps=",
                                       loop.num_warps, ")"));
  const JitSpecialization& j = loop.jit;
  d.assumptions.push_back(absl::StrCat(
      "JIT specialization: pointers ", j.pointers_divisible_by_16 ? "" : "not ",
      "divisible by 16, leading strides ", j.strides_divisible_by_16 ? "" : "not ",
      "divisible by 16, inner stride ", j.inner_stride_is_1 ? "equal to 1" : "not 1"));
  // Without 16-byte alignment and a unit inner stride the loads are not vectorized, the
  // async-copy path is not taken, and the loop's loads stay in registers.
  const bool vectorized = j.pointers_divisible_by_16 && j.strides_divisible_by_16 &&
                          j.inner_stride_is_1;
  if (loop.num_stages <= 1 || !vectorized) {
    d.copies = 1;
    d.multi_buffered = false;
    d.assumptions.push_back(loop.num_stages <= 1
                                ? "num_stages <= 1: no software pipelining, one staging copy"
                                : "loads not vectorized: not pipelined, one staging copy");
    return d;
  }
  d.multi_buffered = true;
  d.copies = d.mma == TritonMma::kMmaV2 ? loop.num_stages - 1 : loop.num_stages;
  return d;
}

absl::Status ApplyTritonPipelining(const DotLoop& loop, KernelGraph* graph) {
  auto depth = PipelineCopies(loop);
  if (!depth.ok()) return depth.status();
  std::map<std::string, const Loop*> loops;
  for (const Loop& l : graph->loops()) loops[l.name()] = &l;
  std::set<std::string> pipelined;
  for (const Op& op : graph->ops()) {
    auto it = loops.find(op.loop());
    if (op.loop().empty() || it == loops.end() || it->second->num_stages().empty()) continue;
    for (const std::string& w : op.writes()) pipelined.insert(w);
  }
  for (Buffer& b : *graph->mutable_buffers()) {
    if (b.role() != OPERAND || !pipelined.count(b.name())) continue;
    b.set_copies(absl::StrCat(depth->copies));
  }
  graph->set_doc(absl::StrCat(graph->doc(), graph->doc().empty() ? "" : " ",
                              "Triton pipelining model: ", depth->copies,
                              " copies per operand tile. Assumed: ",
                              absl::StrJoin(depth->assumptions, "; "), "."));
  return absl::OkStatus();
}

}  // namespace scratchsim::triton
