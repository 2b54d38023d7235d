#include "backends/triton/triton_mma.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace scratchsim::triton {

const char* TritonMmaName(TritonMma mma) {
  switch (mma) {
    case TritonMma::kMmaV2: return "mma.sync (cp.async pipelining)";
    case TritonMma::kWgmma: return "wgmma";
    case TritonMma::kTcgen05: return "tcgen05";
  }
  return "?";
}

int64_t RingSlots::Slots(int64_t num_stages) const { return std::max<int64_t>(1, num_stages - lag); }

int64_t RingSlots::Stages(int64_t slots) const { return slots + lag; }

std::string RingSlots::Expression(absl::string_view stages) const {
  if (lag == 0) return std::string(stages);
  return absl::StrCat("max(1, ", stages, " - ", lag, ")");
}

RingSlots PipelineRingSlots(TritonMma mma) { return RingSlots{.lag = mma == TritonMma::kMmaV2 ? 1 : 0}; }

}  // namespace scratchsim::triton
