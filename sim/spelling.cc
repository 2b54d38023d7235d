#include "sim/spelling.h"

#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace scratchsim {
namespace {

// A value as Python writes it back: an integer bare, anything else quoted.
std::string PythonValue(absl::string_view value) {
  int64_t number;
  if (absl::SimpleAtoi(value, &number)) return std::string(value);
  return absl::StrCat("'", value, "'");
}

// `KIND={'NAME': VALUE}` for "NAME=VALUE"; quote_value quotes even an integer (a sweep spec is text).
std::string PythonEntry(absl::string_view kind, absl::string_view text, bool quote_value) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(text, absl::MaxSplits('=', 1));
  return absl::StrCat(kind, "={'", parts.first, "': ",
                      quote_value ? absl::StrCat("'", parts.second, "'") : PythonValue(parts.second), "}");
}

}  // namespace

std::string Spelling::Set(absl::string_view assignment) const {
  if (client == Client::kPython) return PythonEntry("params", assignment, false);
  return absl::StrCat("--set ", assignment);
}

std::string Spelling::SetHint(absl::string_view name) const {
  if (client == Client::kPython) return absl::StrCat("params={'", name, "': V}");
  return absl::StrCat("--set ", name, "=V");
}

std::string Spelling::Param(absl::string_view spec) const {
  if (client == Client::kPython) return PythonEntry("param", spec, true);
  return absl::StrCat("--param '", spec, "'");
}

std::string Spelling::SetKind() const { return client == Client::kPython ? "params" : "--set"; }

std::string Spelling::ParamKind() const { return client == Client::kPython ? "param" : "--param"; }

std::string Spelling::Option(absl::string_view name) const {
  if (client == Client::kPython) return absl::StrReplaceAll(name, {{"-", "_"}});
  return absl::StrCat("--", name);
}

std::string Spelling::Device() const { return Option("device"); }

std::string Spelling::AnyTarget() const { return client == Client::kPython ? "any_target=True" : "--any-target"; }

}  // namespace scratchsim
