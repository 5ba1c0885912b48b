// Owning handles of libzip's archive and member objects, for the readers of zip files
// (archive_layout, npy_reader). Internal: includes libzip.
#pragma once

#include <zip.h>

#include <memory>

namespace vin::diagnostics {

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }  // read-only: nothing to write back
};
using ZipHandle = std::unique_ptr<zip_t, ZipCloser>;

struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipFileHandle = std::unique_ptr<zip_file_t, ZipFileCloser>;

}  // namespace vin::diagnostics
