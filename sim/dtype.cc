#include "sim/dtype.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace scratchsim {
namespace {

constexpr std::array<std::pair<absl::string_view, int64_t>, 24> kDtypes = {{
    {"f64", 64},    {"f32", 32},    {"tf32", 32},   {"f16", 16},     {"bf16", 16},
    {"f8e4m3", 8},  {"f8e5m2", 8},  {"f8", 8},      {"f8e4m3fn", 8}, {"f8e4m3fnuz", 8},
    {"f8e5m2fnuz", 8}, {"f4", 4},   {"f4e2m1", 4},  {"i64", 64},     {"u64", 64},
    {"i32", 32},    {"u32", 32},    {"i16", 16},    {"u16", 16},     {"i8", 8},
    {"u8", 8},      {"i4", 4},      {"i1", 8},      {"bytes", 8},
}};

}  // namespace

absl::StatusOr<int64_t> DtypeBits(absl::string_view dtype) {
  for (const auto& [name, bits] : kDtypes) {
    if (name == dtype) return bits;
  }
  std::string known;
  for (const auto& [name, bits] : kDtypes) absl::StrAppend(&known, known.empty() ? "" : ", ", name);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", dtype, "' (known: ", known, ")"));
}

}  // namespace scratchsim
