// libFuzzer target: `simulate calibrate`'s timings JSON. The input is a timing file; it is read as
// the command reads it (DetectTimingKernel, ReadTimingSamples, row by row). What is read must be
// what the limits promise (at most kMaxTimingRows samples, each time in range, no configuration
// timed twice in a row with two times); up to 24 samples are fitted (Calibrate, one pass) on the
// kernel's graph for the H100, and the calibration file written from the fit must read back as
// `plan --calibration` reads it (ApplyCalibration, ValidateDevice).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "sim/device.h"
#include "sim/device_inherit.h"
#include "sim/driver/calibrate_command.h"
#include "sim/graph.h"
#include "sim/planner/calibration.h"
#include "sim/proto_io.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace scratchsim;

const CompiledGraph& Graph(TimingKernel kernel) {
  static const std::map<TimingKernel, CompiledGraph>* graphs = [] {
    auto* out = new std::map<TimingKernel, CompiledGraph>();
    for (const auto& [kernel, file] : {std::pair{TimingKernel::kTriton, "triton_matmul.pbtxt"},
                                       std::pair{TimingKernel::kCudaGemm, "gemm.pbtxt"},
                                       std::pair{TimingKernel::kGeneric, "gemm.pbtxt"}}) {
      const std::string path = absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/graphs/", file);
      auto graph = LoadGraph(path);
      if (!graph.ok()) fuzz::Fail(std::string(graph.status().message()));
      auto compiled = CompileGraph(*std::move(graph), path);
      if (!compiled.ok()) fuzz::Fail(std::string(compiled.status().message()));
      out->emplace(kernel, *std::move(compiled));
    }
    return out;
  }();
  return graphs->at(kernel);
}

const std::string& TimingsPath() {
  static const std::string* path = new std::string(
      (std::filesystem::temp_directory_path() / absl::StrCat("scratchsim_fuzz_timings_", ::getpid(), ".json")).string());
  return *path;
}

// What ReadTimingSamples promises of the samples it returns.
void CheckSamples(const std::vector<CalibrationSample>& samples) {
  if (samples.size() > static_cast<size_t>(kMaxTimingRows)) fuzz::Fail("more samples than kMaxTimingRows");
  std::map<std::string, double> times;
  for (const CalibrationSample& s : samples) {
    if (!(s.measured_s >= kMinTimingMs * 1e-3 && s.measured_s <= kMaxTimingMs * 1e-3)) {
      fuzz::Fail(absl::StrCat("a time out of range was read: ", s.measured_s, " s"));
    }
    if (s.config_sets.empty()) fuzz::Fail("a sample without a configuration was read");
    const auto [it, first] = times.emplace(absl::StrCat(s.row, " ", absl::StrJoin(s.config_sets, ",")), s.measured_s);
    if (!first && it->second != s.measured_s) fuzz::Fail("a configuration timed twice with two times was read");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(TimingsPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto kernel = DetectTimingKernel(TimingsPath());
  if (!kernel.ok()) return 0;
  std::string provenance;
  auto samples = ReadTimingSamples(TimingsPath(), *kernel, &provenance);
  if (!samples.ok()) return 0;
  CheckSamples(*samples);
  if (samples->empty() || samples->size() > 24) return 0;

  const DeviceModel& device = fuzz::Device("h100");
  CalibrationOptions options;
  options.passes = 1;
  options.residuals = size % 2 == 1;
  auto result = Calibrate(Graph(*kernel), device, *samples, options);
  if (!result.ok()) return 0;
  const std::string text = CalibrationTextproto(device, *result, "h100_calibrated", provenance, "simulate calibrate", "now");
  DeviceModel calibration;
  const absl::Status parsed = ParseProto(text, ProtoFormat::kText, "calibration.textproto", &calibration);
  if (!parsed.ok()) fuzz::Fail(absl::StrCat("the calibration file does not parse: ", parsed.message(), "\n", text));
  std::vector<std::string> kept;
  auto applied = ApplyCalibration(device, calibration, "calibration.textproto",
                                  [](absl::string_view name) { return LoadDevice(name); }, &kept);
  if (!applied.ok()) fuzz::Fail(absl::StrCat("the calibration file does not apply: ", applied.status().message()));
  const absl::Status valid = ValidateDevice(*applied, "calibration.textproto");
  if (!valid.ok()) fuzz::Fail(absl::StrCat("the calibrated device is not valid: ", valid.message(), "\n", text));
  return 0;
}
