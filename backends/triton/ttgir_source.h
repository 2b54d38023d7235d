// Where a TTGIR op comes from in the kernel's Python source, read from the module's MLIR
// locations (the `#loc` table and the `loc(...)` that ends an op), for reports and pictures.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_SOURCE_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_SOURCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

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
// that opened the region. Read indexes the lines, the `#loc` table and where each region closes,
// and views `text`, which must outlive the map; At resolves one op's location when asked, so
// only the few ops a report names pay for it. Never fails: a location form it does not know is
// skipped, and resolution stops after kMaxLocationDepth nested references or kMaxLocationSteps
// locations visited for one op (a cyclic table, or fused lists that fan out at every level).
class TtgirSourceMap {
 public:
  static constexpr int kMaxLocationDepth = 64;
  static constexpr int kMaxLocationSteps = 4096;

  static TtgirSourceMap Read(std::string_view text);

  // The op starting at `line`; nullopt where the text gives no usable location.
  std::optional<SourceLocation> At(int line) const;

 private:
  std::string_view Line(int line) const;  // 1-based, trimmed; empty past the end
  // `steps` counts down the locations this op's resolution may still visit.
  SourceLocation Resolve(std::string_view loc, int depth, int& steps) const;

  std::string_view text_;
  std::vector<size_t> line_starts_;                              // offset of each line in text_
  // The #loc table by number ("#loc12" is 12, "#loc" -1), sorted: what follows each " = ".
  std::vector<std::pair<int64_t, std::string_view>> table_;
  std::unordered_map<int, int> closes_at_;                        // region-opening line -> closing line
};

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_SOURCE_H_
