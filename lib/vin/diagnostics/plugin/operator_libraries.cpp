#include "vin/diagnostics/plugin/operator_libraries.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {

std::vector<std::string> split_library_list(std::string_view list) {
  std::vector<std::string> paths;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    if (end > start) paths.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return paths;
}

namespace {

// `_ZN3c106detail...` -> `c10::detail::...` where the name is a C++ one
std::string demangled(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : symbol;
}

// dlerror()'s text without the `PATH: ` it starts with, and what it means for an operator library
std::string loader_reason(const std::string& path, std::string reason,
                          const std::string& libtorch_version) {
  if (reason.compare(0, path.size() + 2, path + ": ") == 0) reason.erase(0, path.size() + 2);
  constexpr std::string_view kUndefined = "undefined symbol: ";
  if (reason.compare(0, kUndefined.size(), kUndefined) == 0) {
    std::string symbol = reason.substr(kUndefined.size());
    if (const std::size_t comma = symbol.find(','); comma != std::string::npos)
      symbol.erase(comma);  // glibc adds `, version X` for versioned symbols
    return "undefined symbol " + demangled(symbol) +
           " (was it built against another LibTorch than " + libtorch_version + "?)";
  }
  return reason;
}

}  // namespace

void load_operator_libraries(const std::vector<std::string>& paths,
                             const std::string& libtorch_version) {
  for (const std::string& path : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    const std::string prefix = printable(path) + ": cannot load this operator library: ";
    if (!std::filesystem::exists(status)) throw Error(prefix + "no such file");
    if (!std::filesystem::is_regular_file(status)) throw Error(prefix + "not a regular file");
    // a path without a slash would make dlopen search the library path instead
    const std::string where = path.find('/') == std::string::npos ? "./" + path : path;
    if (!dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      const char* error = dlerror();
      throw Error(prefix + printable(loader_reason(where, error ? error : "unknown reason",
                                                   libtorch_version)));
    }
  }
}

}  // namespace vin::diagnostics
