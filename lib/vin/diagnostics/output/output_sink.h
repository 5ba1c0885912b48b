// Where the records go: standard output or an `-o` file, every write checked. A file is written
// beside its target under a temporary name and renamed over it only once complete, so a failed
// write leaves the old file (or none), never a partial one.
#pragma once

#include <string>
#include <string_view>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

/// The reader of standard output went away (EPIPE): the output is incomplete, but like other
/// Unix tools the program ends quietly, without a message.
class OutputClosed : public Error {
 public:
  OutputClosed() : Error("standard output was closed") {}
};

/// Output written piece by piece with write_output's guarantees: a regular file (or a new one) is
/// written under a temporary name beside it and renamed over it by commit(); destroyed without a
/// commit (a failed write, an exception), the temporary is removed and the old file stays. A
/// device or FIFO is written in place; "" or "-" is standard output. Errors as write_output's;
/// they name `shown` when given (the file the user named, where `target` is the file an
/// OutputPlan staged for it).
class OutputFile {
 public:
  explicit OutputFile(const std::string& target, const std::string& shown = "");
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes);
  /// Closes the file and puts it in place.
  void commit();

 private:
  void discard() noexcept;

  std::string target_;
  std::string where_;  // for messages: the target, or "standard output"
  std::string final_;  // the path the temporary is renamed to
  std::string temp_;   // the temporary, until renamed
  int fd_ = -1;
  bool owns_fd_ = false;
};

/// Whether `path` names the file or pipe standard output writes to (`/dev/stdout`, or the file
/// the shell redirected it to): a second output there would replace the records' file or mix
/// with them. A character device (/dev/null, a terminal) is never counted.
bool names_standard_output(const std::string& path);

/// Writes `text` to standard output when `target` is empty or "-", else to the file `target`.
/// A regular file (or a new one) is written to a temporary file in the same folder, then renamed
/// over `target`; anything else that exists there (a device such as /dev/null, a FIFO) is written
/// in place. Throws OutputClosed on EPIPE, and Error naming `target` (or "standard output") and
/// the system's reason for any other failed open, write, close or rename (`shown` instead of
/// `target` when given, as OutputFile's).
void write_output(const std::string& target, std::string_view text, const std::string& shown = "");

}  // namespace vin::diagnostics
