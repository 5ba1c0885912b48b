#include "vin/diagnostics/safetensors/safetensors_file.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// the header object, an entry, its shape: nothing the format writes nests deeper
constexpr std::size_t kHeaderDepth = 3;
constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::uint64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// What the header says that the format does not allow: the caller adds the file's name.
struct Invalid {
  std::string why;
};

std::string in_quotes(std::string_view key) { return "'" + printable(key, 200) + "'"; }

// A non-negative integer of the header (parse_bounded_json keeps integers past 64 bits as
// their digits: those are refused here, as too large for a file's offsets or a dimension).
std::uint64_t non_negative(const Json& value, const std::string& what) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  if (is_big_integer(value) && big_integer_digits(value)[0] != '-')
    throw Invalid{what + " is past 64 bits"};
  throw Invalid{what + " is not a non-negative integer"};
}

Json member(const Json& entry, const char* name, const std::string& where) {
  const auto found = entry.find(name);
  if (found == entry.end()) throw Invalid{where + " has no " + name};
  return *found;
}

SafetensorsTensor read_entry(std::string key, const Json& entry) {
  const std::string where = "tensor " + in_quotes(key);
  if (!entry.is_object()) throw Invalid{where + " is not a JSON object"};
  SafetensorsTensor t;
  const Json dtype = member(entry, "dtype", where);
  if (!dtype.is_string()) throw Invalid{where + ": its dtype is not a string"};
  t.dtype = dtype_of_safetensors(dtype.get<std::string>());
  if (!t.dtype)
    throw Invalid{where + " has dtype " + in_quotes(dtype.get<std::string>()) +
                  ", which the format does not define"};
  const Json shape = member(entry, "shape", where);
  if (!shape.is_array()) throw Invalid{where + ": its shape is not an array"};
  std::uint64_t numel = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::uint64_t size =
        non_negative(shape[i], where + ": dimension " + std::to_string(i) + " of its shape");
    if (size > kInt64Max || __builtin_mul_overflow(numel, size, &numel) || numel > kInt64Max)
      throw Invalid{where + ": its shape has more elements than 64 bits count"};
    t.shape.push_back(static_cast<std::int64_t>(size));
  }
  t.numel = static_cast<std::int64_t>(numel);
  const Json offsets = member(entry, "data_offsets", where);
  if (!offsets.is_array() || offsets.size() != 2)
    throw Invalid{where + ": its data_offsets is not an array of two integers"};
  t.begin = non_negative(offsets[0], where + ": its first data offset");
  t.end = non_negative(offsets[1], where + ": its second data offset");
  if (t.end < t.begin)
    throw Invalid{where + ": its data_offsets end (" + std::to_string(t.end) +
                  ") before they begin (" + std::to_string(t.begin) + ")"};
  std::uint64_t bytes = 0;
  const bool overflowed =
      __builtin_mul_overflow(numel, static_cast<std::uint64_t>(t.dtype->element_size), &bytes);
  if (overflowed || bytes != t.end - t.begin)
    throw Invalid{where + " has " + std::to_string(t.end - t.begin) + " bytes of data; its " +
                  std::to_string(numel) + " elements of " + std::string(t.dtype->name) + " take " +
                  (overflowed ? "more than 64 bits count" : std::to_string(bytes))};
  t.key = std::move(key);
  return t;
}

Json read_metadata(std::string_view text) {
  Json metadata = parse_bounded_json(std::string(text), kHeaderDepth - 1);
  if (!metadata.is_object()) throw Invalid{"__metadata__ is not a JSON object"};
  for (const auto& [name, value] : metadata.items())
    if (!value.is_string())
      throw Invalid{"__metadata__'s " + in_quotes(name) + " is not a string (the format's " +
                    "metadata maps strings to strings)"};
  return metadata;
}

// The tensors' bytes, in the order they lie, must fill the data exactly: no hole, no overlap,
// nothing after the last.
void check_layout(const std::vector<SafetensorsTensor>& tensors, std::uint64_t data_bytes) {
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(tensors[a].begin, tensors[a].end) <
           std::pair(tensors[b].begin, tensors[b].end);
  });
  std::uint64_t reached = 0;
  const SafetensorsTensor* before = nullptr;
  for (const std::size_t i : order) {
    const SafetensorsTensor& t = tensors[i];
    const std::string range = "bytes " + std::to_string(t.begin) + "-" + std::to_string(t.end);
    if (t.begin > reached)
      throw Invalid{"the data's bytes " + std::to_string(reached) + "-" + std::to_string(t.begin) +
                    " belong to no tensor (a hole before tensor " + in_quotes(t.key) + ")"};
    if (t.begin < reached)
      throw Invalid{"tensor " + in_quotes(t.key) + " (" + range + ") overlaps tensor " +
                    in_quotes(before->key) + " (bytes " + std::to_string(before->begin) + "-" +
                    std::to_string(before->end) + ")"};
    reached = t.end;
    before = &t;
  }
  if (reached != data_bytes)
    throw Invalid{reached < data_bytes ? "the data's last " + std::to_string(data_bytes - reached) +
                                             " bytes belong to no tensor"
                                       : "the tensors' bytes end at " + std::to_string(reached) +
                                             ", past the data's " + std::to_string(data_bytes) +
                                             " bytes (a file cut short)"};
}

SafetensorsHeader read_header(const InputFile& file) {
  const std::uint64_t size = file.size();
  unsigned char length_bytes[8];
  if (size < 8 || file.read_at(0, length_bytes, 8) != 8)
    throw Invalid{"shorter than the 8-byte length its header starts with"};
  std::uint64_t length = 0;
  for (int b = 7; b >= 0; --b) length = length << 8 | length_bytes[b];
  if (length > kMaxSafetensorsHeaderBytes)
    throw Invalid{"its header of " + std::to_string(length) +
                  " bytes is larger than the format's limit of 100,000,000"};
  if (length > size - 8)
    throw Invalid{"its header of " + std::to_string(length) + " bytes runs past the end of the " +
                  std::to_string(size) + "-byte file"};
  std::string header(static_cast<std::size_t>(length), '\0');
  if (file.read_at(8, header.data(), header.size()) != header.size())
    throw Invalid{"its header is cut short"};
  if (header.empty() || header[0] != '{') throw Invalid{"its header does not begin with '{'"};

  SafetensorsHeader out;
  out.data_begin = 8 + length;
  std::vector<std::pair<std::string_view, std::string_view>> members;
  const JsonScan scan = scan_json_object(
      header, kHeaderDepth,
      [&](std::string_view key, std::string_view value) { members.emplace_back(key, value); });
  if (scan == JsonScan::not_json) throw Invalid{"its header is not valid JSON (or not UTF-8)"};
  if (scan == JsonScan::too_deep)
    throw Invalid{"its header nests values deeper than the format's entries"};
  if (scan == JsonScan::not_object) throw Invalid{"its header is not a JSON object"};

  std::unordered_set<std::string> seen;
  seen.reserve(members.size());
  for (const auto& [key_text, value_text] : members) {
    std::string key = json_string_value(key_text);
    if (!seen.insert(key).second) throw Invalid{"its header names " + in_quotes(key) + " twice"};
    if (key == kMetadataKey) {
      out.metadata = read_metadata(value_text);
      continue;
    }
    out.tensors.push_back(
        read_entry(std::move(key), parse_bounded_json(std::string(value_text), kHeaderDepth - 1)));
  }
  check_layout(out.tensors, size - out.data_begin);
  for (SafetensorsTensor& t : out.tensors) {
    t.begin += out.data_begin;
    t.end += out.data_begin;
  }
  return out;
}

}  // namespace

SafetensorsHeader read_safetensors_header(const InputFile& file) {
  try {
    return read_header(file);
  } catch (const Invalid& invalid) {
    throw Error(file.path() + ": not a valid safetensors file: " + invalid.why);
  }
}

std::optional<std::string> safetensors_problem(const InputFile& file) {
  try {
    read_header(file);
    return std::nullopt;
  } catch (const Invalid& invalid) {
    return invalid.why;
  }
}

}  // namespace vin::diagnostics
