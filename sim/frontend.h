// The plug-in point for front ends and backends (Triton TTGIR, TPU Pallas, CUDA validation):
// hooks with do-nothing defaults, registered by the library that implements them.
#ifndef SCRATCHSIM_SIM_FRONTEND_H_
#define SCRATCHSIM_SIM_FRONTEND_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "proto/report.pb.h"
#include "sim/placement.h"
#include "sim/spelling.h"

namespace scratchsim {

// What a front end's Lower learned besides the plain graph (its notes, counts), kept with the
// kernel so that Word reads it rather than lowering a second time. Each front end derives its own.
struct LoweringState {
  virtual ~LoweringState() = default;
};

// A kernel ready to simulate: plain buffers and ops, and what the front end needs afterwards.
struct Kernel {
  KernelGraph graph;   // what the engine evaluates (lowered: no front-end description left)
  // A binary --graph file whose buffers and ops are still to be decoded (GraphFile, sim/graph.h):
  // then `graph` holds the other fields, and CompileGraph takes both.
  std::string wire;
  KernelGraph source;  // the graph as the user gave it (a Pallas call before lowering)
  std::string origin;  // the file, for messages
  // The front end's own allocator (Triton's for TTGIR); null: the user's --policy.
  std::shared_ptr<const PlacementPolicy> policy;
  // The front end that produced or lowered it (null: a plain graph), to word the verdict.
  const class FrontEnd* front_end = nullptr;
  // Set by the front end's Lower (null where nothing was lowered).
  std::shared_ptr<const LoweringState> lowering;
};

struct LoadOptions {
  // Judge a kernel compiled for another target than the device anyway (--any-target).
  bool any_target = false;
  // How the client names its inputs in messages (the command line's flags, Python's arguments).
  Spelling spelling;
  // The release of the compiler that wrote the input, where the caller knows it (Python: the
  // installed Triton that lowered the kernel); empty: the front end reads it from the input.
  std::string producer_release;
};

// A command of its own: `simulate NAME ARGS...`.
struct Subcommand {
  std::string name;
  std::string summary;  // one line for `simulate --help`
  std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)> run;
};

// Every hook does nothing unless a front end overrides it (the model of llvm-mca's
// CustomBehaviour): a front end implements only what it adds.
class FrontEnd {
 public:
  virtual ~FrontEnd() = default;
  virtual absl::string_view name() const = 0;

  // An input format of its own, named by a flag of the driver (--ttgir FILE).
  virtual absl::string_view input_flag() const { return ""; }
  virtual absl::string_view input_help() const { return ""; }
  // Reads `path` (given with input_flag) for `device`.
  virtual absl::StatusOr<Kernel> Load(absl::string_view path, const DeviceModel& device,
                                      const LoadOptions& options) const {
    return absl::UnimplementedError(absl::StrCat(name(), " reads no input of its own"));
  }
  // The same input given as its contents rather than a file (the Python module passes TTGIR
  // text); `origin` names it in messages.
  virtual absl::StatusOr<Kernel> Read(absl::string_view contents, absl::string_view origin,
                                      const DeviceModel& device, const LoadOptions& options) const {
    return absl::UnimplementedError(absl::StrCat(name(), " reads no input of its own"));
  }

  // Whether `graph` carries this front end's description (graph.pallas), which Lower turns
  // into plain buffers for `device`.
  virtual bool Lowers(const KernelGraph& graph) const { return false; }
  virtual absl::StatusOr<Kernel> Lower(Kernel kernel, const DeviceModel& device) const { return kernel; }

  // Rewrites the engine's verdict in this toolchain's words (messages, suggestions, notes), from
  // the kernel as loaded and lowered (Kernel.lowering). It words; it never changes a figure or
  // the verdict.
  virtual absl::Status Word(const Kernel& kernel, const DeviceModel& device, Report* report) const {
    return absl::OkStatus();
  }

  // Compiles the kernel (as the user gave it: `kernel.source`) with the toolchain's real
  // compiler for `device` and puts what it said into `report` (simulate --confirm; see
  // ApplyConfirmation, sim/report.h), with the fixes it measured in this toolchain's words. Where
  // the compiler cannot run here the confirmation's `error` says why and the model's verdict
  // stands; a kernel that carries nothing to compile is bad input.
  virtual absl::Status Confirm(const Kernel& kernel, const DeviceModel& device, Report* report) const {
    return absl::InvalidArgumentError(absl::StrCat("--confirm: ", name(), " kernels have no compiler to confirm with"));
  }
  // The compiler Confirm would run for this kernel ("libtpu"), or "" where it has nothing to
  // compile: an AT RISK report then says how to settle it.
  virtual std::string ConfirmingCompiler(const Kernel& kernel) const { return ""; }

  virtual std::vector<Subcommand> subcommands() const { return {}; }
};

// Registers a front end for the life of the program; call from a static initializer in the
// library that implements it (see FrontEndRegistration).
void RegisterFrontEnd(std::unique_ptr<FrontEnd> front_end);

// Every registered front end, in registration order.
const std::vector<std::unique_ptr<FrontEnd>>& FrontEnds();

// `static FrontEndRegistration registration(std::make_unique<MyFrontEnd>());`
struct FrontEndRegistration {
  explicit FrontEndRegistration(std::unique_ptr<FrontEnd> front_end) { RegisterFrontEnd(std::move(front_end)); }
};

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_FRONTEND_H_
