#include "sim/smem_banks.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace scratchsim {

absl::StatusOr<int64_t> SharedWavefronts(absl::Span<const int64_t> lane_addresses, int access_bytes,
                                         int num_banks) {
  if (access_bytes != 4 && access_bytes != 8 && access_bytes != 16) {
    return absl::InvalidArgumentError(absl::StrCat("shared access of ", access_bytes, " bytes per lane: 4, 8 or 16"));
  }
  if (num_banks <= 0) return absl::InvalidArgumentError(absl::StrCat("num_banks ", num_banks, ": must be positive"));
  if (lane_addresses.empty()) return absl::InvalidArgumentError("shared access with no lanes");
  for (size_t i = 0; i < lane_addresses.size(); ++i) {
    if (lane_addresses[i] < 0 || lane_addresses[i] % access_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat("lane ", i, " address ", lane_addresses[i],
                                                     ": not a non-negative multiple of ", access_bytes));
    }
  }
  const size_t phase_lanes = static_cast<size_t>(num_banks) * 4 / access_bytes;
  const int words_per_access = access_bytes / 4;
  int64_t wavefronts = 0;
  std::vector<std::set<int64_t>> words(num_banks);
  for (size_t start = 0; start < lane_addresses.size(); start += phase_lanes) {
    for (auto& w : words) w.clear();
    const size_t end = std::min(lane_addresses.size(), start + phase_lanes);
    for (size_t i = start; i < end; ++i) {
      for (int w = 0; w < words_per_access; ++w) {
        const int64_t word = lane_addresses[i] / 4 + w;
        words[word % num_banks].insert(word);
      }
    }
    size_t most = 0;
    for (const auto& w : words) most = std::max(most, w.size());
    wavefronts += static_cast<int64_t>(most);
  }
  return wavefronts;
}

}  // namespace scratchsim
