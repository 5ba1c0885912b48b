// Errors raised by the library. Every message names the file (or argument) and the problem;
// the command-line front end prints it once and maps the type to its exit status (docs/cli.md).
#pragma once

#include <new>
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

/// A file of a kind the command does not run (a torch.export .pt2 given to capture, compare or
/// profile): exit status 1 whatever the command's status for other trouble (contract 10.3).
class NotRunnable : public Error {
 public:
  explicit NotRunnable(const std::string& message) : Error(message) {}
};

/// Runs `step`; when memory runs out inside it, throws Error "FILE: out of memory while STAGE"
/// (e.g. "net.pt: out of memory while reading the archive's structure").
template <class Step>
auto naming_out_of_memory(const std::string& file, const char* stage, Step&& step)
    -> decltype(step()) {
  try {
    return step();
  } catch (const std::bad_alloc&) {
    throw Error(file + ": out of memory while " + stage);
  }
}

}  // namespace vin::diagnostics
