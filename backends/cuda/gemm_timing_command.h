// `scratchsim_cuda gemm-timing`: times the CUDA backend's GEMM over every compiled timing tile
// and pipeline depth at given problem sizes, for judging the planner (docs/validation/planner-h100.md).
#ifndef SCRATCHSIM_BACKENDS_CUDA_GEMM_TIMING_COMMAND_H_
#define SCRATCHSIM_BACKENDS_CUDA_GEMM_TIMING_COMMAND_H_

namespace scratchsim::cuda {

// Flags (sim/flags syntax): --shapes MxNxK[,MxNxK...] (repeatable) --out FILE.json
// [--stages LO:HI] [--launches N] [--blocks-per-sm C,...] [--split-k S,...] (SPLIT_K values in
// [1, 64], each at most every shape's K / 32 K tiles; default 1, the plain kernel).
// Exit codes: 0 done, 2 bad flags, 3 no CUDA device, 4 a harness failure.
int RunGemmTimingCommand(int argc, char** argv);

}  // namespace scratchsim::cuda

#endif  // SCRATCHSIM_BACKENDS_CUDA_GEMM_TIMING_COMMAND_H_
