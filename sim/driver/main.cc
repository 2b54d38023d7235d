// Entry point of the `simulate` binary: routes argv to the driver. The front ends this build
// has (Triton, TPU, CUDA) are linked in and register themselves (sim/frontend.h).
#include <iostream>
#include <string>
#include <vector>

#include "sim/driver/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return scratchsim::RunSimulateCommand(args, std::cout, std::cerr);
}
