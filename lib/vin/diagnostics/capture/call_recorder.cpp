#include "vin/diagnostics/capture/call_recorder.h"

#include <algorithm>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/text/module_selection.h"
#include "vin/diagnostics/torch/dtype_names.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {

struct CallRecorder::State {
  State(std::vector<std::string> paths, std::optional<std::vector<std::string>> requested,
        CaptureLimits quota);

  // stops the forward (by throwing) once the deadline has passed; called with `mutex` held
  void check_deadline();
  // the summary record of what was captured so far; called with `mutex` held
  CaptureSummary summarize() const;
  // a consumer of every reached tensor from now on; called with `mutex` held
  void add(std::shared_ptr<TensorConsumer> consumer) {
    every_tensor = every_tensor || consumer->wants_every_tensor();
    snapshots_off = snapshots_off || consumer->replaces_snapshots();
    consumers.push_back(std::move(consumer));
  }

  std::optional<std::vector<std::string>> requested_paths;
  CaptureLimits limits;
  // One module (its path) and its calls.
  struct ModuleCalls {
    std::string path;
    bool selected = false;
    std::int64_t next_index = 0;        // the call index its next call gets
    std::vector<std::int64_t> pending;  // its calls begun and not ended, innermost last
  };
  std::vector<ModuleCalls> modules;  // the root first; never resized after construction
  std::vector<std::string> all_paths;

  mutable std::mutex mutex;  // forwards may fork; calls can be reported from several threads
  bool active = false;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // capture --timeout
  bool timed_out = false;

  // A snapshot taken during a forward is staged: written into storage reserved before the
  // forward (reserve_staging: when the capture is made, and again at enter), and made a
  // TensorSnapshot only when the snapshots are read (materialise). A record allocated among the
  // forward's tensors, and kept, fragments the heap so that the forward's next tensors come from
  // fresh pages: on resnet18, 64 snapshots cost ~950 page faults and 10 ms a forward that way
  // (bench/capture_bench.cpp's faults_per_recording_forward). What is staged is the snapshot's
  // fields, its variable-length parts as ranges of the shared pools.
  struct StagedSnapshot {
    const std::string* module_path = nullptr;  // its ModuleCalls' (modules is never resized)
    std::int64_t call_index = 0;
    Direction direction = Direction::input;
    std::size_t path_begin = 0, path_end = 0;  // tensor_path, in path_keys
    std::size_t shape_begin = 0, shape_end = 0;
    c10::ScalarType dtype = c10::ScalarType::Float;
    c10::Device device = c10::kCPU;
    std::int64_t numel = 0, sampled_bytes = 0;
    std::size_t values_begin = 0, values_end = 0;
    std::optional<std::string> omission_reason;
    std::optional<TensorStats> stats;
  };
  struct Staging {
    std::vector<StagedSnapshot> snapshots;
    std::vector<std::string> path_keys;
    std::vector<std::int64_t> shapes;
    std::vector<SampleValue> values;
  };
  void reserve_staging();
  // the staged snapshots into `snapshots`, in the order taken; called with `mutex` held
  void materialise() const;
  std::int64_t snapshot_count() const {
    return static_cast<std::int64_t>(snapshots.size() + staging.snapshots.size());
  }
  // made from the staged ones when first read (materialise), hence mutable
  mutable std::vector<TensorSnapshot> snapshots;
  mutable Staging staging;
  std::int64_t sampled_bytes = 0;
  std::optional<std::string> stopped_by;
  // what else takes each reached tensor, in the order added (tensor_consumers.h)
  std::vector<std::shared_ptr<TensorConsumer>> consumers;
  bool every_tensor = false;   // a consumer wants the tensors past the snapshot quotas
  bool snapshots_off = false;  // a consumer has every tensor instead: no snapshot is kept
  void forget_pending_calls() {
    for (ModuleCalls& m : modules) m.pending.clear();
  }

  // One depth-first walk over an input or an output (docs/capture.md, "Call indices and walks").
  struct Walk {
    TensorKey key;  // of the tensor visited now: its tensor_path grows and shrinks as it goes
    const std::string* module_path;  // key's, as State keeps it (for StagedSnapshot)
    std::int64_t nodes = 0;
    bool exhausted = false;
  };
  // A call of `module` begins: its call index, kept until the call ends.
  static std::int64_t open_call(ModuleCalls& module) {
    const std::int64_t index = module.next_index++;
    module.pending.push_back(index);
    return index;
  }
  // The call of `module` that ends now (the innermost open one), if any.
  static std::optional<std::int64_t> close_call(ModuleCalls& module) {
    if (module.pending.empty()) return std::nullopt;
    const std::int64_t index = module.pending.back();
    module.pending.pop_back();
    return index;
  }
  void begin_input(const std::string& path, std::int64_t call_index, const c10::IValue& args,
                   const Kwargs& kwargs);
  void begin_output(const std::string& path, std::int64_t call_index, const c10::IValue& output);
  void visit(Walk& walk, const c10::IValue& value, std::int64_t depth);
  void visit_children(Walk& walk, const c10::IValue& value, std::int64_t depth);
  void record(Walk& walk, const at::Tensor& tensor);
  // snapshots are taken until a quota stops them
  bool recording() const { return active && !stopped_by && !snapshots_off; }
  // walks go on past the snapshot quotas for a consumer that wants every tensor (--stats'
  // check, compare's sink)
  bool walking() const { return active && (!stopped_by || every_tensor); }
};

namespace {

std::string dict_key_text(const c10::IValue& key) {
  if (key.isString()) return key.toStringRef();
  if (key.isInt()) return std::to_string(key.toInt());
  if (key.isBool()) return key.toBool() ? "True" : "False";
  std::ostringstream out;
  out << key;
  return out.str();
}

}  // namespace

CallRecorder::State::State(std::vector<std::string> paths,
                           std::optional<std::vector<std::string>> requested, CaptureLimits quota)
    : requested_paths(std::move(requested)), limits(quota), all_paths(std::move(paths)) {
  // the staging pools first, below what the forward allocates in the heap: reserved at enter()
  // instead, right before a forward, they raised the heap's top under the forward's tensors (an
  // LSTM's recording forward then faulted pages in: 1.2-1.3x its plain forward, 0.95-1.02x)
  reserve_staging();
  modules.reserve(all_paths.size());
  for (const std::string& path : all_paths) modules.emplace_back().path = path;
}

void CallRecorder::State::check_deadline() {
  if (!deadline || std::chrono::steady_clock::now() < *deadline) return;
  timed_out = true;
  // the interpreter re-raises this as its own error; timed_out tells the caller what it was
  throw Error("the forward ran past its time limit");
}

void CallRecorder::State::begin_input(const std::string& path, std::int64_t call_index,
                                      const c10::IValue& args, const Kwargs& kwargs) {
  // the positional root is always visited (a tuple), even when empty; the keyword root only
  // when not
  Walk walk{TensorKey{path, call_index, Direction::input, {"args"}}, &path};
  visit(walk, args.isTuple() ? args : c10::ivalue::Tuple::create({}), 0);
  if (!kwargs.empty() && !walk.exhausted) {
    walk.key.tensor_path = {"kwargs"};
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& [name, value] : kwargs) dict.insert(name, value);
    visit(walk, dict, 0);
  }
}

void CallRecorder::State::begin_output(const std::string& path, std::int64_t call_index,
                                       const c10::IValue& output) {
  Walk walk{TensorKey{path, call_index, Direction::output, {"output"}}, &path};
  visit(walk, output, 0);
}

void CallRecorder::State::visit(Walk& walk, const c10::IValue& value, std::int64_t depth) {
  if (walk.exhausted || !walking()) return;
  ++walk.nodes;
  if (value.isTensor()) {
    // capture never changes whether a forward succeeds (docs/capture.md): a tensor this code
    // cannot read is left out, with a warning, instead of failing the model's forward
    try {
      record(walk, value.toTensor());
    } catch (const std::exception& e) {
      std::string where = walk.key.module_path + " " + to_string(walk.key.direction);
      for (const auto& key : walk.key.tensor_path) where += "." + key;
      log_line(LogLevel::warn,
               "capture: left out a tensor of " + where + ": " + describe_torch_error(e));
    }
  }
  // the node that reaches the limit is still handled; then this walk stops
  if (walk.nodes >= limits.max_traversal_nodes()) {
    walk.exhausted = true;
    return;
  }
  if (depth < limits.max_container_depth()) visit_children(walk, value, depth);
}

void CallRecorder::State::visit_children(Walk& walk, const c10::IValue& value, std::int64_t depth) {
  auto visit_item = [&](const std::string& key, const c10::IValue& item) {
    walk.key.tensor_path.push_back(key);
    visit(walk, item, depth + 1);
    walk.key.tensor_path.pop_back();
  };
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (std::size_t i = 0; i < elements.size() && !walk.exhausted; ++i)
      visit_item(std::to_string(i), elements[i]);
  } else if (value.isList()) {
    const auto list = value.toListRef();
    for (std::size_t i = 0; i < list.size() && !walk.exhausted; ++i)
      visit_item(std::to_string(i), list[i]);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      if (walk.exhausted) break;
      visit_item(dict_key_text(entry.key()), entry.value());
    }
  }
}

void CallRecorder::State::record(Walk& walk, const at::Tensor& tensor) {
  if (!tensor.defined()) return;
  ReachedTensor reached{walk.key, tensor, recording(), std::nullopt};
  for (const auto& consumer : consumers) consumer->take(reached);
  if (!reached.kept) return;
  const auto reason = sample_omission_reason(tensor);
  TensorSample sample;
  if (!reason)
    sample =
        sample_tensor(tensor, limits.max_samples_per_tensor(), limits.max_bytes() - sampled_bytes);
  const auto [shape, numel] = snapshot_shape(tensor);
  // the temporaries above are freed at once; what stays goes into the reserved pools
  Staging& s = staging;
  s.snapshots.push_back({walk.module_path, walk.key.call_index, walk.key.direction,
                         s.path_keys.size(), s.path_keys.size() + walk.key.tensor_path.size(),
                         s.shapes.size(), s.shapes.size() + shape.size(), tensor.scalar_type(),
                         tensor.device(), numel, sample.sampled_bytes, s.values.size(),
                         s.values.size() + sample.values.size(), reason, std::move(reached.stats)});
  s.path_keys.insert(s.path_keys.end(), walk.key.tensor_path.begin(), walk.key.tensor_path.end());
  s.shapes.insert(s.shapes.end(), shape.begin(), shape.end());
  s.values.insert(s.values.end(), sample.values.begin(), sample.values.end());
  sampled_bytes += sample.sampled_bytes;
  if (snapshot_count() >= limits.max_tensors())
    stopped_by = "max_tensors";
  else if (sampled_bytes >= limits.max_bytes())
    stopped_by = "max_bytes";
}

void CallRecorder::State::reserve_staging() {
  // for the quotas' worth of snapshots (their default: 64 of 32 values), within a bound: a
  // quota past it grows the pools as the forward goes, as a vector does
  static constexpr std::int64_t kMaxReserved = 4096;
  const auto bounded = [](std::int64_t n) {
    return static_cast<std::size_t>(std::clamp<std::int64_t>(n, 0, kMaxReserved));
  };
  const std::size_t slots = bounded(limits.max_tensors() - snapshot_count());
  // at most max_bytes values (of one byte each) across the capture
  const std::size_t values = std::min(bounded(limits.max_bytes() - sampled_bytes),
                                      slots * bounded(limits.max_samples_per_tensor()));
  // reserved and written once (resized and emptied), so that the forward does not fault the
  // pages in: a page fault costs 10-15 us on this project's machine, a record 1-2 us
  const auto reserve = [](auto& pool, std::size_t more) {
    const std::size_t size = pool.size();
    pool.resize(size + more);
    pool.resize(size);
  };
  reserve(staging.snapshots, slots);
  reserve(staging.path_keys, 4 * slots);
  reserve(staging.shapes, 6 * slots);
  reserve(staging.values, values);
}

void CallRecorder::State::materialise() const {
  if (staging.snapshots.empty()) return;
  snapshots.reserve(snapshots.size() + staging.snapshots.size());
  for (StagedSnapshot& s : staging.snapshots) {
    const auto range = [](const auto& pool, std::size_t begin, std::size_t end) {
      return std::vector<typename std::decay_t<decltype(pool)>::value_type>(
          pool.begin() + static_cast<std::ptrdiff_t>(begin),
          pool.begin() + static_cast<std::ptrdiff_t>(end));
    };
    snapshots.emplace_back(*s.module_path, s.call_index, s.direction,
                           range(staging.path_keys, s.path_begin, s.path_end),
                           range(staging.shapes, s.shape_begin, s.shape_end),
                           python_dtype_name(s.dtype), s.device.str(), s.numel, s.sampled_bytes,
                           range(staging.values, s.values_begin, s.values_end),
                           std::move(s.omission_reason), std::move(s.stats));
  }
  // emptied, their storage kept for the next forward's
  staging.snapshots.clear();
  staging.path_keys.clear();
  staging.shapes.clear();
  staging.values.clear();
}


CallRecorder::CallRecorder(std::vector<std::string> paths,
                           std::optional<std::vector<std::string>> requested, CaptureLimits limits)
    : state_(std::make_unique<State>(std::move(paths), std::move(requested), limits)) {}

CallRecorder::~CallRecorder() = default;

void CallRecorder::enter() {
  State& s = *state_;
  std::unordered_set<std::string> selected;
  if (s.requested_paths) {
    for (auto& path : select_module_paths(*s.requested_paths, s.all_paths))
      selected.insert(std::move(path));
  } else {
    selected.insert(s.all_paths.begin(), s.all_paths.end());
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active) throw UsageError("this capture is already active");
  for (State::ModuleCalls& m : s.modules) m.selected = selected.count(m.path) > 0;
  if (!s.snapshots_off) s.reserve_staging();
  s.active = true;
}

void CallRecorder::close() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (const auto& consumer : state_->consumers) consumer->close();
  state_->active = false;
  state_->forget_pending_calls();
}

void CallRecorder::add_consumer(std::shared_ptr<TensorConsumer> consumer) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->add(std::move(consumer));
}

void CallRecorder::call_begins(std::size_t index, const c10::IValue& args, const Kwargs& kwargs) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.check_deadline();
  if (!s.active) return;
  State::ModuleCalls& calls = s.modules[index];
  if (!calls.selected) return;
  const std::int64_t call = State::open_call(calls);
  if (s.walking()) s.begin_input(calls.path, call, args, kwargs);
  for (const auto& consumer : s.consumers) consumer->call_begun(calls.path, call);
}

void CallRecorder::call_ends(std::size_t index, const c10::IValue& output) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active) return;
  State::ModuleCalls& calls = s.modules[index];
  if (!calls.selected) return;
  if (const auto call = State::close_call(calls)) {
    if (s.walking()) s.begin_output(calls.path, *call, output);
    for (const auto& consumer : s.consumers) consumer->call_returned(calls.path, *call);
  }
}

void CallRecorder::check_deadline() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->check_deadline();
}

void CallRecorder::forget_pending_calls() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->forget_pending_calls();
}

void CallRecorder::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->deadline = deadline;
}

bool CallRecorder::timed_out() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->timed_out;
}

std::optional<std::pair<std::vector<TensorSnapshot>, CaptureSummary>> CallRecorder::copy_when_idle(
    std::chrono::milliseconds patience) const {
  const auto until = std::chrono::steady_clock::now() + patience;
  std::unique_lock<std::mutex> lock(state_->mutex, std::defer_lock);
  while (!lock.try_lock()) {
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  state_->materialise();
  return std::make_pair(state_->snapshots, state_->summarize());
}

const std::vector<TensorSnapshot>& CallRecorder::snapshots() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->materialise();
  return state_->snapshots;
}

std::int64_t CallRecorder::snapshot_count() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->snapshot_count();
}

std::int64_t CallRecorder::sampled_bytes() const { return state_->sampled_bytes; }
bool CallRecorder::active() const { return state_->active; }
std::optional<std::string> CallRecorder::stopped_by() const { return state_->stopped_by; }
const CaptureLimits& CallRecorder::limits() const { return state_->limits; }
const std::vector<std::string>& CallRecorder::paths() const { return state_->all_paths; }

CaptureSummary CallRecorder::State::summarize() const {
  CaptureSummary summary;
  summary.snapshots = snapshot_count();
  summary.sampled_bytes = sampled_bytes;
  summary.stopped_by = stopped_by;
  for (const auto& consumer : consumers) consumer->summarize(summary);
  return summary;
}

CaptureSummary CallRecorder::summary() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->summarize();
}

}  // namespace vin::diagnostics
