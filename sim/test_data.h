// Shared by the tests that read committed data under tests/data (only *_test.cc files include
// it): a file a test needs that is missing fails the test, and .gz fixtures read as they are.
#ifndef SCRATCHSIM_SIM_TEST_DATA_H_
#define SCRATCHSIM_SIM_TEST_DATA_H_

#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace scratchsim::testing {

// SCRATCHSIM_ALLOW_MISSING_TEST_DATA=1 is the one opt-out: with it a test whose committed data is
// missing skips (a checkout without the data on purpose); without it the test fails, so a renamed
// or deleted fixture cannot pass silently.
bool AllowMissingTestData();

// Why the committed files `relative` (paths in the source tree) cannot be read; empty when all can.
std::string MissingTestData(std::initializer_list<std::string> relative);

// The contents of the file at `path`, gunzipped when it is gzip (other files read as they are).
absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path);

// The committed file `relative` (a path in the source tree), gunzipped when it is gzip.
absl::StatusOr<std::string> ReadTestData(const std::string& relative);

// A plain copy of the committed file `relative` in the temporary directory, named as it is less
// its .gz, for a command that takes a path: `simulate calibrate --timings`, say.
absl::StatusOr<std::string> PlainTestDataCopy(const std::string& relative);

}  // namespace scratchsim::testing

// First in a test that reads committed data: fails the test when a file is missing, or skips it
// under SCRATCHSIM_ALLOW_MISSING_TEST_DATA=1. Paths are relative to the source tree.
#define SCRATCHSIM_REQUIRE_TEST_DATA(...)                                                              \
  if (const std::string scratchsim_missing_ = ::scratchsim::testing::MissingTestData({__VA_ARGS__}); \
      scratchsim_missing_.empty()) {                                                                   \
  } else if (::scratchsim::testing::AllowMissingTestData())                                           \
    GTEST_SKIP() << scratchsim_missing_ << " (SCRATCHSIM_ALLOW_MISSING_TEST_DATA=1)";                  \
  else                                                                                                 \
    FAIL() << scratchsim_missing_ << " (set SCRATCHSIM_ALLOW_MISSING_TEST_DATA=1 to skip instead)"

#endif  // SCRATCHSIM_SIM_TEST_DATA_H_
