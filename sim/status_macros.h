// Early-return helpers for absl::Status and absl::StatusOr, in the style of XLA's TF_RETURN_IF_ERROR.
// Every fallible path in scratchsim returns a Status; these keep that readable.
#ifndef SCRATCHSIM_SIM_STATUS_MACROS_H_
#define SCRATCHSIM_SIM_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SCRATCHSIM_CONCAT_INNER(a, b) a##b
#define SCRATCHSIM_CONCAT(a, b) SCRATCHSIM_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status scratchsim_status_ = (expr);        \
    if (!scratchsim_status_.ok()) return scratchsim_status_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(*tmp)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SCRATCHSIM_CONCAT(statusor_, __LINE__), lhs, expr)

#endif  // SCRATCHSIM_SIM_STATUS_MACROS_H_
