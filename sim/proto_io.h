// Reads any scratchsim message from binary (.pb), text (.pbtxt/.textproto) or JSON (.json).
// Errors name the file and, for text and JSON, the line and field at fault.
#ifndef SCRATCHSIM_SIM_PROTO_IO_H_
#define SCRATCHSIM_SIM_PROTO_IO_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>
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
// write 'PATH': " and why. The bytes go to a temporary file in the same directory, renamed over
// `path` only once all are written, so a failed write leaves an existing file as it was (a
// symbolic link is followed, link after link: the file it names is replaced, or made where it does
// not exist yet, and the link stays; a loop is refused). An existing `path` that is not a regular
// file (a directory, FIFO, device) is refused, never opened.
absl::Status WriteStringToFile(absl::string_view path, absl::string_view contents);

// A file named on the command line: the flag ("timeline", no dashes) and the path.
struct FlagPath {
  std::string flag;
  std::string path;
};

// Refuses, before any work, output files that would destroy data or cannot be written whole: an
// empty name, an existing path that is not a regular file, an output that is one of `inputs`, and
// two outputs at one file, and an output that is a loop of symbolic links. Identity is the
// file's (st_dev, st_ino), not its spelling, so `./g.pbtxt`, a hard link and a symbolic link to
// the graph are all the graph; an output that does not exist yet is identified by its
// directory's identity and its name, after its links are followed (a link to `new.svg` is
// `new.svg`). InvalidArgument
// naming the flag and the path.
absl::Status CheckOutputPaths(const std::vector<FlagPath>& outputs, const std::vector<FlagPath>& inputs);

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

// What protobuf's JSON parser does not refuse and scratchsim does (ParseProto applies it to every
// JSON message; readers of other JSON call it themselves): objects and arrays nested more than 100
// levels (arrays in arrays are not counted by the parser), and a key given twice in one object
// (the parser keeps the last). With `keys_are_field_names` (a scratchsim message), "a_b" and "aB"
// are one key, as the parser matches both to one field, and an array inside an array is refused
// (no field holds one; the parser flattened it). InvalidArgument naming `origin`, the line and the key.
absl::Status CheckJsonStructure(absl::string_view text, absl::string_view origin, bool keys_are_field_names);

// For readers of JSON that is no scratchsim message (`simulate calibrate`'s timings), which take
// a large file one part at a time instead of parsing it whole: `member` is called with each key
// of the JSON object `text` (escapes decoded) and its value as written, in order;
// ForEachJsonElement the same with each element of the JSON array `text` and its index. They
// stop at the first error the callback returns. Only the structure is followed (brackets, strings,
// separators); what a value holds is the caller's parser's to judge. InvalidArgument naming
// `origin` and the line where the text is not one object (array) of members (elements).
absl::Status ForEachJsonMember(absl::string_view text, absl::string_view origin,
                               const std::function<absl::Status(absl::string_view key, absl::string_view value)>& member);
absl::Status ForEachJsonElement(absl::string_view text, absl::string_view origin,
                                const std::function<absl::Status(size_t index, absl::string_view element)>& element);

// Writes `message` as text, JSON (protobuf's JSON mapping, original field names) or binary.
absl::StatusOr<std::string> SerializeProto(const google::protobuf::Message& message, ProtoFormat format);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PROTO_IO_H_
