// What a report page embeds (contract 13.2), made safe once: the data as one JSON block inside a
// <script type="application/json"> element (nothing in it can end the element or start markup),
// text from files with the bytes that are not UTF-8 shown as the table format shows them, and
// the Content-Security-Policy source of the page's own script and style by their SHA-256.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// `text` from a file as the page shows it: valid UTF-8 as it is, each byte that is not part of
/// valid UTF-8 as `\xNN` (the escapes the table format writes).
std::string report_text(std::string_view text);

/// `data` as JSON to put between <script type="application/json"> and </script>: `<`, `>` and
/// `&` written `\u003c`, `\u003e`, `\u0026`, U+2028 and U+2029 as `\u2028`, `\u2029`, so that
/// no string can close the element, open a comment or be read as markup; JSON.parse gives `data`
/// back. Strings must be valid UTF-8 (report_text); any other byte becomes U+FFFD.
std::string script_json(const nlohmann::json& data);
/// The same for the records' JSON (keys in their order).
std::string script_json(const Json& data);

/// The CSP source that allows exactly the inline script or style `source` (the bytes between
/// its tags): `'sha256-BASE64'`.
std::string csp_hash(std::string_view source);

}  // namespace vin::diagnostics
