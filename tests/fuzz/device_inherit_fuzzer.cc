// libFuzzer target: device models that inherit, through the real loader. The input is two
// DeviceModel textprotos, a parent and a child, cut at a marker line that says how the child is
// read: "#child" (the child loaded by path, its parent found in SCRATCHSIM_MODELS), "#model" (both
// in SCRATCHSIM_MODELS, every model loaded and resolved: name clashes, chains), "#calibration"
// (the child applied as `plan --calibration` applies one, to the parent loaded by name). The
// shipped models the loader sees are h100, h200 (which inherits h100), mi300x and tpu_v5e. Whatever
// the loader returns must pass ValidateDevice and be usable downstream (fuzz::ExerciseDevice),
// and loading is deterministic.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "sim/device.h"
#include "sim/device_inherit.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace scratchsim;
namespace fs = std::filesystem;

// SCRATCHSIM_MODELS (the parent, and in "#model" the child), the shipped models, the child's own
// folder: made once per process.
struct Dirs {
  fs::path models, shipped, own;
};

const Dirs& Folders() {
  static const Dirs* dirs = [] {
    char pattern[] = "/tmp/scratchsim_fuzz_inherit_XXXXXX";
    const char* root = ::mkdtemp(pattern);
    if (root == nullptr) fuzz::Fail("mkdtemp");
    auto* d = new Dirs{fs::path(root) / "models", fs::path(root) / "shipped", fs::path(root) / "own"};
    for (const fs::path& p : {d->models, d->shipped, d->own}) fs::create_directories(p);
    for (const char* name : {"h100", "h200", "mi300x", "tpu_v5e"}) {
      fs::copy_file(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/devices/", name, ".textproto"),
                    d->shipped / absl::StrCat(name, ".textproto"), fs::copy_options::overwrite_existing);
    }
    ::setenv("SCRATCHSIM_MODELS", d->models.c_str(), 1);
    SetShippedModelsDir(d->shipped.string());
    return d;
  }();
  return *dirs;
}

void Write(const fs::path& path, absl::string_view contents) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(contents.data(), contents.size());
}

// Every model the loader returned: valid, usable, and the same when loaded again.
void Check(const absl::StatusOr<DeviceModel>& device, const std::function<absl::StatusOr<DeviceModel>()>& again,
           bool suggest) {
  if (!device.ok()) return;
  const absl::Status valid = ValidateDevice(*device, "loaded");
  if (!valid.ok()) fuzz::Fail(absl::StrCat("the loader returned a model ValidateDevice refuses: ", valid.message()));
  fuzz::ExerciseDevice(*device, suggest);
  const absl::StatusOr<DeviceModel> second = again();
  if (!second.ok() || second->SerializeAsString() != device->SerializeAsString()) {
    fuzz::Fail("loading the same models twice gave different results");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Dirs& dirs = Folders();
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  enum class Mode { kChild, kModel, kCalibration };
  Mode mode = Mode::kChild;
  size_t cut = absl::string_view::npos, marker = 0;
  for (const auto& [text, m] : {std::pair<absl::string_view, Mode>{"\n#child\n", Mode::kChild},
                                {"\n#model\n", Mode::kModel},
                                {"\n#calibration\n", Mode::kCalibration}}) {
    const size_t at = input.find(text);
    if (at < cut) cut = at, marker = text.size(), mode = m;
  }
  if (cut == absl::string_view::npos) return 0;
  const absl::string_view parent = input.substr(0, cut), child = input.substr(cut + marker);
  for (const fs::path& dir : {dirs.models, dirs.own}) {
    for (const auto& entry : fs::directory_iterator(dir)) fs::remove(entry.path());
  }
  Write(dirs.models / "parent.textproto", parent);
  const bool suggest = size % 2 == 0;
  switch (mode) {
    case Mode::kChild: {
      const std::string path = (dirs.own / "child.textproto").string();
      Write(path, child);
      auto load = [&] { return LoadDevice(path); };
      Check(load(), load, suggest);
      break;
    }
    case Mode::kModel: {
      Write(dirs.models / "child.textproto", child);
      auto all = LoadShippedDevices();
      if (!all.ok()) break;
      auto second = LoadShippedDevices();
      if (!second.ok() || second->size() != all->size()) fuzz::Fail("loading the models twice gave different results");
      for (size_t i = 0; i < all->size(); ++i) {
        const DeviceModel& device = (*all)[i];
        Check(device, [&]() -> absl::StatusOr<DeviceModel> { return (*second)[i]; }, suggest);
      }
      break;
    }
    case Mode::kCalibration: {
      // As `simulate plan --device NAME --calibration FILE`: the parent by its name, then the file.
      DeviceModel parsed;
      if (!ParseProto(parent, ProtoFormat::kText, "parent.textproto", &parsed).ok()) break;
      auto device = LoadDevice(parsed.name());
      if (!device.ok()) break;
      const std::string path = (dirs.own / "calibration.textproto").string();
      Write(path, child);
      auto apply = [&]() -> absl::StatusOr<DeviceModel> {
        DeviceModel calibration;
        RETURN_IF_ERROR(LoadProtoFile(path, &calibration));
        std::vector<std::string> kept;
        ASSIGN_OR_RETURN(DeviceModel calibrated, ApplyCalibration(*device, calibration, path, LoadDevice, &kept));
        RETURN_IF_ERROR(ValidateDevice(calibrated, path));
        return calibrated;
      };
      Check(apply(), apply, suggest);
      break;
    }
  }
  return 0;
}
