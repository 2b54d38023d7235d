// A small command-line parser shared by the `simulate` subcommands: --name=value or
// --name value, repeatable list flags, and errors that name the flag (exit code 2).
#ifndef SCRATCHSIM_SIM_FLAGS_H_
#define SCRATCHSIM_SIM_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace scratchsim {

struct FlagSpec {
  std::set<std::string> values;    // flags that take a value
  std::set<std::string> lists;     // flags that take a value and may repeat
  std::set<std::string> switches;  // flags without a value
  // Flags (also in `values`) naming a file the command writes. Parse refuses, before any work,
  // an output that is one of the files any other flag names, is not a regular file, or is
  // another output's file (sim/proto_io CheckOutputPaths).
  std::set<std::string> outputs;
};

class ParsedFlags {
 public:
  static absl::StatusOr<ParsedFlags> Parse(const FlagSpec& spec, const std::vector<std::string>& args);

  bool Has(absl::string_view name) const;
  std::string Get(absl::string_view name, absl::string_view fallback = "") const;
  absl::StatusOr<int64_t> GetInt(absl::string_view name, int64_t fallback) const;
  std::vector<std::string> GetList(absl::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  absl::Status CheckOutputs(const FlagSpec& spec) const;

  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::vector<std::string> positional_;
};

// Whether `args` ask for the usage (--help or -h anywhere): every command answers that with its
// usage on stdout and exit 0, whatever else the line holds.
bool AsksForHelp(const std::vector<std::string>& args);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_FLAGS_H_
