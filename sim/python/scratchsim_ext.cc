// scratchsim._ext: the Python module's native half. A client of the driver (sim/driver/cli.h,
// plan_command.h) and of whatever front ends the build registers, like the `simulate` binary:
// the same flags, the same reports, the same messages. scratchsim/__init__.py is the API.
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sim/device.h"
#include "sim/driver/cli.h"
#include "sim/driver/plan_command.h"
#include "sim/flags.h"
#include "sim/json_text.h"
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

// The kernel the flags name (a file), or `contents` read as `input` ("graph", "ttgir").
absl::StatusOr<Kernel> KernelOf(const ParsedFlags& flags, const DeviceModel& device, const std::string& input,
                                bool has_contents, const std::string& format, const std::string& origin,
                                const std::string& buffer) {
  if (!has_contents) return LoadKernel(flags, device);
  ASSIGN_OR_RETURN(ProtoFormat proto_format, ParseFormat(format));
  return ReadKernel(input, buffer, proto_format, origin, flags, device);
}

// Checks what the command line checks before it reads a kernel.
absl::StatusOr<DeviceModel> DeviceOf(const ParsedFlags& flags, const char* command) {
  RETURN_IF_ERROR(ApplyInputLimit(flags));
  if (!flags.positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(command, "unexpected argument '", flags.positional().front(), "'"));
  }
  if (!flags.Has("device")) return absl::InvalidArgumentError(absl::StrCat(command, "--device is required (see devices())"));
  return LoadDevice(flags.Get("device"));
}

// simulate(args, input, contents, format, origin) -> (exit code, report JSON).
std::tuple<int, std::string> Simulate(const std::vector<std::string>& args, const std::string& input,
                                      std::optional<nb::bytes> contents, const std::string& format,
                                      const std::string& origin) {
  const std::string buffer = contents ? std::string(contents->c_str(), contents->size()) : std::string();
  absl::StatusOr<std::tuple<int, std::string>> result;
  {
    nb::gil_scoped_release release;
    result = [&]() -> absl::StatusOr<std::tuple<int, std::string>> {
      // The report goes back as the CLI's JSON, so it is simulated as `--format json` is (with
      // the placements a JSON report lists).
      std::vector<std::string> json_args = args;
      json_args.insert(json_args.end(), {"--format", "json"});
      ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(SimulateFlags(), json_args));
      ASSIGN_OR_RETURN(DeviceModel device, DeviceOf(flags, ""));
      if (!contents && !HasKernelInput(flags)) return absl::InvalidArgumentError("a graph is required");
      ASSIGN_OR_RETURN(Kernel kernel, KernelOf(flags, device, input, contents.has_value(), format,
                                               origin, buffer));
      ASSIGN_OR_RETURN(Report report, SimulateKernel(kernel, device, flags));
      return std::make_tuple(report.fits() ? kExitFits : kExitDoesNotFit, RenderJson(report));
    }();
  }
  return OrRaise(std::move(result));
}

// plan(args, input, contents, format, origin) -> (exit code, plan JSON); args carry --format json.
std::tuple<int, std::string> PlanOf(const std::vector<std::string>& args, const std::string& input,
                                    std::optional<nb::bytes> contents, const std::string& format,
                                    const std::string& origin) {
  const std::string buffer = contents ? std::string(contents->c_str(), contents->size()) : std::string();
  absl::StatusOr<std::tuple<int, std::string>> result;
  {
    nb::gil_scoped_release release;
    result = [&]() -> absl::StatusOr<std::tuple<int, std::string>> {
      ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(PlanFlags(), args));
      ASSIGN_OR_RETURN(DeviceModel device, DeviceOf(flags, "plan: "));
      if (!contents && !HasKernelInput(flags)) return absl::InvalidArgumentError("plan: a graph is required");
      ASSIGN_OR_RETURN(Kernel kernel, KernelOf(flags, device, input, contents.has_value(), format,
                                               origin, buffer));
      std::ostringstream out, err;
      ASSIGN_OR_RETURN(int code, PlanKernel(kernel, device, flags, out, err));
      return std::make_tuple(code, out.str());
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
  m.def("simulate", &Simulate, nb::arg("args"), nb::arg("input"), nb::arg("contents").none(), nb::arg("format"),
        nb::arg("origin"));
  m.def("plan", &PlanOf, nb::arg("args"), nb::arg("input"), nb::arg("contents").none(), nb::arg("format"),
        nb::arg("origin"));
  m.def("devices", &Devices);
  m.def("device", &Device, nb::arg("name"));
  m.def("run", &Run, nb::arg("args"));
  m.def("set_shipped_models_dir", [](std::string dir) { SetShippedModelsDir(std::move(dir)); }, nb::arg("dir"));
}
