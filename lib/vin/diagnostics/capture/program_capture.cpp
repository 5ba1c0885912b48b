#include "vin/diagnostics/capture/program_capture.h"

#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {
namespace {

// every module's path as the recorder knows them: the root's as "<root>"
std::vector<std::string> recorded_paths(const ExportProgram& program) {
  std::vector<std::string> out;
  for (const std::string& path : program.module_paths)
    out.push_back(path.empty() ? kRootPath : path);
  return out;
}

std::vector<c10::IValue> leaves_of(const std::vector<export_run::ValueSource>& sources,
                                   const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> out;
  out.reserve(sources.size());
  for (const export_run::ValueSource& s : sources)
    out.push_back(s.kind == export_run::ValueSource::Kind::slot
                      ? values[static_cast<std::size_t>(s.slot)]
                      : s.constant);
  return out;
}

}  // namespace

ProgramCapture::ProgramCapture(export_run::ProgramRunner& runner, const ProgramForward& forward,
                               std::optional<std::vector<std::string>> module_paths,
                               CaptureLimits limits)
    : runner_(runner),
      forward_(forward),
      calls_(export_run::plan_module_calls(runner.program(), runner.plan().graphs.front())),
      recorder_(recorded_paths(runner.program()), std::move(module_paths), limits) {}

c10::IValue ProgramCapture::forward(const ForwardInputs& inputs) {
  // inputs the program cannot take are refused before the root's call is recorded
  const std::vector<c10::IValue> arguments = forward_.arguments(inputs);
  runner_.check_inputs(arguments);
  recorder_.call_begins(0, c10::ivalue::Tuple::create(inputs.args), inputs.kwargs);
  c10::IValue output;
  try {
    output = forward_.output(runner_.run(arguments, this));
  } catch (...) {
    recorder_.forget_pending_calls();  // calls the exception aborted get no output record
    throw;
  }
  recorder_.call_ends(0, output);
  return output;
}

void ProgramCapture::before_node(std::size_t index, const std::vector<c10::IValue>& values) {
  for (const std::size_t c : calls_.begin_before[index]) {
    const export_run::ModuleCall& call = calls_.calls[c];
    std::size_t next = 0;
    const c10::IValue both =
        export_run::unflatten(call.input_spec, leaves_of(call.inputs, values), next);
    // (args, kwargs) as the spec holds them
    c10::IValue args = c10::ivalue::Tuple::create({});
    CallRecorder::Kwargs kwargs;
    if (both.isTuple() && both.toTupleRef().elements().size() == 2) {
      args = both.toTupleRef().elements()[0];
      if (args.isList()) args = c10::ivalue::Tuple::create(args.toListRef().vec());
      const c10::IValue& named = both.toTupleRef().elements()[1];
      if (named.isGenericDict())
        for (const auto& item : named.toGenericDict())
          kwargs.emplace_back(item.key().isString() ? item.key().toStringRef()
                                                    : std::to_string(item.key().toInt()),
                              item.value());
    }
    recorder_.call_begins(call.module, args, kwargs);
  }
  if (nodes_) nodes_->before_node(index, values);
}

void ProgramCapture::after_node(std::size_t index, const std::vector<c10::IValue>& values) {
  if (nodes_) nodes_->after_node(index, values);
  for (const std::size_t c : calls_.end_after[index])
    recorder_.call_ends(calls_.calls[c].module, outputs_of(calls_.calls[c], values));
}

c10::IValue ProgramCapture::outputs_of(const export_run::ModuleCall& call,
                                       const std::vector<c10::IValue>& values) const {
  std::size_t next = 0;
  return export_run::unflatten(call.output_spec, leaves_of(call.outputs, values), next);
}

void ProgramCapture::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  recorder_.set_deadline(deadline);
  runner_.set_deadline(deadline);
}

bool ProgramCapture::timed_out() const { return recorder_.timed_out() || runner_.timed_out(); }

}  // namespace vin::diagnostics
