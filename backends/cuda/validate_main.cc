// `scratchsim_cuda validate|probe|gemm-timing ...`: the CUDA subcommands on their own, for machines where
// only this binary is carried. `simulate validate|probe` runs the same code.
#include <iostream>
#include <string>

#include "backends/cuda/gemm_timing_command.h"
#include "backends/cuda/validate_command.h"

int main(int argc, char** argv) {
  std::string command = argc > 1 ? argv[1] : "";
  if (command == "validate") return scratchsim::cuda::RunValidateCommand(argc - 1, argv + 1);
  if (command == "probe") return scratchsim::cuda::RunProbeCommand(argc - 1, argv + 1);
  if (command == "gemm-timing") return scratchsim::cuda::RunGemmTimingCommand(argc - 1, argv + 1);
  const bool help = command == "--help" || command == "-h";
  (help ? std::cout : std::cerr) << "usage: scratchsim_cuda validate --device h100 --graph FILE [--sweep P=v1,v2]... | "
               "scratchsim_cuda probe [--out FILE] [--compare h100] | "
               "scratchsim_cuda gemm-timing --shapes MxNxK[,...] --out FILE.json "
               "(each answers --help)\n";
  return help ? 0 : 2;
}
