#include "sim/device.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/assignment.h"
#include "sim/device_inherit.h"
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
std::string& ShippedModelsOverride() {
  static auto* dir = new std::string();
  return *dir;
}

std::string ShippedModelsDir() {
  if (!ShippedModelsOverride().empty()) return ShippedModelsOverride();
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

void SetShippedModelsDir(std::string dir) { ShippedModelsOverride() = std::move(dir); }

std::vector<std::string> DeviceModelDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SCRATCHSIM_MODELS"); env != nullptr) {
    for (absl::string_view dir : absl::StrSplit(env, ':', absl::SkipEmpty())) dirs.emplace_back(dir);
  }
  dirs.push_back(ShippedModelsDir());
  return dirs;
}

bool IsValidModelName(absl::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
         });
}

namespace {

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Checks one model; `bad` builds the error naming the origin and the field.
class DeviceChecker {
 public:
  // Names are looked up by graphs (`memory_space: "smem"`, `--device h100`) and printed in
  // reports: printable ASCII that a text graph carries unchanged (the device_loader fuzz target
  // found a space name of raw bytes that no graph could name).
  absl::Status CheckName(absl::string_view field, absl::string_view name) const {
    if (name.empty() || IsValidModelName(name)) return absl::OkStatus();  // a missing name is reported apart
    return Bad(field, absl::StrCat("'", absl::CHexEscape(name.substr(0, 64)),
                                   "' is not 1 to 64 letters, digits, '_', '.', '+' or '-'"));
  }

  DeviceChecker(const DeviceModel& device, absl::string_view origin) : device_(device), origin_(origin) {}

  absl::Status Run() {
    if (device_.name().empty()) return Bad("name", "is missing");
    RETURN_IF_ERROR(CheckName("name", device_.name()));
    if (device_.memory_spaces().empty()) return Bad("memory_spaces", "is empty");
    if (device_.memory_spaces_size() > kMaxDeviceMemorySpaces) {
      return Bad("memory_spaces", absl::StrCat("has ", device_.memory_spaces_size(), " entries; at most ",
                                               kMaxDeviceMemorySpaces, " are supported"));
    }
    RETURN_IF_ERROR(CheckLimits());
    std::vector<std::string> seen;
    for (const MemorySpace& space : device_.memory_spaces()) {
      if (space.name().empty()) return Bad("memory_spaces.name", "is missing");
      RETURN_IF_ERROR(CheckName("memory_spaces.name", space.name()));
      if (std::find(seen.begin(), seen.end(), space.name()) != seen.end()) {
        return Bad(absl::StrCat("memory_spaces[", space.name(), "]"), "is defined twice");
      }
      seen.push_back(space.name());
      RETURN_IF_ERROR(CheckSpace(space));
    }
    RETURN_IF_ERROR(CheckPerformance());
    RETURN_IF_ERROR(CheckResiduals());
    return CheckTpu();
  }

 private:
  absl::Status Bad(absl::string_view field, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": field '", field, "' ", problem));
  }
  // `value` within [lo, hi].
  absl::Status InRange(absl::string_view field, int64_t value, int64_t lo, int64_t hi) const {
    if (value < lo || value > hi) return Bad(field, absl::StrCat("must be ", lo, "..", hi, ", got ", value));
    return absl::OkStatus();
  }
  absl::Status PowerOfTwo(absl::string_view field, int64_t value, int64_t hi) const {
    if (!IsPowerOfTwo(value) || value > hi) {
      return Bad(field, absl::StrCat("must be a power of two from 1 to ", hi, ", got ", value));
    }
    return absl::OkStatus();
  }
  // A finite, non-negative figure (NaN and infinities are refused).
  absl::Status Figure(absl::string_view field, double value) const {
    if (!std::isfinite(value) || value < 0 || value > kMaxDeviceFigure) {
      return Bad(field, absl::StrCat("must be a finite number from 0 to ", kMaxDeviceFigure, ", got ", value));
    }
    return absl::OkStatus();
  }

  // Every number the engine, the occupancy calculator and the planner divide by, round to or
  // multiply with. A TPU (vendor "google") has no thread model: its thread fields may be 0.
  absl::Status CheckLimits() const {
    const ExecutionLimits& limits = device_.limits();
    RETURN_IF_ERROR(InRange("limits.num_cores", limits.num_cores(), 1, 1 << 20));
    const bool threads = device_.vendor() != "google" || limits.warp_size() != 0;
    if (!threads) return absl::OkStatus();
    RETURN_IF_ERROR(PowerOfTwo("limits.warp_size", limits.warp_size(), 1024));
    RETURN_IF_ERROR(InRange("limits.max_threads_per_block", limits.max_threads_per_block(), 1, 1 << 20));
    if (limits.max_threads_per_core() < limits.max_threads_per_block()) {
      return Bad("limits.max_threads_per_core", "is below max_threads_per_block");
    }
    RETURN_IF_ERROR(InRange("limits.max_threads_per_core", limits.max_threads_per_core(), 1, 1 << 24));
    RETURN_IF_ERROR(InRange("limits.max_blocks_per_core", limits.max_blocks_per_core(), 1, 1 << 20));
    RETURN_IF_ERROR(InRange("limits.registers_per_core", limits.registers_per_core(), 1, int64_t{1} << 32));
    RETURN_IF_ERROR(InRange("limits.registers_per_block", limits.registers_per_block(), 1, limits.registers_per_core()));
    RETURN_IF_ERROR(InRange("limits.max_registers_per_thread", limits.max_registers_per_thread(), 1, 1 << 16));
    RETURN_IF_ERROR(PowerOfTwo("limits.register_allocation_unit", limits.register_allocation_unit(), 1 << 16));
    RETURN_IF_ERROR(PowerOfTwo("limits.register_sub_partitions", limits.register_sub_partitions(), 64));
    RETURN_IF_ERROR(InRange("limits.block_barriers_per_core", limits.block_barriers_per_core(), 0, 1 << 20));
    // SM_ARCH = major x 10 + minor is bound into every expression.
    RETURN_IF_ERROR(InRange("limits.compute_major", limits.compute_major(), 0, 1000));
    return InRange("limits.compute_minor", limits.compute_minor(), 0, 9);
  }

  // The launch carve-out rule picks among carveout_kib steps and leaves unified - step to L1.
  absl::Status CheckLaunchCarveout(const MemorySpace& space, const std::string& field) const {
    auto sub = [&field](absl::string_view name) { return absl::StrCat(field, ".", name); };
    const LaunchCarveoutRule& rule = space.launch_carveout();
    if (space.carveout_kib().empty()) return Bad(field, "is set but the space has no carveout_kib steps");
    const int64_t capacity = space.capacity_per_core_bytes();
    RETURN_IF_ERROR(InRange(sub("headroom_factor"), rule.headroom_factor(), 1, 64));
    RETURN_IF_ERROR(InRange(sub("headroom_cap_bytes"), rule.headroom_cap_bytes(), 0, capacity));
    RETURN_IF_ERROR(InRange(sub("prefer_l1_bytes"), rule.prefer_l1_bytes(), 0, capacity));
    RETURN_IF_ERROR(InRange(sub("prefer_equal_bytes"), rule.prefer_equal_bytes(), 0, capacity));
    RETURN_IF_ERROR(InRange(sub("unified_bytes_per_core"), rule.unified_bytes_per_core(), capacity, kMaxDeviceSpaceBytes));
    for (int64_t kib : space.carveout_kib()) {
      if (kib * 1024 > rule.unified_bytes_per_core()) {
        return Bad(sub("unified_bytes_per_core"), absl::StrCat("is below the carve-out step of ", kib, " KiB"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckSpace(const MemorySpace& space) const {
    const std::string field = absl::StrCat("memory_spaces[", space.name(), "]");
    auto sub = [&field](absl::string_view name) { return absl::StrCat(field, ".", name); };
    if (space.kind() == MEMORY_KIND_UNSPECIFIED) return Bad(sub("kind"), "is missing");
    if (!MemoryKind_IsValid(space.kind())) return Bad(sub("kind"), absl::StrCat("is unknown (", space.kind(), ")"));
    const int64_t capacity = space.capacity_per_core_bytes();
    RETURN_IF_ERROR(InRange(sub("capacity_per_core_bytes"), capacity, 1, kMaxDeviceSpaceBytes));
    for (const auto& [name, value] : {std::pair<const char*, int64_t>{"per_block_default_bytes", space.per_block_default_bytes()},
                                      {"per_block_optin_bytes", space.per_block_optin_bytes()},
                                      {"reserved_per_block_bytes", space.reserved_per_block_bytes()},
                                      {"allocation_granularity_bytes", space.allocation_granularity_bytes()}}) {
      if (value < 0) return Bad(sub(name), absl::StrCat("has a negative size (", value, ")"));
      if (value > capacity) {
        return Bad(sub(name), absl::StrCat("exceeds capacity_per_core_bytes (", value, " > ", capacity, ")"));
      }
    }
    if (space.usable_per_core_bytes() < 0 || space.usable_per_core_bytes() > capacity) {
      return Bad(sub("usable_per_core_bytes"),
                 absl::StrCat("must lie in [0, capacity_per_core_bytes ", capacity, "], got ", space.usable_per_core_bytes()));
    }
    if (space.per_block_default_bytes() > space.per_block_optin_bytes() && space.per_block_optin_bytes() > 0) {
      return Bad(sub("per_block_default_bytes"), "exceeds per_block_optin_bytes");
    }
    // Offsets are aligned with a mask: 0 (no alignment) or a power of two.
    if (space.alignment_bytes() != 0) RETURN_IF_ERROR(PowerOfTwo(sub("alignment_bytes"), space.alignment_bytes(), 1 << 20));
    // A whole number of granules per allocation; libtpu's is a power of two (1 KiB).
    if (space.buffer_granule_bytes() != 0) {
      RETURN_IF_ERROR(PowerOfTwo(sub("buffer_granule_bytes"), space.buffer_granule_bytes(), 1 << 20));
    }
    const bool gpu_shared = space.kind() == SHARED_MEMORY || space.kind() == LDS;
    if (gpu_shared && device_.vendor() != "google") {
      // The occupancy calculator rounds every block to the granularity and holds it against the default.
      if (space.per_block_default_bytes() <= 0) return Bad(sub("per_block_default_bytes"), "must be positive");
      if (space.allocation_granularity_bytes() <= 0) return Bad(sub("allocation_granularity_bytes"), "must be positive");
    }
    if (!space.carveout_kib().empty()) {
      int64_t largest = 0;
      for (int64_t kib : space.carveout_kib()) {
        RETURN_IF_ERROR(InRange(sub("carveout_kib"), kib, 0, kMaxDeviceSpaceBytes / 1024));
        largest = std::max(largest, kib * 1024);
      }
      // The driver raises the carveout to a step that holds one block: one must hold the capacity.
      if (largest < capacity) {
        return Bad(sub("carveout_kib"), absl::StrCat("has no step of at least capacity_per_core_bytes ", capacity, " B"));
      }
    }
    if (space.has_launch_carveout()) RETURN_IF_ERROR(CheckLaunchCarveout(space, sub("launch_carveout")));
    if (space.kind() == TENSOR_MEMORY) {
      RETURN_IF_ERROR(InRange(sub("lanes"), space.lanes(), 1, 1 << 16));
      RETURN_IF_ERROR(InRange(sub("columns"), space.columns(), 1, 1 << 20));
      RETURN_IF_ERROR(InRange(sub("column_bytes_per_lane"), space.column_bytes_per_lane(), 1, 1 << 16));
      RETURN_IF_ERROR(InRange(sub("min_allocation_columns"), space.min_allocation_columns(), 0, space.columns()));
    }
    if (space.kind() == VMEM) {
      RETURN_IF_ERROR(InRange(sub("default_scoped_limit_bytes"), space.default_scoped_limit_bytes(), 0, capacity));
      RETURN_IF_ERROR(InRange(sub("min_scoped_limit_bytes"), space.min_scoped_limit_bytes(), 0, kMaxDeviceSpaceBytes));
      RETURN_IF_ERROR(InRange(sub("max_scoped_limit_bytes"), space.max_scoped_limit_bytes(), 0, kMaxDeviceSpaceBytes));
      if (space.max_scoped_limit_bytes() > 0 && space.min_scoped_limit_bytes() > space.max_scoped_limit_bytes()) {
        return Bad(sub("min_scoped_limit_bytes"), "exceeds max_scoped_limit_bytes");
      }
    }
    return absl::OkStatus();
  }

  // The planner's performance model divides by these: finite, non-negative, a peak per dtype.
  absl::Status CheckPerformance() const {
    const Performance& perf = device_.performance();
    for (const auto& [name, value] : {std::pair<const char*, double>{"memory_bandwidth_gbps", perf.memory_bandwidth_gbps()},
                                      {"clock_mhz", perf.clock_mhz()},
                                      {"smem_bytes_per_clk", perf.smem_bytes_per_clk()},
                                      {"l2_bandwidth_gbps", perf.l2_bandwidth_gbps()},
                                      {"l2_latency_ns", perf.l2_latency_ns()},
                                      {"dram_latency_ns", perf.dram_latency_ns()},
                                      {"smem_latency_ns", perf.smem_latency_ns()}}) {
      RETURN_IF_ERROR(Figure(absl::StrCat("performance.", name), value));
    }
    RETURN_IF_ERROR(InRange("performance.l2_bytes", perf.l2_bytes(), 0, kMaxDeviceSpaceBytes));
    if (!perf.peak().empty() && perf.memory_bandwidth_gbps() <= 0) {
      return Bad("performance.memory_bandwidth_gbps", "must be positive where peaks are given");
    }
    if (perf.smem_bytes_per_clk() > 0 && perf.clock_mhz() <= 0) {
      return Bad("performance.clock_mhz", "must be positive where smem_bytes_per_clk is given");
    }
    for (const PeakThroughput& peak : perf.peak()) {
      const std::string field = absl::StrCat("performance.peak[", peak.dtype(), "].tflops");
      if (peak.dtype().empty()) return Bad("performance.peak.dtype", "is missing");
      RETURN_IF_ERROR(Figure(field, peak.tflops()));
      if (peak.tflops() <= 0) return Bad(field, "must be positive (leave out a dtype the device has no peak for)");
    }
    return absl::OkStatus();
  }

  absl::Status CheckResiduals() const {
    for (int i = 0; i < device_.config_residuals_size(); ++i) {
      const ConfigResidual& r = device_.config_residuals(i);
      const std::string field = absl::StrCat("config_residuals[", i, "]");
      if (r.graph().empty()) return Bad(absl::StrCat(field, ".graph"), "is missing");
      if (!(r.factor() >= 0.05 && r.factor() <= 20)) {
        return Bad(absl::StrCat(field, ".factor"), absl::StrCat("must be 0.05 to 20, got ", r.factor()));
      }
      if (r.sets().empty()) return Bad(absl::StrCat(field, ".sets"), "is empty");
      for (const std::string& set : r.sets()) {
        if (!ParseAssignment(set).has_value()) {
          return Bad(absl::StrCat(field, ".sets"), absl::StrCat("'", absl::CHexEscape(set.substr(0, 64)),
                                                                "' is not NAME=INTEGER"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckTpu() const {
    const TpuInfo& tpu = device_.tpu();
    if (tpu.sublanes() != 0) RETURN_IF_ERROR(PowerOfTwo("tpu.sublanes", tpu.sublanes(), 1024));
    if (tpu.lanes() != 0) RETURN_IF_ERROR(PowerOfTwo("tpu.lanes", tpu.lanes(), 1 << 16));
    RETURN_IF_ERROR(InRange("tpu.tensor_cores_per_chip", tpu.tensor_cores_per_chip(), 0, 1 << 10));
    RETURN_IF_ERROR(InRange("tpu.vector_registers", tpu.vector_registers(), 0, 1 << 20));
    RETURN_IF_ERROR(InRange("tpu.mxu_size", tpu.mxu_size(), 0, 1 << 16));
    RETURN_IF_ERROR(InRange("tpu.mxu_count", tpu.mxu_count(), 0, 1 << 10));
    return InRange("tpu.generation", tpu.generation(), 0, 100);
  }

  const DeviceModel& device_;
  absl::string_view origin_;
};

}  // namespace

absl::Status ValidateDevice(const DeviceModel& device, absl::string_view origin) {
  return DeviceChecker(device, origin).Run();
}

namespace {

using RawDevices = std::vector<std::pair<std::string, DeviceModel>>;  // (file, model as read)

// A name or alias of `device` that is already another model's name or alias: `--device NAME`
// would pick whichever was read first (a model of one's own with alias "h100" took the shipped
// H100's place). Replacing a model is done by its name, which wins as documented.
absl::Status RefuseNameClash(const RawDevices& raw, const std::string& path, const DeviceModel& device) {
  std::vector<std::string> keys = {device.name()};
  keys.insert(keys.end(), device.aliases().begin(), device.aliases().end());
  for (const auto& [other_path, other] : raw) {
    std::vector<std::string> other_keys = {other.name()};
    other_keys.insert(other_keys.end(), other.aliases().begin(), other.aliases().end());
    for (const std::string& key : keys) {
      for (const std::string& other_key : other_keys) {
        if (!absl::EqualsIgnoreCase(key, other_key)) continue;
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": field '", key == device.name() ? "name" : "aliases", "': '", key, "' is also ",
            other_key == other.name() ? "the name" : "an alias", " of device model '", other.name(), "' (", other_path,
            "); a name or alias names one model (to replace a model, give yours its name)"));
      }
    }
  }
  return absl::OkStatus();
}

// Every model file of DeviceModelDirs() as read, before `inherits` is resolved. A directory
// earlier in SCRATCHSIM_MODELS wins over a later one and over the shipped models.
absl::StatusOr<RawDevices> LoadRawDevices() {
  RawDevices raw;
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
      const bool known = std::any_of(raw.begin(), raw.end(), [&](const std::pair<std::string, DeviceModel>& d) {
        return absl::EqualsIgnoreCase(d.second.name(), device.name());
      });
      if (known) continue;  // a model of the same name in an earlier directory wins
      RETURN_IF_ERROR(RefuseNameClash(raw, path, device));
      raw.emplace_back(path, std::move(device));
    }
  }
  return raw;
}

// A raw model by name or alias, case-insensitive (sim/device_inherit resolves `inherits` with it).
RawDeviceLookup LookupIn(const RawDevices& raw) {
  return [&raw](absl::string_view name) {
    for (const auto& [path, model] : raw) {
      bool match = absl::EqualsIgnoreCase(model.name(), name);
      for (const std::string& alias : model.aliases()) match = match || absl::EqualsIgnoreCase(alias, name);
      if (match) return RawDevice{&model, path};
    }
    return RawDevice{};
  };
}

}  // namespace

absl::StatusOr<std::vector<DeviceModel>> LoadShippedDevices() {
  ASSIGN_OR_RETURN(RawDevices raw, LoadRawDevices());
  const RawDeviceLookup lookup = LookupIn(raw);
  std::vector<DeviceModel> devices;
  for (const auto& [path, model] : raw) {
    ASSIGN_OR_RETURN(DeviceModel device, ResolveInherits(model, path, lookup));
    RETURN_IF_ERROR(ValidateDevice(device, path));
    devices.push_back(std::move(device));
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
    // A file of one's own may inherit a shipped model (or one of SCRATCHSIM_MODELS).
    RawDevices raw;
    if (!device.inherits().empty()) {
      ASSIGN_OR_RETURN(raw, LoadRawDevices());
    }
    ASSIGN_OR_RETURN(DeviceModel resolved, ResolveInherits(device, name_or_path, LookupIn(raw)));
    RETURN_IF_ERROR(ValidateDevice(resolved, name_or_path));
    return resolved;
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

int64_t UsableBytesPerCore(const MemorySpace& space) {
  return space.usable_per_core_bytes() > 0 ? space.usable_per_core_bytes() : space.capacity_per_core_bytes();
}

const MemorySpace* FindSpaceOfKind(const DeviceModel& device, MemoryKind kind) {
  for (const MemorySpace& space : device.memory_spaces()) {
    if (space.kind() == kind) return &space;
  }
  return nullptr;
}

int64_t MaxRegistersPerThread(const DeviceModel& device) {
  return device.limits().max_registers_per_thread() > 0 ? device.limits().max_registers_per_thread() : 255;
}

}  // namespace scratchsim
