// Element types a buffer may hold and their storage width.
// Sub-byte types (f4, i4) pack two per byte; i1 is stored as a byte, as Triton and XLA do.
#ifndef SCRATCHSIM_SIM_DTYPE_H_
#define SCRATCHSIM_SIM_DTYPE_H_

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace scratchsim {

// Storage bits of one element of `dtype`, e.g. 16 for "bf16". Unknown names are an error
// that lists the known ones.
absl::StatusOr<int64_t> DtypeBits(absl::string_view dtype);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DTYPE_H_
