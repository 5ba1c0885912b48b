// Where the records go: standard output or an `-o` file, every write checked. A file is written
// beside its target under a temporary name and renamed over it only once complete, so a failed
// write leaves the old file (or none), never a partial one.
#pragma once

#include <string>
#include <string_view>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

/// Where an OutputPlan put one output (OutputPlan::destination): its staging file, the target
/// itself (an existing device or FIFO) or "-"; `shown` is the file the user named, the name
/// messages use. A writer given one writes it in place: the plan renames it over its target.
struct PlannedOutput {
  std::string path;
  std::string shown;
};

/// A staging file made beside `target` (the file a link points to, for a link) with the mode the
/// file will have: the target's, or what the umask allows for a new one. `fd` is open for
/// writing; `final_path` is what to rename `temp` to. For a target that exists and is not a
/// regular file (a device, a FIFO) nothing is made: `temp` is empty and `fd` -1. Throws Error
/// naming `shown` for a folder or a file that cannot be made.
struct StagingFile {
  int fd = -1;
  std::string temp;
  std::string final_path;
};
StagingFile stage_beside(const std::string& target, const std::string& shown);

/// Output written piece by piece with write_output's guarantees. Given a path, a regular file
/// (or a new one) is written under a temporary name beside it and renamed over it by commit();
/// destroyed without a commit (a failed write, an exception), the temporary is removed and the
/// old file stays. Given a PlannedOutput, the destination is written in place (the plan staged
/// it). A device or FIFO is written in place; "" or "-" is standard output. Errors as
/// write_output's; they name the PlannedOutput's `shown`.
class OutputFile {
 public:
  explicit OutputFile(const std::string& target);
  explicit OutputFile(const PlannedOutput& planned);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes);
  /// Closes the file and puts it in place.
  void commit();

 private:
  void open_in_place(const std::string& path);
  void discard() noexcept;

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
/// in place. Throws Error naming `target` (or "standard output") and the system's reason for a
/// failed open, write, close or rename (EPIPE included: the reader of stdout went away).
void write_output(const std::string& target, std::string_view text);
/// The same for an output a plan staged: written in place, errors naming `planned.shown`.
void write_output(const PlannedOutput& planned, std::string_view text);

}  // namespace vin::diagnostics
