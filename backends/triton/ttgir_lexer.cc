// Statements out of TTGIR lines: trimming, location removal and bracket-balanced joining, the
// first pass over every byte of the IR, hence the vector scans.
#include "backends/triton/ttgir_lexer.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace scratchsim::triton {
namespace {

absl::Status LexError(std::string_view origin, int line, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(absl::string_view(origin.data(), origin.size()), ":", line,
                                                 ": ", absl::string_view(what.data(), what.size())));
}

absl::Status TooLong(std::string_view origin, int line, std::string_view what, size_t bytes) {
  return LexError(origin, line,
                  absl::StrCat(absl::string_view(what.data(), what.size()), " of ", bytes,
                               " bytes is longer than the maximum of ", kMaxTtgirLineBytes,
                               " bytes (16 MiB)"));
}

}  // namespace

// Removes every `loc(...)` (balanced) from a line: locations carry no allocation facts.
std::string StripLocations(std::string_view line) {
  while (!line.empty() && HasClass(line.front(), kSpaceChar)) line.remove_prefix(1);
  while (!line.empty() && HasClass(line.back(), kSpaceChar)) line.remove_suffix(1);
  size_t at = line.find("loc(");
  if (at == std::string_view::npos) return std::string(line);
  std::string out;
  out.reserve(line.size());
  size_t i = 0;
  while (at != std::string_view::npos) {
    if (at > 0 && HasClass(line[at - 1], kAlnum)) {
      // "...alloc(" and the like: not a location.
      out.append(line.data() + i, at + 4 - i);
      i = at + 4;
      at = line.find("loc(", i);
      continue;
    }
    out.append(line.data() + i, at - i);
    int depth = 0;
    bool in_string = false;
    size_t j = at + 3;
    for (; j < line.size(); ++j) {
      const char c = line[j];
      if (c == '"' && line[j - 1] != '\\') in_string = !in_string;
      if (in_string) continue;
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) break;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    i = std::min(j + 1, line.size());
    at = line.find("loc(", i);
  }
  out.append(line.data() + i, line.size() - i);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}
namespace {

// Brackets opened minus closed in `s`, counting those inside strings too, and whether `s` holds
// a quote (then only an exact scan can tell).
struct BracketCount {
  int64_t depth = 0;
  bool quotes = false;
};

BracketCount CountBrackets(std::string_view s) {
  // Opening and closing brackets counted 16 characters at a time (a compare yields -1 per
  // match, subtracted into per-lane counters that are summed every 127 blocks, before they
  // could wrap).
  int64_t depth = 0;
  bool quotes = false;
  const char* p = s.data();
  const size_t n = s.size();
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i k_open_paren = _mm_set1_epi8('('), k_open_bracket = _mm_set1_epi8('[');
  const __m128i k_close_paren = _mm_set1_epi8(')'), k_close_bracket = _mm_set1_epi8(']');
  const __m128i k_quote = _mm_set1_epi8('"');
  __m128i any_quote = _mm_setzero_si128();
  while (i + 16 <= n) {
    __m128i opens = _mm_setzero_si128(), closes = _mm_setzero_si128();
    for (int block = 0; block < 127 && i + 16 <= n; ++block, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      // A character is at most one of the four: one subtraction per side.
      opens = _mm_sub_epi8(opens, _mm_or_si128(_mm_cmpeq_epi8(v, k_open_paren),
                                               _mm_cmpeq_epi8(v, k_open_bracket)));
      closes = _mm_sub_epi8(closes, _mm_or_si128(_mm_cmpeq_epi8(v, k_close_paren),
                                                 _mm_cmpeq_epi8(v, k_close_bracket)));
      any_quote = _mm_or_si128(any_quote, _mm_cmpeq_epi8(v, k_quote));
    }
    if (i < n && n >= 16 && i + 16 > n) {
      // The last partial block: reload the line's final 16 characters and drop the lanes
      // already counted.
      const size_t done = i + 16 - n;
      alignas(16) static constexpr uint8_t kKeep[32] = {
          0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
          0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
      const __m128i keep = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kKeep + 16 - done));
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
      opens = _mm_sub_epi8(opens, _mm_and_si128(keep, _mm_cmpeq_epi8(v, k_open_paren)));
      opens = _mm_sub_epi8(opens, _mm_and_si128(keep, _mm_cmpeq_epi8(v, k_open_bracket)));
      closes = _mm_sub_epi8(closes, _mm_and_si128(keep, _mm_cmpeq_epi8(v, k_close_paren)));
      closes = _mm_sub_epi8(closes, _mm_and_si128(keep, _mm_cmpeq_epi8(v, k_close_bracket)));
      any_quote = _mm_or_si128(any_quote, _mm_and_si128(keep, _mm_cmpeq_epi8(v, k_quote)));
      i = n;
    }
    // Each lane counted at most once per block (128 at most); sum the 16 lanes of each.
    const __m128i zero = _mm_setzero_si128();
    const __m128i so = _mm_sad_epu8(opens, zero), sc = _mm_sad_epu8(closes, zero);
    depth += _mm_cvtsi128_si32(so) + _mm_cvtsi128_si32(_mm_srli_si128(so, 8)) -
             _mm_cvtsi128_si32(sc) - _mm_cvtsi128_si32(_mm_srli_si128(sc, 8));
  }
  quotes = _mm_movemask_epi8(any_quote) != 0;
#endif
  for (; i < n; ++i) {
    const char c = p[i];
    depth += (c == '(') + (c == '[') - (c == ')') - (c == ']');
    quotes |= c == '"';
  }
  return {depth, quotes};
}

}  // namespace

void BracketBalance::Add(std::string_view s) {
  // Only this part is scanned, with the string state the parts before left: a statement of
  // many lines costs its length, not its length times its lines.
  const BracketCount count = CountBrackets(s);
  if (!count.quotes) {
    if (!in_string_) depth_ += count.depth;
    return;
  }
  // The joining space before a part is not a backslash, so a quote opening a part is never
  // escaped.
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' && (i == 0 || s[i - 1] != '\\')) in_string_ = !in_string_;
    if (in_string_) continue;
    if (c == '(' || c == '[') ++depth_;
    if (c == ')' || c == ']') --depth_;
  }
}


std::vector<std::string_view> ValueTokens(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') continue;
    size_t j = i + 1;
    while (j < s.size() && (HasClass(s[j], kAlnum) || s[j] == '_' ||
                            s[j] == '#' || s[j] == '$' || s[j] == '.' || s[j] == '-')) {
      ++j;
    }
    if (j > i + 1) out.push_back(s.substr(i, j - i));
    i = j - 1;
  }
  return out;
}
std::optional<int64_t> IntAttr(std::string_view text, std::string_view key) {
  size_t p = text.find(key);
  if (p == std::string_view::npos) return std::nullopt;
  p = text.find('=', p + key.size());
  if (p == std::string_view::npos) return std::nullopt;
  ++p;
  while (p < text.size() && text[p] == ' ') ++p;
  size_t q = p;
  while (q < text.size() && (std::isdigit(static_cast<unsigned char>(text[q])) || text[q] == '-')) ++q;
  int64_t v = 0;
  if (!absl::SimpleAtoi(absl::string_view(text.data() + p, q - p), &v)) return std::nullopt;
  return v;
}


absl::StatusOr<TtgirStatements> SplitTtgirStatements(std::string_view text, std::string_view origin,
                                                     std::deque<std::string>& pieces) {
  // Joins multi-line statements (partition headers span lines) by paren balance. Most lines
  // end in their only location, " loc(#locN)": those are trimmed in place, without copies.
  TtgirStatements out;
  std::vector<TtgirStatement>& stmts = out.statements;
  stmts.reserve(text.size() / 96 + 16);
  std::deque<std::string>& owned = pieces;
  // The statement being joined, and the bracket depth of all its lines so far.
  std::string pending;
  BracketBalance balance;
  int pending_line = 0;
  int& num_lines = out.num_lines;
  const std::string_view all = text;
  auto is_space = [](char c) { return HasClass(c, kSpaceChar); };
  // One piece per '\n'-separated line (the last one after the final newline included).
  for (size_t begin = 0; begin <= all.size();) {
    size_t nl = all.find('\n', begin);
    if (nl == std::string_view::npos) nl = all.size();
    std::string_view l = all.substr(begin, nl - begin);
    begin = nl + 1;
    if (num_lines == std::numeric_limits<int>::max()) {
      return LexError(origin, num_lines, "more lines than a line number holds");
    }
    const int line_no = ++num_lines;
    if (l.size() > kMaxTtgirLineBytes) return TooLong(origin, line_no, "line", l.size());
    while (!l.empty() && is_space(l.front())) l.remove_prefix(1);
    while (!l.empty() && is_space(l.back())) l.remove_suffix(1);
    if (l.empty()) continue;
    if (l[0] == '#' && l.size() >= 4 && l[1] == 'l' && l[2] == 'o' && l[3] == 'c') {
      if (l.starts_with("#loc = ") && out.kernel_location.empty()) out.kernel_location = std::string(l.substr(7));
      continue;
    }
    if (l[0] == '/' && l.size() >= 2 && l[1] == '/') continue;
    std::string_view s = l;
    // "loc(" occurrences, found through the few '(' of the line; they cannot overlap.
    size_t at = std::string_view::npos;
    bool several = false;
    for (size_t p = l.find('('); p != std::string_view::npos; p = l.find('(', p + 1)) {
      if (p >= 3 && l[p - 3] == 'l' && l[p - 2] == 'o' && l[p - 1] == 'c') {
        if (at != std::string_view::npos) {
          several = true;
          break;
        }
        at = p - 3;
      }
    }
    if (at != std::string_view::npos) {
      if (at > 0 && l[at - 1] == ' ' && l.back() == ')' && !several) {
        std::string_view t = l.substr(0, at);
        while (!t.empty() && is_space(t.back())) t.remove_suffix(1);
        s = t;
      } else {
        owned.push_back(StripLocations(s));
        s = owned.back();
      }
    }
    if (s.empty()) continue;
    if (pending.empty()) {
      balance = BracketBalance();
      balance.Add(s);
      if (balance.depth() <= 0) {
        stmts.push_back({line_no, s});
        continue;
      }
      pending.assign(s.data(), s.size());
      pending_line = line_no;
      continue;
    }
    if (pending.size() + 1 + s.size() > kMaxTtgirLineBytes) {
      return TooLong(origin, pending_line, "statement (its lines joined)", pending.size() + 1 + s.size());
    }
    pending.push_back(' ');
    pending.append(s);
    balance.Add(s);
    if (balance.depth() <= 0) {
      owned.push_back(std::move(pending));
      stmts.push_back({pending_line, owned.back()});
      pending.clear();
    }
  }
  if (!pending.empty()) {
    return LexError(origin, pending_line, "unbalanced parentheses: statement never closes");
  }
  return out;
}

}  // namespace scratchsim::triton
