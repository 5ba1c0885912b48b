// capture of an exported program run by the .pt2 interpreter (contract 12.2): the module calls
// torch.export.unflatten shows to forward hooks (export_run/module_calls.h), each call's inputs
// before its first node runs and its output after its last, fed to the recorder every capture
// has (call_recorder.h); the root's call is the forward itself, with the arguments as given and
// the output in the root's structure.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/capture/call_recorder.h"
#include "vin/diagnostics/export_run/module_calls.h"
#include "vin/diagnostics/export_run/program_runner.h"
#include "vin/diagnostics/run/forward_inputs.h"
#include "vin/diagnostics/run/program_forward.h"

namespace vin::diagnostics {

class ProgramCapture : public StoppableForward, private export_run::ProgramObserver {
 public:
  /// Records the calls of `module_paths` (paths or patterns; nothing for every module) of the
  /// program `runner` runs, `forward` saying how its forward is called.
  ProgramCapture(export_run::ProgramRunner& runner, const ProgramForward& forward,
                 std::optional<std::vector<std::string>> module_paths, CaptureLimits limits);

  CallRecorder& recorder() { return recorder_; }
  /// Also tells `observer` (nullptr: nobody) of each node of the program's graph, inside the
  /// module calls around it: told before a node after the calls that begin there have begun,
  /// after it before those that end there end (profile's operators).
  void observe_nodes(export_run::ProgramObserver* observer) { nodes_ = observer; }

  /// Runs the program's forward on `inputs`, recording while the recorder is on; returns its
  /// output. What was recorded stays when the forward raises.
  c10::IValue forward(const ForwardInputs& inputs);

  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) override;
  bool timed_out() const override;

 private:
  void before_node(std::size_t index, const std::vector<c10::IValue>& values) override;
  void after_node(std::size_t index, const std::vector<c10::IValue>& values) override;
  c10::IValue outputs_of(const export_run::ModuleCall& call,
                         const std::vector<c10::IValue>& values) const;

  export_run::ProgramRunner& runner_;
  const ProgramForward& forward_;
  export_run::ModuleCallPlan calls_;
  CallRecorder recorder_;
  export_run::ProgramObserver* nodes_ = nullptr;
};

}  // namespace vin::diagnostics
