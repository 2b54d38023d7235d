// Lexing of TritonGPU IR text: lines become statements (multi-line statements joined by bracket
// balance, `loc(...)` removed), plus the character scans the parser's hot loop shares.
#ifndef SCRATCHSIM_BACKENDS_TRITON_TTGIR_LEXER_H_
#define SCRATCHSIM_BACKENDS_TRITON_TTGIR_LEXER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/status/statusor.h"

namespace scratchsim::triton {

// The longest line, and the longest statement after joining lines, the lexer accepts. Triton's
// lines stay far below (the largest fixture is 41.5 KB in all); the bound keeps a hostile file
// from costing memory in proportion to one line (a 1 GiB line took 2.4 GB) and is where
// ReadTtgirFile stops reading.
inline constexpr size_t kMaxTtgirLineBytes = size_t{16} << 20;

// Character classes by table: one load per character in the hot scans.
enum : uint8_t { kAlnum = 1, kValueChar = 2, kSpaceChar = 4, kOpNameChar = 8 };
constexpr std::array<uint8_t, 256> MakeTtgirCharClasses() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    uint8_t v = 0;
    if (alnum) v |= kAlnum;
    // MLIR's value-name characters ('#' and the result number follow separately).
    if (alnum || c == '_' || c == '.' || c == '$' || c == '-') v |= kValueChar;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') v |= kSpaceChar;
    if ((alnum || c == '_' || c == '.' || c == '$' || c == '-')) v |= kOpNameChar;
    t[c] = v;
  }
  return t;
}
inline constexpr std::array<uint8_t, 256> kTtgirCharClasses = MakeTtgirCharClasses();
inline bool HasClass(char c, uint8_t cls) {
  return (kTtgirCharClasses[static_cast<unsigned char>(c)] & cls) != 0;
}

// Paren/bracket depth of a statement fed one line at a time, outside string literals: the
// depth of all parts joined by single spaces, in time linear in the parts (a statement spread
// over many lines is never rescanned from its start).
class BracketBalance {
 public:
  void Add(std::string_view part);
  int64_t depth() const { return depth_; }

 private:
  int64_t depth_ = 0;
  bool in_string_ = false;
};

// Removes every `loc(...)` (balanced) from a line: locations carry no allocation facts.
std::string StripLocations(std::string_view line);

// The integer after `key` and its '=' ("\"ttg.num-warps\" = 4 : i32" -> 4), if any.
std::optional<int64_t> IntAttr(std::string_view text, std::string_view key);

// Every %value token in `s` (views into `s`).
std::vector<std::string_view> ValueTokens(std::string_view s);

// Calls `f(i)` for each '%' at i in `s`, in order, skipping those before the position the
// previous call returned (the end of the value it read). 16 characters per compare. Inline:
// the parser runs it over every op's text.
template <typename F>
void ForEachPercent(std::string_view s, F&& f) {
  const char* p = s.data();
  const size_t n = s.size();
  size_t resume = 0;
#if defined(__SSE2__)
  const __m128i k_percent = _mm_set1_epi8('%');
  for (size_t base = 0; base < n; base += 16) {
    uint32_t mask;
    if (base + 16 <= n) {
      mask = static_cast<uint32_t>(_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + base)), k_percent)));
    } else if (n >= 16) {
      // The line's last 16 characters, less those already seen.
      mask = static_cast<uint32_t>(_mm_movemask_epi8(
                 _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16)),
                                k_percent))) >>
             (base + 16 - n);
    } else {
      mask = 0;
      for (size_t i = base; i < n; ++i) mask |= static_cast<uint32_t>(p[i] == '%') << (i - base);
    }
    while (mask != 0) {
      const size_t i = base + static_cast<size_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      if (i >= resume) resume = f(i);
    }
  }
#else
  for (size_t i = 0; i < n; ++i) {
    if (p[i] == '%' && i >= resume) resume = f(i);
  }
#endif
}

// One statement: an op, a region's closing brace, an attribute alias, ...
struct TtgirStatement {
  int line = 0;           // 1-based line of its first text line
  std::string_view text;  // trimmed, without locations
};

struct TtgirStatements {
  std::vector<TtgirStatement> statements;
  int num_lines = 0;
  // The body of `#loc = loc(...)`, the kernel's own location (its arguments' locations name
  // it), kept from the dropped `#loc` table: a cue to the release (DetectTritonRelease).
  std::string kernel_location;
};

// Splits `text` into statements: blank lines, `//` comments and the `#loc` table dropped,
// locations removed, lines joined (by a space) while brackets stay open. Statements view
// `text`, or strings appended to `pieces` (joined lines, lines with locations inside), which
// must outlive them. Errors (InvalidArgument, naming `origin` and the line): a line or joined
// statement longer than kMaxTtgirLineBytes, a statement never closed.
absl::StatusOr<TtgirStatements> SplitTtgirStatements(std::string_view text, std::string_view origin,
                                                     std::deque<std::string>& pieces);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_TTGIR_LEXER_H_
