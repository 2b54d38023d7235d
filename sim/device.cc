#include "sim/device.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

#ifndef SCRATCHSIM_DEFAULT_MODELS_DIR
#define SCRATCHSIM_DEFAULT_MODELS_DIR "models/devices"
#endif

namespace scratchsim {
namespace fs = std::filesystem;

namespace {

// Where the shipped models are: the source tree the binary was built from, the install prefix,
// beside an installed binary (bin/../share/scratchsim/models/devices), or the working tree of
// a machine the binary was carried to.
std::string ShippedModelsDir() {
  std::error_code error;
  std::vector<fs::path> candidates = {SCRATCHSIM_DEFAULT_MODELS_DIR};
#ifdef SCRATCHSIM_INSTALLED_MODELS_DIR
  candidates.push_back(SCRATCHSIM_INSTALLED_MODELS_DIR);
#endif
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) candidates.push_back(exe.parent_path().parent_path() / "share/scratchsim/models/devices");
  candidates.push_back("models/devices");
  for (const fs::path& dir : candidates) {
    if (fs::is_directory(dir, error)) return dir.string();
  }
  return SCRATCHSIM_DEFAULT_MODELS_DIR;
}

}  // namespace

std::vector<std::string> DeviceModelDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SCRATCHSIM_MODELS"); env != nullptr) {
    for (absl::string_view dir : absl::StrSplit(env, ':', absl::SkipEmpty())) dirs.emplace_back(dir);
  }
  dirs.push_back(ShippedModelsDir());
  return dirs;
}

absl::Status ValidateDevice(const DeviceModel& device, absl::string_view origin) {
  auto bad = [&](absl::string_view field, absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": field '", field, "' ", problem));
  };
  if (device.name().empty()) return bad("name", "is missing");
  if (device.memory_spaces().empty()) return bad("memory_spaces", "is empty");
  const ExecutionLimits& limits = device.limits();
  if (device.vendor() != "google") {
    if (limits.warp_size() <= 0) return bad("limits.warp_size", "must be positive");
    if (limits.max_threads_per_block() <= 0) return bad("limits.max_threads_per_block", "must be positive");
    if (limits.max_threads_per_core() < limits.max_threads_per_block()) {
      return bad("limits.max_threads_per_core", "is below max_threads_per_block");
    }
    if (limits.max_blocks_per_core() <= 0) return bad("limits.max_blocks_per_core", "must be positive");
    if (limits.registers_per_core() <= 0) return bad("limits.registers_per_core", "must be positive");
  }
  if (limits.num_cores() <= 0) return bad("limits.num_cores", "must be positive");
  std::vector<std::string> seen;
  for (const MemorySpace& space : device.memory_spaces()) {
    std::string field = absl::StrCat("memory_spaces[", space.name(), "]");
    if (space.name().empty()) return bad("memory_spaces.name", "is missing");
    if (std::find(seen.begin(), seen.end(), space.name()) != seen.end()) {
      return bad(field, "is defined twice");
    }
    seen.push_back(space.name());
    if (space.kind() == MEMORY_KIND_UNSPECIFIED) return bad(field + ".kind", "is missing");
    if (space.capacity_per_core_bytes() <= 0) return bad(field + ".capacity_per_core_bytes", "must be positive");
    if (space.per_block_default_bytes() < 0 || space.per_block_optin_bytes() < 0 ||
        space.reserved_per_block_bytes() < 0 || space.allocation_granularity_bytes() < 0 ||
        space.alignment_bytes() < 0) {
      return bad(field, "has a negative size");
    }
    if (space.per_block_optin_bytes() > space.capacity_per_core_bytes()) {
      return bad(field + ".per_block_optin_bytes", "exceeds capacity_per_core_bytes");
    }
    if (space.per_block_default_bytes() > space.per_block_optin_bytes() && space.per_block_optin_bytes() > 0) {
      return bad(field + ".per_block_default_bytes", "exceeds per_block_optin_bytes");
    }
    if (space.kind() == TENSOR_MEMORY &&
        (space.lanes() <= 0 || space.columns() <= 0 || space.column_bytes_per_lane() <= 0)) {
      return bad(field, "needs lanes, columns and column_bytes_per_lane");
    }
    if (space.kind() == VMEM && space.default_scoped_limit_bytes() > space.capacity_per_core_bytes()) {
      return bad(field + ".default_scoped_limit_bytes", "exceeds capacity_per_core_bytes");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceModel>> LoadShippedDevices() {
  std::vector<DeviceModel> devices;
  for (const std::string& dir : DeviceModelDirs()) {
    std::error_code error;
    fs::directory_iterator it(dir, error);
    if (error) return absl::NotFoundError(absl::StrCat(dir, ": cannot list device models: ", error.message()));
    std::vector<std::string> paths;
    for (const fs::directory_entry& entry : it) {
      if (entry.path().extension() == ".textproto") paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
    for (const std::string& path : paths) {
      DeviceModel device;
      RETURN_IF_ERROR(LoadProtoFile(path, &device));
      RETURN_IF_ERROR(ValidateDevice(device, path));
      // A directory earlier in SCRATCHSIM_MODELS wins over a later one and over the shipped models.
      const bool known = std::any_of(devices.begin(), devices.end(), [&](const DeviceModel& d) {
        return absl::EqualsIgnoreCase(d.name(), device.name());
      });
      if (!known) devices.push_back(std::move(device));
    }
  }
  std::sort(devices.begin(), devices.end(),
            [](const DeviceModel& a, const DeviceModel& b) { return a.name() < b.name(); });
  return devices;
}

absl::StatusOr<DeviceModel> LoadDevice(absl::string_view name_or_path) {
  if (name_or_path.empty()) return absl::InvalidArgumentError("--device: no device given");
  bool looks_like_path = absl::StrContains(name_or_path, '/') || absl::StrContains(name_or_path, '.');
  if (looks_like_path) {
    DeviceModel device;
    RETURN_IF_ERROR(LoadProtoFile(name_or_path, &device));
    RETURN_IF_ERROR(ValidateDevice(device, name_or_path));
    return device;
  }
  ASSIGN_OR_RETURN(std::vector<DeviceModel> devices, LoadShippedDevices());
  std::vector<std::string> names;
  for (DeviceModel& device : devices) {
    if (absl::EqualsIgnoreCase(device.name(), name_or_path)) return std::move(device);
    for (const std::string& alias : device.aliases()) {
      if (absl::EqualsIgnoreCase(alias, name_or_path)) return std::move(device);
    }
    names.push_back(device.name());
  }
  return absl::NotFoundError(absl::StrCat("unknown device '", name_or_path, "' (known: ",
                                          absl::StrJoin(names, ", "),
                                          "; or pass a path to a DeviceModel textproto)"));
}

const MemorySpace* FindSpace(const DeviceModel& device, absl::string_view name) {
  for (const MemorySpace& space : device.memory_spaces()) {
    if (space.name() == name) return &space;
  }
  return nullptr;
}

const MemorySpace* FindSpaceOfKind(const DeviceModel& device, MemoryKind kind) {
  for (const MemorySpace& space : device.memory_spaces()) {
    if (space.kind() == kind) return &space;
  }
  return nullptr;
}

}  // namespace scratchsim
