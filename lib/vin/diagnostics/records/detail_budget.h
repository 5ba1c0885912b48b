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
#include <unordered_map>

#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

inline constexpr std::uint64_t kMinDetailBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kDetailBytesPerByteRead = 8;

/// About how many bytes `value` takes printed as JSON, counted no further than `limit` (more
/// than `limit` once past it).
std::uint64_t printed_size(const Json& value, std::uint64_t limit);

/// What is left of the printed bytes a value being built may take (printed_size's measure: a
/// string its bytes and quotes, a container 2 and a byte per item, a scalar 8): a builder
/// spends as it goes and stops once spend() refuses, so a value past the room is never built
/// whole (DetailBudget::admit_shared's builders).
struct PrintRoom {
  std::uint64_t left;
  bool spend(std::uint64_t bytes) {
    if (bytes > left) return false;
    left -= bytes;
    return true;
  }
};

class DetailBudget {
 public:
  /// `bytes_read`: the records the details come from (data.pkl and its peers, model.json, ...)
  explicit DetailBudget(std::uint64_t bytes_read = 0);
  /// Another record the details come from was read: the budget grows by its share.
  void read(std::uint64_t bytes);

  /// `value` when its printed size still fits (and charged), else its type marker.
  Json admit(Json value);
  /// A value made from something the archive holds once and any number of modules may name
  /// (`source`: its address): `build(limit)` gives the value, or its type marker (a Json
  /// object) with `fits` false once its printed size passes `limit` (it stops building there);
  /// the value when it fits (charged), else the marker. What a source costs is learnt once:
  /// one that did not fit is not built again, so 500 modules naming a value of a million items
  /// cost one walk, not 500 (issue 64).
  template <class Build>
  Json admit_shared(const void* source, Build build) {
    if (const auto known = shared_.find(source);
        known != shared_.end() && known->second.least_size > left_)
      return refuse(known->second.marker);
    bool fits = true;
    Json value = build(left_, fits);
    Shared& learnt = shared_[source];
    learnt.least_size = fits ? printed_size(value, left_) : left_ + 1;
    learnt.marker = fits ? type_marker_of(value) : value;
    if (fits && charge(learnt.least_size)) return value;
    return refuse(learnt.marker);
  }
  /// The bytes not spent yet.
  std::uint64_t left() const { return left_; }
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
  Json refuse(const Json& marker);
  static Json type_marker_of(const Json& value);

  struct Shared {
    std::uint64_t least_size = 0;  ///< what its value was found to print at least
    Json marker;                   ///< its type marker, for when it does not fit
  };

  std::uint64_t read_ = 0;
  std::uint64_t bytes_ = kMinDetailBytes;
  std::uint64_t left_ = kMinDetailBytes;
  std::optional<std::string> stopped_by_;
  std::unordered_map<const void*, Shared> shared_;  // admit_shared's sources
};

}  // namespace vin::diagnostics
