// The .pt2 reader's weights: parameters, buffers and constants by the graph signature's names,
// the storages they lie in (a PT2 Archive's weights config, or a nested torch.save file).
#include "vin/diagnostics/export/export_reader.h"

#include <algorithm>
#include <map>
#include <memory>

#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/export/export_module_stack.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"

namespace vin::diagnostics::export_detail {

// the parameters, buffers and constants: by the graph signature's names, with the TensorMeta
// of their placeholders; a PT2 Archive's weights config where it has one (2.9 on: the storage
// each lies in, tied names sharing one)
void ExportReader::read_tensors(const Json& graph_module, const Json& graph, const std::string& model,
                  const std::string& entry) {
  const std::string where = entry + ": the graph signature";
  const Json& signature = *field(graph_module, "signature", entry + ": graph_module");
  const Json* specs = optional_field(signature, "input_specs");
  if (!specs || !specs->is_array()) throw Malformed{where + " has no input_specs"};
  struct Spec {
    std::string kind, name, arg;
  };
  std::vector<Spec> found;
  for (const Json& spec : *specs) {
    const auto [variant, v] = union_variant(spec, where + "'s input");
    Spec s;
    if (variant == "parameter")
      s = {"parameter", string_field(*v, "parameter_name", where), ""};
    else if (variant == "buffer")
      s = {"buffer", string_field(*v, "buffer_name", where), ""};
    else if (variant == "tensor_constant")
      s = {"constant", string_field(*v, "tensor_constant_name", where), ""};
    else
      continue;  // user inputs, custom objects, tokens, constant inputs
    const Json& arg = *field(*v, "arg", where + "'s " + variant);
    s.arg = arg.is_string() ? arg.get<std::string>() : string_field(arg, "name", where);
    found.push_back(std::move(s));
  }
  // torch 2.6 names both parameters of a tied pair by the last name (the signature of a
  // shared embedding and output weight says "out.weight" twice): each placeholder's own name
  // says which it is ("p_embed_weight"), among the names that make it
  std::map<std::string, int> seen;
  for (const Spec& s : found) ++seen[s.name];
  for (Spec& s : found) {
    std::string storage = s.name;
    if (seen[s.name] > 1 && s.kind == "parameter") {
      const std::string leaf = leaf_name(s.name);
      const std::string prefix = s.arg.substr(0, s.arg.find('_') + 1);
      std::string own = recover_tied_name(s.arg, prefix, leaf);
      if (!own.empty()) s.name = own;
    }
    if (tensor_named(s.name)) continue;  // the same slot twice
    NamedTensor t;
    t.name = s.name;
    t.kind = s.kind;
    t.storage = storage;
    const std::string meta_where = entry + ": the tensor " + s.arg;
    read_tensor_meta(*graph_tensor_meta(graph, s.arg, entry), meta_where, t);
    add_tensor(std::move(t));
  }
  if (layout_ == ExportLayout::pt2_archive) {
    const bool configs = read_weights_config(
        root_ + "data/weights/" + model + "_weights_config.json", root_ + "data/weights/");
    read_weights_config(root_ + "data/constants/" + model + "_constants_config.json",
                        root_ + "data/constants/");
    if (!configs) {  // torch 2.8: nested torch.save files
      read_nested_state(root_ + "data/weights/" + model + ".pt", "parameter");
      read_nested_state(root_ + "data/constants/" + model + ".pt", "constant");
    }
  } else {
    // 2.3-2.7 name them .pt, 2.1-2.2 .json (torch.save bytes all the same)
    for (const char* name : {"serialized_state_dict.pt", "serialized_state_dict.json"})
      read_nested_state(name, "parameter");
    for (const char* name : {"serialized_constants.pt", "serialized_constants.json"})
      read_nested_state(name, "constant");
  }
}

// the tied parameter whose placeholder is `arg`: a name MODULE.LEAF, MODULE one of the
// modules the program names, whose placeholder is `arg`
std::string ExportReader::recover_tied_name(const std::string& arg, const std::string& prefix,
                              const std::string& leaf) const {
  for (const std::string& module : known_modules_) {
    const std::string name = module.empty() ? leaf : module + "." + leaf;
    if (placeholder_name(prefix, name) == arg) return name;
  }
  // the placeholder alone: p_embed_weight is embed.weight where "embed" holds no '_'
  if (arg.size() > prefix.size() + leaf.size() + 1 &&
      arg.compare(arg.size() - leaf.size() - 1, leaf.size() + 1, "_" + leaf) == 0) {
    std::string module = arg.substr(prefix.size(), arg.size() - prefix.size() - leaf.size() - 1);
    if (module.find('_') == std::string::npos) return module + "." + leaf;
  }
  return "";
}

// data/weights/<model>_weights_config.json (torch 2.9 on): {"config": {name: {path_name,
// is_param, use_pickle, tensor_meta}}}; the raw storage is the member FOLDER + path_name
bool ExportReader::read_weights_config(const std::string& entry, const std::string& folder) {
  const auto index = zip_.find(entry);
  if (!index) return false;  // 2.8: nested torch.save files instead
  const Json config = parse_json_entry(zip_.read(*index, kMaxConfigBytes, entry), entry);
  const Json* entries = optional_field(config, "config");
  if (!entries || !entries->is_object()) throw Malformed{entry + " has no config"};
  for (auto it = entries->begin(); it != entries->end(); ++it) {
    const std::string where = entry + ": " + it.key();
    const std::string path = string_field(*it, "path_name", where);
    if (path.empty() || path.find('/') != std::string::npos || path == "." || path == "..")
      throw Malformed{where + " names the member '" + path + "', outside " + folder};
    const auto member = zip_.find(folder + path);
    if (!member) throw Malformed{where + " names " + folder + path + ", which is missing"};
    NamedTensor* named = tensor_named(it.key());
    if (!named) continue;  // a name the signature does not use
    NamedTensor& t = *named;
    t.storage = folder + path;
    // the config's TensorMeta places the tensor in its storage (views of one storage share a
    // member, each with its offset and sizes)
    if (const Json* meta = optional_field(*it, "tensor_meta"); meta && meta->is_object())
      read_tensor_meta(*meta, where, t);
    const Json* use_pickle = optional_field(*it, "use_pickle");
    if (!(use_pickle && use_pickle->is_boolean() && use_pickle->get<bool>())) {
      t.crc = zip_.entries()[*member].crc;
      // the storage must hold what the tensor's metadata reaches
      const std::uint64_t size = zip_.entries()[*member].size;
      const std::uint64_t need = t.bytes_reached(where);
      if (size < need)
        throw Malformed{where + ": " + folder + path + " holds " + std::to_string(size) +
                        " bytes, fewer than the " + std::to_string(need) + " its tensor reaches"};
      if (details_.tensors) {
        InputFilePtr inflated;
        t.data_crc = elements_crc32(t.saved_form(), member_bytes(zip_, *member, false, inflated));
      }
    }
  }
  return true;
}

// A nested torch.save of {name: tensor} (the state dict, or the constants), read by the one
// torch.save reader (torch_save_file.h): the storage each tensor lies in (tied names share
// one), its record's CRC and, with --tensors, its elements' CRC, and the tensors the
// signature does not list (the parameters of a module no node uses stay in the state dict).
// `unlisted_kind`: what such a tensor is when its pickle does not say (constants file).
void ExportReader::read_nested_state(const std::string& entry, const std::string& unlisted_kind) {
  const auto index = zip_.find(entry);
  if (!index) return;
  ZipArchive::Member member = zip_.open(*index, entry);
  const InputFilePtr file = InputFile::from_pieces(
      zip_.path() + ": " + entry, [&](char* out, std::size_t n) { return member.read(out, n); });
  try {
    const ZipArchive inner(file);
    const TorchSaveZip saved(inner, entry, kMaxStatePickleBytes);
    const PickleValue* root = saved.root();
    if (!root || root->kind != PickleValue::Kind::dict) return;  // no tensors by name
    // each storage's first name and description: a second name must describe it alike
    std::unordered_map<std::string, std::pair<std::string, SavedTensor>> storages;
    for (std::size_t i = 0; i + 1 < root->items.size(); i += 2) {
      const PickleValue* key = root->items[i];
      const PickleValue* value = root->items[i + 1];
      if (key->kind != PickleValue::Kind::string || value->kind != PickleValue::Kind::tensor ||
          !storage_dtype(value->items[0]->text))
        continue;
      const std::string where = "the tensor " + printable(key->text, 200);
      const SavedTensor tensor = saved_tensor(value, entry + ": " + where);
      const StorageBytes bytes = saved.storage(tensor, where);
      const auto [first, added] = storages.try_emplace(tensor.storage_key, key->text, tensor);
      if (!added) same_storage(first->second, {key->text, tensor}, inner, entry);
      if (unlisted_kind != "constant") state_dict_order_.push_back(key->text);
      NamedTensor* t = tensor_named(key->text);
      if (!t) {
        NamedTensor added;
        added.name = key->text;
        added.kind = unlisted_kind == "constant" ? "constant"
                     : tensor.parameter          ? "parameter"
                                                 : "buffer";
        added.dtype = tensor.dtype;
        added.numel = tensor.numel;
        added.requires_grad = tensor.requires_grad;
        added.shape = tensor.shape;
        if (tensor.device) added.device = *tensor.device;
        t = &add_tensor(std::move(added));
      } else if (tensor.parameter) {
        // an nn.Parameter saved as one (_rebuild_parameter) carries its requires_grad; the
        // graph's TensorMeta of its placeholder need not (torch 2.2 wrote false for every
        // parameter, a trained model's too), and the state is what the model holds
        t->requires_grad = tensor.requires_grad;
      }
      t->storage = entry + ":" + tensor.storage_key;
      t->storage_offset = tensor.offset;
      t->strides = tensor.strides;
      t->crc = bytes.crc;
      if (details_.tensors) t->data_crc = elements_crc32(tensor, bytes);
    }
  } catch (const Error& e) {
    throw Malformed{e.what()};
  }
}

// Two names of one storage (a tied weight's) must describe it alike: torch.load keeps the
// first description and reads the second name's tensor through it, so storages whose
// dtypes or sizes differ are not what torch writes (contract 10.4)
void ExportReader::same_storage(const std::pair<std::string, SavedTensor>& first,
                         const std::pair<std::string, SavedTensor>& second,
                         const ZipArchive& inner, const std::string& entry) {
  const SavedTensor& a = first.second;
  const SavedTensor& b = second.second;
  if (a.dtype == b.dtype && a.storage_numel == b.storage_numel) return;
  const auto size = [](const SavedTensor& t) {
    return std::to_string(t.storage_numel) + " " + std::string(t.dtype->name);
  };
  throw Malformed{entry + ": the tensors " + printable(first.first, 200) + " and " +
                  printable(second.first, 200) + " name one storage, " +
                  printable(inner.first_folder() + "data/" + a.storage_key, 200) +
                  ", with different sizes (" + size(a) + " and " + size(b) + " elements)"};
}

// the tensors by name, each name once
NamedTensor* ExportReader::tensor_named(const std::string& name) {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

NamedTensor& ExportReader::add_tensor(NamedTensor t) {
  tensor_index_.emplace(t.name, tensors_.size());
  tensors_.push_back(std::move(t));
  return tensors_.back();
}

}  // namespace vin::diagnostics::export_detail
