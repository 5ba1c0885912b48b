#include "vin/diagnostics/compare/compare_sides.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <future>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/run/forward_runner.h"
#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/capture/program_capture.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/module_selection.h"
#include "vin/diagnostics/torch/dtype_names.h"
#include "vin/diagnostics/run/forward_inputs.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {
namespace {

// the most tensors of one call beyond tolerance that compare tries to pair otherwise (between a
// .pt and a .pt2): each against every tensor of B left, so at most 64 x the call's tensors
// comparisons (torchvision's densenet201 passes 49 tensors to a layer, a few in another order)
constexpr std::size_t kMaxReordered = 64;

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// torch.testing.assert_close's defaults; integers and bool compare exactly
Tolerance default_tolerance(c10::ScalarType type, bool quantized) {
  if (quantized) return {1.3e-6, 1e-5};
  switch (type) {
    case at::kHalf:
    case at::kComplexHalf:
      return {1e-3, 1e-5};
    case at::kBFloat16:
      return {1.6e-2, 1e-5};
    case at::kFloat:
    case at::kComplexFloat:
      return {1.3e-6, 1e-5};
    case at::kDouble:
    case at::kComplexDouble:
      return {1e-7, 1e-7};
    default:
      return {0, 0};
  }
}

// Statistics that stand for a tensor of A past --max-compare-bytes.
struct Statistics {
  double min = 0, max = 0, mean = 0;
};

Statistics statistics_of(const at::Tensor& t) {
  const at::Tensor d = t.detach().to(at::kDouble);
  if (d.numel() == 0) return {};
  return {d.min().item<double>(), d.max().item<double>(), d.mean().item<double>()};
}

// One tensor of side A, kept until B's counterpart arrives.
struct Kept {
  TensorKey key;
  std::vector<std::int64_t> shape;
  std::string dtype;
  c10::ScalarType type = at::kFloat;
  bool quantized = false;
  std::int64_t numel = 0;
  at::Tensor tensor;                       // on the CPU; undefined when only statistics are kept
  std::optional<Statistics> statistics;    // past --max-compare-bytes
  std::optional<TensorComparison> result;  // once compared
};

// What a tensor is compared as: float64 (complex128 for complex), on the CPU.
at::Tensor comparable(const at::Tensor& t) {
  at::Tensor d = t.detach();
  if (d.is_quantized()) d = d.dequantize();
  return d.to(at::kCPU, d.is_complex() ? at::kComplexDouble : at::kDouble);
}

class Comparer {
 public:
  explicit Comparer(const CompareRequest& request) : request_(request) {}

  /// Between a .pt and a .pt2 (contract 12.3): B's tensors come a call's inputs or output at
  /// once (compare_call), and what cannot be paired is a structure difference.
  void pair_by_call() { by_call_ = true; }

  // Side A: keep each tensor (a copy: the forward may change it later).
  void keep(const TensorKey& key, const at::Tensor& tensor) {
    if (!wanted(key, tensor)) return;
    const std::string name = key.name();
    if (index_.count(name)) return;  // a tensor seen twice under one key: the first counts
    calls_[call_of(key)].push_back(kept_.size());
    Kept k;
    k.key = key;
    k.shape = tensor.sizes().vec();
    k.dtype = python_dtype_name(tensor.scalar_type());
    k.type = tensor.scalar_type();
    k.quantized = tensor.is_quantized();
    k.numel = tensor.numel();
    const std::int64_t bytes = k.numel * static_cast<std::int64_t>(tensor.element_size());
    if (const at::Tensor* copy = recent_copy(tensor)) {
      k.tensor = *copy;  // a module's output met again as the next one's input: one copy
    } else if (kept_bytes_ + bytes <= request_.max_compare_bytes) {
      k.tensor = tensor.detach().to(at::kCPU, tensor.scalar_type(), false, /*copy=*/true);
      kept_bytes_ += bytes;
      remember(tensor, k.tensor);
    } else {
      k.statistics = statistics_of(comparable(tensor));
    }
    index_.emplace(name, kept_.size());
    kept_.push_back(std::move(k));
  }

  // The copy made of `tensor` a moment ago, when it is unchanged since (same tensor, same
  // version): a module's output is the next module's input, and its parent's output.
  const at::Tensor* recent_copy(const at::Tensor& tensor) const {
    if (tensor.is_inference()) return nullptr;  // no version counter to tell a change
    for (const Recent& r : recent_)
      if (r.original.defined() &&
          r.original.unsafeGetTensorImpl() == tensor.unsafeGetTensorImpl() &&
          r.version == tensor._version())
        return &r.copy;
    return nullptr;
  }

  void remember(const at::Tensor& original, const at::Tensor& copy) {
    if (original.is_inference()) return;
    // the few references held here keep those activations alive a little longer
    recent_[next_recent_] = Recent{original, original._version(), copy};
    next_recent_ = (next_recent_ + 1) % recent_.size();
  }

  // Side B: compare each tensor with A's as it comes, and let A's go.
  void compare(const TensorKey& key, const at::Tensor& tensor) {
    if (!wanted(key, tensor)) return;
    const std::string name = key.name();
    const auto it = index_.find(name);
    if (it == index_.end()) {
      only_in_b(key, tensor);
      return;
    }
    Kept& a = kept_[it->second];
    if (a.result) return;  // a tensor seen twice under one key: the first counts
    settle(a, key, compare_pair(a, tensor));
  }

  // Side B of a .pt against a .pt2: one call's inputs (or its output) together, paired with the
  // same call's on A by tensor_path where both give the same paths, else by position where
  // both give as many tensors; otherwise the call's tensors are a structure difference. A .pt2
  // call without a signature of its own gives its tensors in unflatten's order (reverse order of
  // first use), which need not be the forward's: when that pairing leaves a pair beyond tolerance
  // and another pairing of the call's tensors puts every pair within, that one is used.
  void compare_call(const std::vector<std::pair<TensorKey, at::Tensor>>& taken) {
    std::vector<const std::pair<TensorKey, at::Tensor>*> b;
    std::unordered_map<std::string, std::size_t> b_index;
    for (const auto& item : taken)
      if (wanted(item.first, item.second) && b_index.emplace(item.first.name(), b.size()).second)
        b.push_back(&item);
    if (b.empty()) return;
    const auto call = calls_.find(call_of(b.front()->first));
    std::vector<Kept*> a;
    if (call != calls_.end())
      for (const std::size_t i : call->second)
        if (!kept_[i].result) a.push_back(&kept_[i]);
    if (a.empty() || a.size() != b.size()) {
      for (const auto* item : b) only_in_b(item->first, item->second);  // and A's stay unpaired
      return;
    }
    // by path where every path of A is B's, else by position
    std::vector<std::size_t> order(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      const auto it = b_index.find(a[i]->key.name());
      if (it == b_index.end()) {
        std::iota(order.begin(), order.end(), std::size_t{0});
        break;
      }
      order[i] = it->second;
    }
    std::vector<TensorComparison> results;
    for (std::size_t i = 0; i < a.size(); ++i)
      results.push_back(compare_pair(*a[i], b[order[i]]->second));
    const auto all_within = [](const std::vector<TensorComparison>& r) {
      return std::all_of(r.begin(), r.end(), [](const auto& c) { return c.within_tolerance; });
    };
    if (!all_within(results)) rematch(a, b, order, results);
    for (std::size_t i = 0; i < a.size(); ++i)
      settle(*a[i], b[order[i]]->first, std::move(results[i]));
  }

  // A pairing of one call's tensors with every pair within tolerance: the pairs within it stay,
  // and each other tensor of A in turn takes the first of B left that matches it (shape and
  // dtype first, then the values). Replaces `order` and `results` when there is one.
  void rematch(const std::vector<Kept*>& a,
               const std::vector<const std::pair<TensorKey, at::Tensor>*>& b,
               std::vector<std::size_t>& order, std::vector<TensorComparison>& results) const {
    std::vector<std::size_t> other = order;
    std::vector<TensorComparison> other_results(a.size());
    std::vector<bool> used(b.size(), false);
    std::size_t beyond = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (results[i].within_tolerance)
        used[order[i]] = true;
      else
        ++beyond;
    }
    if (beyond > kMaxReordered) return;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (results[i].within_tolerance) {
        other_results[i] = results[i];
        continue;
      }
      bool found = false;
      for (std::size_t j = 0; j < b.size() && !found; ++j) {
        const at::Tensor& t = b[j]->second;
        if (used[j] || t.sizes().vec() != a[i]->shape || t.scalar_type() != a[i]->type) continue;
        TensorComparison c = compare_pair(*a[i], t);
        if (!c.within_tolerance) continue;
        used[j] = found = true;
        other[i] = j;
        other_results[i] = std::move(c);
      }
      if (!found) return;
    }
    order = std::move(other);
    results = std::move(other_results);
  }

  CompareResult finish() {
    CompareResult out;
    ComparisonSummary& s = out.summary;
    s.atol = request_.atol;
    s.rtol = request_.rtol;
    s.seed = request_.run.seed;
    for (Kept& a : kept_) {
      TensorComparison c;
      if (a.result) {
        c = std::move(*a.result);
        ++s.pairs;
        if (c.within_tolerance) {
          ++s.within;
        } else {
          ++s.beyond;
          if (!s.first_divergence) s.first_divergence = c.key;
        }
        if (c.statistics_only) ++s.statistics_only;
      } else {
        c.key = a.key;
        c.shape_a = a.shape;
        c.dtype_a = a.dtype;
        c.numel = a.numel;
        c.only_in = "a";
        // between a .pt and a .pt2 every tensor left unpaired is of a call whose tensors could
        // not be paired, or that B did not make: a structure difference
        c.structure_differs = by_call_;
        if (!c.structure_differs) ++s.only_in_a;
      }
      out.comparisons.push_back(std::move(c));
    }
    for (auto& c : only_b_) {
      if (!c.structure_differs) ++s.only_in_b;
      out.comparisons.push_back(std::move(c));
    }
    std::unordered_set<std::string> differing;
    for (const TensorComparison& c : out.comparisons)
      if (c.structure_differs) differing.insert(call_of(c.key));
    s.structure_differences = static_cast<std::int64_t>(differing.size());
    return out;
  }

 private:
  // a call's inputs, or its output: what compare_call pairs as one
  static std::string call_of(const TensorKey& key) {
    return key.module_path + '\n' + std::to_string(key.call_index) + '\n' +
           to_string(key.direction);
  }

  // a tensor with values to compare, of a module --module selects
  bool wanted(const TensorKey& key, const at::Tensor& tensor) const {
    return selected(key) && !tensor.is_nested() && tensor.layout() == c10::kStrided &&
           !tensor.is_meta();
  }

  // A's tensor `a` paired with B's under `key`, as `result` compared them
  void settle(Kept& a, const TensorKey& key, TensorComparison result) {
    if (key.tensor_path != a.key.tensor_path) result.tensor_path_b = key.tensor_path;
    a.result = std::move(result);
    a.tensor = at::Tensor();  // A's copy is no longer needed
  }

  // a one-sided tensor of B; between a .pt and a .pt2 every one is of a structure difference
  void only_in_b(const TensorKey& key, const at::Tensor& tensor) {
    if (!only_b_names_.insert(key.name()).second) return;
    TensorComparison c;
    c.key = key;
    c.shape_b = tensor.sizes().vec();
    c.dtype_b = python_dtype_name(tensor.scalar_type());
    c.numel = tensor.numel();
    c.only_in = "b";
    c.structure_differs = by_call_;
    only_b_.push_back(std::move(c));
  }

  bool selected(const TensorKey& key) const {
    if (!request_.module_paths) return true;
    for (const auto& p : *request_.module_paths)
      if (p == key.module_path || (is_path_pattern(p) && wildcard_match(p, key.module_path)))
        return true;
    return false;
  }

  Tolerance tolerance_for(const Kept& a, const at::Tensor& b) const {
    const Tolerance ta = default_tolerance(a.type, a.quantized);
    const Tolerance tb = default_tolerance(b.scalar_type(), b.is_quantized());
    return {request_.rtol.value_or(std::max(ta.rtol, tb.rtol)),
            request_.atol.value_or(std::max(ta.atol, tb.atol))};
  }

  TensorComparison compare_pair(const Kept& a, const at::Tensor& b_tensor) const {
    TensorComparison c;
    c.key = a.key;
    c.shape_a = a.shape;
    c.shape_b = b_tensor.sizes().vec();
    c.dtype_a = a.dtype;
    c.dtype_b = python_dtype_name(b_tensor.scalar_type());
    c.numel = a.numel;
    const Tolerance t = tolerance_for(a, b_tensor);
    c.atol = t.atol;
    c.rtol = t.rtol;
    if (*c.shape_a != *c.shape_b) return c;  // not comparable: beyond, errors null
    const at::Tensor b = comparable(b_tensor);
    if (a.statistics) {
      c.statistics_only = true;
      const Statistics sb = statistics_of(b);
      const double errors[] = {std::abs(a.statistics->min - sb.min),
                               std::abs(a.statistics->max - sb.max),
                               std::abs(a.statistics->mean - sb.mean)};
      const double bases[] = {std::abs(sb.min), std::abs(sb.max), std::abs(sb.mean)};
      c.max_abs_error = *std::max_element(std::begin(errors), std::end(errors));
      double rel = 0;
      bool within = true;
      for (int i = 0; i < 3; ++i) {
        rel = std::max(rel, bases[i] > 0 ? errors[i] / bases[i] : (errors[i] > 0 ? HUGE_VAL : 0.0));
        within = within && errors[i] <= t.atol + t.rtol * bases[i];
      }
      c.max_rel_error = rel;
      c.within_tolerance = within;
      return c;
    }
    const at::Tensor av = comparable(a.tensor);
    if (!av.is_complex()) {
      compare_real(av.contiguous(), b.contiguous(), t, c);
      return c;
    }
    const at::Tensor close = at::isclose(av, b, t.rtol, t.atol, request_.equal_nan);
    c.mismatches = c.numel - close.sum().item<std::int64_t>();
    c.within_tolerance = *c.mismatches == 0;
    if (c.numel == 0) {
      c.max_abs_error = 0.0;
      c.max_rel_error = 0.0;
      return c;
    }
    // errors over the elements that differ; equal values (infinities included) count zero, and
    // NaNs, counted as mismatches above, are left out of the maxima
    // (|a - b| of complex values is real)
    at::Tensor diff = (av - b).abs();
    diff = at::where(av.eq(b), at::zeros({}, diff.options()), diff);
    diff = at::nan_to_num(diff, 0.0);
    c.max_abs_error = diff.max().item<double>();
    at::Tensor rel = diff / b.abs();
    rel = at::where(diff.eq(0), at::zeros({}, rel.options()), rel);
    rel = at::nan_to_num(rel, 0.0, HUGE_VAL, 0.0);
    c.max_rel_error = rel.max().item<double>();
    return c;
  }

  // torch.isclose and the errors in one pass over float64 values: the same answers as the
  // tensor expressions used for complex values, without a dozen operator calls per pair (which
  // dominate on models of many small tensors)
  void compare_real(const at::Tensor& av, const at::Tensor& bv, const Tolerance& t,
                    TensorComparison& c) const {
    const double* a = av.data_ptr<double>();
    const double* b = bv.data_ptr<double>();
    const std::int64_t n = av.numel();
    std::int64_t mismatches = 0;
    double max_abs = 0, max_rel = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = a[i], y = b[i];
      if (x == y) continue;  // equal, infinities included
      const bool both_nan = std::isnan(x) && std::isnan(y);
      const double diff = std::abs(x - y);
      const bool close = (request_.equal_nan && both_nan) ||
                         (std::isfinite(diff) && diff <= t.atol + std::abs(t.rtol * y));
      if (!close) ++mismatches;
      if (std::isnan(diff)) continue;  // NaNs count as mismatches, not in the maxima
      max_abs = std::max(max_abs, diff);
      const double magnitude = std::abs(y);
      max_rel = std::max(max_rel, magnitude > 0 ? diff / magnitude : HUGE_VAL);
    }
    c.mismatches = mismatches;
    c.within_tolerance = mismatches == 0;
    c.max_abs_error = max_abs;
    c.max_rel_error = max_rel;
  }

  const CompareRequest& request_;
  std::vector<Kept> kept_;
  struct Recent {
    at::Tensor original;
    std::int64_t version = 0;
    at::Tensor copy;
  };
  std::array<Recent, 8> recent_;
  std::size_t next_recent_ = 0;
  std::unordered_map<std::string, std::size_t> index_;
  std::unordered_map<std::string, std::vector<std::size_t>> calls_;  // call_of -> kept_
  bool by_call_ = false;
  std::int64_t kept_bytes_ = 0;
  std::vector<TensorComparison> only_b_;
  std::unordered_set<std::string> only_b_names_;
};

using Sink = std::function<void(const TensorKey&, const at::Tensor&)>;
using CallSink = std::function<void(const std::vector<std::pair<TensorKey, at::Tensor>>&)>;

// B's tensors a call's inputs (or its output) at a time, handed on as the call begins (or
// returns): values as they were at that moment (Comparer::compare_call)
class CallForwarder final : public TensorConsumer {
 public:
  explicit CallForwarder(CallSink sink) : sink_(std::move(sink)) {}
  bool wants_every_tensor() const override { return true; }
  bool replaces_snapshots() const override { return true; }
  void take(ReachedTensor& reached) override { taken_.emplace_back(reached.key, reached.tensor); }
  void call_begun(const std::string&, std::int64_t) override { hand_on(); }
  void call_returned(const std::string&, std::int64_t) override { hand_on(); }
  void close() override { taken_.clear(); }

 private:
  void hand_on() {
    if (!taken_.empty()) sink_(taken_);
    taken_.clear();
  }
  CallSink sink_;
  std::vector<std::pair<TensorKey, at::Tensor>> taken_;
};

// The floating dtype of a model's parameters when they all share one (a `.half()` copy:
// float16), so that one inputs file serves a model and its converted copy.
std::optional<c10::ScalarType> floating_dtype(const std::vector<at::Tensor>& parameters) {
  std::optional<c10::ScalarType> type;
  for (const at::Tensor& p : parameters) {
    if (!at::isFloatingType(p.scalar_type())) continue;
    if (type && *type != p.scalar_type()) return std::nullopt;
    type = p.scalar_type();
  }
  return type;
}

c10::IValue cast_floating(const c10::IValue& value, c10::ScalarType type) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    return at::isFloatingType(t.scalar_type()) ? c10::IValue(t.to(type)) : value;
  }
  if (value.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& item : value.toTupleRef().elements())
      items.push_back(cast_floating(item, type));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (value.isList()) {
    c10::impl::GenericList list(value.toList().elementType());
    for (const auto& item : value.toListRef()) list.push_back(cast_floating(item, type));
    return list;
  }
  return value;
}

// One side opened once: a TorchScript archive probed (a torch.save file too, which the probe
// refuses by name), a .pt2 for the interpreter (LoadedRun reads its program), or a zip of
// saved tensors.
struct OpenedSide {
  std::optional<ArchiveLayout> archive;
  bool program = false;
  ZipArchivePtr saved;
  bool runs() const { return archive || program; }
};

OpenedSide open_side(const CompareSide& side) {
  const ClassifiedFile file = naming_out_of_memory(side.path, "reading the file", [&] {
    return open_model_file(side.path, kRun | kRunProgram | kSavedTensors,
                           "a TorchScript archive, a .pt2 or an .npz file");
  });
  if (npz_of(file)) return {std::nullopt, false, file.zip};
  if (is_export_program(file)) return {std::nullopt, true, nullptr};
  return {open_torchscript_archive(file), false, nullptr};
}

// A file of saved tensors into `sink`, member by member in the file's order.
void read_side(const ZipArchive& saved, const Sink& sink) {
  const std::string& path = saved.path();
  std::vector<NpyArray> arrays =
      naming_out_of_memory(path, "reading the saved tensors", [&] { return read_npz_file(saved); });
  for (NpyArray& array : arrays) {
    const auto key = TensorKey::from_name(array.name);
    if (!key)
      throw Error(path + ": the member " + array.name +
                  " is not named MODULE_PATH/CALL_INDEX/DIRECTION/TENSOR_PATH as capture --save "
                  "and scripts/eager_capture.py name them");
    sink(*key, npy_to_tensor(std::move(array)));
  }
}

// A side that runs, made ready: loaded, its inputs read (and cast to its parameters' floating
// dtype), its capture made (a TorchScript module instrumented, or the module calls of a .pt2
// planned).
struct PreparedSide {
  PreparedSide(const ForwardRun& run, const OpenedSide& opened)
      : loaded(run, {}, opened.archive ? &*opened.archive : nullptr, opened.program) {}
  LoadedRun loaded;
  std::optional<ModelCapture> capture;
  std::optional<ProgramCapture> program_capture;
};

std::unique_ptr<PreparedSide> prepare_side(const CompareSide& side, const OpenedSide& opened,
                                           const CompareRequest& request) {
  auto p = std::make_unique<PreparedSide>(request.run_of(side), opened);
  export_run::ProgramRunner* program = p->loaded.program();
  std::vector<at::Tensor> parameters;
  if (program)
    parameters = program->weights("parameter");
  else
    for (const at::Tensor& t : p->loaded.model().parameters()) parameters.push_back(t);
  if (const auto type = floating_dtype(parameters))
    for (ForwardInputs& in : p->loaded.inputs()) {
      for (auto& a : in.args) a = cast_floating(a, *type);
      for (auto& [name, value] : in.kwargs) value = cast_floating(value, *type);
    }
  const CaptureLimits limits = CaptureLimits()
                                   .with_max_traversal_nodes(request.max_traversal_nodes)
                                   .with_max_container_depth(request.max_container_depth);
  // module patterns are checked against this side's paths; the comparer filters the rest
  if (program)
    p->program_capture.emplace(*program, *p->loaded.program_forward(), request.module_paths,
                               limits);
  else
    p->capture.emplace(capture_model_in_place(p->loaded.model(), request.module_paths, limits));
  return p;
}

// Runs a prepared side on its inputs, its tensors to `consumer`. Returns the message of a
// forward that did not finish, if one did not.
std::optional<std::string> run_side(PreparedSide& p, std::shared_ptr<TensorConsumer> consumer,
                                    const CompareRequest& request) {
  std::optional<RunFailure> failure;
  if (p.program_capture) {
    ProgramCapture& capture = *p.program_capture;
    CallRecorder& recorder = capture.recorder();
    recorder.add_consumer(std::move(consumer));
    recorder.enter();
    struct Closing {
      CallRecorder& recorder;
      ~Closing() { recorder.close(); }
    } closing{recorder};
    const auto step = [&](std::size_t i) { capture.forward(p.loaded.inputs()[i]); };
    failure = run_forwards(p.loaded, step, &capture, request.on_abandoned);
  } else {
    p.capture->add_consumer(std::move(consumer));
    auto scope = p.capture->enter();
    const auto step = [&](std::size_t i) { p.capture->forward(p.loaded.inputs()[i]); };
    failure = run_forwards(p.loaded, step, &*p.capture, request.on_abandoned);
  }
  if (failure) return std::move(failure->message);
  return std::nullopt;
}

}  // namespace

CompareResult compare_sides(const CompareRequest& request) {
  // a tensor on the meta device has a shape and no values: there is nothing to compare
  for (const auto& [flag, side] : {std::pair{"--device-a", &request.a}, {"--device-b", &request.b}})
    if (resolve_device(side->device, flag).is_meta())
      throw UsageError(std::string(flag) + " " + side->device +
                       ": compare compares values, and a tensor on the meta device holds none "
                       "(a shape and no data); run both sides on cpu or cuda");
  Comparer comparer(request);
  std::optional<std::string> error;
  const OpenedSide a_side = open_side(request.a);
  const OpenedSide b_side = open_side(request.b);
  if ((a_side.runs() || b_side.runs()) && request.run.inputs.empty() && !request.run.shaped)
    throw UsageError("--inputs FILE or --shape NAME=DIMS is required");
  // a TorchScript archive against a .pt2: calls paired whole (contract 12.3)
  const bool by_call = a_side.runs() && b_side.runs() && a_side.program != b_side.program;
  if (by_call) comparer.pair_by_call();
  // B is loaded and made ready on another thread while A loads and runs: on models of many
  // modules, loading is most of the time (both models are resident at once, no tensor of B is)
  std::future<std::unique_ptr<PreparedSide>> b_ready;
  if (b_side.runs())
    b_ready = std::async(std::launch::async,
                         [&] { return prepare_side(request.b, b_side, request); });
  const Sink keep = [&](const TensorKey& k, const at::Tensor& t) { comparer.keep(k, t); };
  const Sink compare = [&](const TensorKey& k, const at::Tensor& t) { comparer.compare(k, t); };
  if (a_side.runs()) {
    const auto a = prepare_side(request.a, a_side, request);
    error = run_side(*a, std::make_shared<TensorForwarder>(keep), request);
  } else {
    read_side(*a_side.saved, keep);
  }
  if (b_side.runs()) {
    const auto b = b_ready.get();
    std::shared_ptr<TensorConsumer> consumer;
    if (by_call)
      consumer = std::make_shared<CallForwarder>(
          [&](const auto& taken) { comparer.compare_call(taken); });
    else
      consumer = std::make_shared<TensorForwarder>(compare);
    const auto failed = run_side(*b, consumer, request);
    if (!error) error = failed;  // B still runs after A failed: what both saw is compared
  } else {
    read_side(*b_side.saved, compare);
  }
  CompareResult result = comparer.finish();
  result.error = error;
  return result;
}

}  // namespace vin::diagnostics
