// Entry point of the `simulate` binary: dispatches subcommands to their libraries.
// All logic lives in sim/cli.cc and the backends; this file only routes argv.
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli.h"
#ifdef SCRATCHSIM_HAVE_CUDA
#include "backends/cuda/validate_command.h"
#endif

int main(int argc, char** argv) {
#ifdef SCRATCHSIM_HAVE_CUDA
  // backends/cuda links itself into `simulate` when nvcc is found (backends/cuda/CMakeLists.txt).
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "validate") return scratchsim::cuda::RunValidateCommand(argc - 1, argv + 1);
  if (command == "probe") return scratchsim::cuda::RunProbeCommand(argc - 1, argv + 1);
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  return scratchsim::RunSimulateCommand(args, std::cout, std::cerr);
}
