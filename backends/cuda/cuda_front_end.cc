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

// Points `stream` at `to`'s buffer until it goes out of scope.
class StreamRedirect {
 public:
  StreamRedirect(std::ostream& stream, std::ostream& to) : stream_(stream), saved_(stream.rdbuf(to.rdbuf())) {}
  ~StreamRedirect() { stream_.rdbuf(saved_); }
  StreamRedirect(const StreamRedirect&) = delete;
  StreamRedirect& operator=(const StreamRedirect&) = delete;

 private:
  std::ostream& stream_;
  std::streambuf* saved_;
};

// Runs an argv-style command (each answers --help itself, as `scratchsim_cuda` runs it too).
Subcommand Wrap(std::string name, std::string summary, int (*run)(int, char**)) {
  return Subcommand{name, std::move(summary),
                    [name, run](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
                      // The commands print to std::cout and std::cerr: those carry the driver's
                      // streams while they run.
                      const StreamRedirect to_out(std::cout, out);
                      const StreamRedirect to_err(std::cerr, err);
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
                 RunValidateCommand),
            Wrap("probe", "Read the live GPU into a device model (--measure-memory: latencies, bandwidth).",
                 RunProbeCommand),
            Wrap("gemm-timing", "Time the CUDA backend's GEMM tile configurations on the GPU.", RunGemmTimingCommand)};
  }
};

const FrontEndRegistration registration(std::make_unique<CudaFrontEnd>());

}  // namespace
}  // namespace scratchsim::cuda
