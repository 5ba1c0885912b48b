#include "vin/diagnostics/plugin/torch_plugin.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <mutex>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

const TorchPlugin& load_torch_plugin(const std::vector<std::string>& candidates) {
  static const TorchPlugin* loaded = nullptr;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded) return *loaded;
  std::string tried;
  for (const std::string& path : candidates) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    // UCX (linked into Debian's LibTorch 2.x for its distributed transports, which the tool
    // never uses) patches mmap and friends in the running code when it loads, unless told not
    // to: 0.4 s of a 1 s start under Debian testing's LibTorch 2.14. A user's own setting wins.
    ::setenv("UCX_MEM_MMAP_HOOK_MODE", "none", /*overwrite=*/0);
    // RTLD_LOCAL: LibTorch's symbols stay inside the plugin; it is never unloaded
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw Error("cannot load the LibTorch plugin " + path + ": " + dlerror());
    using Entry = const TorchPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, kTorchPluginEntry));
    const TorchPlugin* plugin = entry ? entry() : nullptr;
    if (!plugin || plugin->abi_version != kTorchPluginAbi)
      throw Error("the LibTorch plugin " + path +
                  " does not match this vin-inspect (rebuild and reinstall both)");
    loaded = plugin;
    return *loaded;
  }
  throw Error("the LibTorch plugin (" + std::string(kTorchPluginFile) +
              ") is missing; looked for " + tried +
              " (installed from packages, it is in vin-inspect-torch; in a build tree, "
              "cmake --build without --target builds it)");
}

}  // namespace vin::diagnostics
