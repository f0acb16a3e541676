// Text for HTML pages hone writes (the tuning report, the JIT inspection
// page): the five characters that could end an element or an attribute
// value become entities.
//
//   o << "<td>" << hone::html_escape(name) << "</td>";   // "a<b" -> "a&lt;b"
#pragma once

#include <string>
#include <string_view>

namespace hone {

/// `s` with &, <, >, " and ' as &amp; &lt; &gt; &quot; &#39;.
std::string html_escape(std::string_view s);

}  // namespace hone
