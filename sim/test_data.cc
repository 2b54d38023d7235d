#include "sim/test_data.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace scratchsim::testing {
namespace {

std::string InSource(const std::string& relative) { return absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/", relative); }

}  // namespace

bool AllowMissingTestData() {
  const char* allow = std::getenv("SCRATCHSIM_ALLOW_MISSING_TEST_DATA");
  return allow != nullptr && std::string(allow) == "1";
}

std::string MissingTestData(std::initializer_list<std::string> relative) {
  std::string missing;
  for (const std::string& r : relative) {
    if (!std::ifstream(InSource(r))) absl::StrAppend(&missing, missing.empty() ? "" : ", ", r);
  }
  return missing.empty() ? "" : absl::StrCat("committed test data missing: ", missing);
}

absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, n);
  const bool failed = n < 0;
  gzclose(f);
  if (failed) return absl::DataLossError(absl::StrCat(path, ": cannot decompress"));
  return text;
}

absl::StatusOr<std::string> ReadTestData(const std::string& relative) { return ReadMaybeGzipped(InSource(relative)); }

absl::StatusOr<std::string> PlainTestDataCopy(const std::string& relative) {
  absl::StatusOr<std::string> text = ReadTestData(relative);
  if (!text.ok()) return text.status();
  std::string name = std::filesystem::path(relative).filename().string();
  if (absl::EndsWith(name, ".gz")) name.resize(name.size() - 3);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "scratchsim_test_data";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const std::string path = (dir / name).string();
  // Written aside and renamed into place: ctest runs a binary's tests as processes at once, and a
  // reader sees the whole file or the one before, both the same bytes.
  const std::string partial = absl::StrCat(path, ".", getpid());
  std::ofstream out(partial, std::ios::binary);
  out << *text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat(partial, ": cannot write"));
  std::filesystem::rename(partial, path, error);
  if (error) return absl::InternalError(absl::StrCat(path, ": ", error.message()));
  return path;
}

}  // namespace scratchsim::testing
