// The random state every forward starts from (contract 9.2): `--seed S` is torch.manual_seed(S)
// before the `--shape` inputs are made, and each forward (each inputs file, each side of compare,
// each profile phase) starts from the state the generator had when the first forward started.
// A model with dropout in training mode then gives the same records on every run, and compare
// of an archive with itself agrees. In Python:
//
//   torch.manual_seed(S); inputs = ...  # made from the generator, if by --shape
//   state = torch.get_rng_state()       # (and torch.cuda.get_rng_state() on a CUDA device)
//   for each forward: torch.set_rng_state(state); model(*inputs)
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>

namespace vin::diagnostics {

class RandomStart {
 public:
  /// torch.manual_seed(seed)'s state, on a generator of its own: the process's generators are
  /// not touched until a forward starts (compare prepares one side while the other runs).
  explicit RandomStart(std::uint64_t seed);

  std::uint64_t seed() const { return seed_; }
  /// The generator `--shape` inputs are drawn from: what they draw advances the start state,
  /// as it does in Python. Not to be used once a forward has started.
  at::Generator& generator() { return generator_; }

  /// Sets the CPU's default generator to the start state, and `device`'s when it is a CUDA
  /// device (as torch.manual_seed(seed) left it: the inputs are drawn on the CPU).
  void apply(const c10::Device& device);

 private:
  std::uint64_t seed_;
  at::Generator generator_;
  at::Tensor state_;  // the generator's state at the first forward, taken then
};

}  // namespace vin::diagnostics
