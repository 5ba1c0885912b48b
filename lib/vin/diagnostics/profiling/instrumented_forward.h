// What profile's instrumented forwards run (profile_archive.cpp's phase 3 and its calibration):
// a TorchScript module's instrumented clone, or an exported program under its module calls'
// capture with each node of its graph an operator call. Internal to the profiling library.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/capture/program_capture.h"
#include "vin/diagnostics/profiling/profile_recorder.h"

namespace vin::diagnostics::profiling {

class InstrumentedForward {
 public:
  virtual ~InstrumentedForward() = default;
  /// The module calls are observed until the returned handle goes.
  virtual std::shared_ptr<void> observe() = 0;
  virtual void forward(const ForwardInputs& inputs) = 0;
  virtual StoppableForward& stoppable() = 0;
};

// A TorchScript module's clone (capture_model); its torch.jit.fork tasks run inline at the fork,
// so that every module call and operator is on the forward's thread
class InstrumentedClone final : public InstrumentedForward {
 public:
  explicit InstrumentedClone(ModelCapture& capture) : capture_(capture) {}
  std::shared_ptr<void> observe() override {
    auto scope = std::make_shared<std::optional<ModelCapture::Scope>>();
    scope->emplace(capture_.enter());
    return scope;
  }
  void forward(const ForwardInputs& inputs) override {
    capture_.forward(inputs, ModelCapture::ForkTasks::inline_at_fork);
  }
  StoppableForward& stoppable() override { return capture_; }

 private:
  ModelCapture& capture_;
};

// An exported program (contract 12.3): its module calls as capture shows them, and each node of
// its graph an operator call named by its target without "torch.ops." ("aten.conv2d.default"),
// inside which the operators it dispatches run
class InstrumentedProgram final : public InstrumentedForward,
                                  private export_run::ProgramObserver {
 public:
  InstrumentedProgram(export_run::ProgramRunner& runner, const ProgramForward& forward,
                      const ProfileRequest& request, std::shared_ptr<ProfileRecorder> recorder)
      : capture_(runner, forward, request.module_paths, CaptureLimits()),
        recorder_(std::move(recorder)) {
    for (const ProgramNode& node : runner.program().graphs.front().nodes) {
      const std::string& target = node.target;
      labels_.push_back(target.rfind("torch.ops.", 0) == 0 ? target.substr(10) : target);
    }
    capture_.recorder().add_consumer(recorder_);
    capture_.observe_nodes(this);
  }
  std::shared_ptr<void> observe() override {
    struct Observing {
      explicit Observing(CallRecorder& r) : recorder(r) { recorder.enter(); }
      ~Observing() { recorder.close(); }
      CallRecorder& recorder;
    };
    return std::make_shared<Observing>(capture_.recorder());
  }
  void forward(const ForwardInputs& inputs) override { capture_.forward(inputs); }
  StoppableForward& stoppable() override { return capture_; }

 private:
  void before_node(std::size_t index, const std::vector<c10::IValue>&) override {
    recorder_->node_started(labels_[index]);
  }
  void after_node(std::size_t, const std::vector<c10::IValue>&) override {
    recorder_->node_ended();
  }
  ProgramCapture capture_;
  std::shared_ptr<ProfileRecorder> recorder_;
  std::vector<std::string> labels_;
};

}  // namespace vin::diagnostics::profiling
