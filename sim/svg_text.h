// Writing the SVG pictures the tools draw (the memory timeline, the plan map): the one XML
// escaper their names and titles go through, and the opening every picture shares.
#ifndef SCRATCHSIM_SIM_SVG_TEXT_H_
#define SCRATCHSIM_SIM_SVG_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim {

// `text` with &, <, >, " and ' as XML entities, and each character XML 1.0 does not allow or asks
// documents to avoid (control characters but tab, newline and carriage return; C1 controls;
// surrogates; noncharacters such as U+FFFE and U+FFFF) and each malformed UTF-8 byte as '?', so
// that the picture is well-formed whatever a name holds.
std::string XmlEscape(absl::string_view text);

// A diagonal hatch, drawn over what a picture marks (pruned cells, bytes over a limit): stripes
// `stripe` wide every `period` px, in `colour` at `opacity`.
struct SvgHatch {
  absl::string_view id;
  int period = 8;
  double stripe = 1;
  absl::string_view colour;
  double opacity = 1;
};

// The opening of a self-contained picture: the <svg> element of `width` x `height` px in the
// tools' font, its <title> (escaped here), the hatch pattern and a white background.
std::string SvgDocumentStart(int width, int height, absl::string_view title, const SvgHatch& hatch);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_SVG_TEXT_H_
