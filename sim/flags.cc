#include "sim/flags.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

namespace scratchsim {

bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

absl::StatusOr<ParsedFlags> ParsedFlags::Parse(const FlagSpec& spec, const std::vector<std::string>& args) {
  ParsedFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!absl::StartsWith(arg, "--") || arg == "--") {
      flags.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (spec.switches.contains(name)) {
      if (value) return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      flags.values_[name].push_back("true");
      continue;
    }
    bool is_list = spec.lists.contains(name);
    if (!is_list && !spec.values.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!value) {
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      value = args[++i];
    }
    auto& slot = flags.values_[name];
    if (!is_list && !slot.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given more than once"));
    }
    slot.push_back(*value);
  }
  if (!spec.outputs.empty()) RETURN_IF_ERROR(flags.CheckOutputs(spec));
  return flags;
}

absl::Status ParsedFlags::CheckOutputs(const FlagSpec& spec) const {
  // Every other value that names an existing file counts as an input.
  std::vector<FlagPath> outputs, inputs;
  for (const auto& [name, values] : values_) {
    if (spec.switches.contains(name)) continue;
    for (const std::string& value : values) {
      (spec.outputs.contains(name) ? outputs : inputs).push_back(FlagPath{name, value});
    }
  }
  return CheckOutputPaths(outputs, inputs);
}

bool ParsedFlags::Has(absl::string_view name) const { return values_.find(name) != values_.end(); }

std::string ParsedFlags::Get(absl::string_view name, absl::string_view fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string(fallback) : it->second.back();
}

absl::StatusOr<int64_t> ParsedFlags::GetInt(absl::string_view name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  int64_t value;
  if (!absl::SimpleAtoi(it->second.back(), &value)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", it->second.back(), "' is not an integer"));
  }
  return value;
}

std::vector<std::string> ParsedFlags::GetList(absl::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

}  // namespace scratchsim
