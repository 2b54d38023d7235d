// `simulate validate` and `simulate probe`: the CUDA backend's subcommands. The CLI
// dispatches to these when built with CUDA; argv[0] is the subcommand name.
#ifndef SCRATCHSIM_BACKENDS_CUDA_VALIDATE_COMMAND_H_
#define SCRATCHSIM_BACKENDS_CUDA_VALIDATE_COMMAND_H_

namespace scratchsim::cuda {

// simulate validate --device h100 --graph FILE [--sweep P=LO..HI|P=V1,V2,...]... [--no-opt-in]
//                   [--graph FILE ...] [--plan FILE] [--csv FILE] [--json FILE]
//                   [--replay MEASURED.csv] [--quiet]
// Exit: 0 every configuration matches on shared bytes, and (given the register count ptxas
// chose) on launch verdict and blocks per SM; 1 some do not; 2 bad input; 3 no CUDA device (or the GPU failed).
int RunValidateCommand(int argc, char** argv);

// simulate probe [--out FILE] [--device-index N] [--compare NAME_OR_PATH] [--measure-memory]
// --measure-memory also runs memory_bench.h (seconds of GPU time): it sets the performance
// fields l2_latency_ns, dram_latency_ns and l2_bandwidth_gbps and prints a table of the
// measurements beside the --compare model's values (stderr, and as comments in the output).
// Exit: 0 written (and agrees with --compare); 1 disagrees; 2 bad input; 3 no device (or a
// measurement failed on it).
int RunProbeCommand(int argc, char** argv);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_VALIDATE_COMMAND_H_
