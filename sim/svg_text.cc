#include "sim/svg_text.h"

#include "absl/strings/str_cat.h"

namespace scratchsim {

std::string XmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') ? '?' : c;
    }
  }
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
