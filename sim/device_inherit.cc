#include "sim/device_inherit.h"

#include <algorithm>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

using google::protobuf::FieldDescriptor;

constexpr absl::string_view kPeakPrefix = "peak.";

// The singular numeric fields of Performance (every field but the repeated peaks).
std::vector<const FieldDescriptor*> PerformanceFigures() {
  std::vector<const FieldDescriptor*> out;
  const google::protobuf::Descriptor* d = Performance::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE || f->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
      out.push_back(f);
    }
  }
  return out;
}

double FigureValue(const Performance& perf, const FieldDescriptor* f) {
  const google::protobuf::Reflection* r = perf.GetReflection();
  return f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE ? r->GetDouble(perf, f)
                                                          : static_cast<double>(r->GetInt64(perf, f));
}

// A memory space of `child` over the parent's of the same name.
MemorySpace MergeSpace(const MemorySpace& parent, const MemorySpace& child) {
  MemorySpace out = parent;
  MemorySpace scalars = child;
  scalars.clear_carveout_kib();
  out.MergeFrom(scalars);  // the fields the child sets (explicit presence: an explicit 0 too)
  if (!child.carveout_kib().empty()) *out.mutable_carveout_kib() = child.carveout_kib();
  return out;
}

bool NameMatches(const DeviceModel& device, absl::string_view name) {
  if (absl::EqualsIgnoreCase(device.name(), name)) return true;
  for (const std::string& alias : device.aliases()) {
    if (absl::EqualsIgnoreCase(alias, name)) return true;
  }
  return false;
}

}  // namespace

DeviceModel MergeDeviceModels(const DeviceModel& parent, const DeviceModel& child) {
  DeviceModel out = parent;
  out.set_name(child.name());
  out.set_display_name(child.display_name());
  *out.mutable_aliases() = child.aliases();
  if (!child.vendor().empty()) out.set_vendor(child.vendor());
  if (!child.arch().empty()) out.set_arch(child.arch());
  out.set_inherits(child.inherits());
  out.clear_term_origins();
  for (const MemorySpace& space : child.memory_spaces()) {
    auto it = std::find_if(out.mutable_memory_spaces()->begin(), out.mutable_memory_spaces()->end(),
                           [&](const MemorySpace& s) { return s.name() == space.name(); });
    if (it != out.mutable_memory_spaces()->end()) {
      *it = MergeSpace(*it, space);
    } else {
      *out.add_memory_spaces() = space;
    }
  }
  out.mutable_limits()->MergeFrom(child.limits());
  out.mutable_tpu()->MergeFrom(child.tpu());
  Performance figures = child.performance();
  figures.clear_peak();
  out.mutable_performance()->MergeFrom(figures);
  for (const PeakThroughput& peak : child.performance().peak()) {
    auto* peaks = out.mutable_performance()->mutable_peak();
    auto it = std::find_if(peaks->begin(), peaks->end(), [&](const PeakThroughput& p) { return p.dtype() == peak.dtype(); });
    if (it != peaks->end()) {
      *it = peak;
    } else {
      *out.mutable_performance()->add_peak() = peak;
    }
  }
  // Residuals are measured of one device: a model that has its own replaces its parent's.
  if (!child.config_residuals().empty()) *out.mutable_config_residuals() = child.config_residuals();
  out.clear_sources();
  for (const std::string& s : child.sources()) out.add_sources(s);
  for (const std::string& s : parent.sources()) {
    out.add_sources(absl::StartsWith(s, "inherited from ") ? s : absl::StrCat("inherited from ", parent.name(), ": ", s));
  }
  return out;
}

std::vector<std::string> PerformanceTermNames(const DeviceModel& device) {
  std::vector<std::string> names;
  for (const FieldDescriptor* f : PerformanceFigures()) {
    if (FigureValue(device.performance(), f) != 0) names.push_back(f->name());
  }
  for (const PeakThroughput& peak : device.performance().peak()) names.push_back(absl::StrCat(kPeakPrefix, peak.dtype()));
  return names;
}

double PerformanceTerm(const DeviceModel& device, absl::string_view term) {
  if (absl::StartsWith(term, kPeakPrefix)) {
    const absl::string_view dtype = term.substr(kPeakPrefix.size());
    for (const PeakThroughput& peak : device.performance().peak()) {
      if (peak.dtype() == dtype) return peak.tflops();
    }
    return 0;
  }
  const FieldDescriptor* f = Performance::descriptor()->FindFieldByName(std::string(term));
  if (f == nullptr || f->is_repeated()) return 0;
  return FigureValue(device.performance(), f);
}

bool SetPerformanceTerm(DeviceModel* device, absl::string_view term, double value) {
  Performance* perf = device->mutable_performance();
  if (absl::StartsWith(term, kPeakPrefix)) {
    const std::string dtype(term.substr(kPeakPrefix.size()));
    if (dtype.empty()) return false;
    for (PeakThroughput& peak : *perf->mutable_peak()) {
      if (peak.dtype() == dtype) {
        peak.set_tflops(value);
        return true;
      }
    }
    PeakThroughput* peak = perf->add_peak();
    peak->set_dtype(dtype);
    peak->set_tflops(value);
    return true;
  }
  const FieldDescriptor* f = Performance::descriptor()->FindFieldByName(std::string(term));
  if (f == nullptr || f->is_repeated()) return false;
  const google::protobuf::Reflection* r = perf->GetReflection();
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
    r->SetDouble(perf, f, value);
    return true;
  }
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
    r->SetInt64(perf, f, static_cast<int64_t>(value));
    return true;
  }
  return false;
}

const TermOrigin* FindTermOrigin(const DeviceModel& device, absl::string_view term) {
  for (const TermOrigin& origin : device.term_origins()) {
    if (origin.term() == term) return &origin;
  }
  return nullptr;
}

absl::StatusOr<DeviceModel> ApplyCalibration(const DeviceModel& device, const DeviceModel& calibration,
                                             absl::string_view file, const DeviceLoader& load,
                                             std::vector<std::string>* kept) {
  const std::string& target = calibration.inherits();
  if (target.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": field 'inherits' is missing: a calibration names the device "
                                                   "it was measured on (simulate calibrate writes it)"));
  }
  // The device's chain of models, itself first.
  std::vector<std::string> chain = {device.name()};
  for (std::string parent = device.inherits(); !parent.empty();) {
    if (static_cast<int>(chain.size()) > kMaxInheritDepth) break;
    ASSIGN_OR_RETURN(DeviceModel model, load(parent));
    chain.push_back(model.name());
    parent = model.inherits();
  }
  int target_at = -1;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (absl::EqualsIgnoreCase(chain[i], target)) target_at = static_cast<int>(i);
  }
  if (target_at < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": field 'inherits': this calibration was made for '", target,
                                                   "', and device '", device.name(), "' is not '", target,
                                                   "' and does not inherit it (its models: ",
                                                   absl::StrJoin(chain, " -> "), ")"));
  }
  DeviceModel out = device;
  for (const std::string& term : PerformanceTermNames(calibration)) {
    const TermOrigin* origin = FindTermOrigin(device, term);
    bool replace = origin == nullptr || PerformanceTerm(device, term) == 0;
    for (size_t i = target_at; !replace && i < chain.size(); ++i) replace = origin->model() == chain[i];
    if (!replace) {
      if (kept != nullptr) kept->push_back(term);
      continue;
    }
    SetPerformanceTerm(&out, term, PerformanceTerm(calibration, term));
    TermOrigin* slot = nullptr;
    for (TermOrigin& o : *out.mutable_term_origins()) {
      if (o.term() == term) slot = &o;
    }
    if (slot == nullptr) slot = out.add_term_origins();
    slot->set_term(term);
    slot->set_model(calibration.name());
    slot->set_file(std::string(file));
  }
  if (!calibration.config_residuals().empty()) *out.mutable_config_residuals() = calibration.config_residuals();
  for (const std::string& s : calibration.sources()) out.add_sources(absl::StrCat("calibration ", file, ": ", s));
  return out;
}

absl::StatusOr<DeviceModel> ResolveInherits(const DeviceModel& device, absl::string_view file,
                                            const RawDeviceLookup& lookup) {
  // The chain from `device` up: each model and its file.
  std::vector<RawDevice> chain = {{&device, std::string(file)}};
  std::vector<std::string> names = {device.name()};
  while (!chain.back().model->inherits().empty()) {
    const std::string& parent_name = chain.back().model->inherits();
    if (static_cast<int>(chain.size()) >= kMaxInheritDepth) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": field 'inherits' chain ", absl::StrJoin(names, " -> "),
                                                     " is deeper than ", kMaxInheritDepth, " models"));
    }
    for (const RawDevice& link : chain) {
      if (NameMatches(*link.model, parent_name)) {
        return absl::InvalidArgumentError(absl::StrCat(file, ": field 'inherits' makes a cycle: ",
                                                       absl::StrJoin(names, " -> "), " -> ", parent_name));
      }
    }
    RawDevice parent = lookup(parent_name);
    if (parent.model == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(chain.back().file, ": field 'inherits' names '", parent_name,
                                                     "', which is no known device model (see simulate --list-devices)"));
    }
    names.push_back(parent.model->name());
    chain.push_back(parent);
  }
  // An assumed term must be one the file gives: a misspelt name would leave a guess cited.
  for (const RawDevice& link : chain) {
    const std::vector<std::string> given = PerformanceTermNames(*link.model);
    for (const std::string& term : link.model->assumed_terms()) {
      if (!absl::c_linear_search(given, term)) {
        return absl::InvalidArgumentError(absl::StrCat(link.file, ": field 'assumed_terms': '", term,
                                                       "' is no performance term this model gives (it gives: ",
                                                       absl::StrJoin(given, ", "), ")"));
      }
    }
  }
  // Merge from the root down, recording which file gave each performance term.
  DeviceModel resolved = *chain.back().model;
  std::vector<TermOrigin> origins;
  auto record = [&origins](const DeviceModel& model, const std::string& from_file) {
    for (const std::string& term : PerformanceTermNames(model)) {
      auto it = std::find_if(origins.begin(), origins.end(), [&](const TermOrigin& o) { return o.term() == term; });
      TermOrigin origin;
      origin.set_term(term);
      origin.set_model(model.name());
      origin.set_file(from_file);
      origin.set_assumed(absl::c_linear_search(model.assumed_terms(), term));
      if (it != origins.end()) {
        *it = origin;
      } else {
        origins.push_back(origin);
      }
    }
  };
  record(resolved, chain.back().file);
  for (int i = static_cast<int>(chain.size()) - 2; i >= 0; --i) {
    resolved = MergeDeviceModels(resolved, *chain[i].model);
    record(*chain[i].model, chain[i].file);
  }
  resolved.clear_term_origins();
  for (const TermOrigin& origin : origins) *resolved.add_term_origins() = origin;
  return resolved;
}

}  // namespace scratchsim
