// ModelCounts: the one way every reader counts a model's elements (records/module_counts.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "vin/diagnostics/records/module_counts.h"

using namespace vin::diagnostics;

TEST_CASE("a tensor held by several slots counts once in the totals and in each module") {
  ModelCounts<int> counts;
  DirectCounts encoder, decoder;
  counts.parameter(encoder, /*tensor=*/1, 12, /*trainable=*/true, 48);  // tied embedding
  counts.parameter(decoder, 1, 12, true, 48);
  counts.parameter(decoder, 2, 3, false, 12);  // frozen bias
  counts.buffer(encoder, 3, 5, 20);
  counts.buffer(decoder, 3, 5, 20);  // one buffer registered twice
  CHECK(encoder.parameters == 12);
  CHECK(encoder.trainable == 12);
  CHECK(encoder.buffers == 5);
  CHECK(decoder.parameters == 15);
  CHECK(decoder.trainable == 12);
  CHECK(counts.total() == 15);
  CHECK(counts.trainable() == 12);
  ModelDetails details;
  counts.put_bytes(details);
  CHECK(details.parameter_bytes == 60);
  CHECK(details.buffer_bytes == 20);
}

TEST_CASE("counts past 64 bits are refused, not wrapped") {
  ModelCounts<int> counts;
  DirectCounts module;
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  counts.parameter(module, 1, huge, false, 0);
  CHECK_THROWS_AS(counts.parameter(module, 2, huge, false, 0), CountOverflow);
  std::int64_t sum = std::numeric_limits<std::int64_t>::max();
  CHECK_THROWS_WITH_AS(add_count(sum, 1), kCountOverflowMessage, Error);
}
