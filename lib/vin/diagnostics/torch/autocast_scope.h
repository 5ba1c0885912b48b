// torch.autocast's scope, for a .pt2's wrap_with_autocast (contract 12.1) and a TorchScript
// `with torch.autocast(...)` block run unoptimised (instrument/autocast_blocks): the thread's
// autocast state for one device type set for a scope and restored after it, as torch.autocast's
// __enter__ and __exit__ do. LibTorch 2.4 moved this state behind per-device-type functions (the old
// per-backend ones are deprecated); this file is the one place that knows both.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <optional>

namespace vin::diagnostics {

/// torch.autocast's arguments.
struct AutocastSettings {
  c10::DeviceType device = c10::DeviceType::CPU;
  bool enabled = false;
  std::optional<c10::ScalarType> dtype;  ///< none: the device's current autocast dtype
  std::optional<bool> cache_enabled;     ///< none: the current setting
};

/// Whether this LibTorch keeps an autocast state for `device` (CPU and CUDA everywhere).
bool autocast_available(c10::DeviceType device);

/// The thread's autocast state for `settings.device` as torch.autocast(device, dtype, enabled,
/// cache_enabled) sets it while alive: a dtype autocast does not lower to on that device (it
/// takes float16 and bfloat16) runs the scope with autocast off, as torch.autocast does after
/// its warning. On leaving, the earlier state comes back, and the outermost scope clears the
/// cache of cast weights.
class AutocastScope {
 public:
  explicit AutocastScope(const AutocastSettings& settings);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
  c10::ScalarType was_dtype_;
  bool was_cache_enabled_;
};

}  // namespace vin::diagnostics
