#include "vin/diagnostics/instrument/inline_forks.h"

namespace vin::diagnostics {

void launch_at_fork(std::function<void()> task) { task(); }

c10::IValue value_when_done(const c10::intrusive_ptr<c10::ivalue::Future>& future) {
  future->wait();
  return future->value();
}

}  // namespace vin::diagnostics
