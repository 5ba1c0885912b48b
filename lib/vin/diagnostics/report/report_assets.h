// The page's own code, style and markup (report/assets/), embedded at build time by
// embed_assets.cmake: hand-written, no third-party code, each whole as it is in its file.
#pragma once

#include <string_view>

namespace vin::diagnostics {

extern const std::string_view kReportScript;  ///< assets/report.js
extern const std::string_view kReportStyle;   ///< assets/report.css
extern const std::string_view kReportBody;    ///< assets/report.html: the markup of <body>

}  // namespace vin::diagnostics
