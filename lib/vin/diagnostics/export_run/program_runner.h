// Runs an exported program (contract 12.1): its weights made from the archive, its graph
// planned (program_plan.h) and executed node by node through LibTorch's dispatcher with
// autograd off, and an observer told before and after each node of the program's graph
// (capture's module calls, profile's spans). No Python, no AOTInductor, no nativert.
#pragma once

#include <ATen/core/ivalue.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/export_run/program_plan.h"

namespace vin::diagnostics::export_run {

/// What a run tells whoever watches it, for the nodes of the program's graph (a nested graph's
/// nodes run inside their higher-order operator's node).
class ProgramObserver {
 public:
  virtual ~ProgramObserver() = default;
  /// Before node `index` runs; `values` holds the graph's values by slot (plan().graphs[0]).
  virtual void before_node(std::size_t index, const std::vector<c10::IValue>& values) = 0;
  /// After it ran, its outputs bound; the values it read last are freed after this call.
  virtual void after_node(std::size_t index, const std::vector<c10::IValue>& values) = 0;
};

/// One argument of forward as ep.module() takes it: a user input (a tensor or a symbolic
/// number) or a constant the export specialised (its value given or left out).
struct ProgramArgumentSlot {
  std::string name;
  bool tensor = false;
  bool constant = false;
  const ProgramInputMeta* meta = nullptr;  ///< a tensor's dtype and sizes as exported
};

/// How messages name a node: its entry, its name and its target.
std::string named(const ProgramNode& node);

/// The weights met so far, by the elements they hold (storage, offset, count): a weight tied
/// under several names is met once.
class TiedWeights {
 public:
  /// Whether `weight`'s elements are met for the first time.
  bool first(const at::Tensor& weight) {
    return seen_.emplace(weight.storage().unsafeGetStorageImpl(), weight.storage_offset(),
                         weight.numel())
        .second;
  }

 private:
  std::set<std::tuple<const void*, std::int64_t, std::int64_t>> seen_;
};

class ProgramRunner {
 public:
  /// Reads the weights of `program` from `zip` onto `device` and plans its graphs; throws Error
  /// naming the file for what it cannot run (before anything runs).
  ProgramRunner(const ZipArchive& zip, ExportProgram program, const c10::Device& device);

  const ExportProgram& program() const { return program_; }
  const ProgramPlan& plan() const { return plan_; }
  const c10::Device& device() const { return device_; }
  /// The program's weights of one kind ("parameter", "buffer", "constant"; tied names once: the
  /// same elements of one storage), as the run holds them.
  std::vector<at::Tensor> weights(const std::string& kind) const;
  /// One weight by its dotted name, or nullptr.
  const at::Tensor* weight(const std::string& name) const;
  /// forward's arguments, in order (the user inputs and constant inputs of the signature)
  const std::vector<ProgramArgumentSlot>& arguments() const { return arguments_; }

  /// Runs the program on one value per argument (a constant one may be None: its exported
  /// value); returns the user outputs in order. Checks the inputs against the graph's sizes
  /// and range_constraints first (Error naming the argument, the dimension and the range; the
  /// caller names the file). `observer` watches the program's graph. Buffer mutations change the runner's
  /// copy of the buffer.
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& arguments,
                               ProgramObserver* observer = nullptr);

  /// From now on a node that begins after `deadline` stops the run (Error); nothing clears it.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
    deadline_ = deadline;
  }
  bool timed_out() const { return timed_out_; }

  /// The check run() makes first: the arguments against the exported sizes and ranges (a
  /// caller that records the call checks before it records anything).
  void check_inputs(const std::vector<c10::IValue>& arguments) const;

 private:
  std::vector<c10::IValue> run_graph(std::size_t graph, const std::vector<c10::IValue>& inputs,
                                     ProgramObserver* observer);
  void execute(const GraphPlan& graph, const Instruction& step, std::vector<c10::IValue>& values);
  void check_deadline();

  ExportProgram program_;
  c10::Device device_;
  ProgramPlan plan_;
  std::vector<ProgramArgumentSlot> arguments_;
  std::unordered_map<std::string, at::Tensor> weights_;  ///< by their dotted names
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool timed_out_ = false;
};

}  // namespace vin::diagnostics::export_run
