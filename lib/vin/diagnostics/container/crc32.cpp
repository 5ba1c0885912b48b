#include "vin/diagnostics/container/crc32.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>

#include "vin/diagnostics/platform/parallel_for.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

std::string crc32_text(std::uint32_t crc) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(crc));
  return hex;
}

std::uint32_t crc32_update(std::uint32_t crc, const void* bytes, std::size_t n) {
  if (n == 0) return crc;
  return libdeflate_crc32(crc, bytes, n);
}

std::uint32_t crc32_join(std::uint32_t first, std::uint32_t second, std::uint64_t second_size) {
  return static_cast<std::uint32_t>(
      crc32_combine64(first, second, static_cast<z_off64_t>(second_size)));
}

Crc32Batch::Ticket Crc32Batch::range(const InputFile& file, std::uint64_t begin,
                                     std::uint64_t end) {
  const Ticket ticket = values_.size();
  values_.push_back(0);  // no bytes: 0
  for (std::uint64_t at = begin; at < end; at += std::min(kPieceBytes, end - at))
    pieces_.push_back({&file, at, std::min(end, at + kPieceBytes), ticket});
  return ticket;
}

Crc32Batch::Ticket Crc32Batch::known(std::uint32_t crc) {
  values_.push_back(crc);
  return values_.size() - 1;
}

Crc32Batch::Ticket Crc32Batch::computed(std::function<std::uint32_t()> compute) {
  const Ticket ticket = values_.size();
  values_.push_back(0);
  pieces_.push_back({nullptr, computations_.size(), 0, ticket});
  computations_.push_back(std::move(compute));
  return ticket;
}

unsigned Crc32Batch::workers_for(std::size_t pieces) {
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>({usable_cores(), kMaxWorkers, pieces})));
}

void Crc32Batch::run() {
  std::vector<std::uint32_t> crcs(pieces_.size());
  parallel_for(pieces_.size(), workers_for(pieces_.size()), [&](std::size_t i) {
    const Piece& p = pieces_[i];
    if (!p.file) {
      crcs[i] = computations_[p.begin]();
      return;
    }
    thread_local std::vector<unsigned char> buffer;  // one a worker
    if (buffer.size() < kBufferBytes) buffer.resize(kBufferBytes);
    std::uint32_t crc = 0;
    for (std::uint64_t at = p.begin; at < p.end;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kBufferBytes, p.end - at));
      if (p.file->read_at(at, buffer.data(), n) != n)
        throw Error(p.file->path() + ": ends before byte " + std::to_string(p.end) +
                    " (cut short while read)");
      crc = crc32_update(crc, buffer.data(), n);
      at += n;
    }
    crcs[i] = crc;
  });
  // a range's pieces follow one another: joined in order
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    const Piece& p = pieces_[i];
    std::uint32_t& value = values_[p.ticket];
    value = p.file ? crc32_join(value, crcs[i], p.end - p.begin) : crcs[i];
  }
  pieces_.clear();
  computations_.clear();
}

std::uint32_t crc32_of_range(const InputFile& file, std::uint64_t begin, std::uint64_t end) {
  Crc32Batch batch;
  const auto ticket = batch.range(file, begin, end);
  batch.run();
  return batch.value(ticket);
}

}  // namespace vin::diagnostics
