#include "vin/diagnostics/run/random_start.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <mutex>

namespace vin::diagnostics {

RandomStart::RandomStart(std::uint64_t seed)
    : seed_(seed), generator_(at::detail::createCPUGenerator(seed)) {}

void RandomStart::apply(const c10::Device& device) {
  if (!state_.defined()) state_ = generator_.get_state();
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(state_);
  }
  if (device.is_cuda()) {  // torch.manual_seed seeds every CUDA device; offset 0
    at::Generator accelerator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(accelerator.mutex());
    accelerator.set_current_seed(seed_);
  }
}

}  // namespace vin::diagnostics
