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

// What calibrate reads at most (docs/reliability.md), so that its memory and time stay bounded
// whatever the files hold: timings in all --timings files together, bytes of one timing's JSON.
// A timing's time lies from 1 ns to an hour (in ms): others are not a kernel's.
inline constexpr int kMaxTimingRows = 65536;
inline constexpr size_t kMaxTimingRowBytes = 65536;
inline constexpr double kMinTimingMs = 1e-6;
inline constexpr double kMaxTimingMs = 3.6e6;

// `args` are the words after `calibrate`. Exit codes: 0 written, 2 bad input or usage.
int RunCalibrateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// How a timing file's rows map onto a graph's parameters.
enum class TimingKernel {
  kTriton,    // sweep_triton_matmul.py: dtype f16/f32 -> ELT 2/4, compute dtype f16/tf32
  kCudaGemm,  // scratchsim_cuda gemm-timing: dtype f32/f16/bf16 -> DTYPE 0/1/2
  kGeneric,   // every key of "config" and M, N, K are parameters; the graph's compute dtype
};

// The samples of one timing file (docs/planner.md, "Calibration": the JSON it reads). Timings
// without "ms" and those of an occupancy run ("blocks_cap") are skipped. The file is followed
// row by row, never parsed whole; more than kMaxTimingRows rows, a row of more than
// kMaxTimingRowBytes, a size or configuration value that is no whole number, an empty config, a
// time out of range and a configuration timed twice in a row with two times are InvalidArgument
// naming the file, the row and the field. `kernel` kAuto-detects
// from the file: gemm-timing's "kernel" names TiledGemmKernel, the Triton sweep has "triton".
absl::StatusOr<std::vector<CalibrationSample>> ReadTimingSamples(const std::string& path, TimingKernel kernel,
                                                                 std::string* provenance);

// The kernel a timing file holds, from its fields; kGeneric when neither mark is there.
absl::StatusOr<TimingKernel> DetectTimingKernel(const std::string& path);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_CALIBRATE_COMMAND_H_
