// What the .pt2 reader knows of torch.export's serialized schema (torch/_export/serde/schema.py,
// versions 1 to 8.x; export_detail: not for other folders): the program's JSON read within
// bounds, its unions, dtypes, sizes and TensorMeta, a tensor as the program names it, and
// symbolic sizes as Python prints them. Nothing is run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/record_value.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics::export_detail {

// the program of a real model is a few MB (resnet18's: 1 MB); its values nest a few levels, a
// control-flow subgraph (as_graph) a few more per level
inline constexpr std::uint64_t kMaxProgramBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{64} << 20;
inline constexpr std::size_t kMaxProgramDepth = 2048;

// a nested torch.save's data.pkl: names and tensor descriptions, never the data
inline constexpr std::uint64_t kMaxStatePickleBytes = std::uint64_t{256} << 20;

// the newest schema this reader knows (torch 2.14 writes 8.20)
inline constexpr std::int64_t kNewestSchemaMajor = 8;

// An entry of the archive that is not what torch writes: the message names it (contract 10.4).
struct Malformed {
  std::string why;
};




// torch 2.1-2.2 and 2.6 write the floats inf and nan as bare tokens (Python's json allow_nan),
// which JSON has not: each becomes the string 2.7 on writes, outside strings only
std::string with_quoted_non_finite(const std::string& text);

Json parse_json_entry(const std::string& text, const std::string& entry);

// A pointer, never null, rather than a reference: GCC 14's -Wdangling-reference takes a
// reference returned from a call with a temporary message for one into the message
const Json* field(const Json& object, const char* key, const std::string& where);

const Json* optional_field(const Json& object, const char* key);

std::string string_field(const Json& object, const char* key, const std::string& where);

// A union as the schema writes it: an object of one key (2.3 on), or of every variant with the
// unused ones null (2.1-2.2). The variant's name and value.
std::pair<std::string, const Json*> union_variant(const Json& value, const std::string& where);

// The schema's ScalarType (torch/_export/serde/schema.py), not c10's numbering past 13.
const Dtype* schema_dtype(const Json& value, const std::string& where);

// A size: {as_int: n} (or a bare integer, as 2.1-2.2 wrote storage_offset).
std::int64_t concrete_size(const Json& value, const std::string& where);

// One parameter, buffer or constant: its TensorMeta and the storage it lies in.
struct NamedTensor {
  std::string name;  // dotted from the root: "layer1.0.conv1.weight"
  std::string kind;  // "parameter", "buffer" or "constant"
  const Dtype* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // none recorded: contiguous
  std::int64_t storage_offset = 0;
  std::int64_t numel = 1;
  std::string device = "cpu";
  bool requires_grad = false;
  std::string storage;               // one key per storage: tied names share it
  std::optional<std::uint32_t> crc;  // of the member holding its storage, where one does
  std::optional<std::uint32_t> data_crc;  // of its elements (with --tensors)

  // Which tensor it is: tied names are one tensor (counted once), views of one storage with
  // other offsets or sizes are not (Python's parameters() yields each).
  std::string identity() const {
    std::string id = storage + "@" + std::to_string(storage_offset);
    for (const std::int64_t n : shape) id += "," + std::to_string(n);
    id += "/";
    for (const std::int64_t n : strides) id += "," + std::to_string(n);
    return id;
  }

  // The tensor as torch.save would describe it (strides written out where the program left
  // them implied: contiguous).
  SavedTensor saved_form() const {
    SavedTensor out;
    out.dtype = dtype;
    out.offset = storage_offset;
    out.shape = shape;
    out.numel = numel;
    out.strides = strides.empty() ? contiguous_strides(shape) : strides;
    return out;
  }

  // The bytes of its storage it reaches, from the storage's start (0 for no elements).
  std::uint64_t bytes_reached(const std::string& where) const {
    const SavedTensor s = saved_form();
    if (s.strides.size() != s.shape.size())
      throw Malformed{where + " gives " + std::to_string(s.strides.size()) + " strides for " +
                      std::to_string(s.shape.size()) + " sizes"};
    if (s.offset < 0 || std::any_of(s.strides.begin(), s.strides.end(),
                                    [](std::int64_t stride) { return stride < 0; }))
      throw Malformed{where + "'s strides or offset are negative"};
    const auto reached = vin::diagnostics::bytes_reached(s);
    if (!reached) throw Malformed{where + "'s strides and offset overflow 64 bits"};
    return *reached;
  }
};




void read_tensor_meta(const Json& meta, const std::string& where, NamedTensor& t);

// The TensorMeta the graph records for its tensor `name` (torch 2.1 wraps it: {"meta": ...}).
// A pointer, not a reference: GCC 14's -Wdangling-reference (see field()).
const Json* graph_tensor_meta(const Json& graph, const std::string& name,
                              const std::string& entry);

// "a.b.c" -> "c"
std::string leaf_name(const std::string& name);

// "a.b.c" -> "a.b"; "a" -> "" (the root)
std::string parent_path(const std::string& name);

// The placeholder name torch.export gives a parameter or buffer: its dotted name with every
// character that is not a letter, digit or '_' as '_', after a prefix ("p_", "b_", "c_")
std::string placeholder_name(std::string_view prefix, const std::string& name);

// A symbolic size as Python prints it (str(SymInt): "s0", "2*s0", "s0 + 1") from the sympy
// srepr torch writes ("Mul(Integer(2), Symbol('s0', positive=True, integer=True))"): Symbol,
// Integer, Mul and Add; anything else is given as written.
class SympyText {
 public:
  static std::string of(const std::string& srepr) {
    SympyText p(srepr);
    std::string out;
    if (p.term(out, 0) && p.at_ == srepr.size()) return out;
    return srepr;
  }

 private:
  explicit SympyText(const std::string& text) : text_(text) {}

  bool eat(std::string_view word) {
    if (text_.compare(at_, word.size(), word) != 0) return false;
    at_ += word.size();
    return true;
  }

  // one expression into `out`; false where it is not one of the four forms
  bool term(std::string& out, int depth) {
    if (depth > 64) return false;
    if (eat("Symbol('")) {
      const std::size_t end = text_.find('\'', at_);
      if (end == std::string::npos) return false;
      out += text_.substr(at_, end - at_);
      const std::size_t close = text_.find(')', end);  // the assumptions: `positive=True, ...`
      if (close == std::string::npos) return false;
      at_ = close + 1;
      return true;
    }
    if (eat("Integer(")) {
      const std::size_t end = text_.find(')', at_);
      if (end == std::string::npos || end == at_) return false;
      const std::string digits = text_.substr(at_, end - at_);
      if (digits.find_first_not_of("-0123456789") != std::string::npos) return false;
      out += digits;
      at_ = end + 1;
      return true;
    }
    const bool mul = eat("Mul(");
    if (!mul && !eat("Add(")) return false;
    for (bool first = true;; first = false) {
      std::string operand;
      if (!term(operand, depth + 1)) return false;
      if (first)
        out += operand;
      else if (!mul && operand.rfind('-', 0) == 0)
        out += " - " + operand.substr(1);
      else
        out += (mul ? "*" : " + ") + operand;
      if (eat(")")) return true;
      if (!eat(", ")) return false;
    }
  }

  const std::string& text_;
  std::size_t at_ = 0;
};




// One size of a TensorMeta as a record shows it: an integer, or a symbolic size's expression.
Json dimension_json(const Json& size, const std::string& where);

}  // namespace vin::diagnostics::export_detail
