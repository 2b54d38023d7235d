// The CUDA backend's subcommands in the `simulate` driver: validate (predict, then launch and
// measure on the GPU), probe (read the live GPU into a device model) and gemm-timing.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/gemm_timing_command.h"
#include "backends/cuda/validate_command.h"
#include "sim/frontend.h"

namespace scratchsim::cuda {
namespace {

constexpr char kValidateUsage[] = R"(usage: simulate validate --device DEV (--graph FILE [--sweep P=V1,V2,...] [--opt-in|--no-opt-in])...
                         [--plan FILE] [--replay CSV] [--csv FILE] [--json FILE] [--quiet]
  Predicts each configuration, then compiles and launches the matching CUDA kernel on the GPU and
  compares shared memory, registers, blocks per SM and the launch verdict.
  --replay CSV predicts the configurations of an earlier run again (no GPU needed).
Exit codes: 0 every prediction matches, 1 a mismatch, 2 bad input, 3 no GPU.
)";

constexpr char kProbeUsage[] = R"(usage: simulate probe [--out FILE] [--compare DEV] [--device-index N] [--measure-memory]
  Reads the live GPU's attributes into a DeviceModel textproto; --measure-memory adds measured
  L2/DRAM latency and bandwidth; --compare DEV lists where a shipped model differs.
Exit codes: 0 done (and no difference), 1 differences, 2 bad input, 3 no GPU.
)";

constexpr char kGemmTimingUsage[] = R"(usage: simulate gemm-timing --shapes MxNxK[,...] --out FILE.json [--stages LO:HI] [--launches N] [--blocks-per-sm C,...] [--split-k S,...]
  Times the CUDA backend's GEMM over its tile configurations (the planner's calibration data);
  --split-k times each one again at every SPLIT_K given (K shares added into C).
Exit codes: 0 done, 2 bad input, 3 no GPU.
)";

// Runs an argv-style command, or prints its usage for --help / -h.
Subcommand Wrap(std::string name, std::string summary, const char* usage, int (*run)(int, char**)) {
  return Subcommand{name, std::move(summary),
                    [name, usage, run](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
                      for (const std::string& arg : args) {
                        if (arg == "--help" || arg == "-h") {
                          out << usage;
                          return 0;
                        }
                      }
                      // The commands print to the process's own streams.
                      std::vector<std::string> words = {name};
                      words.insert(words.end(), args.begin(), args.end());
                      std::vector<char*> argv;
                      for (std::string& w : words) argv.push_back(w.data());
                      argv.push_back(nullptr);
                      return run(static_cast<int>(words.size()), argv.data());
                    }};
}

class CudaFrontEnd : public FrontEnd {
 public:
  absl::string_view name() const override { return "cuda"; }
  std::vector<Subcommand> subcommands() const override {
    return {Wrap("validate", "Predict, then launch the real kernels on the GPU and compare (exit 3 without one).",
                 kValidateUsage, RunValidateCommand),
            Wrap("probe", "Read the live GPU into a device model (--measure-memory: latencies, bandwidth).",
                 kProbeUsage, RunProbeCommand),
            Wrap("gemm-timing", "Time the CUDA backend's GEMM tile configurations on the GPU.", kGemmTimingUsage,
                 RunGemmTimingCommand)};
  }
};

const FrontEndRegistration registration(std::make_unique<CudaFrontEnd>());

}  // namespace
}  // namespace scratchsim::cuda
