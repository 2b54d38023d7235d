// The MMA kinds Triton lowers tl.dot to and the ring slots its software pipeliner keeps for each:
// the one statement of that rule, shared by the pre-compile model and the TTGIR import.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TRITON_MMA_H_
#define SCRATCHSIM_BACKENDS_TRITON_TRITON_MMA_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim::triton {

enum class TritonMma {
  kMmaV2,    // mma.sync fed by cp.async + ldmatrix (sm_80..sm_89, sm_120, small tiles elsewhere)
  kWgmma,    // Hopper warpgroup MMA reading operands from shared memory
  kTcgen05,  // Blackwell (sm_100) tensor-core MMA, operands in shared, accumulator in TMEM
};
const char* TritonMmaName(TritonMma mma);

// Slots of each pipelined operand ring as a function of num_stages: num_stages - lag, at least
// one. wgmma and tcgen05 read shared memory asynchronously, so every stage in flight keeps its
// slot (lag 0); mma.sync waits for its ldmatrix reads, so the stage being computed reuses a slot
// and cp.async keeps one fewer (lag 1).
struct RingSlots {
  int64_t lag = 0;
  int64_t Slots(int64_t num_stages) const;
  // The num_stages that gives `slots` slots (the smallest, for lag 1 and one slot: 2).
  int64_t Stages(int64_t slots) const;
  // The slots as an expression of the parameter `stages` ("NUM_STAGES", "max(1, NUM_STAGES - 1)").
  std::string Expression(absl::string_view stages) const;
};
RingSlots PipelineRingSlots(TritonMma mma);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TRITON_MMA_H_
