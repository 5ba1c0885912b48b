// Libraries of custom TorchScript operators (torchvision's nms and roi_align, torchaudio's, a
// team's own C++ extension), loaded into the process before an archive that calls them, as
// Python's torch.ops.load_library does (capture/compare --load-library, VIN_INSPECT_LIBRARIES).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vin::diagnostics {

/// The environment variable that names operator libraries, colon-separated.
inline constexpr const char* kOperatorLibrariesVariable = "VIN_INSPECT_LIBRARIES";

/// The paths of a colon-separated list, empty entries left out.
std::vector<std::string> split_library_list(std::string_view list);

/// Loads each shared library of `paths` into the process, in order, with dlopen (RTLD_NOW |
/// RTLD_LOCAL, as Python's ctypes.CDLL): the library's static initialisers register its
/// operators with LibTorch's dispatcher. Call it after the LibTorch plugin is loaded, so that
/// the libraries resolve their LibTorch dependencies to the very LibTorch the plugin uses
/// (`libtorch_version`, named in messages). A library that cannot be loaded is an Error naming
/// the file and the loader's reason on one line: no such file, not a shared object, another
/// architecture, or undefined symbols (shown demangled: built against another LibTorch).
/// Loading the same path twice is harmless (dlopen counts references).
void load_operator_libraries(const std::vector<std::string>& paths,
                             const std::string& libtorch_version);

}  // namespace vin::diagnostics
