#include "vin/diagnostics/torch/inspect_model.h"

#include <unordered_set>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {
namespace {

std::string type_name_of(const torch::jit::Module& module) {
  const auto& name = module.type()->name();
  return name ? python_type_name(name->qualifiedName()) : "<unnamed>";
}

// Walks the module tree once, in named_modules order, and accumulates the records.
class ModelWalker {
 public:
  ModelMetadata run(const torch::jit::Module& root) {
    visit(root, "");
    return ModelMetadata(type_name_of(root), total_, trainable_, std::move(modules_));
  }

 private:
  void visit(const torch::jit::Module& module, const std::string& path) {
    // named_modules() skips an object it has already listed, with everything under it
    if (!seen_modules_.insert(module._ivalue().get()).second) return;

    const c10::ClassTypePtr& type = module.type();
    const c10::intrusive_ptr<c10::ivalue::Object>& object = module._ivalue();
    std::int64_t direct = 0, direct_trainable = 0, buffers = 0;
    for (size_t slot = 0; slot < type->numAttributes(); ++slot) {
      const bool is_parameter = type->is_parameter(slot);
      const bool is_buffer = type->is_buffer(slot);
      if (!is_parameter && !is_buffer) continue;
      const c10::IValue& value = object->getSlot(slot);
      if (!value.isTensor()) continue;  // a slot registered as None
      const at::Tensor& tensor = value.toTensor();
      if (!tensor.defined()) continue;
      const std::int64_t n = tensor.numel();
      if (is_buffer) {
        add(buffers, n);
        continue;
      }
      add(direct, n);
      if (tensor.requires_grad()) add(direct_trainable, n);
      // totals count a tensor once however many slots hold it (tied weights, copies of a
      // shared submodule that scripting turned into separate objects)
      if (seen_parameters_.insert(tensor.unsafeGetTensorImpl()).second) {
        add(total_, n);
        if (tensor.requires_grad()) add(trainable_, n);
      }
    }
    modules_.emplace_back(path.empty() ? kRootPath : path, type_name_of(module), direct,
                          direct_trainable, buffers, training_flag(module));

    for (const auto& child : module.named_children())
      visit(child.value, path.empty() ? child.name : path + "." + child.name);
  }

  // element counts past 64 bits cannot be reported; no real model comes near
  static void add(std::int64_t& sum, std::int64_t n) {
    if (__builtin_add_overflow(sum, n, &sum)) throw Error(kCountOverflowMessage);
  }

  static bool training_flag(const torch::jit::Module& module) {
    return module.hasattr("training") && module.attr("training").isBool() &&
           module.attr("training").toBool();
  }

  std::vector<ModuleMetadata> modules_;
  std::unordered_set<const c10::ivalue::Object*> seen_modules_;
  std::unordered_set<const c10::TensorImpl*> seen_parameters_;
  std::int64_t total_ = 0;
  std::int64_t trainable_ = 0;
};

}  // namespace

ModelMetadata inspect_model(const torch::jit::Module& model) { return ModelWalker().run(model); }

ModelMetadata describe_with_libtorch(const std::string& path) {
  const torch::jit::Module model = load_torchscript_archive(path, "cpu");
  try {
    return inspect_model(model);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace vin::diagnostics
