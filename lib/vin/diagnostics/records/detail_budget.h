// What a description may print beyond its counts (issue 41; docs/safety.md). A value an archive
// holds once (a pickle's memo, a legacy tensor table, a class constant) may be named by many
// modules, and each naming is printed whole: 500 modules naming one 8 MB string would print 4
// GB. So the attribute values and tensor records of one description share a budget of printed
// bytes, bounded by what was read: kMinDetailBytes, or kDetailBytesPerByteRead for each byte of
// the records the values come from, whichever is more. Past it, an attribute value is given by
// its type and a tensor is not listed; the model record says so (ModelMetadata's `stopped_by`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

inline constexpr std::uint64_t kMinDetailBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kDetailBytesPerByteRead = 8;

class DetailBudget {
 public:
  /// `bytes_read`: the records the details come from (data.pkl and its peers, model.json, ...)
  explicit DetailBudget(std::uint64_t bytes_read = 0);
  /// Another record the details come from was read: the budget grows by its share.
  void read(std::uint64_t bytes);

  /// `value` when its printed size still fits (and charged), else its type marker.
  Json admit(Json value);
  /// Whether a tensor record of `rank` dimensions and `text_bytes` of name, dtype and device
  /// still fits; charges it when it does. Asked before the record is built: a shape the archive
  /// holds once may be named by every module.
  bool admit_tensor(std::size_t rank, std::size_t text_bytes);
  /// admit_tensor for a record already built.
  bool admit(const TensorMetadata& tensor);

  /// The budget's bytes.
  std::uint64_t bytes() const { return bytes_; }
  /// "detail_budget" once something did not fit: ModelMetadata's `stopped_by`.
  const std::optional<std::string>& stopped_by() const { return stopped_by_; }

 private:
  bool charge(std::uint64_t size);

  std::uint64_t read_ = 0;
  std::uint64_t bytes_ = kMinDetailBytes;
  std::uint64_t left_ = kMinDetailBytes;
  std::optional<std::string> stopped_by_;
};

/// About how many bytes `value` takes printed as JSON, counted no further than `limit` (more
/// than `limit` once past it).
std::uint64_t printed_size(const Json& value, std::uint64_t limit);

}  // namespace vin::diagnostics
