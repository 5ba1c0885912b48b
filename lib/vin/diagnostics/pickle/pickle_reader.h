// A reader for the pickles TorchScript's pickler writes in an archive's data.pkl and torch.save
// writes (protocols 2 to 4), without LibTorch: objects of TorchScript classes with their state, the
// containers and scalars in that state, and tensors as what they describe (element count,
// requires_grad), never their data. Memo references keep identity: a tensor or object written
// once and referenced twice is one PickleValue. All values live in one PickleDocument and refer to
// each other by plain pointers, so nesting and cycles (a list appended to itself) cost nothing
// to free.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vin::diagnostics {

struct PickleValue;
using PickleRef = const PickleValue*;

/// One value built by the reader.
struct PickleValue {
  enum class Kind {
    none,
    boolean,
    integer,
    floating,
    string,
    bytes,
    tuple,
    list,
    dict,
    global,   ///< a GLOBAL reference: `text` is "module.name"
    object,   ///< an instance of a TorchScript class: `text` is its qualified name
    tensor,   ///< from torch._utils._rebuild_tensor_v2, _rebuild_qtensor or _rebuild_parameter
    storage,  ///< a BINPERSID ('storage', type, key, location, numel) reference
    opaque,   ///< anything else: a call this reader does not model (`text` the callable,
              ///< `items` its arguments), a set ("builtins.set", its items), an int wider
              ///< than 64 bits ("builtins.int"); never called
  };
  Kind kind = Kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  double floating = 0;
  /// string, bytes, global or object class name; tensor: its rebuild function; storage: its
  /// storage type ("torch.FloatStorage"); opaque: the callable, when it is a global, or the
  /// type
  std::string text;
  /// tuple and list items; dict keys and values, alternating; tensor: the rebuild function's
  /// arguments (storage, offset, size, stride, ...); storage: the persistent id's fields
  /// ('storage', type, key, location, numel)
  std::vector<PickleRef> items;
  PickleRef state = nullptr;  ///< an object's (or opaque value's) BUILD state, kept, not applied
  std::int64_t numel = 0;     ///< tensor: elements, the product of its sizes; storage: its elements
  bool requires_grad = false;  ///< tensor
};

/// Thrown for streams outside the subset (an unknown opcode, a malformed or truncated stream,
/// a size out of range): the caller falls back to LibTorch, which reads or refuses it.
class UnsupportedPickle : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown when the stream ends before its STOP (or inside an opcode's argument): a reader of
/// pickles that follow one another in a file (legacy torch.save) reads more and tries again.
class TruncatedPickle : public UnsupportedPickle {
 public:
  using UnsupportedPickle::UnsupportedPickle;
};

/// `module.name` of a pickle's global, Python 2's module names (protocol 2's GLOBAL, pickle's
/// fix_imports) as Python 3's: `__builtin__` is `builtins`, `copy_reg` is `copyreg`.
std::string global_name(std::string_view module, std::string_view name);

/// Whether the reader rebuilds the global `name` (`module.name`) as data, or names what it
/// stands for as data (a storage type, a dtype, a TorchScript class, the pickle machinery
/// that names an object's class): tensors, parameters, OrderedDict, TorchScript's typed
/// containers, numpy scalars. Any other global (posix.system, builtins.eval, a class of yours)
/// is an opaque value, never called, and named in a refusal of the pickle that imports it.
bool rebuilt_global(std::string_view name);

/// The globals outside rebuilt_global that a pickle imports, in the order met: what a refusal
/// of the pickle names first, so that a problem found later in the stream (a bad STOP, a
/// truncation, an opcode no reader knows, a value the reader cannot describe) never hides what
/// loading it would have called.
class ForeignGlobals {
 public:
  /// A global met in the stream: counted where rebuilt_global does not know it.
  void meet(const std::string& name);
  bool empty() const { return count_ == 0; }
  /// `problem` after the first foreign global and the count of the others ("imports
  /// posix.system, a global this reader does not rebuild (nothing is called), and then: bad
  /// STOP"), or `problem` as it is where there is none.
  std::string before(const std::string& problem) const;

 private:
  std::string first_;
  std::size_t count_ = 0;
};

/// Every value a pickle built, and the one its STOP left on the stack.
struct PickleDocument {
  /// The values, made in blocks of kBlockValues that never move (values point at each other).
  /// Immutable scalars are made once and shared, as Python shares them: None, True, False, the
  /// empty tuple and the ints 0..255 of BININT1.
  static constexpr std::size_t kBlockValues = 1024;
  std::vector<std::unique_ptr<PickleValue[]>> blocks;
  std::size_t used_in_last_block = kBlockValues;
  PickleRef root = nullptr;
  /// the bytes the pickle took, its STOP included (the next pickle of a file starts there)
  std::size_t end = 0;
  /// the globals it imports that the reader does not rebuild (kept as opaque values): a
  /// refusal of what it holds names them
  ForeignGlobals foreign;
};

/// The value of the string key `key` in `dict`, or null (also when `dict` is no dict).
PickleRef dict_value(PickleRef dict, std::string_view key);

/// A tensor that a pickle names by a persistent id of its own writer's choosing, described
/// outside the pickle: torch.save's tar format (PyTorch 0.1-0.3) pickles each tensor as the
/// string of its key, and lists the tensors in its `tensors` member (torch_save_tar.h).
struct PersistentTensor {
  std::string storage_type;  ///< its storage's type, "torch.FloatStorage"
  std::string storage_key;
  std::string location;  ///< "cpu", "cuda:0"
  std::int64_t storage_numel = 0;
  std::int64_t offset = 0;  ///< in elements of the storage
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

/// Persistent ids (strings) and the tensors they stand for.
using PersistentTensors = std::unordered_map<std::string, PersistentTensor>;

/// Runs the pickle. Its UnsupportedPickle (and TruncatedPickle) name the first global it
/// imported that the reader does not rebuild, before the problem (ForeignGlobals). A BINPERSID
/// of a string that `persistent` holds is that tensor, made as torch._utils._rebuild_tensor_v2
/// of its storage would be (and refused as it would be when the storage cannot hold it).
PickleDocument read_pickle(std::string_view pickle, const PersistentTensors* persistent = nullptr);

}  // namespace vin::diagnostics
