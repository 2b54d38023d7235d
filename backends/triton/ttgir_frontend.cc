#include "backends/triton/ttgir_frontend.h"

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
    PlacementResult result;
    // Tensor memory is one block (TtgirKernel::tmem_columns) in a group of its own. Where the
    // plan also has exactly one shared block the two cannot be told apart, and need not be: a
    // lone block sits at 0 and the peak is its size either way.
    const size_t shared_blocks = plan_.buffers.size() + static_cast<size_t>(gaps_);
    if (tensor_memory_ && blocks.size() == 1 &&
        (shared_blocks != 1 || blocks[0].size != plan_.buffers[0].buffer.size)) {
      result.offsets.push_back(0);
      result.peak = blocks[0].size;
      return result;
    }
    if (blocks.size() != shared_blocks) {
      return absl::InternalError(absl::StrCat("TTGIR plan has ", plan_.buffers.size(), " buffers but ",
                                              blocks.size(), " blocks reached placement"));
    }
    // The last blocks may be gaps (AddGap): up to another release's larger figure, or what ops
    // crossing a cluster's CTAs may add; on top of everything the plan placed, for the whole
    // kernel.
    const size_t planned = plan_.buffers.size();
    bool resized = false;
    for (size_t i = 0; i < planned; ++i) resized |= blocks[i].size != plan_.buffers[i].buffer.size;
    if (!resized) {
      result.offsets.assign(plan_.allocation.offsets.begin(), plan_.allocation.offsets.end());
      result.peak = plan_.allocation.shared;
    } else {
      // Another pipeline depth (a suggestion lowering the rings' slots): Triton's allocator over
      // the same buffers and intervals at the new sizes.
      std::vector<TritonBuffer> buffers;
      buffers.reserve(planned);
      for (size_t i = 0; i < planned; ++i) {
        buffers.push_back(plan_.buffers[i].buffer);
        buffers.back().size = blocks[i].size;
      }
      ASSIGN_OR_RETURN(const TritonAllocation placed, AllocateLikeTriton(buffers));
      result.offsets.assign(placed.offsets.begin(), placed.offsets.end());
      result.peak = placed.shared;
    }
    for (size_t g = planned; g < blocks.size(); ++g) {
      result.offsets.push_back(result.peak);
      result.peak += blocks[g].size;
    }
    return result;
  }

  // One more gap block follows the plan's (see Place).
  void AddGap() { ++gaps_; }
  const SharedMemoryPlan& plan() const { return plan_; }
  // The graph also holds a tensor-memory block (see Place).
  void ExpectTensorMemory() { tensor_memory_ = true; }

 private:
  SharedMemoryPlan plan_;
  int gaps_ = 0;
  bool tensor_memory_ = false;
};

// Triton's cache keeps the compiled kernel's metadata, <kernel>.json with "triton_version",
// beside <kernel>.ttgir: the release that wrote the TTGIR where its text does not tell. Nothing
// (nullopt) when there is no such file or field; InvalidArgument naming the file and the field
// when the field is not a string.
absl::StatusOr<std::optional<std::string>> CacheMetadataVersion(absl::string_view ttgir_path) {
  std::string path(ttgir_path);
  if (!absl::EndsWith(path, ".ttgir")) return std::nullopt;
  path.replace(path.size() - 6, 6, ".json");
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t key = json.find("\"triton_version\"");
  if (key == std::string::npos) return std::nullopt;
  size_t v = json.find_first_not_of(" \t\r\n", key + 16);
  if (v != std::string::npos && json[v] == ':') v = json.find_first_not_of(" \t\r\n", v + 1);
  const size_t end = v == std::string::npos || json[v] != '"' ? std::string::npos : json.find('"', v + 1);
  if (end == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": field 'triton_version': expected a string"));
  }
  return json.substr(v + 1, end - v - 1);
}

// A buffer of 0 to `bytes` (an estimate) live across the whole kernel and placed on top of the
// plan's: the requirement is the figure plus `bytes`, and the verdict AT RISK where only that
// breaks the limit.
void AddEstimateGap(const std::string& doc, const std::string& basis, const std::string& name, int64_t bytes,
                    KernelGraph* graph, PlannedPolicy* policy) {
  Buffer* gap = graph->add_buffers();
  gap->set_name(name);
  gap->set_size_bytes(absl::StrCat(bytes));
  gap->set_alignment("1");
  gap->set_memory_space("smem");
  gap->set_role(SCRATCH);
  gap->set_doc(doc);
  gap->mutable_estimate()->set_low_bytes("0");
  gap->mutable_estimate()->set_high_bytes(absl::StrCat(bytes));
  gap->mutable_estimate()->set_basis(basis);
  if (graph->ops_size() == 0) graph->add_ops()->set_name("op0");
  graph->mutable_ops(0)->add_writes(name);
  graph->mutable_ops(graph->ops_size() - 1)->add_reads(name);
  policy->AddGap();
}

// Ops that move data between a cluster's CTAs (SharedMemoryPlan::cross_cta_ops) go through
// distributed shared memory, which the per-CTA rules do not size: their whole-cluster scratch
// is an estimate on top of the plan.
void AddClusterGap(const SharedMemoryPlan& plan, KernelGraph* graph, PlannedPolicy* policy) {
  if (plan.cross_cta_ops.empty() || plan.cross_cta_bytes <= 0) return;
  const std::string ops = absl::StrJoin(plan.cross_cta_ops, ", ");
  AddEstimateGap(absl::StrCat("scratch of ops crossing the cluster's CTAs: ", ops),
                 absl::StrCat(ops, " move data between the ", plan.num_ctas,
                              " CTAs of the cluster (distributed shared memory); not modelled, bounded by "
                              "their scratch at the whole cluster's shape"),
                 "cluster_gap", plan.cross_cta_bytes, graph, policy);
}

// The cluster's own checks (Triton launches num_ctas CTAs as one thread-block cluster, sm_90 and
// later only; CUDA allows 8 CTAs per cluster portably, 16 with
// cudaFuncAttributeNonPortableClusterSizeAllowed on sm_90/sm_100) and the report's sentence:
// the kernel is a cluster launch and the figure is per CTA.
absl::Status CheckCluster(const TtgirModule& module, std::vector<std::string>* notes) {
  if (module.num_ctas <= 1) return absl::OkStatus();
  if (!absl::StartsWith(module.target, "cuda:")) {
    // Triton's common allocation sizes per CTA on every target; no cluster fixture of another
    // vendor checks it.
    notes->push_back(absl::StrCat("Cluster launch: ", module.num_ctas, " CTAs per cluster (ttg.num-ctas) on ",
                                  module.target.empty() ? "an unnamed target" : module.target,
                                  "; sized per CTA as on NVIDIA, which no fixture of this target checks."));
    return absl::OkStatus();
  }
  int cc = 0;
  if (!absl::SimpleAtoi(absl::string_view(module.target).substr(5), &cc) || cc < 90) {
    return absl::InvalidArgumentError(absl::StrCat(module.origin, ": ttg.num-ctas = ", module.num_ctas, " on ",
                                                   module.target, ": thread-block clusters need NVIDIA sm_90 or later"));
  }
  if (module.num_ctas > 16) {
    return absl::InvalidArgumentError(absl::StrCat(module.origin, ": ttg.num-ctas = ", module.num_ctas,
                                                   ": a thread-block cluster holds at most 16 CTAs"));
  }
  notes->push_back(absl::StrCat("Cluster launch: ", module.num_ctas,
                                " CTAs per cluster (ttg.num-ctas); shared memory is per CTA, and so is this figure."));
  if (module.num_ctas > 8) {
    notes->push_back(absl::StrCat(module.num_ctas, " CTAs per cluster is past the portable 8: the launch needs "
                                  "cudaFuncAttributeNonPortableClusterSizeAllowed."));
  }
  return absl::OkStatus();
}

// Where neither the caller nor the TTGIR says which release wrote it, no release may be assumed
// (a plain FITS under 3.9's rules was wrong for 3.6 kernels): every modelled release plans the
// module. When they agree the figure is settled; when they differ, the graph is the smaller plan
// plus a gap buffer up to the larger, an estimate from 0 to the difference, so the requirement is
// the larger figure, the verdict FITS only if it fits, DOES NOT FIT if even the smaller breaks
// the limit, and AT RISK in between.
absl::StatusOr<TtgirKernel> PlanUnderEveryRelease(const TtgirModule& module, bool tensor_memory,
                                                  const TtgirSourceMap& sources) {
  std::vector<SharedMemoryPlan> plans;
  for (TritonRelease r : {TritonRelease::k3_6, TritonRelease::k3_9}) {
    PlanOptions o;
    o.release = r;
    ASSIGN_OR_RETURN(SharedMemoryPlan plan, PlanSharedMemory(module, o));
    plans.push_back(std::move(plan));
  }
  const bool differ = plans[0].allocation.shared != plans[1].allocation.shared;
  const size_t smaller = plans[0].allocation.shared <= plans[1].allocation.shared ? 0 : 1;
  SharedMemoryPlan plan = std::move(plans[differ ? smaller : 1]);
  const int64_t low = plan.allocation.shared, high = plans[1 - smaller].allocation.shared;
  const std::string figures = absl::StrCat("Triton 3.6 places ", plans[0].allocation.shared, " bytes, 3.9 places ",
                                           plans[1].allocation.shared);
  plan.release = TritonRelease::kUnknown;
  plan.release_source = absl::StrCat(
      "the TTGIR does not tell which release wrote it and no Triton cache metadata (<kernel>.json with "
      "triton_version) lies beside it: ",
      figures, differ ? "; the larger is the requirement" : ", the same figure",
      "; set SCRATCHSIM_TRITON_RELEASE=3.6|3.9 to judge under one");
  TtgirKernel kernel;
  kernel.target = module.target;
  ASSIGN_OR_RETURN(kernel.graph, ImportTtgir(module, plan, &sources));
  auto policy = std::make_shared<PlannedPolicy>(std::move(plan));
  if (tensor_memory) policy->ExpectTensorMemory();
  if (differ) {
    AddEstimateGap(absl::StrCat("the other release's larger figure: ", figures),
           absl::StrCat(figures, "; which release wrote the TTGIR is not told"), "release_gap", high - low,
           &kernel.graph, policy.get());
  }
  AddClusterGap(policy->plan(), &kernel.graph, policy.get());
  kernel.policy = std::move(policy);
  return kernel;
}

}  // namespace

void ApplyNamedRelease(absl::string_view version, absl::string_view where, PlanOptions* options, std::string* note) {
  absl::StatusOr<TritonRelease> release = ParseTritonRelease(version);
  if (release.ok()) {
    options->release = *release;
    options->release_source = absl::StrCat("Triton ", version, " named by ", where);
  } else {
    *note = absl::StrCat("Triton ", version, ", named by ", where, ", is a release whose rules are not modelled.");
  }
}

absl::StatusOr<TtgirKernel> LoadTtgirKernel(absl::string_view path, const PlanOptions& options) {
  ASSIGN_OR_RETURN(std::string text, ReadTtgirFile(std::string_view(path.data(), path.size())));
  PlanOptions with_metadata = options;
  std::string metadata_note;
  if (options.release == TritonRelease::kUnknown) {
    ASSIGN_OR_RETURN(const std::optional<std::string> version, CacheMetadataVersion(path));
    if (version) {
      ApplyNamedRelease(*version, "the triton_version of the Triton cache metadata beside it", &with_metadata,
                        &metadata_note);
    }
  }
  ASSIGN_OR_RETURN(TtgirKernel kernel, LoadTtgirKernelFromText(text, path, with_metadata));
  if (!metadata_note.empty()) kernel.notes.push_back(std::move(metadata_note));
  return kernel;
}

absl::StatusOr<TtgirKernel> LoadTtgirKernelFromText(absl::string_view text, absl::string_view origin,
                                                    const PlanOptions& options) {
  // One parse and one plan: the graph is imported from the module the plan was made for.
  ASSIGN_OR_RETURN(TtgirModule module, ParseTtgir(std::string_view(text.data(), text.size()),
                                                   std::string_view(origin.data(), origin.size())));
  ASSIGN_OR_RETURN(const TensorMemoryPlan tmem, PlanTensorMemory(module));
  const TtgirSourceMap sources = TtgirSourceMap::Read(std::string_view(text.data(), text.size()));
  std::vector<std::string> cluster_notes;
  RETURN_IF_ERROR(CheckCluster(module, &cluster_notes));
  TtgirKernel kernel;
  if (options.release == TritonRelease::kUnknown && DetectTritonRelease(module).release == TritonRelease::kUnknown) {
    ASSIGN_OR_RETURN(kernel, PlanUnderEveryRelease(module, tmem.columns > 0, sources));
  } else {
    ASSIGN_OR_RETURN(SharedMemoryPlan plan, PlanSharedMemory(module, options));
    kernel.target = module.target;
    ASSIGN_OR_RETURN(kernel.graph, ImportTtgir(module, plan, &sources));
    auto policy = std::make_shared<PlannedPolicy>(std::move(plan));
    if (tmem.columns > 0) policy->ExpectTensorMemory();
    AddClusterGap(policy->plan(), &kernel.graph, policy.get());
    kernel.policy = std::move(policy);
  }
  kernel.notes.insert(kernel.notes.end(), cluster_notes.begin(), cluster_notes.end());
  for (const std::string& n : module.unlisted) kernel.notes.push_back(absl::StrCat("Not modelled, assumed: ", n, "."));
  kernel.tmem_columns = tmem.columns;
  return kernel;
}

}  // namespace scratchsim::triton
