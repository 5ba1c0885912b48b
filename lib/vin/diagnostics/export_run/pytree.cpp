#include "vin/diagnostics/export_run/pytree.h"

#include <algorithm>

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/record_value.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics::export_run {
namespace {

constexpr std::size_t kMaxSpecDepth = 256;

TreeSpec node(const Json& json, const std::string& where, std::size_t depth) {
  if (depth > kMaxSpecDepth) throw Error(where + ": a tree spec nested too deep");
  if (!json.is_object()) throw Error(where + ": a tree spec node that is not an object");
  TreeSpec out;
  const auto type = json.find("type");
  if (type == json.end() || type->is_null()) return out;  // a leaf
  if (!type->is_string()) throw Error(where + ": a tree spec type that is not a string");
  const std::string name = type->get<std::string>();
  if (name == "builtins.tuple" || name == "collections.namedtuple" ||
      name.rfind("torch.return_types.", 0) == 0)
    out.kind = TreeSpec::Kind::tuple;
  else if (name == "builtins.list")
    out.kind = TreeSpec::Kind::list;
  else if (name == "builtins.dict" || name == "collections.OrderedDict" ||
           name == "collections.defaultdict")
    out.kind = TreeSpec::Kind::dict;
  else if (name == "builtins.NoneType" || name == "None")
    out.kind = TreeSpec::Kind::none;
  else
    throw Error(where + ": a structure of type " + printable(name, 100) +
                ", which this runner does not rebuild");
  if (out.kind == TreeSpec::Kind::dict) {
    const auto context = json.find("context");
    if (context == json.end() || !context->is_string())
      throw Error(where + ": a dict's tree spec without its keys");
    Json keys;
    try {
      keys = parse_bounded_json(context->get<std::string>(), kMaxSpecDepth);
    } catch (const std::exception&) {
      throw Error(where + ": a dict's keys that are not JSON");
    }
    // defaultdict's context is [default_factory, keys]
    if (name == "collections.defaultdict" && keys.is_array() && keys.size() == 2) keys = keys[1];
    if (!keys.is_array()) throw Error(where + ": a dict's keys that are not a list");
    for (const Json& key : keys) {
      if (key.is_string())
        out.keys.emplace_back(key.get<std::string>());
      else if (key.is_number_integer())
        out.keys.emplace_back(key.get<std::int64_t>());
      else
        throw Error(where + ": a dict key that is neither a string nor an integer");
    }
  }
  const auto children = json.find("children_spec");
  if (children != json.end() && children->is_array())
    for (const Json& child : *children) out.children.push_back(node(child, where, depth + 1));
  if (out.kind == TreeSpec::Kind::dict && out.keys.size() != out.children.size())
    throw Error(where + ": a dict's tree spec with " + std::to_string(out.keys.size()) +
                " keys for " + std::to_string(out.children.size()) + " values");
  return out;
}

std::string key_text(const c10::IValue& key) {
  return key.isString() ? key.toStringRef() : std::to_string(key.toInt());
}

}  // namespace

std::size_t TreeSpec::leaves() const {
  if (kind == Kind::leaf) return 1;
  std::size_t n = 0;
  for (const TreeSpec& child : children) n += child.leaves();
  return n;
}

TreeSpec read_tree_spec(const std::string& text, const std::string& where) {
  Json json;
  try {
    json = parse_bounded_json(text, kMaxSpecDepth);
  } catch (const std::exception&) {
    throw Error(where + ": a tree spec that is not JSON");
  }
  // [protocol, root]
  if (!json.is_array() || json.size() != 2) throw Error(where + ": a tree spec not [1, {...}]");
  return node(json[1], where, 0);
}

void flatten(const c10::IValue& value, const TreeSpec& spec, std::vector<c10::IValue>& out,
             const std::string& where) {
  switch (spec.kind) {
    case TreeSpec::Kind::leaf:
      out.push_back(value);
      return;
    case TreeSpec::Kind::none:
      return;
    case TreeSpec::Kind::tuple:
    case TreeSpec::Kind::list: {
      std::vector<c10::IValue> items;
      if (value.isTuple())
        items = value.toTupleRef().elements().vec();
      else if (value.isList())
        items = value.toListRef().vec();
      else
        throw Error(where + " is not a tuple or list, as the program was exported with");
      if (items.size() != spec.children.size())
        throw Error(where + " holds " + std::to_string(items.size()) + " values where the " +
                    "program was exported with " + std::to_string(spec.children.size()));
      for (std::size_t i = 0; i < items.size(); ++i)
        flatten(items[i], spec.children[i], out, where + "[" + std::to_string(i) + "]");
      return;
    }
    case TreeSpec::Kind::dict: {
      if (!value.isGenericDict())
        throw Error(where + " is not a dict, as the program was exported with");
      const auto dict = value.toGenericDict();
      if (dict.size() != spec.keys.size())
        throw Error(where + " holds " + std::to_string(dict.size()) + " keys where the program " +
                    "was exported with " + std::to_string(spec.keys.size()));
      for (std::size_t i = 0; i < spec.keys.size(); ++i) {
        const auto it = dict.find(spec.keys[i]);
        if (it == dict.end())
          throw Error(where + " has no key " + printable(key_text(spec.keys[i]), 100));
        flatten(it->value(), spec.children[i], out,
                where + "[" + printable(key_text(spec.keys[i]), 100) + "]");
      }
      return;
    }
  }
}

c10::IValue unflatten(const TreeSpec& spec, const std::vector<c10::IValue>& leaves,
                      std::size_t& next) {
  switch (spec.kind) {
    case TreeSpec::Kind::leaf:
      return next < leaves.size() ? leaves[next++] : c10::IValue();
    case TreeSpec::Kind::none:
      return c10::IValue();
    case TreeSpec::Kind::tuple: {
      std::vector<c10::IValue> items;
      for (const TreeSpec& child : spec.children) items.push_back(unflatten(child, leaves, next));
      return c10::ivalue::Tuple::create(std::move(items));
    }
    case TreeSpec::Kind::list: {
      c10::impl::GenericList list(c10::AnyType::get());
      for (const TreeSpec& child : spec.children) list.push_back(unflatten(child, leaves, next));
      return list;
    }
    case TreeSpec::Kind::dict: {
      const bool strings =
          std::all_of(spec.keys.begin(), spec.keys.end(), [](const auto& k) { return k.isString(); });
      const c10::TypePtr key_type =
          strings ? c10::TypePtr(c10::StringType::get()) : c10::TypePtr(c10::AnyType::get());
      c10::impl::GenericDict dict(key_type, c10::AnyType::get());
      for (std::size_t i = 0; i < spec.children.size(); ++i)
        dict.insert(spec.keys[i], unflatten(spec.children[i], leaves, next));
      return dict;
    }
  }
  return {};
}

}  // namespace vin::diagnostics::export_run
