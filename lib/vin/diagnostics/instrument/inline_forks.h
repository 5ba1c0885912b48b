// torch.jit.fork tasks run inline: the task launcher that runs each task at the fork, on the
// forking thread, before the forward goes on (profile's instrumented forward: one thread then
// sees every module call and operator in the order they nest; results are the same, the
// parallelism is gone).
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>

namespace vin::diagnostics {

/// A task launcher for the interpreter (Function::runAsync, Method::run_async) that runs each
/// task then and there.
void launch_at_fork(std::function<void()> task);

/// The value of a function run asynchronously with launch_at_fork: complete on return unless
/// the model waited on something it did not fork (then this waits); an error, as the
/// interpreter's text, is rethrown.
c10::IValue value_when_done(const c10::intrusive_ptr<c10::ivalue::Future>& future);

}  // namespace vin::diagnostics
