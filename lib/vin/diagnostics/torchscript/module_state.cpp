#include "vin/diagnostics/torchscript/module_state.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "vin/diagnostics/torchscript/class_source.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

// `text` starts with an identifier: its length (0 when it does not).
std::size_t identifier_length(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_identifier_char(text[n])) ++n;
  return (n > 0 && !(text[0] >= '0' && text[0] <= '9')) ? n : 0;
}

// A non-negative decimal index, or -1.
long parse_index(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return -1;
  long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// What one line of a method body does to `self`, found by looking for `self.NAME` uses.
struct SelfUses {
  std::vector<std::string_view> assigned;  // `self.NAME = ...`
  std::vector<std::string_view> called;    // `self.NAME(...)`, `(self).NAME(...)`
};

SelfUses self_uses(std::string_view line) {
  SelfUses uses;
  for (std::size_t at = line.find("self"); at != std::string_view::npos;
       at = line.find("self", at + 1)) {
    if (at > 0 && (is_identifier_char(line[at - 1]) || line[at - 1] == '.')) continue;
    std::size_t pos = at + 4;
    if (pos < line.size() && line[pos] == ')') ++pos;  // `(self).method(`
    if (pos >= line.size() || line[pos] != '.') continue;
    ++pos;
    const std::size_t n = identifier_length(line.substr(pos));
    if (n == 0) continue;
    const std::string_view name = line.substr(pos, n);
    std::size_t after = pos + n;
    while (after < line.size() && line[after] == ' ') ++after;
    if (after < line.size() && line[after] == '(') {
      uses.called.push_back(name);
    } else if (after + 1 < line.size() && line[after] == '=' && line[after + 1] != '=') {
      uses.assigned.push_back(name);
    } else if (after + 1 == line.size() && line[after] == '=') {
      uses.assigned.push_back(name);
    }
  }
  return uses;
}

// `self.NAME = (state)[K]` or `self.NAME = state[K]`: NAME and K; `state` alone gives K = -1.
// An empty name when the line is not such an assignment.
std::pair<std::string_view, long> direct_state_assignment(std::string_view line,
                                                          std::string_view state) {
  if (line.substr(0, 5) != "self.") return {};
  const std::size_t n = identifier_length(line.substr(5));
  if (n == 0) return {};
  const std::string_view name = line.substr(5, n);
  std::string_view rest = line.substr(5 + n);
  if (rest.substr(0, 3) != " = ") return {};
  rest.remove_prefix(3);
  const std::string parenthesised = "(" + std::string(state) + ")";
  if (rest.substr(0, parenthesised.size()) == parenthesised)
    rest.remove_prefix(parenthesised.size());
  else if (rest.substr(0, state.size()) == state)
    rest.remove_prefix(state.size());
  else
    return {};
  if (rest.empty()) return {name, -1};
  if (rest.front() != '[' || rest.back() != ']') return {};
  const long index = parse_index(rest.substr(1, rest.size() - 2));
  if (index < 0) return {};
  return {name, index};
}

// The name of __setstate__'s state argument: `def __setstate__(self: T, NAME: Type) -> ...`.
std::string_view state_argument(std::string_view signature) {
  const std::size_t comma = signature.find(',');
  if (comma == std::string_view::npos) return {};
  std::size_t pos = signature.find_first_not_of(" \n", comma + 1);
  if (pos == std::string_view::npos) return {};
  const std::size_t n = identifier_length(signature.substr(pos));
  return signature.substr(pos, n);
}

// The attributes whose values the records depend on: parameters, buffers, submodules, training.
std::unordered_set<std::string_view> record_attributes(const ClassSource& cls,
                                                       const ClassSources& classes) {
  std::unordered_set<std::string_view> names{"training"};
  for (const auto& p : cls.parameters) names.insert(p);
  for (const auto& b : cls.buffers) names.insert(b);
  for (const auto& [name, type] : cls.attributes) {
    const auto it = classes.find(type);
    if (it != classes.end() && it->second.is_module) names.insert(name);
  }
  return names;
}

std::vector<ModuleAttribute> attributes_from_setstate(PickleRef object, const ClassSource& cls,
                                                      const MethodSource& setstate,
                                                      const ClassSources& classes) {
  const std::string& class_name = object->text;
  const auto refuse = [&](const std::string& why) {
    return UnsupportedPickle(class_name + "'s __setstate__ " + why);
  };
  const PickleRef state = object->state;
  const std::string_view state_name = state_argument(setstate.signature);
  if (state_name.empty()) throw refuse("has no state argument this reader can find");
  const auto record = record_attributes(cls, classes);

  std::vector<ModuleAttribute> attributes;
  std::unordered_set<std::string_view> assigned;
  std::vector<std::string_view> to_check;  // methods of self that __setstate__ calls
  for (const std::string_view line : setstate.body) {
    const auto [name, index] = direct_state_assignment(line, state_name);
    if (!name.empty()) {
      PickleRef value = state;
      if (index >= 0) {
        if (!state || (state->kind != Kind::tuple && state->kind != Kind::list) ||
            static_cast<std::size_t>(index) >= state->items.size())
          throw refuse("reads item " + std::to_string(index) + " of a state that does not have it");
        value = state->items[static_cast<std::size_t>(index)];
      }
      if (!assigned.insert(name).second) throw refuse("sets " + std::string(name) + " twice");
      attributes.emplace_back(name, value);
      continue;
    }
    const SelfUses uses = self_uses(line);
    for (const auto& n : uses.assigned)
      if (record.count(n))
        throw refuse("sets " + std::string(n) + " from something other than its state");
    to_check.insert(to_check.end(), uses.called.begin(), uses.called.end());
  }
  // methods of the module that __setstate__ calls (and that they call) must leave the records alone
  std::unordered_set<std::string_view> checked;
  while (!to_check.empty()) {
    const std::string_view name = to_check.back();
    to_check.pop_back();
    if (!checked.insert(name).second) continue;
    const MethodSource* method = cls.method(name);
    if (!method) continue;  // a submodule's method or a builtin: it cannot assign to this self
    for (const std::string_view line : method->body) {
      const SelfUses uses = self_uses(line);
      for (const auto& n : uses.assigned)
        if (record.count(n))
          throw refuse("calls " + std::string(name) + ", which sets " + std::string(n));
      to_check.insert(to_check.end(), uses.called.begin(), uses.called.end());
    }
  }
  if (!assigned.count("training")) throw refuse("does not set training from its state");
  // LibTorch holds a module's attributes in the order its class declares them
  const auto declared_at = [&](std::string_view name) {
    const auto& decl = cls.attributes;
    return std::find_if(decl.begin(), decl.end(), [&](const auto& d) { return d.first == name; }) -
           decl.begin();
  };
  std::stable_sort(attributes.begin(), attributes.end(), [&](const auto& a, const auto& b) {
    return declared_at(a.first) < declared_at(b.first);
  });
  return attributes;
}

}  // namespace

std::vector<ModuleAttribute> module_attributes(PickleRef object, const ClassSource& cls,
                                               const ClassSources& classes) {
  const PickleRef state = object->state;
  if (const MethodSource* setstate = cls.method("__setstate__"))
    return attributes_from_setstate(object, cls, *setstate, classes);
  if (!state || state->kind != Kind::dict)
    throw UnsupportedPickle(object->text + " has a state that is not a dict, and no __setstate__");
  std::vector<ModuleAttribute> attributes;
  const auto& items = state->items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i]->kind != Kind::string)
      throw UnsupportedPickle("a module attribute without a name in " + object->text);
    attributes.emplace_back(items[i]->text, items[i + 1]);
  }
  return attributes;
}

}  // namespace vin::diagnostics
