// The project's words for what yaml-cpp reports when it cannot parse a document. yaml-cpp's own
// messages change between its versions (0.7 says "unknown token" or loops where 0.9 says "plain
// value cannot start with flow indicator character"); what the user reads, and what the tests
// check, is this table's wording, the same under every yaml-cpp.
#pragma once

#include <string>
#include <string_view>

namespace vin::diagnostics {

/// What is wrong, for yaml-cpp's message `message` about the document `text` at byte `pos`
/// (the exception's mark): "unexpected ','", "a '[' sequence is not closed", ... A message the
/// table does not know reads "it cannot be parsed here".
std::string yaml_problem(std::string_view message, std::string_view text, int pos);

}  // namespace vin::diagnostics
