#include "sim/svg_text.h"

#include "absl/strings/str_cat.h"

namespace scratchsim {

namespace {

// The length of the UTF-8 sequence at text[i] and its code point; 0 where it is malformed.
size_t DecodeUtf8(absl::string_view text, size_t i, char32_t* code) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  char32_t value = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF) return 0;  // overlong or past Unicode
  *code = value;
  return length;
}

// What XML 1.0 lets a document hold (its Char production), less what it asks documents to avoid:
// the C1 controls and the noncharacters (U+FDD0..U+FDEF and the last two of every plane, as
// U+FFFE and U+FFFF), which a viewer may refuse.
bool XmlAllows(char32_t c) {
  if (c < 0x20) return c == '\t' || c == '\n' || c == '\r';
  if (c >= 0x7F && c <= 0x9F) return false;
  if (c >= 0xD800 && c <= 0xDFFF) return false;  // surrogates
  if (c >= 0xFDD0 && c <= 0xFDEF) return false;
  return (c & 0xFFFE) != 0xFFFE;
}

}  // namespace

std::string XmlEscape(absl::string_view text) {
  const bool cut = text.size() > kMaxSvgTextBytes;
  if (cut) text = text.substr(0, kMaxSvgTextBytes);  // a character cut in two becomes '?' below
  std::string out;
  out.reserve(text.size() + 3);
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&apos;"; ++i; continue;
      default: break;
    }
    char32_t code = 0;
    const size_t length = DecodeUtf8(text, i, &code);
    if (length == 0) {  // a byte that starts no character: one '?' for it
      out += '?';
      ++i;
      continue;
    }
    if (XmlAllows(code)) {
      out.append(text.data() + i, length);
    } else {
      out += '?';
    }
    i += length;
  }
  if (cut) out += "...";
  return out;
}

std::string SvgDocumentStart(int width, int height, absl::string_view title, const SvgHatch& hatch) {
  return absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", width, "\" height=\"", height,
                      "\" viewBox=\"0 0 ", width, " ", height,
                      "\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" font-size=\"11\">\n", "<title>",
                      XmlEscape(title), "</title>\n", "<defs><pattern id=\"", hatch.id, "\" width=\"", hatch.period,
                      "\" height=\"", hatch.period,
                      "\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"",
                      hatch.stripe, "\" height=\"", hatch.period, "\" fill=\"", hatch.colour, "\" fill-opacity=\"",
                      hatch.opacity, "\"/></pattern></defs>\n", "<rect width=\"", width, "\" height=\"", height,
                      "\" fill=\"#ffffff\"/>\n");
}

}  // namespace scratchsim
