// Reads any scratchsim message from binary (.pb), text (.pbtxt/.textproto) or JSON (.json).
// Errors name the file and, for text and JSON, the line and field at fault.
#ifndef SCRATCHSIM_SIM_PROTO_IO_H_
#define SCRATCHSIM_SIM_PROTO_IO_H_

#include <cstdint>
#include <functional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace scratchsim {

enum class ProtoFormat { kBinary, kText, kJson };

// The format implied by `path`'s extension; unknown extensions are an error.
absl::StatusOr<ProtoFormat> FormatFromPath(absl::string_view path);

// Input files are regular files of at most MaxInputBytes() bytes (default 256 MiB, the driver's
// --max-input-mib): a directory, FIFO or device, or a larger file, is InvalidArgument naming it.
inline constexpr int64_t kDefaultMaxInputBytes = int64_t{256} << 20;
int64_t MaxInputBytes();
void SetMaxInputBytes(int64_t bytes);  // < 0: no limit
absl::StatusOr<std::string> ReadFileToString(absl::string_view path);
absl::StatusOr<std::string> ReadFileToString(absl::string_view path, int64_t max_bytes);
// Writes `contents` to `path` (bytes as they are, replacing the file); a failure says "cannot
// write 'PATH': " and why.
absl::Status WriteStringToFile(absl::string_view path, absl::string_view contents);

// Parses `contents` (named `origin` in messages) into `message`. Binary input with fields
// the schema does not know is rejected, so garbage that happens to decode is not accepted.
absl::Status ParseProto(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                        google::protobuf::Message* message);

// ParseProto for text or JSON larger than `piece_bytes`, in pieces of about that size, so that the
// whole message never exists at once: cut between top-level fields (text) or between the elements
// of top-level lists (JSON), each piece is parsed alone and handed to `take`, which may move fields
// out of it (a graph's buffers and ops, back to the wire); what remains is merged into `message`.
// The result is the whole parse's. Where the input cannot be cut safely (a non-repeated field
// given twice, unbalanced brackets, JSON that is not one object) or a piece does not parse, the
// whole is parsed instead (after `take(nullptr)`: forget what was taken so far), so errors are the
// whole parse's errors. Binary input, or input of at most piece_bytes: parsed whole, then taken.
absl::Status ParseProtoInPieces(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                                size_t piece_bytes, google::protobuf::Message* message,
                                const std::function<void(google::protobuf::Message*)>& take);

absl::Status LoadProtoFile(absl::string_view path, google::protobuf::Message* message);

// Writes `message` as text, JSON (protobuf's JSON mapping, original field names) or binary.
absl::StatusOr<std::string> SerializeProto(const google::protobuf::Message& message, ProtoFormat format);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PROTO_IO_H_
