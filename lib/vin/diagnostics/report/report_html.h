// The report page (contract 13.2): one self-contained HTML file, its Content-Security-Policy
// <meta> first (nothing but its own script and style, by their SHA-256), the data in one JSON
// block, the page's hand-written script and style embedded at build time. Opened from file://,
// it makes no request of any kind.
#pragma once

#include <cstddef>
#include <string>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// The page of `data` (report_data).
std::string report_html(const Json& data);

/// How many bytes of a page are its own code, style and markup, the data left out (13.3's
/// budget: under 40,000).
std::size_t report_asset_bytes();

}  // namespace vin::diagnostics
