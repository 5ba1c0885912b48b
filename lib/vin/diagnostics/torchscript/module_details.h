// inspect-model's details (docs/records.md: TensorMetadata, attributes) from the values the
// archive reader pickled out of data.pkl: a tensor's shape, dtype, device and storage checksum
// from its rebuild call and storage reference, an attribute's record value from its pickled
// value. No tensor data is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/detail_budget.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/record_value.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// The CRC-32 (8 lowercase hex digits) of each storage record under data/, by storage key.
using StorageChecksums = RecordChecksums;

/// The TensorMetadata of a pickled tensor registered as `name` (kind "parameter" or "buffer"),
/// or nothing when `budget` has no room for it (it is charged when it has: the record is not
/// built before, as its shape and device, held once in the pickle, may be named by every
/// module). Throws UnsupportedPickle for a storage type it does not know.
std::optional<TensorMetadata> listed_tensor(const std::string& name, const char* kind,
                                            PickleRef tensor, const StorageChecksums& checksums,
                                            DetailBudget& budget);

/// The bytes of a pickled tensor's elements (numel times the element size). Throws
/// UnsupportedPickle for a storage type it does not know or a size that overflows.
std::int64_t tensor_nbytes(PickleRef tensor);

/// The record value of a pickled attribute: JSON scalars and arrays of them as themselves,
/// anything else as a type marker (docs/records.md).
Json attribute_value(PickleRef value);

/// attribute_value within `budget`: the value when it fits, else its type marker (the budget
/// says it stopped). The value is built no further than the budget's room, and a value the
/// pickle holds once (a memo reference) that did not fit is not built again for the next
/// module that names it.
Json admitted_attribute(PickleRef value, DetailBudget& budget);

}  // namespace vin::diagnostics
