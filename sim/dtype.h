// Element types a buffer may hold, their one table of names (bf16 and bfloat16 alike) and their
// storage width. Sub-byte types (f4, i4) pack two per byte; i1 is stored as a byte, as Triton and XLA do.
#ifndef SCRATCHSIM_SIM_DTYPE_H_
#define SCRATCHSIM_SIM_DTYPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scratchsim {

// The canonical name of `dtype`: itself ("bf16"), or what an alias means in JAX, NumPy, PyTorch
// or Triton spelling ("bfloat16", "float32", "fp16", "half", "int8", "bool",
// "float8_e4m3fn", ...). Unknown names are an error that lists the known ones.
absl::StatusOr<std::string> CanonicalDtype(absl::string_view dtype);

// Storage bits of one element of `dtype` (any accepted name), e.g. 16 for "bf16".
absl::StatusOr<int64_t> DtypeBits(absl::string_view dtype);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DTYPE_H_
