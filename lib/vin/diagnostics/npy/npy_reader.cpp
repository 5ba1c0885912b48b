#include "vin/diagnostics/npy/npy_reader.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

constexpr std::size_t kMaxHeaderBytes = 1 << 20;  // numpy itself refuses more than 10,000
constexpr char kMagic[] = "\x93NUMPY";

// Anything that yields the bytes of one .npy image in order.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads exactly n bytes into `out`, or returns false at the end of the data.
  virtual bool read(unsigned char* out, std::size_t n) = 0;
  /// True when no byte is left (and, for a zip member, its checksum matched).
  virtual bool at_end() = 0;
  /// The bytes left as the container declares them, when it does.
  virtual std::optional<std::uint64_t> remaining() const = 0;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  bool read(unsigned char* out, std::size_t n) override {
    if (bytes_.size() - pos_ < n) return false;
    std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() override { return pos_ == bytes_.size(); }
  std::optional<std::uint64_t> remaining() const override { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

class FileSource : public ByteSource {
 public:
  explicit FileSource(const InputFile& file) : file_(file) {}
  bool read(unsigned char* out, std::size_t n) override {
    const std::size_t got = file_.read_at(at_, out, n);
    at_ += got;
    return got == n;
  }
  bool at_end() override { return at_ >= file_.size(); }
  std::optional<std::uint64_t> remaining() const override {
    return file_.size() - std::min(at_, file_.size());
  }

 private:
  const InputFile& file_;
  std::uint64_t at_ = 0;
};

class ZipMemberSource : public ByteSource {
 public:
  ZipMemberSource(ZipArchive::Member member, std::uint64_t size)
      : member_(std::move(member)), left_(size) {}
  bool read(unsigned char* out, std::size_t n) override {
    const std::size_t done = member_.read(out, n);
    left_ -= std::min<std::uint64_t>(left_, done);
    return done == n;
  }
  std::optional<std::uint64_t> remaining() const override { return left_; }
  bool at_end() override { return member_.at_end(); }  // at the end libzip checks the CRC

 private:
  ZipArchive::Member member_;
  std::uint64_t left_;
};

// --- the header: a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::int64_t>> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Header parse() {
    Header header;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[') fail("structured (record) dtypes are not supported");
        header.descr = parse_string();
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        header.shape = parse_shape();
      } else {
        fail("unexpected header key '" + printable(key, 40) + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail("malformed header");
    }
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(source_ + ": not a readable .npy array: " + why);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("malformed header (expected '") + c + "')");
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("malformed header (expected a string)");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("malformed header (unterminated string)");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }
  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("malformed header (fortran_order is not True or False)");
  }
  std::vector<std::int64_t> parse_shape() {
    expect('(');
    std::vector<std::int64_t> shape;
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return shape;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail("malformed shape (dimensions must be non-negative integers)");
      std::int64_t dim = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const int digit = peek() - '0';
        if (dim > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
          fail("a dimension of the shape is too large");
        dim = dim * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') ++pos_;
      if (shape.size() > 64) fail("more than 64 dimensions");
    }
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

// Sets the element type from a descr such as '<f4'; returns whether the bytes need swapping.
bool set_dtype(NpyArray& array, const std::string& descr, const std::string& source) {
  auto unsupported = [&](const std::string& why) {
    throw Error(source + ": unsupported dtype '" + printable(descr, 40) + "' (" + why + ")");
  };
  if (descr.size() < 2) unsupported("malformed");
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    unsupported("malformed byte order");
  const char kind = descr[1];
  std::size_t size = 0;
  for (std::size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])) || size > 64) unsupported("malformed");
    size = size * 10 + static_cast<std::size_t>(descr[i] - '0');
  }
  switch (kind) {
    case 'b':
      if (size != 1) unsupported("malformed");
      array.kind = NpyKind::boolean;
      break;
    case 'i':
      if (size != 1 && size != 2 && size != 4 && size != 8) unsupported("malformed");
      array.kind = NpyKind::signed_integer;
      break;
    case 'u':
      if (size != 1)
        unsupported("LibTorch has no unsigned integer type wider than uint8; convert the array");
      array.kind = NpyKind::unsigned_integer;
      break;
    case 'f':
      if (size != 2 && size != 4 && size != 8)
        unsupported("only float16, float32 and float64 have a LibTorch type");
      array.kind = NpyKind::floating;
      break;
    case 'c':
      if (size != 8 && size != 16)
        unsupported("only complex64 and complex128 have a LibTorch type");
      array.kind = NpyKind::complex;
      break;
    case 'O':
      throw Error(source + ": object arrays (dtype=object) are not supported; save numeric arrays");
    default:
      unsupported("only numbers and bools can be model inputs");
  }
  array.item_size = size;
  // the one dtype table names it, by numpy's little-endian spelling ('|' for one byte)
  array.dtype =
      dtype_of_npy_descr(std::string(size == 1 ? "|" : "<") + kind + std::to_string(size));
  if (!array.dtype) unsupported("no LibTorch type");
  if (order == '|' || order == '=' || size == 1) return false;
  const bool host_big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
  return (order == '>') != host_big_endian;
}

// To native byte order; complex numbers swap each of their two parts.
void swap_bytes(NpyArray& array) {
  const std::size_t unit = array.kind == NpyKind::complex ? array.item_size / 2 : array.item_size;
  for (std::size_t i = 0; i + unit <= array.data.size(); i += unit)
    std::reverse(array.data.begin() + static_cast<std::ptrdiff_t>(i),
                 array.data.begin() + static_cast<std::ptrdiff_t>(i + unit));
}

NpyArray read_array(ByteSource& in, const std::string& source) {
  unsigned char prefix[8];
  if (!in.read(prefix, 8) || std::memcmp(prefix, kMagic, 6) != 0)
    throw Error(source + ": not a .npy array (no \\x93NUMPY magic)");
  const unsigned major = prefix[6];
  std::size_t header_length = 0;
  if (major == 1) {
    unsigned char len[2];
    if (!in.read(len, 2)) throw Error(source + ": truncated .npy header");
    header_length = len[0] | (static_cast<std::size_t>(len[1]) << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    if (!in.read(len, 4)) throw Error(source + ": truncated .npy header");
    header_length = len[0] | (static_cast<std::size_t>(len[1]) << 8) |
                    (static_cast<std::size_t>(len[2]) << 16) |
                    (static_cast<std::size_t>(len[3]) << 24);
  } else {
    throw Error(source + ": unsupported .npy format version " + std::to_string(major));
  }
  if (header_length > kMaxHeaderBytes)
    throw Error(source + ": .npy header of " + std::to_string(header_length) +
                " bytes is too large");
  std::string text(header_length, '\0');
  if (!in.read(reinterpret_cast<unsigned char*>(text.data()), header_length))
    throw Error(source + ": truncated .npy header");

  const Header header = HeaderParser(text, source).parse();
  if (!header.descr || !header.fortran_order || !header.shape)
    throw Error(source +
                ": not a readable .npy array: the header lacks descr, fortran_order or shape");
  NpyArray array;
  const bool swap = set_dtype(array, *header.descr, source);
  array.shape = *header.shape;
  array.fortran_order = *header.fortran_order;

  // the byte count, checked for overflow before anything is allocated
  std::uint64_t bytes = array.item_size;
  for (const std::int64_t dim : array.shape) {
    if (dim != 0 &&
        bytes > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(dim))
      throw Error(source + ": the shape in the .npy header is impossibly large");
    bytes *= static_cast<std::uint64_t>(dim);
  }
  if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw Error(source + ": the shape in the .npy header is impossibly large");
  const std::optional<std::uint64_t> available = in.remaining();
  if (available && *available < bytes)
    throw Error(source + ": the data is shorter than the header's shape needs (" +
                std::to_string(bytes) + " bytes, " + std::to_string(*available) +
                " present): truncated or mismatched");
  // read in steps, so that where the size is not declared, a header that promises more than the
  // data holds fails before a huge allocation instead of after it
  constexpr std::size_t kStep = std::size_t{64} << 20;
  std::size_t done = 0;
  while (done < bytes) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStep, bytes - done));
    array.data.resize(done + n);
    if (!in.read(array.data.data() + done, n))
      throw Error(source + ": the data is shorter than the header's shape needs (" +
                  std::to_string(bytes) + " bytes): truncated or mismatched");
    done += n;
  }
  if (!in.at_end())
    throw Error(source + ": the data is longer than the header's shape needs (" +
                std::to_string(bytes) + " bytes)");
  if (swap) swap_bytes(array);
  return array;
}

}  // namespace

std::int64_t NpyArray::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string NpyArray::dtype_name() const { return dtype ? std::string(dtype->name) : "unknown"; }

NpyArray parse_npy(std::string_view bytes, const std::string& source) {
  MemorySource in(bytes);
  return read_array(in, source);
}

NpyArray read_npy_file(const InputFile& file) {
  FileSource source(file);
  return read_array(source, file.path());
}

namespace {
bool starts_npy(std::string_view head) { return head.substr(0, 6) == "\x93NUMPY"; }
bool starts_zip(std::string_view head) { return head.substr(0, 2) == "PK"; }
}  // namespace

NpyArray read_npy_file(const std::string& path) {
  return read_npy_file(*InputFile::open(path, "an .npy file", starts_npy));
}

std::vector<std::string> npz_array_names(const ZipArchive& zip) {
  std::vector<std::string> names;
  std::unordered_map<std::string, const std::string*> member_of;  // name -> its first member
  for (const ZipArchive::Entry& entry : zip.entries()) {
    const std::string& member = entry.name;
    const bool npy = member.size() >= 4 && member.compare(member.size() - 4, 4, ".npy") == 0;
    std::string name = npy ? member.substr(0, member.size() - 4) : member;
    const auto [first, added] = member_of.emplace(name, &member);
    if (!added)
      throw UsageError(zip.path() + ": two arrays named '" + printable(name, 200) + "' (" +
                       (*first->second == member ? "the member " + printable(member, 200) +
                                                       " twice"
                                                 : "the members " + printable(*first->second, 200) +
                                                       " and " + printable(member, 200)) +
                       "): which one is meant is ambiguous (numpy.load would keep one); save "
                       "each array under a name of its own");
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<NpyArray> read_npz_file(const ZipArchive& zip) {
  npz_array_names(zip);  // no array read before the names are known to be unambiguous
  std::vector<NpyArray> arrays;
  const auto& entries = zip.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& member = entries[i].name;
    std::string source = zip.path() + " (member " + printable(member, 200) + ")";
    if (member.size() < 4 || member.compare(member.size() - 4, 4, ".npy") != 0)
      throw Error(source + ": an .npz member that is not a .npy array");
    ZipMemberSource in(zip.open(i, source), entries[i].size);
    NpyArray array = read_array(in, source);
    array.name = member.substr(0, member.size() - 4);
    arrays.push_back(std::move(array));
  }
  return arrays;
}

std::vector<NpyArray> read_npz_file(const std::string& path) {
  InputFilePtr file = InputFile::open(path, "an .npz file", starts_zip);
  if (!file->starts_with("PK"))
    throw Error(path + ": not a readable .npz file (not a zip archive)");
  return read_npz_file(ZipArchive(std::move(file)));
}

}  // namespace vin::diagnostics
