#include "vin/diagnostics/torch/autocast_scope.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#define VIN_AUTOCAST_BY_DEVICE_TYPE \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

namespace vin::diagnostics {
namespace {

#if VIN_AUTOCAST_BY_DEVICE_TYPE
bool enabled_on(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void enable_on(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
c10::ScalarType dtype_on(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void set_dtype_on(c10::DeviceType d, c10::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
// LibTorch before 2.4: one function per backend (autocast_available admits only these)
bool enabled_on(c10::DeviceType d) {
  if (d == c10::DeviceType::CPU) return at::autocast::is_cpu_enabled();
  if (d == c10::DeviceType::XPU) return at::autocast::is_xpu_enabled();
  return at::autocast::is_enabled();
}
void enable_on(c10::DeviceType d, bool on) {
  if (d == c10::DeviceType::CPU) return at::autocast::set_cpu_enabled(on);
  if (d == c10::DeviceType::XPU) return at::autocast::set_xpu_enabled(on);
  at::autocast::set_enabled(on);
}
c10::ScalarType dtype_on(c10::DeviceType d) {
  if (d == c10::DeviceType::CPU) return at::autocast::get_autocast_cpu_dtype();
  if (d == c10::DeviceType::XPU) return at::autocast::get_autocast_xpu_dtype();
  return at::autocast::get_autocast_gpu_dtype();
}
void set_dtype_on(c10::DeviceType d, c10::ScalarType t) {
  if (d == c10::DeviceType::CPU) return at::autocast::set_autocast_cpu_dtype(t);
  if (d == c10::DeviceType::XPU) return at::autocast::set_autocast_xpu_dtype(t);
  at::autocast::set_autocast_gpu_dtype(t);
}
#endif

bool lowers_to(c10::ScalarType t) {
  return t == c10::ScalarType::Half || t == c10::ScalarType::BFloat16;
}

}  // namespace

bool autocast_available(c10::DeviceType device) {
#if VIN_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_available(device);
#else
  return device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA ||
         device == c10::DeviceType::XPU;
#endif
}

AutocastScope::AutocastScope(const AutocastSettings& settings)
    : device_(settings.device),
      was_enabled_(enabled_on(device_)),
      was_dtype_(dtype_on(device_)),
      was_cache_enabled_(at::autocast::is_autocast_cache_enabled()) {
  const c10::ScalarType dtype = settings.dtype.value_or(was_dtype_);
  const bool on = settings.enabled && lowers_to(dtype);
  enable_on(device_, on);
  if (on) set_dtype_on(device_, dtype);  // LibTorch 1.13's CPU autocast refuses all but bfloat16
  at::autocast::increment_nesting();
  at::autocast::set_autocast_cache_enabled(settings.cache_enabled.value_or(was_cache_enabled_));
}

AutocastScope::~AutocastScope() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  enable_on(device_, was_enabled_);
  set_dtype_on(device_, was_dtype_);
  at::autocast::set_autocast_cache_enabled(was_cache_enabled_);
}

}  // namespace vin::diagnostics
