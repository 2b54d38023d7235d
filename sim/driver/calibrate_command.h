// `simulate calibrate`: fits a device model's performance terms to a timing sweep of that device
// and writes them as a calibration file (a device model that inherits the device), which
// `simulate plan --calibration FILE` ranks with (docs/planner.md, "Calibration").
#ifndef SCRATCHSIM_SIM_DRIVER_CALIBRATE_COMMAND_H_
#define SCRATCHSIM_SIM_DRIVER_CALIBRATE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/planner/calibration.h"

namespace scratchsim {

inline constexpr char kCalibrateSummary[] =
    "Fit a device model's performance terms to timings of that device; write a calibration file.";

// `args` are the words after `calibrate`. Exit codes: 0 written, 2 bad input or usage.
int RunCalibrateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// How a timing file's rows map onto a graph's parameters.
enum class TimingKernel {
  kTriton,    // sweep_triton_matmul.py: dtype f16/f32 -> ELT 2/4, compute dtype f16/tf32
  kCudaGemm,  // scratchsim_cuda gemm-timing: dtype f32/f16/bf16 -> DTYPE 0/1/2
  kGeneric,   // every key of "config" and M, N, K are parameters; the graph's compute dtype
};

// The samples of one timing file (docs/planner.md, "Calibration": the JSON it reads). Timings
// without "ms" and those of an occupancy run ("blocks_cap") are skipped. `kernel` kAuto-detects
// from the file: gemm-timing's "kernel" names TiledGemmKernel, the Triton sweep has "triton".
absl::StatusOr<std::vector<CalibrationSample>> ReadTimingSamples(const std::string& path, TimingKernel kernel,
                                                                 std::string* provenance);

// The kernel a timing file holds, from its fields; kGeneric when neither mark is there.
absl::StatusOr<TimingKernel> DetectTimingKernel(const std::string& path);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_CALIBRATE_COMMAND_H_
