// Text inside XML: the one escaper every SVG the tools draw (the memory timeline, the plan map)
// puts names and titles through.
#ifndef SCRATCHSIM_SIM_XML_TEXT_H_
#define SCRATCHSIM_SIM_XML_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace scratchsim {

// `text` with &, <, >, " and ' as XML entities and control characters (invalid in XML 1.0) as '?';
// tab, newline and carriage return, which XML allows, stay.
std::string XmlEscape(absl::string_view text);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_XML_TEXT_H_
