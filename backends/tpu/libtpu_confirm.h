// The TPU compiler in the loop for `simulate --confirm`: a Pallas graph's exported kernel
// (pallas.jax_export) compiled by libtpu for the device's generation, on this host's CPU.
#ifndef SCRATCHSIM_BACKENDS_TPU_LIBTPU_CONFIRM_H_
#define SCRATCHSIM_BACKENDS_TPU_LIBTPU_CONFIRM_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "proto/report.pb.h"
#include "sim/report.h"

namespace scratchsim {

// The most $SCRATCHSIM_CONFIRM_TIMEOUT may say: a day. Anything but 1..this many seconds in
// digits is bad input (exit 2) naming the variable and its value.
inline constexpr int64_t kMaxConfirmTimeoutSeconds = 86400;

// Runs backends/tpu/tpu_aot.py (built into this binary) as `PYTHON tpu_aot.py confirm --gen GEN
// --capacity-bytes N FILE` with the graph's exported kernel in FILE; PYTHON is $SCRATCHSIM_PYTHON,
// else python3 (it needs jax[tpu] and flatbuffers), GEN is TpuGeneration's (tpu_tiling.h), N the
// device's highest scoped VMEM limit (MaxScopedVmemLimit), to which a kernel out of VMEM is
// raised for a second compile that measures its requirement. A graph without
// `pallas.jax_export` is bad input (the message names the file and the field); a Python, JAX or
// libtpu that cannot compile it here gives a confirmation whose `error` says why.
absl::StatusOr<CompilerConfirmation> ConfirmWithLibtpu(const KernelGraph& source, absl::string_view origin,
                                                       const DeviceModel& device);

// The runner's last line of output, a JSON object (tpu_aot.confirmation, or {"error": ...}), as a
// confirmation; a runner that printed none gives one whose `error` quotes what it printed.
CompilerConfirmation ParseRunnerOutput(absl::string_view stdout_text, absl::string_view stderr_text);

// ApplyConfirmation (sim/report.h), then the fixes libtpu measured: where it compiles the kernel
// as it is, none (the model's fixes were for an AT RISK it settled); where it needs
// requirement_bytes, the raise-the-limit fix becomes pltpu.CompilerParams(vmem_limit_bytes=that);
// where it exceeds the whole VMEM, no limit fix stays and a note says so; where Mosaic refused it,
// no limit fix stays; where what it needs was not measured, the model's limit fix stays. A
// confirmation with an error changes nothing but the record.
void ApplyLibtpuConfirmation(CompilerConfirmation confirmation, const DeviceModel& device, Report* report);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_LIBTPU_CONFIRM_H_
