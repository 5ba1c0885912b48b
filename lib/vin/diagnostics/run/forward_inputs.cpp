#include "vin/diagnostics/run/forward_inputs.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <sstream>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/torch/dtype_names.h"
#include "vin/diagnostics/torch/model_loader.h"
#include "vin/diagnostics/container/sha256.h"
#include "vin/diagnostics/torch/torch_save_reader.h"

namespace vin::diagnostics {
namespace {

// The largest data.pkl of a torch.save inputs file: forward's arguments, with their tensors'
// bytes beside it in the file
constexpr std::uint64_t kMaxInputsPickleBytes = std::uint64_t{1} << 30;

using Kwargs = std::vector<std::pair<std::string, c10::IValue>>;

// The message for a --shape tensor the allocator refused: the option, the argument and the bytes.
std::string shape_allocation_failure(const ShapeSpec& spec) {
  std::string dims;
  std::uint64_t bytes = static_cast<std::uint64_t>(dtype_named(spec.dtype)->element_size);
  for (const std::int64_t d : spec.shape) {
    dims += (dims.empty() ? "" : "x") + std::to_string(d);
    bytes *= static_cast<std::uint64_t>(d);  // within kMaxShapeBytes: checked when parsed
  }
  return "--shape " + spec.name + "=" + dims + ":" + spec.dtype + ": cannot allocate the " +
         std::to_string(bytes) + " bytes of the tensor (out of memory)";
}

// --- .npy / .npz ----------------------------------------------------------------------------

// the array's dtype, as the npy reader accepts only those with a LibTorch type
c10::ScalarType torch_type(const NpyArray& a) {
  const auto type = a.dtype ? scalar_type_of(*a.dtype) : std::nullopt;
  if (!type) throw Error("a numpy " + a.dtype_name() + " array has no LibTorch type");
  return *type;
}

at::Tensor to_tensor(NpyArray&& array) {
  const auto options = at::TensorOptions().dtype(torch_type(array));
  std::vector<std::int64_t> shape = array.shape;
  if (array.numel() == 0) return at::empty(shape, options);
  // column-major data is the row-major data of the transposed shape
  if (array.fortran_order) std::reverse(shape.begin(), shape.end());
  auto bytes = std::make_shared<std::vector<unsigned char>>(std::move(array.data));
  at::Tensor t = at::from_blob(
      bytes->data(), shape, [bytes](void*) mutable { bytes.reset(); }, options);
  if (array.fortran_order) {
    std::vector<std::int64_t> reversed(shape.size());
    for (std::size_t i = 0; i < shape.size(); ++i)
      reversed[i] = static_cast<std::int64_t>(shape.size() - 1 - i);
    t = t.permute(reversed).contiguous();
  }
  return t;
}

// arr_N -> N, or -1 for any other name
long positional_index(const std::string& name) {
  if (name.rfind("arr_", 0) != 0 || name.size() == 4 || name.size() > 12) return -1;
  long n = 0;
  for (std::size_t i = 4; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

// arr_0 .. arr_N must all be there
void check_positional_gaps(const std::vector<bool>& present, const std::string& path) {
  for (std::size_t i = 0; i < present.size(); ++i)
    if (!present[i])
      throw Error(path + ": has arr_" + std::to_string(present.size() - 1) + " but no arr_" +
                  std::to_string(i) + " (positional arguments must be arr_0, arr_1, ...)");
}

ForwardInputs read_npz(const ZipArchive& zip) {
  const std::string& path = zip.path();
  std::vector<NpyArray> arrays = read_npz_file(zip);
  std::vector<std::optional<c10::IValue>> positional;
  ForwardInputs raw;
  for (auto& array : arrays) {
    const long index = positional_index(array.name);
    const std::string name = array.name;
    if (index < 0) {
      raw.kwargs.emplace_back(name, to_tensor(std::move(array)));
      continue;
    }
    if (static_cast<std::size_t>(index) >= positional.size())
      positional.resize(static_cast<std::size_t>(index) + 1);
    positional[static_cast<std::size_t>(index)] = to_tensor(std::move(array));
  }
  std::vector<bool> present;
  for (const auto& p : positional) present.push_back(p.has_value());
  check_positional_gaps(present, path);
  for (const auto& p : positional) raw.args.push_back(*p);
  return raw;
}

// --- torch.save -----------------------------------------------------------------------------

ForwardInputs read_torch_save(const c10::IValue& value, const std::string& path) {
  // a torch.save file's value, read by read_torch_save_value (never by LibTorch's unpickler)
  ForwardInputs raw;
  if (value.isTensor()) {
    raw.args.push_back(value);
  } else if (value.isTuple()) {
    raw.args = value.toTupleRef().elements().vec();
  } else if (value.isList()) {
    raw.args = value.toListRef().vec();
  } else if (value.isGenericDict()) {
    const auto dict = value.toGenericDict();
    Kwargs named;
    for (const auto& entry : dict) {
      if (!entry.key().isString())
        throw Error(path + ": a dict of inputs needs string keys (argument names)");
      named.emplace_back(entry.key().toStringRef(), entry.value());
    }
    const bool split = named.size() == 2 && dict.contains("args") && dict.contains("kwargs");
    if (!split) {
      raw.kwargs = std::move(named);
    } else {
      const c10::IValue args = dict.at("args");
      const c10::IValue kwargs = dict.at("kwargs");
      if (args.isTuple())
        raw.args = args.toTupleRef().elements().vec();
      else if (args.isList())
        raw.args = args.toListRef().vec();
      else
        throw Error(path + ": 'args' must be a tuple or a list");
      if (!kwargs.isGenericDict()) throw Error(path + ": 'kwargs' must be a dict");
      for (const auto& entry : kwargs.toGenericDict()) {
        if (!entry.key().isString()) throw Error(path + ": 'kwargs' needs string keys");
        raw.kwargs.emplace_back(entry.key().toStringRef(), entry.value());
      }
    }
  } else {
    throw Error(
        path + ": holds a " + value.tagKind() +
        "; expected a tensor, a tuple or list of arguments, or a dict of keyword arguments");
  }
  return raw;
}

// --- binding to forward's schema -------------------------------------------------------------

std::string default_text(const c10::IValue& v) {
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return python_float_text(v.toDouble());
  if (v.isString()) return "'" + v.toStringRef() + "'";
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string describe_value(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    std::ostringstream out;
    out << "a tensor of shape " << t.sizes() << " (" << t.scalar_type() << ")";
    return out.str();
  }
  return "a value of type " + v.type()->annotation_str();
}

// Converts `value` to `type` where the file format cannot say it directly: a 0-d tensor where a
// number is declared, containers whose element types the unpickler left open. Returns nothing
// when it does not fit.
std::optional<c10::IValue> coerce(const c10::IValue& value, const c10::TypePtr& type) {
  if (const auto optional = type->cast<c10::OptionalType>()) {
    if (value.isNone()) return value;
    return coerce(value, optional->getElementType());
  }
  if (value.isTensor() && value.toTensor().dim() == 0 && !value.toTensor().is_complex()) {
    const at::Tensor& t = value.toTensor();
    const bool integral = at::isIntegralType(t.scalar_type(), /*includeBool=*/false);
    switch (type->kind()) {
      case c10::TypeKind::IntType:
        if (integral) return c10::IValue(t.item<std::int64_t>());
        return std::nullopt;
      case c10::TypeKind::FloatType:
        if (t.scalar_type() != at::kBool) return c10::IValue(t.item<double>());
        return std::nullopt;
      case c10::TypeKind::BoolType:
        if (t.scalar_type() == at::kBool) return c10::IValue(t.item<bool>());
        return std::nullopt;
      case c10::TypeKind::NumberType:
        if (t.scalar_type() == at::kBool) return std::nullopt;
        return integral ? c10::IValue(t.item<std::int64_t>()) : c10::IValue(t.item<double>());
      default:
        break;
    }
  }
  if (const auto list_type = type->cast<c10::ListType>()) {
    if (!value.isList() && !value.isTuple()) return std::nullopt;
    const auto items =
        value.isList() ? value.toListRef().vec() : value.toTupleRef().elements().vec();
    c10::impl::GenericList list(list_type->getElementType());
    for (const auto& item : items) {
      auto converted = coerce(item, list_type->getElementType());
      if (!converted) return std::nullopt;
      list.push_back(*converted);
    }
    return c10::IValue(list);
  }
  if (const auto tuple_type = type->cast<c10::TupleType>()) {
    if (!value.isTuple() && !value.isList()) return std::nullopt;
    const auto items =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    if (items.size() != tuple_type->elements().size()) return std::nullopt;
    std::vector<c10::IValue> converted;
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto c = coerce(items[i], tuple_type->elements()[i]);
      if (!c) return std::nullopt;
      converted.push_back(*c);
    }
    return c10::IValue(c10::ivalue::Tuple::create(std::move(converted)));
  }
  if (const auto dict_type = type->cast<c10::DictType>()) {
    if (!value.isGenericDict()) return std::nullopt;
    c10::impl::GenericDict dict(dict_type->getKeyType(), dict_type->getValueType());
    for (const auto& entry : value.toGenericDict()) {
      auto key = coerce(entry.key(), dict_type->getKeyType());
      auto item = coerce(entry.value(), dict_type->getValueType());
      if (!key || !item) return std::nullopt;
      dict.insert(*key, *item);
    }
    return c10::IValue(dict);
  }
  if (type->kind() == c10::TypeKind::FloatType && value.isInt())
    return c10::IValue(static_cast<double>(value.toInt()));
  if (value.type()->isSubtypeOf(*type)) return value;
  return std::nullopt;
}

c10::IValue to_device(const c10::IValue& value, const c10::Device& device) {
  if (value.isTensor()) return value.toTensor().to(device);
  if (value.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& item : value.toTupleRef().elements()) items.push_back(to_device(item, device));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (value.isList()) {
    c10::impl::GenericList list(value.toList().elementType());
    for (const auto& item : value.toListRef()) list.push_back(to_device(item, device));
    return list;
  }
  if (value.isGenericDict()) {
    const auto source = value.toGenericDict();
    c10::impl::GenericDict dict(source.keyType(), source.valueType());
    for (const auto& entry : source) dict.insert(entry.key(), to_device(entry.value(), device));
    return dict;
  }
  return value;
}

// A model without forward has a schema without methods: whatever binds to it or asks for its
// methods is told so (binding: after the inputs file's own errors, which come first).
const ForwardSchema& with_forward(const ForwardSchema& schema) {
  if (schema.methods.empty()) throw Error("the model has no forward method");
  return schema;
}

// Runs `bind` for each of forward's methods (one, or its overloads) and returns the first that
// fits; when none does, throws the first one's error (whose message lists them all).
template <class Bind>
auto first_that_fits(const ForwardSchema& schema, Bind&& bind) {
  std::optional<Error> first_error;
  for (const ForwardSchema::Method& method : with_forward(schema).methods) {
    try {
      return bind(method);
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      if (!first_error) first_error = e;
    }
  }
  throw *first_error;
}

[[noreturn]] void does_not_fit(const std::string& path, const ForwardSchema& schema,
                               const std::string& problem) {
  throw Error(path + ": " + problem + "; the model takes " + schema.description);
}

// Whether `positional` arguments and the keyword arguments `names` can fit forward's schema (how
// many, which names), before any value is looked at. Returns each keyword's parameter index.
std::vector<std::size_t> check_arity(std::size_t positional, const std::vector<std::string>& names,
                                     const std::vector<c10::Argument>& params,
                                     const ForwardSchema& schema, const std::string& path) {
  if (positional > params.size())
    does_not_fit(path, schema,
                 std::to_string(positional) + " positional arguments given, " +
                     std::to_string(params.size()) + " accepted");
  std::vector<std::size_t> indices;
  for (const auto& name : names) {
    std::size_t index = params.size();
    for (std::size_t i = 0; i < params.size(); ++i)
      if (params[i].name() == name) index = i;
    if (index == params.size())
      does_not_fit(path, schema, "forward has no argument '" + printable(name, 100) + "'");
    if (index < positional)
      does_not_fit(path, schema,
                   "argument '" + name + "' is given twice (positionally and by name)");
    indices.push_back(index);
  }
  return indices;
}

ForwardInputs bind_to_schema(const ForwardInputs& raw, const ForwardSchema& schema,
                             const std::string& path, const ForwardSchema::Method& method) {
  const std::vector<c10::Argument>& params = method.parameters;
  std::vector<std::string> names;
  for (const auto& kw : raw.kwargs) names.push_back(kw.first);
  const std::vector<std::size_t> keyword_index =
      check_arity(raw.args.size(), names, params, schema, path);
  ForwardInputs bound;
  bound.method = method.name;
  std::vector<bool> given(params.size(), false);
  for (std::size_t i = 0; i < raw.args.size(); ++i) {
    auto value = coerce(raw.args[i], params[i].type());
    if (!value)
      does_not_fit(path, schema,
                   "argument " + std::to_string(i) + " ('" + params[i].name() + "') must be " +
                       params[i].type()->annotation_str() + ", got " + describe_value(raw.args[i]));
    bound.args.push_back(*value);
    given[i] = true;
  }
  std::vector<std::optional<c10::IValue>> keyword(params.size());
  for (std::size_t k = 0; k < raw.kwargs.size(); ++k) {
    const auto& [name, raw_value] = raw.kwargs[k];
    const std::size_t index = keyword_index[k];
    if (given[index]) does_not_fit(path, schema, "argument '" + name + "' is given twice");
    auto value = coerce(raw_value, params[index].type());
    if (!value)
      does_not_fit(path, schema,
                   "argument '" + name + "' must be " + params[index].type()->annotation_str() +
                       ", got " + describe_value(raw_value));
    keyword[index] = *value;
    given[index] = true;
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!given[i] && !params[i].default_value())
      does_not_fit(path, schema, "argument '" + params[i].name() + "' is missing");
    if (keyword[i]) bound.kwargs.emplace_back(params[i].name(), *keyword[i]);  // schema order
  }
  return bound;
}

// An .npz file's member names against forward's schema, before any member is inflated: arr_N
// are positional, other names keywords (a file that cannot fit costs nothing to refuse).
void check_npz_names(const ZipArchive& zip, const ForwardSchema& schema) {
  const std::string& path = zip.path();
  std::vector<bool> positional;  // which arr_N are present
  std::vector<std::string> names;
  std::size_t member = 0;
  for (const std::string& name : npz_array_names(zip)) {  // two members of one name refused
    const std::string& entry = zip.entries()[member++].name;
    if (entry.size() < 4 || entry.compare(entry.size() - 4, 4, ".npy") != 0) continue;
    const long index = positional_index(name);
    if (index < 0) {
      names.push_back(name);
      continue;
    }
    if (static_cast<std::size_t>(index) >= positional.size())
      positional.resize(static_cast<std::size_t>(index) + 1);
    positional[static_cast<std::size_t>(index)] = true;
  }
  check_positional_gaps(positional, path);
  first_that_fits(schema, [&](const ForwardSchema::Method& method) {
    return check_arity(positional.size(), names, method.parameters, schema, path);
  });
}

}  // namespace

at::Tensor npy_to_tensor(NpyArray&& array) { return to_tensor(std::move(array)); }

ForwardSchema forward_schema(const torch::jit::Module& model) {
  std::vector<std::string> names;
  if (model.find_method("forward")) {
    names.push_back("forward");
  } else {
    // TorchScript compiles an overloaded forward (nn.LSTM's, nn.GRU's) as forward__0, forward__1
    for (std::size_t n = 0; model.find_method("forward__" + std::to_string(n)); ++n)
      names.push_back("forward__" + std::to_string(n));
  }
  ForwardSchema schema;
  for (const std::string& name : names) {
    // the method's arguments without `self`
    const auto& all = model.get_method(name).function().getSchema().arguments();
    ForwardSchema::Method method{
        name, std::vector<c10::Argument>(all.begin() + (all.empty() ? 0 : 1), all.end())};
    schema.description += (schema.description.empty() ? "" : " or ") + name + "(";
    bool first = true;
    for (const c10::Argument& a : method.parameters) {
      schema.description += (first ? "" : ", ") + a.name() + ": " + a.type()->annotation_str();
      if (a.default_value()) schema.description += " = " + default_text(*a.default_value());
      first = false;
    }
    schema.description += ")";
    schema.methods.push_back(std::move(method));
  }
  return schema;
}

std::vector<std::string> forward_methods(const torch::jit::Module& model) {
  const ForwardSchema schema = forward_schema(model);
  std::vector<std::string> names;
  for (const ForwardSchema::Method& method : with_forward(schema).methods)
    names.push_back(method.name);
  return names;
}

std::string describe_forward(const torch::jit::Module& model) {
  return with_forward(forward_schema(model)).description;
}

namespace {

c10::ScalarType shape_dtype(const std::string& name) {
  const Dtype* dtype = dtype_named(name);
  if (!dtype || !dtype->shape_dtype) throw UsageError("--shape: unknown dtype " + name);
  return *scalar_type_of(*dtype);
}

}  // namespace

ForwardInputs make_shaped_inputs(const ShapedInputs& shaped, at::Generator& generator,
                                 const ForwardSchema& schema, const c10::Device& device) {
  if (shaped.int_high < 1) throw UsageError("--int-high must be a positive integer");
  const std::string source = "--shape";
  ForwardInputs bound;
  try {
    bound = first_that_fits(schema, [&](const ForwardSchema::Method& method) {
      const std::vector<c10::Argument>& params = method.parameters;
      const auto index_of = [&](const ShapeSpec& spec) {
        for (std::size_t i = 0; i < params.size(); ++i)
          if (params[i].name() == spec.name) return i;
        return params.size();  // bind_to_schema names it
      };
      std::vector<const ShapeSpec*> order;
      for (const ShapeSpec& spec : shaped.shapes) order.push_back(&spec);
      std::stable_sort(order.begin(), order.end(), [&](const ShapeSpec* a, const ShapeSpec* b) {
        return index_of(*a) < index_of(*b);
      });
      ForwardInputs raw;
      for (const ShapeSpec* spec : order) {
        const c10::ScalarType dtype = shape_dtype(spec->dtype);
        const auto options = at::TensorOptions().dtype(dtype);
        // bool: torch.randint(0, 2), the only range a bool holds
        const std::int64_t high = dtype == at::kBool ? 2 : shaped.int_high;
        at::Tensor t;
        try {
          // the meta device holds shapes and no values: nothing to draw (and a shape of any size
          // takes no memory there)
          if (device.is_meta())
            t = at::empty(spec->shape, options.device(device));
          else
            t = at::isFloatingType(dtype) ? at::randn(spec->shape, generator, options)
                                          : at::randint(0, high, spec->shape, generator, options);
        } catch (const std::bad_alloc&) {
          throw Error(shape_allocation_failure(*spec));
        } catch (const c10::Error&) {  // LibTorch's allocator reports running out this way
          throw Error(shape_allocation_failure(*spec));
        }
        raw.kwargs.emplace_back(spec->name, std::move(t));
      }
      return bind_to_schema(raw, schema, source, method);
    });
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());  // the specs are the command line's
  }
  for (auto& [name, value] : bound.kwargs) value = to_device(value, device);
  return bound;
}

ForwardInputs make_shaped_inputs(const ShapedInputs& shaped, at::Generator& generator,
                                 const torch::jit::Module& model, const c10::Device& device) {
  return make_shaped_inputs(shaped, generator, forward_schema(model), device);
}

ForwardInputs read_forward_inputs(const std::string& path, const ForwardSchema& schema,
                                  const c10::Device& device, bool digest) {
  // opened once: the kind, the zip directory and its checks, then the reader, on one descriptor
  const ClassifiedFile file = open_model_file(path, kInputs, "an inputs file");
  ForwardInputs raw;
  if (is_npy(file)) {
    raw.args.push_back(to_tensor(read_npy_file(*file.file)));
  } else if (const ZipArchive* npz = npz_of(file)) {
    check_npz_names(*npz, schema);  // its names against forward before any member is read
    raw = read_npz(*npz);
  } else {  // torch.save data of any format, read as data
    raw = read_torch_save(read_torch_save_value(*open_torch_save(file, kMaxInputsPickleBytes)),
                          path);
  }
  ForwardInputs bound = first_that_fits(schema, [&](const ForwardSchema::Method& method) {
    return bind_to_schema(raw, schema, path, method);
  });
  for (auto& a : bound.args) a = to_device(a, device);
  for (auto& [name, value] : bound.kwargs) value = to_device(value, device);
  if (digest) bound.sha256 = sha256_of(*file.file);  // the bytes read, a stream's copy too
  return bound;
}

ForwardInputs read_forward_inputs(const std::string& path, const torch::jit::Module& model,
                                  const c10::Device& device, bool digest) {
  return read_forward_inputs(path, forward_schema(model), device, digest);
}

}  // namespace vin::diagnostics
