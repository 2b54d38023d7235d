// Overflow-checked 64-bit arithmetic for every size the simulator computes.
// A byte count that does not fit in int64 is bad input, never a silent wrap.
#ifndef SCRATCHSIM_SIM_CHECKED_MATH_H_
#define SCRATCHSIM_SIM_CHECKED_MATH_H_

#include <cstdint>
#include <optional>

namespace scratchsim {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_sub_overflow(a, b, &result)) return std::nullopt;
  return result;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// Rounds `value` (>= 0) up to a multiple of `multiple` (> 0).
inline std::optional<int64_t> CheckedRoundUp(int64_t value, int64_t multiple) {
  if (multiple <= 0 || value < 0) return std::nullopt;
  int64_t remainder = value % multiple;
  if (remainder == 0) return value;
  return CheckedAdd(value, multiple - remainder);
}

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_CHECKED_MATH_H_
