#include "vin/diagnostics/torch/inspect_model.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_set>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/records/detail_budget.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/torch/dtype_names.h"
#include "vin/diagnostics/torch/model_loader.h"
#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/formats/model_file.h"

namespace vin::diagnostics {
namespace {

constexpr int kMaxValueDepth = 32;  // deeper containers are described by their type

bool is_module(const c10::IValue& value) {
  return value.isObject() && value.toObjectRef().type()->is_module();
}

// A value as docs/records.md writes attributes and defaults: JSON scalars and arrays of them,
// anything else as a type marker (the archive reader's attribute_value, for IValues).
// nothing once the value passes `room` (a value LibTorch holds once may be named by every
// module: it is built no further than the budget's room)
std::optional<Json> record_value(const c10::IValue& value, int depth, PrintRoom& room) {
  const auto marker = [&](const std::string& type) -> std::optional<Json> {
    Json m = type_marker(type);
    if (!room.spend(printed_size(m, room.left))) return std::nullopt;
    return m;
  };
  if (value.isNone() || value.isBool() || value.isInt() || value.isDouble()) {
    if (!room.spend(8)) return std::nullopt;
    if (value.isNone()) return Json(nullptr);
    if (value.isBool()) return Json(value.toBool());
    if (value.isInt()) return Json(value.toInt());
    return json_float(value.toDouble());
  }
  if (value.isString()) {
    if (!room.spend(value.toStringRef().size() + 2)) return std::nullopt;
    return Json(value.toStringRef());
  }
  if (value.isTuple() || value.isList()) {
    const char* type = value.isTuple() ? "builtins.tuple" : "builtins.list";
    if (depth >= kMaxValueDepth) return marker(type);
    const auto items = value.isTuple() ? value.toTupleRef().elements() : value.toListRef();
    if (!room.spend(2 + items.size())) return std::nullopt;
    Json out = Json::array();
    for (const c10::IValue& item : items) {
      std::optional<Json> converted = record_value(item, depth + 1, room);
      if (!converted) return std::nullopt;
      if (converted->is_object()) return marker(type);
      out.push_back(std::move(*converted));
    }
    return out;
  }
  if (value.isGenericDict()) return marker("builtins.dict");
  if (value.isTensor()) return marker("torch.Tensor");
  if (value.isDevice()) return marker("torch.device");
  if (value.isObject()) {
    const auto& name = value.toObjectRef().type()->name();
    return marker(name ? python_type_name(name->qualifiedName()) : "builtins.object");
  }
  return marker(python_type_name(value.type()->str()));
}

Json record_value(const c10::IValue& value) {
  PrintRoom room{std::numeric_limits<std::uint64_t>::max()};
  return *record_value(value, 0, room);
}

// record_value within `budget`; a list or tuple LibTorch holds once (one pointer, however many
// modules name it) is built no more once it did not fit
Json admitted_value(const c10::IValue& value, DetailBudget& budget) {
  const void* source =
      value.isPtrType() ? static_cast<const void*>(value.internalToPointer()) : nullptr;
  const auto build = [&](std::uint64_t limit, bool& fits) {
    PrintRoom room{limit};
    std::optional<Json> built = record_value(value, 0, room);
    fits = built.has_value();
    // past the room (a string or a container): the marker DetailBudget::admit gives, a tuple
    // printed as a list
    return fits ? std::move(*built)
                : type_marker(value.isString() ? "builtins.str" : "builtins.list");
  };
  if (!source) return budget.admit(record_value(value));  // a scalar: small
  return budget.admit_shared(source, build);
}

// The CRC-32 of the tensor's whole storage: what the archive's zip directory records for the
// storage's record, since the record holds exactly those bytes.
std::optional<std::string> storage_crc32(const at::Tensor& tensor) {
  const c10::Storage& storage = tensor.storage();
  if (!storage.device().is_cpu()) return std::nullopt;  // loaded on the CPU: never
  return crc32_text(crc32_update(0, storage.data_ptr().get(), storage.nbytes()));
}

// The CRC-32 of the tensor's elements in row-major order (TensorMetadata's data_crc32): its
// contiguous copy's bytes (a quantized tensor's integers), on the CPU where they are read.
std::string data_crc32(const at::Tensor& tensor) {
  const at::Tensor values = (tensor.is_quantized() ? tensor.int_repr() : tensor).contiguous().cpu();
  const auto nbytes = static_cast<std::size_t>(values.numel()) * values.element_size();
  return crc32_text(crc32_update(0, values.data_ptr(), nbytes));
}

TensorMetadata tensor_metadata(const std::string& name, const char* kind, const at::Tensor& t) {
  TensorMetadata out;
  out.name = name;
  out.kind = kind;
  out.shape.assign(t.sizes().begin(), t.sizes().end());
  out.dtype = python_dtype_name(t.scalar_type());
  out.device = t.device().str();
  out.requires_grad = t.requires_grad();
  out.numel = t.numel();
  out.nbytes = out.numel * static_cast<std::int64_t>(t.element_size());
  out.storage_crc32 = storage_crc32(t);
  out.data_crc32 = data_crc32(t);
  return out;
}

MethodSignature method_signature(const torch::jit::Function& method) {
  const c10::FunctionSchema& schema = method.getSchema();
  MethodSignature out;
  out.name = method.name();
  const auto& arguments = schema.arguments();
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& a = arguments[i];
    if (i == 0 && a.name() == "self") continue;
    ArgumentSignature argument;
    argument.name = a.name();
    argument.type = a.type()->annotation_str();
    if (a.default_value()) {
      argument.has_default = true;
      argument.default_value = record_value(*a.default_value());
    }
    out.arguments.push_back(std::move(argument));
  }
  out.returns =
      schema.returns().empty() ? "NoneType" : schema.returns()[0].type()->annotation_str();
  return out;
}

// Walks the module tree once, in named_modules order, and accumulates the records.
class ModelWalker {
 public:
  ModelWalker(const InspectDetails& details, std::uint64_t bytes_read)
      : details_(details), budget_(bytes_read) {}

  ModelMetadata run(const torch::jit::Module& root) {
    visit(root, "");
    ModelDetails model_details;
    if (details_.tensors) counts_.put_bytes(model_details);
    if (details_.signature) model_details.methods = signatures(root);
    model_details.stopped_by = budget_.stopped_by();
    return ModelMetadata(module_type_name(root), counts_.total(), counts_.trainable(),
                         std::move(modules_), std::move(model_details));
  }

 private:
  void visit(const torch::jit::Module& module, const std::string& path) {
    // named_modules() skips an object it has already listed, with everything under it
    if (!seen_modules_.insert(module._ivalue().get()).second) return;

    const c10::ClassTypePtr& type = module.type();
    const c10::intrusive_ptr<c10::ivalue::Object>& object = module._ivalue();
    DirectCounts direct;
    std::vector<TensorMetadata> parameter_list, buffer_list;
    JsonObjectBuilder attributes;  // linear in the attributes, however many
    for (size_t slot = 0; slot < type->numAttributes(); ++slot) {
      const bool is_parameter = type->is_parameter(slot);
      const bool is_buffer = type->is_buffer(slot);
      const c10::IValue& value = object->getSlot(slot);
      if (!is_parameter && !is_buffer) {
        const std::string& name = type->getAttributeName(slot);
        if (details_.attributes && !is_bookkeeping_name(name) && name != "training" &&
            !is_module(value) && !value.isTensor())
          attributes.set(name, admitted_value(value, budget_));
        continue;
      }
      if (!value.isTensor()) continue;  // a slot registered as None
      const at::Tensor& tensor = value.toTensor();
      if (!tensor.defined()) continue;
      const std::int64_t n = tensor.numel();
      const c10::TensorImpl* identity = tensor.unsafeGetTensorImpl();
      std::int64_t nbytes = 0;
      if (details_.tensors) {
        TensorMetadata t = tensor_metadata(type->getAttributeName(slot),
                                           is_buffer ? "buffer" : "parameter", tensor);
        nbytes = t.nbytes;
        if (budget_.admit(t)) (is_buffer ? buffer_list : parameter_list).push_back(std::move(t));
      }
      if (is_buffer)
        counts_.buffer(direct, identity, n, nbytes);
      else
        counts_.parameter(direct, identity, n, tensor.requires_grad(), nbytes);
    }
    ModuleDetails module_details;
    if (details_.tensors) {
      parameter_list.insert(parameter_list.end(), std::make_move_iterator(buffer_list.begin()),
                            std::make_move_iterator(buffer_list.end()));
      module_details.tensors = std::move(parameter_list);
    }
    if (details_.attributes) {
      for (size_t i = 0; i < type->numConstants(); ++i)
        if (!is_bookkeeping_name(type->getConstantName(i)))
          attributes.set(type->getConstantName(i),
                         admitted_value(type->getConstant(i), budget_));
      module_details.attributes = attributes.take();
    }
    modules_.emplace_back(path.empty() ? kRootPath : path, module_type_name(module),
                          direct.parameters, direct.trainable, direct.buffers,
                          training_flag(module), std::move(module_details));

    for (const auto& child : module.named_children()) {
      if (std::string why = unfit_submodule_name(path, child.name); !why.empty()) throw Error(why);
      visit(child.value, path.empty() ? child.name : path + "." + child.name);
    }
  }

  // forward first, then the other public methods in the order the class defines them
  static std::vector<MethodSignature> signatures(const torch::jit::Module& root) {
    std::vector<MethodSignature> out;
    if (const auto forward = root.find_method("forward"))
      out.push_back(method_signature(forward->function()));
    for (const torch::jit::Function* method : root.type()->methods())
      if (method->name() != "forward" && !is_bookkeeping_name(method->name()))
        out.push_back(method_signature(*method));
    return out;
  }

  static bool training_flag(const torch::jit::Module& module) {
    return module.hasattr("training") && module.attr("training").isBool() &&
           module.attr("training").toBool();
  }

  const InspectDetails details_;
  std::vector<ModuleMetadata> modules_;
  std::unordered_set<const c10::ivalue::Object*> seen_modules_;
  ModelCounts<const c10::TensorImpl*> counts_;
  DetailBudget budget_;  // the attribute values and tensors printed, bounded by what was read
};

}  // namespace

std::string module_type_name(const torch::jit::Module& module) {
  const auto& name = module.type()->name();
  return name ? python_type_name(name->qualifiedName()) : "<unnamed>";
}

ModelMetadata inspect_model(const torch::jit::Module& model, const InspectDetails& details,
                            std::uint64_t bytes_read) {
  return ModelWalker(details, bytes_read).run(model);
}

ModelMetadata describe_with_libtorch(const ArchiveLayout& archive, const InspectDetails& details) {
  const torch::jit::Module model = load_torchscript_archive(archive, "cpu");
  // what LibTorch read beside the tensors' storages: data.pkl, constants.pkl, code/, ...
  std::uint64_t bytes_read = 0;
  const std::string storages = archive.record_prefix + "data/";
  for (const auto& entry : archive.zip->entries())
    if (entry.name.compare(0, storages.size(), storages) != 0) bytes_read += entry.size;
  try {
    return inspect_model(model, details, bytes_read);
  } catch (const Error& e) {
    throw Error(archive.path() + ": " + e.what());
  }
}

ModelMetadata describe_with_libtorch(const std::string& path, const InspectDetails& details) {
  return describe_with_libtorch(open_torchscript_archive(path), details);
}

}  // namespace vin::diagnostics
