// The Triton front end: `simulate --ttgir FILE` reads the TritonGPU IR Triton writes to its cache
// and places it with Triton's own allocation. Registered with the driver (sim/frontend.h).
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/triton/ttgir_frontend.h"
#include "sim/frontend.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// What the report says besides the figure (TtgirKernel::notes), kept with the kernel for Word.
struct TritonNotes : LoweringState {
  std::vector<std::string> notes;
};

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
    std::string note;
    ASSIGN_OR_RETURN(const triton::PlanOptions plan_options, PlanOptionsFor(options, &note));
    ASSIGN_OR_RETURN(triton::TtgirKernel loaded, triton::LoadTtgirKernel(path, plan_options));
    if (!note.empty()) loaded.notes.push_back(std::move(note));
    return Finish(std::move(loaded), path, device, options);
  }

  absl::StatusOr<Kernel> Read(absl::string_view text, absl::string_view origin, const DeviceModel& device,
                              const LoadOptions& options) const override {
    std::string note;
    ASSIGN_OR_RETURN(const triton::PlanOptions plan_options, PlanOptionsFor(options, &note));
    ASSIGN_OR_RETURN(triton::TtgirKernel loaded, triton::LoadTtgirKernelFromText(text, origin, plan_options));
    if (!note.empty()) loaded.notes.push_back(std::move(note));
    return Finish(std::move(loaded), origin, device, options);
  }

  // Whose allocation rules apply where the TTGIR does not say (AMD kernels without a
  // release-specific construct; docs/triton.md, "Releases"), first found of:
  // SCRATCHSIM_TRITON_RELEASE=3.6|3.9 (the user's word), the release the caller lowered the
  // kernel with (LoadOptions.producer_release: Python's installed Triton; a release not modelled
  // is named in `note` and changes nothing), then what the TTGIR and its cache metadata tell.
  static absl::StatusOr<triton::PlanOptions> PlanOptionsFor(const LoadOptions& load, std::string* note) {
    triton::PlanOptions options;
    const char* release = std::getenv("SCRATCHSIM_TRITON_RELEASE");
    if (release == nullptr || *release == '\0') {
      if (!load.producer_release.empty()) {
        triton::ApplyNamedRelease(load.producer_release, "the caller, the installed Triton that lowered it",
                                  &options, note);
      }
      return options;
    }
    absl::StatusOr<triton::TritonRelease> parsed = triton::ParseTritonRelease(release);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("SCRATCHSIM_TRITON_RELEASE: ", parsed.status().message()));
    }
    options.release = *parsed;
    return options;
  }

  // Says whose allocation rules gave the figure, and where the release came from (the TTGIR, the
  // environment, or an assumption): the one sentence ImportTtgir puts in the graph's doc.
  absl::Status Word(const Kernel& kernel, const DeviceModel& device, Report* report) const override {
    const std::string& doc = kernel.source.doc();
    const size_t at = doc.find("Allocation rules of Triton ");
    if (at != std::string::npos) report->add_notes(doc.substr(at));
    if (const auto* state = dynamic_cast<const TritonNotes*>(kernel.lowering.get())) {
      for (const std::string& n : state->notes) report->add_notes(n);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Kernel> Finish(triton::TtgirKernel loaded, absl::string_view path, const DeviceModel& device,
                                const LoadOptions& options) const {
    if (!options.any_target) RETURN_IF_ERROR(CheckTarget(path, loaded.target, device, options.spelling));
    Kernel kernel;
    kernel.front_end = this;
    kernel.origin = std::string(path);
    kernel.graph = std::move(loaded.graph);
    AddTensorMemory(loaded.tmem_columns, device, kernel.graph);
    kernel.source = kernel.graph;
    kernel.policy = std::move(loaded.policy);
    auto state = std::make_shared<TritonNotes>();
    state->notes = std::move(loaded.notes);
    kernel.lowering = std::move(state);
    return kernel;
  }

  // Triton's tensor-memory columns (ttg.tensor_memory_size) as one buffer of the device's tensor
  // memory, live for the whole kernel, so the engine holds them against the device's columns
  // and words a breach as Triton's launch check does ("out of resource: tensor memory").
  // Nothing on a device without tensor memory (a kernel judged there with --any-target).
  static void AddTensorMemory(int64_t columns, const DeviceModel& device, KernelGraph& graph) {
    if (columns <= 0) return;
    for (const MemorySpace& space : device.memory_spaces()) {
      if (space.kind() != TENSOR_MEMORY) continue;
      Buffer* b = graph.add_buffers();
      b->set_name("tensor_memory");
      b->set_size_bytes(absl::StrCat(columns * space.lanes() * space.column_bytes_per_lane()));
      b->set_memory_space(space.name());
      b->set_role(ACCUMULATOR);
      b->set_doc(absl::StrCat(columns, " columns (ttg.tensor_memory_size): Triton's TensorMemoryAllocation"));
      if (graph.ops_size() == 0) graph.add_ops()->set_name("op0");
      graph.mutable_ops(0)->add_writes("tensor_memory");
      graph.mutable_ops(graph.ops_size() - 1)->add_reads("tensor_memory");
      return;
    }
  }

  // A kernel compiled for one GPU says nothing exact about another: its layouts, pipelining and
  // MMA follow the target. "cuda:90" is sm_90 (H100, H200), "hip:gfx942" is gfx942.
  static absl::Status CheckTarget(absl::string_view path, absl::string_view target, const DeviceModel& device,
                                  const Spelling& spelling) {
    if (target.empty()) return absl::OkStatus();
    std::string expected_vendor, expected_arch;
    if (absl::ConsumePrefix(&target, "cuda:")) {
      expected_vendor = "nvidia";
      expected_arch = absl::StrCat("sm_", target);
    } else if (absl::ConsumePrefix(&target, "hip:")) {
      expected_vendor = "amd";
      expected_arch = std::string(target);
    } else {
      return absl::OkStatus();  // a target this check does not know: nothing to compare
    }
    if (device.vendor() == expected_vendor && device.arch() == expected_arch) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ttg.target: the kernel was compiled for ", expected_arch, " (", expected_vendor, ") but ",
        spelling.Device(), " ", device.name(), " is ", device.arch(), " (", device.vendor(),
        "); compile it for that target, or pass ", spelling.AnyTarget(), " to judge it there anyway"));
  }
};

const FrontEndRegistration registration(std::make_unique<TritonFrontEnd>());

}  // namespace
}  // namespace scratchsim
