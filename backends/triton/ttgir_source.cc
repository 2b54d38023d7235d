#include "backends/triton/ttgir_source.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

#include "absl/strings/str_cat.h"

namespace scratchsim::triton {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Walks `s` from `from`, skipping quoted strings, and calls visit(i, depth) on every other
// character with the bracket depth before it ('(' and '[' open, ')' and ']' close); stops when
// visit returns true. Returns where it stopped, or npos.
template <typename Visit>
size_t ScanUnquoted(std::string_view s, size_t from, Visit visit) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') {
      quoted = true;
      continue;
    }
    if (visit(i, depth)) return i;
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
  }
  return std::string_view::npos;
}

// Index just past the bracket that closes the one at `open`; npos when it never closes.
size_t PastClosing(std::string_view s, size_t open) {
  const size_t close = ScanUnquoted(s, open, [&](size_t i, int depth) {
    return depth == 1 && (s[i] == ')' || s[i] == ']');
  });
  return close == std::string_view::npos ? close : close + 1;
}

// Splits at `separator` where no bracket or quote is open ("A at B", "A, B").
std::vector<std::string_view> SplitTopLevel(std::string_view s, std::string_view separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  ScanUnquoted(s, 0, [&](size_t i, int depth) {
    if (depth == 0 && i >= begin && s.substr(i, separator.size()) == separator) {
      parts.push_back(Trim(s.substr(begin, i - begin)));
      begin = i + separator.size();
    }
    return false;
  });
  parts.push_back(Trim(s.substr(begin)));
  return parts;
}

// The body of the last `loc(...)` on a line ("#loc12", "\"a\"(#loc3)"); empty when none.
std::string_view LastLocation(std::string_view line) {
  for (size_t at = line.rfind("loc("); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : line.rfind("loc(", at - 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) continue;
    const size_t end = PastClosing(line, at + 3);
    if (end == std::string_view::npos) return {};
    return Trim(line.substr(at + 4, end - at - 5));
  }
  return {};
}

// "#loc12" -> 12, "#loc" -> -1; nullopt for any other alias.
std::optional<int64_t> LocNumber(std::string_view alias) {
  if (!alias.starts_with("#loc")) return std::nullopt;
  const std::string_view digits = alias.substr(4);
  if (digits.empty()) return -1;
  int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || n < 0) return std::nullopt;
  return n;
}

// Triton's own library (tl.dot and friends are inlined from triton/language): not where the
// author's code is.
bool IsLibraryFile(std::string_view file) {
  return (file.find("/triton/language/") != std::string_view::npos) || (file.find("/triton/runtime/") != std::string_view::npos) ||
         file.starts_with("triton/language/");
}

// Unquotes a "..." token at the start of `s`; returns the text and the rest after it.
std::pair<std::string_view, std::string_view> Quoted(std::string_view s) {
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return {s.substr(1, i - 1), s.substr(i + 1)};
    }
  }
  return {{}, {}};
}

// Text from the TTGIR goes into reports and pictures: printable ASCII only (anything else
// becomes '?'), at most kMaxDescribed bytes a part.
std::string Printable(std::string_view s) {
  constexpr size_t kMaxDescribed = 120;
  std::string out(s.substr(0, kMaxDescribed));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  if (s.size() > kMaxDescribed) out.append("...");
  return out;
}

}  // namespace

std::string SourceLocation::Describe() const {
  std::string where;
  if (!file.empty() && line > 0) {
    const size_t slash = file.find_last_of('/');
    where = absl::StrCat(Printable(slash == std::string::npos ? file : file.substr(slash + 1)), ":", line);
  }
  if (name.empty()) return where;
  if (where.empty()) return Printable(name);
  return absl::StrCat(Printable(name), " at ", where);
}

TtgirSourceMap TtgirSourceMap::Read(std::string_view text) {
  TtgirSourceMap map;
  map.text_ = text;
  std::vector<int> open_lines;  // lines whose op opened a region still open
  for (size_t begin = 0; begin <= text.size();) {
    size_t nl = text.find('\n', begin);
    if (nl == std::string_view::npos) nl = text.size();
    map.line_starts_.push_back(begin);
    const int line_no = static_cast<int>(map.line_starts_.size());
    const std::string_view line = Trim(text.substr(begin, nl - begin));
    begin = nl + 1;
    if (line.empty()) continue;
    if (line.starts_with("#loc")) {
      const size_t eq = line.find(" = ");
      const std::optional<int64_t> number = eq == std::string_view::npos ? std::nullopt : LocNumber(line.substr(0, eq));
      if (number) map.table_.emplace_back(*number, line.substr(eq + 3));
      continue;
    }
    const bool closes = line.front() == '}';
    const bool opens = line.back() == '{';
    if (closes && opens) continue;  // "} else {": the same op's next region
    if (closes && !open_lines.empty()) {
      map.closes_at_.emplace(open_lines.back(), line_no);
      open_lines.pop_back();
    } else if (opens) {
      open_lines.push_back(line_no);
    }
  }
  // MLIR prints the table in order; sorted either way, the first of a repeated number wins.
  std::stable_sort(map.table_.begin(), map.table_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return map;
}

std::string_view TtgirSourceMap::Line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  const size_t begin = line_starts_[line - 1];
  const size_t end = static_cast<size_t>(line) < line_starts_.size() ? line_starts_[line] : text_.size() + 1;
  return Trim(text_.substr(begin, end - begin - 1));
}

std::optional<SourceLocation> TtgirSourceMap::At(int line) const {
  std::string_view text = Line(line);
  if (text.empty() || text.starts_with("#loc") || text.front() == '}') return std::nullopt;
  if (text.back() == '{') {
    const auto closing = closes_at_.find(line);
    if (closing == closes_at_.end()) return std::nullopt;
    text = Line(closing->second);
  }
  const std::string_view loc = LastLocation(text);
  if (loc.empty()) return std::nullopt;
  int steps = kMaxLocationSteps;
  SourceLocation where = Resolve(loc, 0, steps);
  if (where.name.empty() && where.line == 0) return std::nullopt;
  return where;
}

// MLIR's location forms: #alias, "file":line:col, "name"(child), callsite(callee at caller),
// fused[...] (and fused<...>[...]), unknown.
SourceLocation TtgirSourceMap::Resolve(std::string_view loc, int depth, int& steps) const {
  SourceLocation out;
  loc = Trim(loc);
  if (loc.empty() || depth >= kMaxLocationDepth || --steps < 0) return out;
  if (loc.front() == '#') {
    const std::optional<int64_t> number = LocNumber(loc);
    if (!number) return out;
    const auto it = std::lower_bound(table_.begin(), table_.end(), *number,
                                     [](const auto& entry, int64_t n) { return entry.first < n; });
    return it == table_.end() || it->first != *number ? out : Resolve(LastLocation(it->second), depth + 1, steps);
  }
  if (loc.front() == '"') {
    const auto [quoted, rest_raw] = Quoted(loc);
    const std::string_view rest = Trim(rest_raw);
    if (rest.empty() || rest.front() == '(') {  // NameLoc
      out.name = std::string(quoted);
      if (!rest.empty()) {
        const size_t end = PastClosing(rest, 0);
        if (end != std::string_view::npos) {
          SourceLocation child = Resolve(rest.substr(1, end - 2), depth + 1, steps);
          out.file = std::move(child.file);
          out.line = child.line;
        }
      }
      return out;
    }
    if (rest.front() == ':') {  // FileLineColLoc
      const std::string_view digits = rest.substr(1);
      int line = 0;
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), line);
      if (ec == std::errc() && line > 0 && ptr != digits.data()) {
        out.file = std::string(quoted);
        out.line = line;
      }
    }
    return out;
  }
  const bool callsite = loc.starts_with("callsite(");
  const bool fused = loc.starts_with("fused");
  if (!callsite && !fused) return out;
  const size_t open = loc.find(callsite ? '(' : '[');
  const size_t end = open == std::string_view::npos ? open : PastClosing(loc, open);
  if (end == std::string_view::npos) return out;
  const std::string_view inner = loc.substr(open + 1, end - open - 2);
  // The innermost position in the author's files, and the first name on the way.
  for (std::string_view part : SplitTopLevel(inner, callsite ? " at " : ",")) {
    SourceLocation piece = Resolve(part, depth + 1, steps);
    if (out.name.empty()) out.name = piece.name;
    if (out.line == 0 && piece.line > 0 && !IsLibraryFile(piece.file)) {
      out.file = std::move(piece.file);
      out.line = piece.line;
    }
  }
  return out;
}

}  // namespace scratchsim::triton
