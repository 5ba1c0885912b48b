#include "vin/diagnostics/export_run/module_calls.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics::export_run {
namespace {

ValueSource slot_source(std::int32_t slot) {
  ValueSource s;
  s.kind = ValueSource::Kind::slot;
  s.slot = slot;
  return s;
}

// (args tuple of `n` leaves, empty kwargs dict): how unflatten passes a module's inputs
TreeSpec positional_spec(std::size_t n) {
  TreeSpec args;
  args.kind = TreeSpec::Kind::tuple;
  args.children.resize(n);
  TreeSpec kwargs;
  kwargs.kind = TreeSpec::Kind::dict;
  TreeSpec root;
  root.kind = TreeSpec::Kind::tuple;
  root.children = {std::move(args), std::move(kwargs)};
  return root;
}

// one output bare, several as a tuple
TreeSpec output_spec(std::size_t n) {
  TreeSpec out;
  if (n == 1) return out;
  out.kind = TreeSpec::Kind::tuple;
  out.children.resize(n);
  return out;
}

class CallPlanner {
 public:
  CallPlanner(const ExportProgram& program, const GraphPlan& graph)
      : program_(program), graph_(graph), nodes_(program.graphs.front().nodes) {
    for (std::size_t i = 0; i < program.module_paths.size(); ++i)
      module_index_.emplace(program.module_paths[i], i);
    for (const ProgramCallSignature& c : program.calls)
      if (c.has_signature && !c.fqn.empty()) signature_of_.emplace(c.fqn, &c);
    // which names each weight placeholder holds: its own, and every name tied to it
    std::unordered_map<std::string, std::vector<std::string>> names_of_storage;
    for (const ProgramWeight& w : program.weights) names_of_storage[w.storage].push_back(w.name);
    std::unordered_map<std::string, const ProgramWeight*> weight_named;
    for (const ProgramWeight& w : program.weights) weight_named.emplace(w.name, &w);
    for (std::size_t i = 0; i < program.inputs.size() && i < graph.inputs.size(); ++i) {
      const ProgramInputSpec& spec = program.inputs[i];
      if (graph.inputs[i] < 0 || spec.target.empty()) continue;
      std::vector<std::string>& names = state_names_[graph.inputs[i]];
      names.push_back(spec.target);
      if (const auto w = weight_named.find(spec.target); w != weight_named.end())
        for (const std::string& alias : names_of_storage[w->second->storage])
          names.push_back(alias);
    }
    for (const ValueSource& s : graph.outputs)
      for (const std::int32_t slot : slots_read(s)) graph_outputs_.push_back(slot);
    // where each value is made (graph inputs: before every node)
    for (std::size_t i = 0; i < graph.instructions.size(); ++i)
      for (const OutputBinding& b : graph.instructions[i].outputs) {
        if (b.kind == OutputBinding::Kind::slot) made_at_[b.slot] = i;
        for (const std::int32_t slot : b.slots)
          if (slot >= 0) made_at_[slot] = i;
      }
  }

  ModuleCallPlan plan() {
    out_.begin_before.resize(nodes_.size());
    out_.end_after.resize(nodes_.size());
    struct Open {
      std::string key;
      std::size_t call;
    };
    std::vector<Open> open;
    std::optional<std::size_t> previous;  // the last live node
    const auto close_down_to = [&](std::size_t depth) {
      while (open.size() > depth) {
        ModuleCall& call = out_.calls[open.back().call];
        call.last = *previous;
        out_.end_after[*previous].push_back(open.back().call);
        open.pop_back();
      }
    };
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (graph_.instructions[i].dead) continue;
      const ProgramNode& node = nodes_[i];
      if (node.has_stack) {
        std::vector<const ProgramFrame*> frames;
        for (const ProgramFrame& f : node.frames)
          if (!f.path.empty() && module_index_.count(f.path)) frames.push_back(&f);
        std::size_t same = 0;
        while (same < open.size() && same < frames.size() && open[same].key == frames[same]->key)
          ++same;
        if (previous) close_down_to(same);
        for (std::size_t f = same; f < frames.size(); ++f) {
          ModuleCall call;
          call.module = module_index_.at(frames[f]->path);
          call.first = i;
          open.push_back({frames[f]->key, out_.calls.size()});
          out_.begin_before[i].push_back(out_.calls.size());
          out_.calls.push_back(std::move(call));
        }
      }
      previous = i;
    }
    if (previous) close_down_to(0);
    for (ModuleCall& call : out_.calls) values_of(call);
    return std::move(out_);
  }

 private:
  // the slots the live nodes in [from, to] read, in order of first read
  std::vector<std::int32_t> reads(std::size_t from, std::size_t to) const {
    std::vector<std::int32_t> out;
    std::set<std::int32_t> seen;
    for (std::size_t i = from; i <= to; ++i) {
      if (graph_.instructions[i].dead) continue;
      for (const ValueSource& s : graph_.instructions[i].args)
        for (const std::int32_t slot : slots_read(s))
          if (seen.insert(slot).second) out.push_back(slot);
    }
    return out;
  }

  bool made_inside(std::int32_t slot, const ModuleCall& call) const {
    const auto it = made_at_.find(slot);
    return it != made_at_.end() && it->second >= call.first && it->second <= call.last;
  }

  bool own_state(std::int32_t slot, const std::string& path) const {
    const auto it = state_names_.find(slot);
    if (it == state_names_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](const std::string& name) {
      return name.size() > path.size() && name.compare(0, path.size(), path) == 0 &&
             name[path.size()] == '.';
    });
  }

  void values_of(ModuleCall& call) {
    const std::string& path = program_.module_paths[call.module];
    if (const auto it = signature_of_.find(path); it != signature_of_.end()) {
      preserved(call, *it->second);
      return;
    }
    std::vector<std::int32_t> inputs;
    for (const std::int32_t slot : reads(call.first, call.last))
      if (!made_inside(slot, call) && !own_state(slot, path)) inputs.push_back(slot);
    std::reverse(inputs.begin(), inputs.end());  // unflatten's order: reverse of first use
    for (const std::int32_t slot : inputs) call.inputs.push_back(slot_source(slot));
    call.input_spec = positional_spec(inputs.size());
    // the values made inside and read after it (or the graph's outputs), in the order made
    std::set<std::int32_t> after(graph_outputs_.begin(), graph_outputs_.end());
    if (call.last + 1 < graph_.instructions.size())
      for (const std::int32_t slot : reads(call.last + 1, graph_.instructions.size() - 1))
        after.insert(slot);
    std::vector<std::pair<std::size_t, std::int32_t>> made;
    for (const std::int32_t slot : after)
      if (made_inside(slot, call)) made.emplace_back(made_at_.at(slot), slot);
    std::sort(made.begin(), made.end());
    for (const auto& [at, slot] : made) call.outputs.push_back(slot_source(slot));
    call.output_spec = output_spec(call.outputs.size());
  }

  void preserved(ModuleCall& call, const ProgramCallSignature& signature) {
    const std::string where = program_.file + ": the signature of " +
                              printable(signature.fqn, 100) + " (module_call_graph)";
    const auto sources = [&](const std::vector<ProgramArgument>& values) {
      std::vector<ValueSource> out;
      for (const ProgramArgument& a : values) {
        if (a.names.empty() || !a.names.front()) {
          out.emplace_back();  // a constant or None: nothing to record
          continue;
        }
        const auto slot = graph_.slot_of.find(*a.names.front());
        if (slot == graph_.slot_of.end())
          throw Error(where + " names " + printable(*a.names.front(), 100) +
                      ", which the graph does not have");
        out.push_back(slot_source(slot->second));
      }
      return out;
    };
    call.inputs = sources(signature.inputs);
    call.outputs = sources(signature.outputs);
    call.input_spec = signature.in_spec.empty() ? positional_spec(call.inputs.size())
                                                : read_tree_spec(signature.in_spec, where);
    call.output_spec = signature.out_spec.empty() ? output_spec(call.outputs.size())
                                                  : read_tree_spec(signature.out_spec, where);
  }

  const ExportProgram& program_;
  const GraphPlan& graph_;
  const std::vector<ProgramNode>& nodes_;
  std::unordered_map<std::string, std::size_t> module_index_;
  std::unordered_map<std::string, const ProgramCallSignature*> signature_of_;
  std::unordered_map<std::int32_t, std::vector<std::string>> state_names_;
  std::unordered_map<std::int32_t, std::size_t> made_at_;
  std::vector<std::int32_t> graph_outputs_;
  ModuleCallPlan out_;
};

}  // namespace

ModuleCallPlan plan_module_calls(const ExportProgram& program, const GraphPlan& graph) {
  return CallPlanner(program, graph).plan();
}

}  // namespace vin::diagnostics::export_run
