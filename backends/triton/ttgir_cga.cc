// Cluster launches: CGA layouts, shapes per CTA (Triton's getCTASplitNum / getShapePerCTA in
// lib/Dialect/TritonGPU/IR/Dialect.cpp).
#include "backends/triton/ttgir_cga.h"

#include <algorithm>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

absl::string_view ResolveAlias(absl::string_view enc, const std::map<std::string, std::string>& aliases) {
  enc = absl::StripAsciiWhitespace(enc);
  auto it = aliases.find(std::string(enc));
  return it == aliases.end() ? enc : absl::string_view(it->second);
}

// Where `key = ` starts as a whole key (after '{', ',' or a blank), or npos.
size_t FindWholeKey(absl::string_view text, absl::string_view key) {
  const std::string pattern = absl::StrCat(key, " = ");
  for (size_t p = text.find(pattern); p != absl::string_view::npos; p = text.find(pattern, p + 1)) {
    if (p == 0 || text[p - 1] == '{' || text[p - 1] == ',' || text[p - 1] == ' ') return p + pattern.size();
  }
  return absl::string_view::npos;
}

// The text of a nested attribute value starting at `p` ("#alias" up to ',' or '}', or an inline
// "#dialect.name<...>" up to its matching '>').
absl::string_view AttributeValueAt(absl::string_view text, size_t p) {
  size_t e = p;
  int depth = 0;
  for (; e < text.size(); ++e) {
    const char c = text[e];
    if (c == '<') ++depth;
    if (c == '>' && --depth < 0) break;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return text.substr(p, e - p);
}

// "0, 1": the integers of a comma-separated list.
absl::StatusOr<std::vector<int64_t>> Integers(absl::string_view list) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v)) {
      return absl::InvalidArgumentError(absl::StrCat("CGA layout entry '", part, "' is not an integer"));
    }
    out.push_back(v);
  }
  return out;
}

// "[[0, 1], [1, 0]]" at `p`: the bases, each one entry per dimension.
absl::StatusOr<std::vector<std::vector<int64_t>>> Bases(absl::string_view text, size_t p) {
  std::vector<std::vector<int64_t>> bases;
  if (p >= text.size() || text[p] != '[') return absl::InvalidArgumentError("expected '[' in a CGA layout");
  size_t i = p + 1;
  while (i < text.size() && text[i] != ']') {
    if (text[i] == '[') {
      const size_t e = text.find(']', i);
      if (e == absl::string_view::npos) return absl::InvalidArgumentError("unterminated CGA basis");
      ASSIGN_OR_RETURN(std::vector<int64_t> basis, Integers(text.substr(i + 1, e - i - 1)));
      bases.push_back(std::move(basis));
      i = e + 1;
    } else {
      ++i;
    }
  }
  return bases;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> CtaSplitNum(absl::string_view encoding,
                                                 const std::map<std::string, std::string>& aliases, int rank) {
  std::vector<int64_t> split(static_cast<size_t>(std::max(rank, 0)), 1);
  const absl::string_view enc = ResolveAlias(encoding, aliases);
  if (absl::StartsWith(enc, "#ttg.slice<") || absl::StartsWith(enc, "#ttg.dot_op<")) {
    const size_t pp = FindWholeKey(enc, "parent");
    if (pp == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat("no parent in ", enc));
    const absl::string_view parent = AttributeValueAt(enc, pp);
    const bool slice = absl::StartsWith(enc, "#ttg.slice<");
    const size_t dp = FindWholeKey(enc, slice ? "dim" : "opIdx");
    int64_t index = 0;
    if (dp == absl::string_view::npos ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(AttributeValueAt(enc, dp)), &index)) {
      return absl::InvalidArgumentError(absl::StrCat("no ", slice ? "dim" : "opIdx", " in ", enc));
    }
    if (slice) {
      ASSIGN_OR_RETURN(std::vector<int64_t> p, CtaSplitNum(parent, aliases, rank + 1));
      if (index < 0 || index > rank) return absl::InvalidArgumentError(absl::StrCat("slice dim out of range in ", enc));
      p.erase(p.begin() + index);
      return p;
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> p, CtaSplitNum(parent, aliases, rank));
    if (rank >= 2) p[static_cast<size_t>(index == 0 ? rank - 1 : rank - 2)] = 1;
    return p;
  }
  // Releases before 3.6 printed the split itself: CTAsPerCGA, CTASplitNum, CTAOrder.
  if (const size_t sp = FindWholeKey(enc, "CTASplitNum"); sp != absl::string_view::npos) {
    const size_t e = enc.find(']', sp);
    if (sp >= enc.size() || enc[sp] != '[' || e == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("malformed CTASplitNum in ", enc));
    }
    ASSIGN_OR_RETURN(const std::vector<int64_t> listed, Integers(enc.substr(sp + 1, e - sp - 1)));
    if (std::any_of(listed.begin(), listed.end(), [](int64_t v) { return v <= 0; })) {
      return absl::InvalidArgumentError(absl::StrCat("CTASplitNum not positive in ", enc));
    }
    const size_t offset = split.size() >= listed.size() ? split.size() - listed.size() : 0;
    for (size_t d = 0; d < listed.size() && offset + d < split.size(); ++d) split[offset + d] = listed[d];
    return split;
  }
  size_t p = FindWholeKey(enc, "CGALayout");
  if (p == absl::string_view::npos) p = FindWholeKey(enc, "block");
  if (p == absl::string_view::npos) return split;
  ASSIGN_OR_RETURN(const auto bases, Bases(enc, p));
  for (const std::vector<int64_t>& basis : bases) {
    // Bases align with the trailing dimensions (a memdesc's slot dimension comes first).
    const size_t offset = split.size() >= basis.size() ? split.size() - basis.size() : 0;
    for (size_t d = 0; d < basis.size() && offset + d < split.size(); ++d) {
      if (basis[d] != 0) split[offset + d] *= 2;
    }
  }
  return split;
}

std::vector<int64_t> ShapePerCta(const std::vector<int64_t>& shape, const std::vector<int64_t>& split) {
  std::vector<int64_t> out = shape;
  const size_t offset = shape.size() >= split.size() ? shape.size() - split.size() : 0;
  for (size_t d = 0; d < split.size() && offset + d < shape.size(); ++d) {
    const int64_t s = std::min(split[d], shape[offset + d]);
    if (s > 1) out[offset + d] = shape[offset + d] / s;
  }
  return out;
}

absl::StatusOr<PerCtaText> PerCtaOpText(absl::string_view text, absl::string_view op_name,
                                        const std::map<std::string, std::string>& aliases) {
  PerCtaText out;
  std::vector<std::vector<int64_t>> splits;  // each tensor type's, in order
  size_t copied = 0;
  for (size_t p = text.find("tensor<"); p != absl::string_view::npos; p = text.find("tensor<", p + 1)) {
    const size_t dims_at = p + 7;
    // "128x64xf32, #enc>": the leading integers are dimensions; the encoding follows ", ".
    size_t e = dims_at;
    int depth = 1;
    for (; e < text.size() && depth > 0; ++e) {
      if (text[e] == '<') ++depth;
      if (text[e] == '>' && text[e - 1] != '-') --depth;
    }
    const absl::string_view body = text.substr(dims_at, e - dims_at - 1);
    const size_t comma = body.find(", ");
    if (comma == absl::string_view::npos) continue;
    std::vector<int64_t> shape;
    size_t dims_end = 0;
    for (size_t from = 0;;) {
      const size_t x = body.find('x', from);
      int64_t v = 0;
      if (x == absl::string_view::npos || !absl::SimpleAtoi(body.substr(from, x - from), &v)) break;
      shape.push_back(v);
      from = x + 1;
      dims_end = from;
    }
    if (shape.empty()) continue;
    ASSIGN_OR_RETURN(std::vector<int64_t> split,
                     CtaSplitNum(body.substr(comma + 2), aliases, static_cast<int>(shape.size())));
    const std::vector<int64_t> per_cta = ShapePerCta(shape, split);
    splits.push_back(split);
    if (per_cta == shape) continue;
    out.changed = true;
    absl::StrAppend(&out.text, text.substr(copied, dims_at - copied));
    for (int64_t v : per_cta) absl::StrAppend(&out.text, v, "x");
    copied = dims_at + dims_end;
  }
  absl::StrAppend(&out.text, text.substr(copied));
  if (!splits.empty()) {
    for (int64_t s : splits[0]) out.source_split *= s;
  }
  if (op_name == "ttg.convert_layout") {
    out.crosses_ctas = splits.size() >= 2 && splits[0] != splits[1];
  } else if ((op_name == "tt.reduce" || op_name == "tt.scan") && !splits.empty()) {
    const size_t ap = FindWholeKey(text, "axis");
    int64_t axis = 0;
    if (ap != absl::string_view::npos) {
      absl::string_view v = AttributeValueAt(text, ap);
      v = v.substr(0, v.find(':'));
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(v), &axis) && axis >= 0 &&
          static_cast<size_t>(axis) < splits[0].size()) {
        out.crosses_ctas = splits[0][static_cast<size_t>(axis)] > 1;
      }
    }
  }
  return out;
}

}  // namespace scratchsim::triton
