// Where a TTGIR op comes from in the kernel's Python source, read from the module's MLIR
// locations (the `#loc` table and the `loc(...)` that ends an op), for reports and pictures.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_SOURCE_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_SOURCE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace scratchsim::triton {

// A source position: the variable Triton named the value after (MLIR NameLoc, "" if none) and
// the innermost file and line outside Triton's own library (FileLineColLoc through CallSiteLoc
// and FusedLoc), so a tl.dot inlined from triton/language shows the kernel's line.
struct SourceLocation {
  std::string name;
  std::string file;  // as the TTGIR spells it (often an absolute path)
  int line = 0;
  // "a at kernel.py:56", "kernel.py:56", "a": the file's last path component only.
  std::string Describe() const;
};

// The locations of one TTGIR text, by the 1-based line its op starts on. An op with regions
// (scf.for, tt.reduce) carries its location after its closing brace; it is credited to the line
// that opened the region. Never fails: a location form it does not know is skipped, and
// resolution stops after kMaxLocationDepth references (a cyclic or absurdly deep table).
class TtgirSourceMap {
 public:
  static constexpr int kMaxLocationDepth = 64;

  static TtgirSourceMap Read(std::string_view text);

  // The op starting at `line`; nullopt where the text gives no usable location.
  std::optional<SourceLocation> At(int line) const;

 private:
  SourceLocation Resolve(std::string_view loc, int depth) const;

  std::unordered_map<std::string, std::string> table_;  // "#loc12" -> "loc(...)" body
  std::map<int, std::string> op_locations_;             // line -> the op's "loc(...)"
};

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_SOURCE_H_
