// torch.autocast's scope (a .pt2's wrap_with_autocast, TorchScript's autocast blocks): torch.autocast's state set for the scope and the
// earlier one back after it, seen through what an operator autocast lowers returns.
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "doctest_after_torch.h"
#include "vin/diagnostics/torch/autocast_scope.h"

using vin::diagnostics::autocast_available;
using vin::diagnostics::AutocastScope;
using vin::diagnostics::AutocastSettings;

namespace {

// the dtype a float32 matrix product comes out in under the thread's autocast state now
std::string product_dtype() {
  const torch::NoGradGuard no_grad;
  return c10::toString(torch::mm(torch::ones({2, 2}), torch::ones({2, 2})).scalar_type());
}

AutocastSettings cpu(bool enabled, std::optional<c10::ScalarType> dtype) {
  AutocastSettings s;
  s.device = c10::DeviceType::CPU;
  s.enabled = enabled;
  s.dtype = dtype;
  return s;
}

}  // namespace

TEST_CASE("an autocast scope lowers what autocast lowers, and only inside it") {
  CHECK(autocast_available(c10::DeviceType::CPU));
  CHECK(autocast_available(c10::DeviceType::CUDA));
  REQUIRE(product_dtype() == std::string(c10::toString(c10::ScalarType::Float)));
  {
    const AutocastScope scope(cpu(true, c10::ScalarType::BFloat16));
    CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::BFloat16)));
    {
      const AutocastScope inner(cpu(false, std::nullopt));  // enabled=False inside: off
      CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::Float)));
    }
    CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::BFloat16)));
    {
      const AutocastScope inner(cpu(true, std::nullopt));  // dtype None: the current one
      CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::BFloat16)));
    }
  }
  CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::Float)));
}

TEST_CASE("a dtype autocast does not lower to runs the scope with autocast off") {
  const AutocastScope scope(cpu(true, c10::ScalarType::Double));
  CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::Float)));
}

TEST_CASE("the earlier state comes back when the scope's body throws") {
  try {
    const AutocastScope scope(cpu(true, c10::ScalarType::BFloat16));
    REQUIRE(product_dtype() == std::string(c10::toString(c10::ScalarType::BFloat16)));
    throw std::runtime_error("a node raised");
  } catch (const std::runtime_error&) {
  }
  CHECK(product_dtype() == std::string(c10::toString(c10::ScalarType::Float)));
}
