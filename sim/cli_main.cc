// Entry point of the `simulate` binary: dispatches subcommands to their libraries.
// All logic lives in sim/cli.cc and the backends; this file only routes argv.
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return scratchsim::RunSimulateCommand(args, std::cout, std::cerr);
}
