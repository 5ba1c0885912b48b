// Errors raised by the library. Every message names the file (or argument) and the problem;
// the command-line front end prints it once and maps the type to the contract's exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace vin::diagnostics {

/// Bad or unreadable input, or a model that failed while running (exit status 1).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A request that cannot be valid whatever the input holds (exit status 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

}  // namespace vin::diagnostics
