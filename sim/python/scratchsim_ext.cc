// scratchsim._ext: the Python module's native half. A client of the analysis pipeline
// (sim/pipeline, typed options), of the driver's plan (sim/driver/plan_command.h) and of whatever
// front ends the build registers, like the `simulate` binary: the same reports, the same
// messages. scratchsim/__init__.py is the API.
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sim/device.h"
#include "sim/driver/cli.h"
#include "sim/driver/pictures.h"
#include "sim/driver/plan_command.h"
#include "sim/flags.h"
#include "sim/json_text.h"
#include "sim/pipeline.h"
#include "sim/proto_io.h"
#include "sim/report.h"
#include "sim/status_macros.h"

namespace nb = nanobind;

namespace scratchsim {
namespace {

// scratchsim.Error, a ValueError: bad input or usage, the CLI's exit code 2.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T OrRaise(absl::StatusOr<T> value) {
  if (!value.ok()) throw Error(std::string(value.status().message()));
  return *std::move(value);
}

void OrRaise(const absl::Status& status) {
  if (!status.ok()) throw Error(std::string(status.message()));
}

absl::StatusOr<ProtoFormat> ParseFormat(const std::string& format) {
  if (format == "binary") return ProtoFormat::kBinary;
  if (format == "text") return ProtoFormat::kText;
  if (format == "json") return ProtoFormat::kJson;
  return absl::InvalidArgumentError(absl::StrCat("graph format '", format, "' is not one of binary, text, json"));
}

// The kernel `input` names: a file (`path`), or `contents` read as `format`.
absl::StatusOr<KernelInput> InputOf(const std::string& reader, const std::string& path,
                                    const std::optional<std::string>& contents, const std::string& format,
                                    const std::string& origin) {
  KernelInput input;
  input.reader = reader;
  if (!contents) {
    if (path.empty()) return absl::InvalidArgumentError("a graph is required");
    input.path = path;
    return input;
  }
  ASSIGN_OR_RETURN(input.format, ParseFormat(format));
  input.contents = *contents;
  input.origin = origin;
  return input;
}

// simulate(device, reader, path, contents, format, origin, sets, policy, suggest, any_target,
// confirm, timeline, trace, producer_release) -> (exit code, report JSON, timeline SVG, trace
// JSON): the analysis
// pipeline (sim/pipeline) called with typed options, as `simulate --format json` runs it.
std::tuple<int, std::string, std::string, std::string> SimulateOf(
    const std::string& device_name, const std::string& reader, const std::string& path,
    std::optional<nb::bytes> contents, const std::string& format, const std::string& origin,
    const std::vector<std::string>& sets, const std::string& policy, bool suggest, bool any_target,
    const std::string& confirm, bool timeline, bool trace, const std::string& producer_release) {
  std::optional<std::string> buffer;
  if (contents) buffer = std::string(contents->c_str(), contents->size());
  absl::StatusOr<std::tuple<int, std::string, std::string, std::string>> result;
  {
    nb::gil_scoped_release release;
    result = [&]() -> absl::StatusOr<std::tuple<int, std::string, std::string, std::string>> {
      SetMaxInputBytes(kDefaultMaxInputBytes);  // what the command line applies without --max-input-mib
      ASSIGN_OR_RETURN(DeviceModel device, LoadDevice(device_name));
      ASSIGN_OR_RETURN(KernelInput input, InputOf(reader, path, buffer, format, origin));
      AnalysisOptions options;
      options.load.any_target = any_target;
      options.load.spelling = Spelling::Python();
      options.load.producer_release = producer_release;
      options.sets = sets;
      ASSIGN_OR_RETURN(options.simulate.policy, ParsePlacementPolicy(policy.empty() ? "first-fit" : policy));
      options.simulate.suggest = suggest;
      // The report goes back as JSON, which lists the placements.
      options.simulate.keep_placements = true;
      options.simulate.keep_buffers = timeline || trace;
      if (!confirm.empty()) {
        ASSIGN_OR_RETURN(options.confirm, ParseConfirmPolicy(confirm, "confirm"));
      }
      ASSIGN_OR_RETURN(Report report, Analyze(input, device, options));
      ReportPictures pictures = TakePictures(timeline, trace, device, &report);
      return std::make_tuple(report.fits() ? kExitFits : kExitDoesNotFit, RenderJson(report),
                             std::move(pictures.timeline_svg), std::move(pictures.trace_json));
    }();
  }
  return OrRaise(std::move(result));
}

// A kernel as the package hands it over: (reader, path, contents, format, origin), InputOf's.
using KernelArgs = std::tuple<std::string, std::string, std::optional<nb::bytes>, std::string, std::string>;

// plan(device, kernels, sets, params, top, threads, compute_dtype, allow_spills, policy, map_axes,
// registers) -> (exit code, plan JSON, map SVG): `simulate plan --format json` with typed
// arguments, one --graph per kernel (several: kernel families ranked together); map_axes None
// draws no map, "" the first two swept parameters; registers: (origin, CompiledRegisters JSON)
// pairs, each what a --registers file holds.
std::tuple<int, std::string, std::string> PlanOf(
    const std::string& device_name, const std::vector<KernelArgs>& kernels, const std::vector<std::string>& sets,
    const std::vector<std::string>& params, int64_t top, int64_t threads, const std::string& compute_dtype,
    bool allow_spills, const std::string& policy, const std::optional<std::string>& map_axes,
    const std::vector<std::pair<std::string, std::string>>& registers) {
  std::vector<std::tuple<std::string, std::string, std::optional<std::string>, std::string, std::string>> inputs;
  for (const auto& [reader, path, contents, format, origin] : kernels) {
    std::optional<std::string> buffer;
    if (contents) buffer = std::string(contents->c_str(), contents->size());
    inputs.emplace_back(reader, path, std::move(buffer), format, origin);
  }
  absl::StatusOr<std::tuple<int, std::string, std::string>> result;
  {
    nb::gil_scoped_release release;
    result = [&]() -> absl::StatusOr<std::tuple<int, std::string, std::string>> {
      SetMaxInputBytes(kDefaultMaxInputBytes);  // what the command line applies without --max-input-mib
      PlanRequest request;
      request.format = "json";
      request.sets = sets;
      request.params = params;
      request.spelling = Spelling::Python();
      request.top = top;
      request.threads = threads;
      request.planner.compute_dtype = compute_dtype;
      request.planner.allow_spills = allow_spills;
      ASSIGN_OR_RETURN(request.planner.policy, ParsePlacementPolicy(policy.empty() ? "first-fit" : policy));
      request.progress_seconds = 0;
      request.map = map_axes.has_value();
      if (map_axes) request.map_axes = *map_axes;
      for (const auto& [origin, json] : registers) {
        auto& [name, figures] = request.compiled_registers.emplace_back(origin, CompiledRegisters());
        RETURN_IF_ERROR(ParseProto(json, ProtoFormat::kJson, origin, &figures));
      }
      ASSIGN_OR_RETURN(DeviceModel device, LoadDevice(device_name));
      std::vector<Kernel> loaded;
      for (const auto& [reader, path, buffer, format, origin] : inputs) {
        ASSIGN_OR_RETURN(KernelInput input, InputOf(reader, path, buffer, format, origin));
        LoadOptions load;
        load.spelling = Spelling::Python();
        ASSIGN_OR_RETURN(loaded.emplace_back(), LoadKernel(input, device, load));
      }
      std::ostringstream out, err;
      std::string map_svg;
      ASSIGN_OR_RETURN(int code, PlanKernels(std::move(loaded), device, request, out, err, &map_svg));
      return std::make_tuple(code, out.str(), std::move(map_svg));
    }();
  }
  return OrRaise(std::move(result));
}

// devices() -> a JSON list of every DeviceModel the models directories hold.
std::string Devices() {
  std::vector<DeviceModel> devices = OrRaise(LoadShippedDevices());
  std::string out = "[";
  for (size_t i = 0; i < devices.size(); ++i) absl::StrAppend(&out, i ? ",\n" : "\n", MessageToJson(devices[i]));
  absl::StrAppend(&out, "\n]");
  return out;
}

// device(name_or_path) -> the DeviceModel as JSON.
std::string Device(const std::string& name) { return MessageToJson(OrRaise(LoadDevice(name))); }

// run(args) -> (exit code, stdout, stderr): the `simulate` command itself.
std::tuple<int, std::string, std::string> Run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code;
  {
    nb::gil_scoped_release release;
    code = RunSimulateCommand(args, out, err);
  }
  return {code, out.str(), err.str()};
}

}  // namespace
}  // namespace scratchsim

NB_MODULE(_ext, m) {
  using namespace scratchsim;
  m.doc() = "scratchsim's native core (use the scratchsim package)";
  nb::exception<Error>(m, "Error", PyExc_ValueError);
  m.def("simulate", &SimulateOf, nb::arg("device"), nb::arg("reader"), nb::arg("path"), nb::arg("contents").none(),
        nb::arg("format"), nb::arg("origin"), nb::arg("sets"), nb::arg("policy"), nb::arg("suggest"),
        nb::arg("any_target"), nb::arg("confirm"), nb::arg("timeline"), nb::arg("trace"),
        nb::arg("producer_release"));
  m.def("plan", &PlanOf, nb::arg("device"), nb::arg("kernels"), nb::arg("sets"), nb::arg("params"), nb::arg("top"),
        nb::arg("threads"), nb::arg("compute_dtype"), nb::arg("allow_spills"), nb::arg("policy"),
        nb::arg("map_axes").none(), nb::arg("registers"));
  m.def("devices", &Devices);
  m.def("device", &Device, nb::arg("name"));
  m.def("run", &Run, nb::arg("args"));
  m.def("set_shipped_models_dir", [](std::string dir) { SetShippedModelsDir(std::move(dir)); }, nb::arg("dir"));
}
