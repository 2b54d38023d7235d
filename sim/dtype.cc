#include "sim/dtype.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace scratchsim {
namespace {

constexpr std::array<std::pair<absl::string_view, int64_t>, 25> kDtypes = {{
    {"f64", 64},    {"f32", 32},    {"tf32", 32},   {"f16", 16},     {"bf16", 16},
    {"f8e4m3", 8},  {"f8e5m2", 8},  {"f8", 8},      {"f8e4m3fn", 8}, {"f8e4m3fnuz", 8},
    {"f8e5m2fnuz", 8}, {"f8e4m3b11fnuz", 8}, {"f4", 4},   {"f4e2m1", 4},  {"i64", 64},     {"u64", 64},
    {"i32", 32},    {"u32", 32},    {"i16", 16},    {"u16", 16},     {"i8", 8},
    {"u8", 8},      {"i4", 4},      {"i1", 8},      {"bytes", 8},
}};

// Other spellings: JAX/NumPy ("bfloat16", "float8_e4m3fn"), PyTorch ("torch.float16" minus the
// module, "half"), Triton ("fp16", "fp8e4nv").
constexpr std::array<std::pair<absl::string_view, absl::string_view>, 34> kAliases = {{
    {"float64", "f64"},      {"double", "f64"},      {"fp64", "f64"},
    {"float32", "f32"},      {"float", "f32"},       {"fp32", "f32"},
    {"float16", "f16"},      {"half", "f16"},        {"fp16", "f16"},
    {"bfloat16", "bf16"},
    {"int64", "i64"},        {"uint64", "u64"},      {"int32", "i32"},      {"uint32", "u32"},
    {"int16", "i16"},        {"uint16", "u16"},      {"int8", "i8"},        {"uint8", "u8"},
    {"int4", "i4"},          {"bool", "i1"},
    {"float8_e4m3fn", "f8e4m3fn"}, {"float8_e4m3fnuz", "f8e4m3fnuz"}, {"float8_e5m2", "f8e5m2"},
    {"float8_e5m2fnuz", "f8e5m2fnuz"}, {"float8_e4m3", "f8e4m3"},
    {"fp8e4nv", "f8e4m3fn"}, {"fp8e5", "f8e5m2"},    {"fp8e4b8", "f8e4m3fnuz"}, {"fp8e5b16", "f8e5m2fnuz"},
    {"fp8e4b15", "f8e4m3b11fnuz"},
    {"fp8", "f8"},           {"float4_e2m1fn", "f4e2m1"}, {"fp4", "f4"},     {"tfloat32", "tf32"},
}};

}  // namespace

absl::StatusOr<std::string> CanonicalDtype(absl::string_view dtype) {
  const std::string lower = absl::AsciiStrToLower(dtype);
  for (const auto& [name, bits] : kDtypes) {
    if (name == lower) return std::string(name);
  }
  for (const auto& [alias, name] : kAliases) {
    if (alias == lower) return std::string(name);
  }
  std::string known;
  for (const auto& [name, bits] : kDtypes) absl::StrAppend(&known, known.empty() ? "" : ", ", name);
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", dtype, "' (known: ", known,
                                                 "; and their JAX/PyTorch/Triton names such as bfloat16, float32, fp16)"));
}

absl::StatusOr<int64_t> DtypeBits(absl::string_view dtype) {
  for (const auto& [name, bits] : kDtypes) {
    if (name == dtype) return bits;  // the common case, without building a string
  }
  absl::StatusOr<std::string> canonical = CanonicalDtype(dtype);
  if (!canonical.ok()) return canonical.status();
  for (const auto& [name, bits] : kDtypes) {
    if (name == *canonical) return bits;
  }
  return absl::InternalError("dtype table inconsistent");
}

}  // namespace scratchsim
