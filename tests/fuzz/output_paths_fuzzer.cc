// libFuzzer target: the output files of the command line. The input is argv, one word per line,
// parsed with the flags of `simulate` and its subcommands (ParsedFlags::Parse, which refuses
// outputs over inputs, outputs that are not regular files and two outputs at one file), in a
// folder of its own that holds a graph, a hard link and symbolic links to it, a link to a file
// that does not exist yet, a link loop, a FIFO and a folder. Each output the flags accept is
// written (WriteStringToFile). Afterwards: every input that existed holds what it held, every
// output written holds what was written to it (an output that is a symbolic link is still one),
// a refused run changed nothing, and no temporary file is left behind.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "sim/flags.h"
#include "sim/proto_io.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace scratchsim;
namespace fs = std::filesystem;

// The folder the run works in (the process's working directory): made once, refilled per input.
const fs::path& WorkDir() {
  static const fs::path* dir = [] {
    char pattern[] = "/tmp/scratchsim_fuzz_outputs_XXXXXX";
    const char* root = ::mkdtemp(pattern);
    if (root == nullptr) fuzz::Fail("mkdtemp");
    auto* d = new fs::path(root);
    fs::current_path(*d);
    return d;
  }();
  return *dir;
}

// The fixture: every kind of path an output flag may be given.
void MakeFixture() {
  for (const auto& entry : fs::directory_iterator(WorkDir())) fs::remove_all(entry.path());  // links, not targets
  std::ofstream("g.pbtxt") << "graph";
  std::ofstream("old.svg") << "old";
  fs::create_hard_link("g.pbtxt", "hard.pbtxt");
  fs::create_symlink("g.pbtxt", "sym.pbtxt");
  fs::create_symlink("sym.pbtxt", "symsym.svg");
  fs::create_symlink("old.svg", "old_link.svg");
  fs::create_symlink("new.svg", "to_new.svg");  // a file that does not exist yet
  fs::create_symlink("d/new.svg", "to_d_new.svg");
  fs::create_symlink("missing/x.svg", "dangling.svg");
  fs::create_symlink("loop", "loop");
  fs::create_directory("d");
  std::ofstream("d/x.svg") << "x";
  fs::create_symlink("../g.pbtxt", "d/up.pbtxt");
  fs::create_symlink("d", "dir_link");
  if (::mkfifo("fifo", 0600) != 0) fuzz::Fail("mkfifo");
}

// Every entry of the folder, links not followed.
std::vector<fs::directory_entry> Entries() {
  std::vector<fs::directory_entry> entries;
  std::error_code error;
  for (fs::recursive_directory_iterator it(WorkDir(), error), end; !error && it != end; it.increment(error)) {
    entries.push_back(*it);
  }
  return entries;
}

// The regular files of the folder (not links), with their contents.
std::map<std::string, std::string> RegularFiles() {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& entry : Entries()) {
    std::error_code error;
    if (entry.is_symlink(error) || !entry.is_regular_file(error)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    files[fs::relative(entry.path(), WorkDir()).string()] = text.str();
  }
  return files;
}

// The contents of `path` when it names a regular file (through links), else nullopt.
std::optional<std::string> Contents(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

FlagSpec Spec() {
  FlagSpec spec;
  spec.values = {"device", "graph", "ttgir", "timeline", "trace", "map", "out", "calibration", "name"};
  spec.lists = {"timings", "set"};
  spec.switches = {"help", "residuals"};
  spec.outputs = {"timeline", "trace", "map", "out"};
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WorkDir();
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = absl::StrSplit(input, '\n');
  if (args.size() > 16) return 0;
  for (const std::string& arg : args) {
    // Within the folder only: no absolute path, no way up, no NUL (argv cannot hold one).
    if (arg.size() > 64 || absl::StrContains(arg, "..") || absl::StrContains(arg, '\0') ||
        absl::StartsWith(arg, "/") || absl::StrContains(arg, "=/")) {
      return 0;
    }
  }
  MakeFixture();
  const std::map<std::string, std::string> before = RegularFiles();
  const FlagSpec spec = Spec();
  auto flags = ParsedFlags::Parse(spec, args);
  if (!flags.ok()) {
    if (RegularFiles() != before) fuzz::Fail("a refused command line changed a file");
    return 0;
  }
  // What every input held before any output is written.
  std::map<std::string, std::optional<std::string>> inputs;
  for (const std::string& name : spec.values) {
    if (!spec.outputs.contains(name) && flags->Has(name)) inputs[name] = Contents(flags->Get(name));
  }
  for (const std::string& name : spec.lists) {
    for (const std::string& value : flags->GetList(name)) inputs[absl::StrCat(name, " ", value)] = Contents(value);
  }
  std::map<std::string, std::string> written;
  for (const std::string& name : spec.outputs) {
    if (!flags->Has(name)) continue;
    const std::string path = flags->Get(name);
    const std::optional<std::string> old = Contents(path);
    struct stat st {};
    const bool link = ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
    const std::string contents = absl::StrCat("written by --", name, "\n");
    if (WriteStringToFile(path, contents).ok()) {
      written[path] = contents;
      // A link is followed: the file it names is written, the link stays.
      if (link && (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))) {
        fuzz::Fail(absl::StrCat("--", name, " ", path, ": the link was replaced by the file"));
      }
    } else if (Contents(path) != old) {
      fuzz::Fail(absl::StrCat("a failed write changed --", name, " ", path));
    }
  }
  for (const auto& [path, contents] : written) {
    if (Contents(path) != contents) fuzz::Fail(absl::StrCat("output ", path, " does not hold what was written to it"));
  }
  for (const std::string& name : spec.values) {
    if (spec.outputs.contains(name) || !flags->Has(name)) continue;
    const std::optional<std::string>& old = inputs[name];
    if (old.has_value() && Contents(flags->Get(name)) != old) {
      fuzz::Fail(absl::StrCat("input --", name, " ", flags->Get(name), " was overwritten"));
    }
  }
  for (const std::string& name : spec.lists) {
    for (const std::string& value : flags->GetList(name)) {
      const std::optional<std::string>& old = inputs[absl::StrCat(name, " ", value)];
      if (old.has_value() && Contents(value) != old) fuzz::Fail(absl::StrCat("input --", name, " ", value, " was overwritten"));
    }
  }
  for (const fs::directory_entry& entry : Entries()) {
    // WriteStringToFile's temporary files: ".NAME.PID.N.tmp".
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, ".") && absl::StrContains(name, absl::StrCat(".", ::getpid(), ".")) &&
        absl::EndsWith(name, ".tmp")) {
      fuzz::Fail(absl::StrCat("a temporary file was left behind: ", name));
    }
  }
  return 0;
}
