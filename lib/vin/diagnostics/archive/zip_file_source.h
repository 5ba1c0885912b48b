// zip_open for a file on disk, read through pread and a 64 KiB window instead of libzip's stdio
// source, which seeks the FILE (an lseek system call) for every member: ZIP_CHECKCONS reads each
// member's local header, so an archive of 10,000 members paid 10,000 system calls to be opened.
// Internal: includes libzip.
#pragma once

#include <zip.h>

#include <string>

namespace vin::diagnostics {

/// As zip_open(path, flags, error_code) for a regular file: the archive, or null with a libzip
/// ZIP_ER_* code in `*error_code` (ZIP_ER_OPEN when the file cannot be opened). The file is
/// only read.
zip_t* open_zip_file(const std::string& path, int flags, int* error_code);

}  // namespace vin::diagnostics
