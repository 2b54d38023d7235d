// Shared by the tests that run the `simulate` command line in-process (only *_test.cc files
// include it): the exit code and what the command wrote to stdout and stderr.
#ifndef SCRATCHSIM_SIM_DRIVER_CLI_TEST_UTIL_H_
#define SCRATCHSIM_SIM_DRIVER_CLI_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <vector>

#include "sim/driver/cli.h"

namespace scratchsim::testing {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

// `simulate ARGS...` as a user runs it, without a process.
inline CliRun RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliRun run;
  run.code = RunSimulateCommand(args, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace scratchsim::testing

#endif  // SCRATCHSIM_SIM_DRIVER_CLI_TEST_UTIL_H_
