// Writing the pictures the tools draw (the memory timeline, the plan map, the trace): the one XML
// escaper their names and titles go through, the opening every SVG shares, and how much any draws.
#ifndef SCRATCHSIM_SIM_SVG_TEXT_H_
#define SCRATCHSIM_SIM_SVG_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim {

// The rule that keeps every picture bounded whatever the report or plan holds: a picture draws
// at most this many elements one by one and summarises the rest, saying in the picture what it
// summarised (docs/pictures.md). SVG elements (the timeline's placements, the plan map's cells)
// cost a few hundred bytes each and a viewer must lay them all out; the trace is for zooming into
// large graphs (Perfetto holds millions), so it keeps more of its slices (ops and placements).
inline constexpr int kMaxSvgElements = 4096;
inline constexpr int kMaxTraceSlices = 65536;

// The most bytes of one text (a name, a label, a hover title) a picture writes: beyond it the text
// is cut and ends in "...", so that a picture's size is bounded by its element count whatever
// the names hold.
inline constexpr size_t kMaxSvgTextBytes = 2048;

// `text` with &, <, >, " and ' as XML entities, and each character XML 1.0 does not allow or asks
// documents to avoid (control characters but tab, newline and carriage return; C1 controls;
// surrogates; noncharacters such as U+FFFE and U+FFFF) and each malformed UTF-8 byte as '?', so
// that the picture is well-formed whatever a name holds; cut at kMaxSvgTextBytes of `text`.
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
