// How a client names its inputs in messages: the command line's flags or the Python package's
// arguments, so an error names what the user wrote (`--set tile_x=3` or `params={'tile_x': 3}`).
#ifndef SCRATCHSIM_SIM_SPELLING_H_
#define SCRATCHSIM_SIM_SPELLING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim {

// The core takes parameter overrides as "NAME=VALUE" and sweep axes as "NAME=SPEC" whoever
// called it; only the words of its messages depend on the client. The default is the command
// line's.
struct Spelling {
  enum class Client { kCommandLine, kPython };
  Client client = Client::kCommandLine;

  static Spelling Python() { return Spelling{Client::kPython}; }

  // One parameter override as the user gave it: `--set NAME=VALUE` / `params={'NAME': VALUE}`.
  std::string Set(absl::string_view assignment) const;
  // How to fix NAME at a value: `--set NAME=V` / `params={'NAME': V}`.
  std::string SetHint(absl::string_view name) const;
  // One sweep axis as the user gave it: `--param 'NAME=SPEC'` / `param={'NAME': 'SPEC'}`.
  std::string Param(absl::string_view spec) const;
  // The overrides and the axes as a kind: `--set` / `params`, `--param` / `param`.
  std::string SetKind() const;
  std::string ParamKind() const;
  // Any other option by its command-line name ("top", "compute-dtype"): `--top` / `top`,
  // `compute_dtype` (Python's keyword arguments are the flags' names with '_' for '-').
  std::string Option(absl::string_view name) const;
  // The device and the escape that judges a kernel compiled for another target on it anyway.
  std::string Device() const;
  std::string AnyTarget() const;
};

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SPELLING_H_
