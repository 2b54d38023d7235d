#include "backends/tpu/libtpu_confirm.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "backends/tpu/tpu_tiling.h"
#include "backends/tpu/xla_verdict.h"
#include "sim/proto_io.h"
#include "sim/status_macros.h"

extern char** environ;

namespace scratchsim {

// tpu_aot.py beside this file, built in (tpu_aot_script.cc is generated from it by CMake) so that the
// binary alone, with a Python that has jax[tpu], can compile: one runner for the Python API and
// the command line.
extern const char kTpuAotScript[];

namespace {

constexpr size_t kQuotedOutput = 600;

// The last `n` characters, for quoting a runner's output in a message.
std::string Tail(absl::string_view text, size_t n) {
  text = absl::StripAsciiWhitespace(text);
  return std::string(text.size() > n ? text.substr(text.size() - n) : text);
}

CompilerConfirmation Failed(std::string why) {
  CompilerConfirmation out;
  out.set_error(std::move(why));
  return out;
}

// A private folder under the system's temporary directory, removed when this goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "scratchsim_confirm_XXXXXX").string();
    if (ec) pattern = "/tmp/scratchsim_confirm_XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// How long a compile may take: $SCRATCHSIM_CONFIRM_TIMEOUT seconds, else 900 (the slowest corpus
// compile took 48 s; a runner that hangs must not hang simulate). Only digits, 1 to
// kMaxConfirmTimeoutSeconds: "1e3", "2x" or 2^32 + 1 must not quietly become 1 or 2 seconds.
absl::StatusOr<int> TimeoutSeconds() {
  const char* value = std::getenv("SCRATCHSIM_CONFIRM_TIMEOUT");
  if (value == nullptr || *value == '\0') return 900;
  const absl::string_view text(value);
  int64_t seconds = 0;
  const bool digits = text.size() <= 9 && absl::c_all_of(text, [](char c) { return c >= '0' && c <= '9'; });
  if (digits) seconds = std::stoll(std::string(text));
  if (!digits || seconds < 1 || seconds > kMaxConfirmTimeoutSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("SCRATCHSIM_CONFIRM_TIMEOUT: '", absl::CHexEscape(text.substr(0, 40)),
                                                   "' is not a whole number of seconds from 1 to ",
                                                   kMaxConfirmTimeoutSeconds));
  }
  return static_cast<int>(seconds);
}

// Runs argv[0] (looked up on PATH) with stdin from /dev/null and stdout, stderr to files; its
// exit status, or why it could not start or finish within `timeout_seconds`. The runner leads a
// process group of its own, and the whole group is killed at the timeout: a runner's children
// (a compiler it started) must not outlive it.
absl::StatusOr<int> Spawn(const std::vector<std::string>& args, const std::string& out_path,
                          const std::string& err_path, int timeout_seconds) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // a new group, its id the runner's pid
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("could not start ", args[0], ": ", std::strerror(rc)));
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      kill(-pid, SIGKILL);
      return absl::UnavailableError(absl::StrCat("lost ", args[0], ": ", std::strerror(errno)));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::DeadlineExceededError(absl::StrCat(
          "libtpu did not finish within ", timeout_seconds, " s (SCRATCHSIM_CONFIRM_TIMEOUT raises it)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) return absl::UnavailableError(absl::StrCat(args[0], " was killed by signal ", WTERMSIG(status)));
  return WEXITSTATUS(status);
}

}  // namespace

CompilerConfirmation ParseRunnerOutput(absl::string_view stdout_text, absl::string_view stderr_text) {
  absl::string_view last;
  for (absl::string_view line : absl::StrSplit(stdout_text, '\n', absl::SkipWhitespace())) last = line;
  last = absl::StripAsciiWhitespace(last);
  CompilerConfirmation out;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!absl::StartsWith(last, "{") ||
      !google::protobuf::util::JsonStringToMessage(std::string(last), &out, options).ok()) {
    const std::string printed = Tail(stderr_text.empty() ? stdout_text : stderr_text, kQuotedOutput);
    return Failed(absl::StrCat("the libtpu runner printed no result", printed.empty() ? "" : ": ", printed));
  }
  if (out.error().empty() && out.confirmed_verdict() != "FITS" && out.confirmed_verdict() != "DOES_NOT_FIT" &&
      out.confirmed_verdict() != "NOT_COMPILABLE") {
    return Failed(absl::StrCat("the libtpu runner gave an unknown verdict '", out.confirmed_verdict(), "'"));
  }
  return out;
}

absl::StatusOr<CompilerConfirmation> ConfirmWithLibtpu(const KernelGraph& source, absl::string_view origin,
                                                       const DeviceModel& device) {
  if (source.pallas().jax_export().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": field 'pallas.jax_export': empty, so --confirm has no kernel to compile (trace it with "
        "scratchsim.pallas.to_graph or bench/tpu/pallas_to_graph.py, where JAX and flatbuffers are installed)"));
  }
  ASSIGN_OR_RETURN(const int timeout_seconds, TimeoutSeconds());
  const std::string gen = TpuGeneration(device);
  if (gen.empty()) {
    return Failed(absl::StrCat("libtpu compiles for tpu_v4, tpu_v5e, tpu_v5p, tpu_v6e and tpu_v7x here, not for ", device.name()));
  }
  TempDir dir;
  if (dir.path().empty()) return Failed("could not create a temporary folder for the compile");
  const std::string script = dir.path() + "/tpu_aot.py";
  const std::string kernel = dir.path() + "/kernel.jaxexport";
  for (const auto& [path, contents] : {std::pair<std::string, absl::string_view>{script, kTpuAotScript},
                                       {kernel, source.pallas().jax_export()}}) {
    if (absl::Status written = WriteStringToFile(path, contents); !written.ok()) {
      return Failed(std::string(written.message()));
    }
  }
  const char* python = std::getenv("SCRATCHSIM_PYTHON");
  const std::vector<std::string> args = {python != nullptr && *python != '\0' ? python : "python3",
                                         script,
                                         "confirm",
                                         "--gen",
                                         gen,
                                         "--capacity-bytes",
                                         absl::StrCat(MaxScopedVmemLimit(device)),
                                         kernel};
  const std::string out_path = dir.path() + "/out.json", err_path = dir.path() + "/err.txt";
  absl::StatusOr<int> status = Spawn(args, out_path, err_path, timeout_seconds);
  if (!status.ok()) return Failed(std::string(status.status().message()));
  const std::string printed = ReadFileToString(out_path).value_or("");
  const std::string errors = ReadFileToString(err_path).value_or("");
  CompilerConfirmation out = ParseRunnerOutput(printed, errors);
  if (*status != 0 && !out.error().empty()) {
    out.set_error(absl::StrCat(args[0], " exited with status ", *status, ": ", out.error()));
  }
  return out;
}

void ApplyLibtpuConfirmation(CompilerConfirmation confirmation, const DeviceModel& device, Report* report) {
  ApplyConfirmation(std::move(confirmation), report);
  const CompilerConfirmation& c = report->confirmation();
  if (!c.error().empty()) return;
  auto* suggestions = report->mutable_suggestions();
  if (c.confirmed_verdict() == "FITS") {
    suggestions->Clear();  // it compiles as it is: nothing to change
    return;
  }
  // The limit the model asked for gives way to the one libtpu measured (in its place), or to
  // none where no limit helps (beyond the whole VMEM, or a kernel Mosaic refuses); where what it
  // needs was not measured, the model's stays.
  if (c.requirement_bytes() == 0 && !c.exceeds_capacity() && c.confirmed_verdict() != "NOT_COMPILABLE") return;
  Suggestion measured;
  if (c.requirement_bytes() > 0) {
    measured.set_raise_limit_bytes(c.requirement_bytes());
    measured.set_resulting_bytes(c.requirement_bytes());
    measured.set_text(absl::StrCat("pltpu.CompilerParams(vmem_limit_bytes=", c.requirement_bytes(), ") (",
                                   XlaBytes(c.requirement_bytes()), "): libtpu compiles it at this limit, its scoped VMEM, ",
                                   "spills included, when compiled with the limit at the whole ",
                                   XlaBytes(c.capacity_bytes()), " of ", device.name()));
  }
  google::protobuf::RepeatedPtrField<Suggestion> kept;
  for (Suggestion& s : *suggestions) {
    if (s.raise_limit_bytes() <= 0) {
      *kept.Add() = std::move(s);
    } else if (measured.raise_limit_bytes() > 0) {
      *kept.Add() = std::move(measured);
      measured.Clear();
    }
  }
  if (measured.raise_limit_bytes() > 0) *kept.Add() = std::move(measured);
  suggestions->Swap(&kept);
  if (c.requirement_bytes() == 0 && c.exceeds_capacity()) {
    report->add_notes(absl::StrCat("libtpu: it does not fit even with vmem_limit_bytes at the whole ",
                                   XlaBytes(c.capacity_bytes()), " of VMEM of ", device.name(),
                                   ": no limit helps; smaller blocks do"));
  }
}

}  // namespace scratchsim
