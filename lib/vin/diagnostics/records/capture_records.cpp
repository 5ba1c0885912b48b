#include "vin/diagnostics/records/capture_records.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

void require_positive(const char* name, std::int64_t value) {
  if (value <= 0)
    throw UsageError(std::string(name) + " must be positive, got " + std::to_string(value));
}

// Values compare as recorded; NaN equals NaN so that a record equals its own copy.
bool same_value(const SampleValue& a, const SampleValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return (std::isnan(*x) && std::isnan(y)) || *x == y;
  }
  return a == b;
}

}  // namespace

CaptureLimits::CaptureLimits(const CaptureQuotas& quotas) : q_(quotas) {
  require_positive("max_tensors", q_.max_tensors);
  require_positive("max_samples_per_tensor", q_.max_samples_per_tensor);
  require_positive("max_bytes", q_.max_bytes);
  require_positive("max_traversal_nodes", q_.max_traversal_nodes);
  require_positive("max_container_depth", q_.max_container_depth);
}

CaptureLimits CaptureLimits::with(std::int64_t CaptureQuotas::*quota, std::int64_t n) const {
  CaptureQuotas q = q_;
  q.*quota = n;
  return CaptureLimits(q);
}

CaptureLimits CaptureLimits::with_max_tensors(std::int64_t n) const {
  return with(&CaptureQuotas::max_tensors, n);
}
CaptureLimits CaptureLimits::with_max_samples_per_tensor(std::int64_t n) const {
  return with(&CaptureQuotas::max_samples_per_tensor, n);
}
CaptureLimits CaptureLimits::with_max_bytes(std::int64_t n) const {
  return with(&CaptureQuotas::max_bytes, n);
}
CaptureLimits CaptureLimits::with_max_traversal_nodes(std::int64_t n) const {
  return with(&CaptureQuotas::max_traversal_nodes, n);
}
CaptureLimits CaptureLimits::with_max_container_depth(std::int64_t n) const {
  return with(&CaptureQuotas::max_container_depth, n);
}

bool operator==(const TensorSnapshot& a, const TensorSnapshot& b) {
  if (a.values_.size() != b.values_.size()) return false;
  for (std::size_t i = 0; i < a.values_.size(); ++i)
    if (!same_value(a.values_[i], b.values_[i])) return false;
  return a.module_path_ == b.module_path_ && a.call_index_ == b.call_index_ &&
         a.direction_ == b.direction_ && a.tensor_path_ == b.tensor_path_ && a.shape_ == b.shape_ &&
         a.dtype_ == b.dtype_ && a.device_ == b.device_ && a.numel_ == b.numel_ &&
         a.sampled_bytes_ == b.sampled_bytes_ &&
         a.sample_omission_reason_ == b.sample_omission_reason_;
}

const char* to_string(Direction direction) {
  return direction == Direction::input ? "input" : "output";
}

namespace {

// A part of a member name: '%', '/' and control bytes as %XX (uppercase hex), so that parts
// split back apart and a name holds no NUL (zip names are C strings) or terminal control.
std::string escape_name_part(const std::string& part) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char ch : part) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F || c == '%' || c == '/')
      out += {'%', hex[c >> 4], hex[c & 0xF]};
    else
      out += ch;
  }
  return out;
}

std::optional<std::string> unescape_name_part(const std::string& part) {
  std::string out;
  for (std::size_t i = 0; i < part.size(); ++i) {
    if (part[i] != '%') {
      out += part[i];
      continue;
    }
    if (i + 2 >= part.size()) return std::nullopt;  // a '%' needs two hex digits
    const auto digit = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int high = digit(part[i + 1]), low = digit(part[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

}  // namespace

std::string TensorKey::name() const {
  std::string out =
      escape_name_part(module_path) + "/" + std::to_string(call_index) + "/" + to_string(direction);
  for (const auto& p : tensor_path) out += "/" + escape_name_part(p);
  return out;
}

std::optional<TensorKey> TensorKey::from_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 4 || parts[0].empty() || parts[1].empty() || parts[1].size() > 18 ||
      parts[1].find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  for (std::string& part : parts) {
    auto plain = unescape_name_part(part);
    if (!plain) return std::nullopt;
    part = std::move(*plain);
  }
  TensorKey key;
  key.module_path = parts[0];
  key.call_index = std::stoll(parts[1]);
  if (parts[2] == "input")
    key.direction = Direction::input;
  else if (parts[2] == "output")
    key.direction = Direction::output;
  else
    return std::nullopt;
  key.tensor_path.assign(parts.begin() + 3, parts.end());
  return key;
}

}  // namespace vin::diagnostics
