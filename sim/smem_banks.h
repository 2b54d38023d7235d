// Shared-memory bank conflicts: how many wavefronts one warp instruction's accesses take through
// the 32 banks, from the lanes' byte addresses. The hardware rule the backends' layout models use.
#ifndef SCRATCHSIM_SIM_SMEM_BANKS_H_
#define SCRATCHSIM_SIM_SMEM_BANKS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace scratchsim {

// Wavefronts of one warp-wide shared-memory access: lane i touches `access_bytes` (4, 8 or 16)
// bytes at lane_addresses[i] (a multiple of access_bytes). The rule (CUDA C++ Programming Guide,
// "Shared Memory" of compute capability 5.x and later, which 8.x-12.x keep; Nsight Compute's
// Profiling Guide, "Shared memory" wavefronts): successive 32-bit words fall in successive banks,
// bank = (address / 4) % num_banks; accesses of one bank to different words are served one per
// wavefront, the same word is broadcast. An access of 8 or 16 bytes per lane is split into
// phases of num_banks x 4 / access_bytes lanes (half- and quarter-warps), each its own pass. The
// result is the sum over phases of the most distinct words any bank serves: 1 per phase when
// conflict-free. Bad input (an access size other than 4, 8, 16, a misaligned or negative
// address, no lanes) is an InvalidArgument.
absl::StatusOr<int64_t> SharedWavefronts(absl::Span<const int64_t> lane_addresses, int access_bytes,
                                         int num_banks = 32);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SMEM_BANKS_H_
