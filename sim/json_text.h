// Writing JSON: strings as escaped literals, and any scratchsim message in one documented
// mapping shared by `simulate --format json`, `plan` and the measurement files the tools write.
#ifndef SCRATCHSIM_SIM_JSON_TEXT_H_
#define SCRATCHSIM_SIM_JSON_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace scratchsim {

// "a\"b" for a"b: quotes and backslashes escaped, \n and \t as such, other control characters
// as \u00XX.
std::string JsonString(absl::string_view text);

// A number as JSON writes it: integers exactly (64-bit ones too: every figure scratchsim
// writes is far below 2^53, where JSON readers stay exact), doubles in the fewest digits that
// read back the same value, null where not finite.
std::string JsonNumber(double value);
std::string JsonNumber(int64_t value);

// `message` as JSON: the .proto field names; 64-bit integers as numbers (not protobuf's
// strings), enums by name; repeated fields always (possibly []), scalars always except empty
// strings, optional scalars and messages only when set (a limit that does not apply is absent,
// not a sentinel). Indented by one space a level.
std::string MessageToJson(const google::protobuf::Message& message);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_JSON_TEXT_H_
