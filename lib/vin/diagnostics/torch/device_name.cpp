#include "vin/diagnostics/torch/device_name.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <fstream>
#include <string_view>

namespace vin::diagnostics {
namespace {

std::string trimmed(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  const auto end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

// /proc/cpuinfo's first "model name" (x86), else its "Hardware" or "Processor" line, else the
// machine's architecture
std::string cpu_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, fallback;
  for (int lines = 0; lines < 10000 && std::getline(cpuinfo, line); ++lines) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(std::string_view(line).substr(0, colon));
    const std::string value = trimmed(std::string_view(line).substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name") return value;
    if ((key == "Hardware" || key == "Processor") && fallback.empty()) fallback = value;
  }
  if (!fallback.empty()) return fallback;
  utsname machine{};
  return ::uname(&machine) == 0 ? std::string(machine.machine) + " CPU" : "CPU";
}

// The CUDA driver's name of device `ordinal`, asked through libcuda.so.1 itself: a CUDA LibTorch
// has loaded it already, and a build without CUDA needs no CUDA headers for it
std::string cuda_name(int ordinal) {
  const std::string unnamed = "CUDA device " + std::to_string(ordinal);
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return unnamed;
  using Init = int (*)(unsigned int);
  using Get = int (*)(int*, int);
  using GetName = int (*)(char*, int, int);
  const auto init = reinterpret_cast<Init>(::dlsym(driver, "cuInit"));
  const auto get = reinterpret_cast<Get>(::dlsym(driver, "cuDeviceGet"));
  const auto get_name = reinterpret_cast<GetName>(::dlsym(driver, "cuDeviceGetName"));
  int device = 0;
  char name[256] = {};
  const bool named = init && get && get_name && init(0) == 0 && get(&device, ordinal) == 0 &&
                     get_name(name, sizeof name - 1, device) == 0 && name[0];
  ::dlclose(driver);
  return named ? std::string(name) : unnamed;
}

}  // namespace

std::string device_name(const c10::Device& device) {
  if (device.is_meta()) return "meta";
  if (device.is_cuda()) return cuda_name(device.has_index() ? device.index() : 0);
  if (device.is_cpu()) return cpu_name();
  return c10::DeviceTypeName(device.type());
}

}  // namespace vin::diagnostics
