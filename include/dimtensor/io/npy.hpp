#pragma once
/// @file
/// @brief NumPy `.npy` files: `load_npy<Tensor>(path)`, `save_npy(path, x)`,
/// and the raw header layer they share (`read_npy_header`, `write_npy_header`).
///
/// Supported: format versions 1.0, 2.0 and 3.0 for reading (1.0 written, or
/// 2.0 when the header outgrows 65535 bytes); little-endian dtypes `<f4`
/// (float), `<f8` (double), `<i4` (std::int32_t), `<i8` (std::int64_t) and
/// `|b1` (bool); C order only.
///
/// Loading never converts: the file's dtype must be exactly the tensor's
/// element type, its rank the tensor's rank and its extents the tensor's
/// static extents; anything else is an `io_error` naming the file and both
/// sides (convert after loading with `dimtensor::cast<T>` when needed).
/// Malformed input of any kind (bad magic, truncated or garbage header,
/// truncated data, a shape too large for the file) is an `io_error`, never a
/// crash: the header length is capped and the data size is checked against
/// the file size before anything is allocated.
///
/// Tensors of every backend load and save; elements the host cannot reach
/// (`cuda`) pass through a cpu copy.

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>
#include <dimtensor/ops/to.hpp>

namespace dimtensor {

/// The largest `.npy` header (the dict after the preamble) the readers accept, in bytes.
inline constexpr std::size_t npy_max_header_bytes = std::size_t{1} << 16;

/// @brief What an `.npy` header says: format version, dtype, order and shape.
struct npy_header {
  /// Format major version (1, 2 or 3).
  int major_version = 1;
  /// Format minor version (0).
  int minor_version = 0;
  /// The dtype as NumPy spells it: `<f4`, `<f8`, `<i4`, `<i8`, `|b1`, …
  std::string descr;
  /// Whether the data is stored column-major (never supported by the loaders).
  bool fortran_order = false;
  /// The extents, outermost first; empty for a 0-d array.
  std::vector<index_t> shape;
  /// Bytes of preamble and header: the first element follows this many
  /// bytes after the magic string (the file's start, for a file of one array).
  std::size_t data_offset = 0;

  /// Number of elements the shape holds: 0 when an extent is 0 (the
  /// product of the other extents is checked not to overflow when read).
  index_t element_count() const noexcept {
    index_t n = 1;
    for (auto e : shape) {
      if (e == 0) return 0;
      n *= e;
    }
    return n;
  }
};

namespace detail {

/// The `.npy` dtype and the dimtensor name of an element type.
template <class T>
struct npy_dtype;
template <>
struct npy_dtype<float> {
  static constexpr std::string_view descr = "<f4";
  static constexpr std::string_view name = "float32";
};
template <>
struct npy_dtype<double> {
  static constexpr std::string_view descr = "<f8";
  static constexpr std::string_view name = "float64";
};
template <>
struct npy_dtype<std::int32_t> {
  static constexpr std::string_view descr = "<i4";
  static constexpr std::string_view name = "int32";
};
template <>
struct npy_dtype<std::int64_t> {
  static constexpr std::string_view descr = "<i8";
  static constexpr std::string_view name = "int64";
};
template <>
struct npy_dtype<bool> {
  static constexpr std::string_view descr = "|b1";
  static constexpr std::string_view name = "bool";
};

/// The element type name for a supported descr, or "" when unsupported.
inline std::string_view npy_dtype_name(std::string_view descr) {
  if (descr == npy_dtype<float>::descr) return npy_dtype<float>::name;
  if (descr == npy_dtype<double>::descr) return npy_dtype<double>::name;
  if (descr == npy_dtype<std::int32_t>::descr) return npy_dtype<std::int32_t>::name;
  if (descr == npy_dtype<std::int64_t>::descr) return npy_dtype<std::int64_t>::name;
  if (descr == npy_dtype<bool>::descr) return npy_dtype<bool>::name;
  return {};
}

/// Bytes per element of a supported descr (its trailing digits), 0 otherwise.
inline std::size_t npy_word_size(std::string_view descr) {
  if (npy_dtype_name(descr).empty()) return 0;
  return static_cast<std::size_t>(descr.back() - '0');
}

/// Python's spelling of a shape: `(2, 3)`, `(3,)`, `()`; error messages
/// pass @p max_shown to stay readable for absurd ranks.
inline std::string npy_shape_string(std::span<index_t const> shape,
                                    std::size_t max_shown = std::numeric_limits<std::size_t>::max()) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    if (i == max_shown) {
      s += "... " + std::to_string(shape.size() - max_shown) + " more";
      break;
    }
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ',';
  return s + ")";
}

/// Header text fit for an error message: bounded, with control and non-ASCII bytes escaped.
inline std::string npy_quote(std::string_view text) {
  constexpr std::size_t max_shown = 160;
  std::string s = "\"";
  for (std::size_t i = 0; i < text.size() && i < max_shown; ++i) {
    auto const c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      s += static_cast<char>(c);
    } else {
      constexpr char hex[] = "0123456789abcdef";
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  if (text.size() > max_shown) s += "...";
  return s + "\"";
}

/// "<op>: <file>: "
inline std::string npy_prefix(std::string_view op, std::string_view name) {
  return std::string(op) + ": " + std::string(name) + ": ";
}

// The header is a Python dict literal, written by NumPy as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This parser accepts exactly the literals such a dict may hold for the
// supported dtypes and rejects everything else with the position it failed at.
class npy_header_parser {
 public:
  npy_header_parser(std::string_view text, std::string_view op, std::string_view name)
      : text_(text), op_(op), name_(name) {}

  void parse(npy_header& h) {
    bool has_descr = false;
    bool has_order = false;
    bool has_shape = false;
    skip_space();
    expect('{', "the header must be a dict starting with '{'");
    skip_space();
    while (!peek('}')) {
      std::string const key = parse_string("a dict key");
      skip_space();
      expect(':', "':' after the key '" + key + "'");
      skip_space();
      if (key == "descr") {
        duplicate(has_descr, key);
        if (peek('[')) fail("structured dtypes (a list as 'descr') are not supported");
        h.descr = parse_string("the value of 'descr'");
      } else if (key == "fortran_order") {
        duplicate(has_order, key);
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        duplicate(has_shape, key);
        h.shape = parse_shape();
      } else {
        fail("unexpected key '" + key + "' (an .npy header has 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (peek(',')) {
        ++pos_;
        skip_space();
      } else if (!peek('}')) {
        fail("',' or '}' expected after the value of '" + key + "'");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    if (!has_descr) fail("the key 'descr' is missing");
    if (!has_order) fail("the key 'fortran_order' is missing");
    if (!has_shape) fail("the key 'shape' is missing");
  }

 private:
  [[noreturn]] void fail(std::string const& what) const {
    throw io_error(npy_prefix(op_, name_) + "malformed .npy header: " + what + " at offset " + std::to_string(pos_) +
                   " of " + npy_quote(text_));
  }

  void duplicate(bool& seen, std::string const& key) const {
    if (seen) fail("the key '" + key + "' appears twice");
    seen = true;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void expect(char c, std::string const& what) {
    if (!peek(c)) fail(what);
    ++pos_;
  }

  std::string parse_string(std::string const& what) {
    if (!peek('\'') && !peek('"')) fail("a quoted string expected as " + what);
    char const quote = text_[pos_++];
    std::string s;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char const c = text_[pos_];
      if (c == '\\' || c == '\n') fail("escapes and line breaks are not supported in " + what);
      s += c;
      ++pos_;
    }
    if (pos_ == text_.size()) fail("unterminated string as " + what);
    ++pos_;
    return s;
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
    fail("True or False expected as the value of 'fortran_order'");
  }

  std::vector<index_t> parse_shape() {
    std::vector<index_t> shape;
    expect('(', "a tuple expected as the value of 'shape'");
    skip_space();
    bool comma_after_last = false;
    while (!peek(')')) {
      shape.push_back(parse_extent());
      skip_space();
      comma_after_last = peek(',');
      if (comma_after_last) {
        ++pos_;
        skip_space();
      } else if (!peek(')')) {
        fail("',' or ')' expected in 'shape'");
      }
    }
    // (3) is an int in Python, not a tuple; NumPy writes (3,).
    if (shape.size() == 1 && !comma_after_last) fail("'shape' must be a tuple: (n,) for one dimension");
    ++pos_;
    return shape;
  }

  index_t parse_extent() {
    if (peek('-')) fail("negative extent in 'shape'");
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') fail("an integer expected in 'shape'");
    index_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      index_t const digit = text_[pos_] - '0';
      if (v > (std::numeric_limits<index_t>::max() - digit) / 10) fail("an extent in 'shape' is too large");
      v = v * 10 + digit;
      ++pos_;
    }
    if (peek('L')) ++pos_;  // Python 2 longs, as old NumPy versions wrote them
    return v;
  }

  std::string_view text_;
  std::string_view op_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

[[noreturn]] inline void throw_npy_error(std::string_view op, std::string_view name, std::string const& what) {
  throw io_error(npy_prefix(op, name) + what);
}

inline constexpr char npy_magic[] = "\x93NUMPY";
inline constexpr std::size_t npy_magic_size = 6;

/// Reads and checks the preamble and header; leaves @p in at the first element.
inline npy_header read_npy_header(std::istream& in, std::string_view op, std::string_view name) {
  auto const fail = [&](std::string const& what) { throw_npy_error(op, name, what); };

  unsigned char pre[8] = {};
  in.read(reinterpret_cast<char*>(pre), 8);
  auto const got = static_cast<std::size_t>(in.gcount());
  if (got < npy_magic_size || std::memcmp(pre, npy_magic, npy_magic_size) != 0) {
    fail("not an .npy file: bad magic (the file must start with \\x93NUMPY)");
  }
  if (got < 8) fail("truncated header: the file ends inside the format version");

  npy_header h;
  h.major_version = pre[6];
  h.minor_version = pre[7];
  std::size_t len_bytes = 0;
  if (h.major_version == 1 && h.minor_version == 0) {
    len_bytes = 2;
  } else if ((h.major_version == 2 || h.major_version == 3) && h.minor_version == 0) {
    len_bytes = 4;
  } else {
    fail("unsupported .npy format version " + std::to_string(h.major_version) + "." +
         std::to_string(h.minor_version) + " (1.0, 2.0 and 3.0 are supported)");
  }

  unsigned char len_buf[4] = {};
  in.read(reinterpret_cast<char*>(len_buf), static_cast<std::streamsize>(len_bytes));
  if (static_cast<std::size_t>(in.gcount()) != len_bytes) fail("truncated header: the file ends inside the header length");
  std::size_t header_len = 0;
  for (std::size_t i = len_bytes; i-- > 0;) header_len = (header_len << 8) | len_buf[i];
  if (header_len > npy_max_header_bytes) {
    fail("header length " + std::to_string(header_len) + " exceeds the limit of " +
         std::to_string(npy_max_header_bytes) + " bytes");
  }

  std::string text(header_len, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_len));
  auto const text_got = static_cast<std::size_t>(in.gcount());
  if (text_got != header_len) {
    fail("truncated header: the header length says " + std::to_string(header_len) + " bytes but the file has " +
         std::to_string(text_got));
  }
  npy_header_parser(text, op, name).parse(h);

  // Every extent fits in index_t; the product of the non-zero ones must too,
  // in bytes, also when another extent is 0: a tensor of this shape has
  // strides that multiply them (as the tensor's own check says).
  std::size_t const word = npy_word_size(h.descr);
  index_t const max_count = std::numeric_limits<index_t>::max() / static_cast<index_t>(word > 0 ? word : 1);
  index_t count = 1;
  for (auto e : h.shape) {
    if (e == 0) continue;
    if (count > max_count / e) fail("the shape " + npy_shape_string(h.shape, 16) + " holds too many elements to address");
    count *= e;
  }

  h.data_offset = npy_magic_size + 2 + len_bytes + header_len;
  return h;
}

/// The bytes left in @p in from its current position, or -1 when it cannot seek.
inline std::streamoff bytes_left(std::istream& in) {
  auto const here = in.tellg();
  if (here == std::istream::pos_type(-1)) {
    in.clear();
    return -1;
  }
  in.seekg(0, std::ios::end);
  auto const end = in.tellg();
  in.seekg(here);
  if (end == std::istream::pos_type(-1) || !in) {
    in.clear();
    in.seekg(here);
    return -1;
  }
  return static_cast<std::streamoff>(end - here);
}

template <class T>
void byteswap_in_place(T* data, index_t n) {
  if constexpr (sizeof(T) > 1) {
    for (index_t i = 0; i < n; ++i) {
      auto* b = reinterpret_cast<unsigned char*>(data + i);
      for (std::size_t k = 0; k < sizeof(T) / 2; ++k) std::swap(b[k], b[sizeof(T) - 1 - k]);
    }
  }
}

/// Converts an extents container to the shape vector of a header.
template <std::size_t R>
std::vector<index_t> shape_vector(std::array<index_t, R> const& ext) {
  return std::vector<index_t>(ext.begin(), ext.end());
}

[[noreturn]] inline void throw_open_error(std::string_view op, std::string_view verb,
                                          std::filesystem::path const& path, int err) {
  throw io_error(std::string(op) + ": cannot " + std::string(verb) + " " + path.string() + ": " +
                 (err != 0 ? std::generic_category().message(err) : std::string("unknown error")));
}

}  // namespace detail

/// @brief Reads the preamble and header of an `.npy` stream and checks that
/// they are well formed; leaves @p in at the first element.
///
/// @p name (the file name) prefixes every error message.  Throws `io_error`
/// on a bad magic, an unsupported version, a header that is truncated,
/// longer than `npy_max_header_bytes` or not a valid header dict, or a shape
/// whose byte size overflows.  The dtype and order are reported, not judged.
inline npy_header read_npy_header(std::istream& in, std::string_view name) {
  return detail::read_npy_header(in, "read_npy_header", name);
}

/// @brief Writes the preamble and header for an array of dtype @p descr and
/// shape @p shape, C order: version 1.0, or 2.0 when the header is too long
/// for 1.0; padded so that the data starts on a 64-byte boundary.
inline void write_npy_header(std::ostream& out, std::string_view descr, std::span<index_t const> shape) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " +
                     detail::npy_shape_string(shape) + ", }";
  auto const padded = [&](std::size_t preamble) {
    std::size_t const total = preamble + dict.size() + 1;
    return dict.size() + 1 + (64 - total % 64) % 64;
  };
  std::size_t len = padded(10);
  bool const v2 = len > 0xffff;
  if (v2) len = padded(12);
  std::string header(detail::npy_magic, detail::npy_magic_size);
  header += static_cast<char>(v2 ? 2 : 1);
  header += '\0';
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) header += static_cast<char>((len >> (8 * i)) & 0xff);
  header += dict;
  header.append(len - dict.size() - 1, ' ');
  header += '\n';
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
}

namespace detail {

/// Reads up to @p n bytes, growing the buffer only as bytes arrive, so that a
/// header claiming a huge shape cannot make it allocate more than the stream holds.
inline std::string read_at_most(std::istream& in, std::streamoff n) {
  constexpr std::streamoff chunk = std::streamoff{1} << 20;
  std::string buf;
  while (static_cast<std::streamoff>(buf.size()) < n) {
    std::streamoff const want = std::min(chunk, n - static_cast<std::streamoff>(buf.size()));
    std::size_t const old = buf.size();
    buf.resize(old + static_cast<std::size_t>(want));
    in.read(buf.data() + old, static_cast<std::streamsize>(want));
    buf.resize(old + static_cast<std::size_t>(in.gcount()));
    if (in.gcount() != want) break;
  }
  return buf;
}

/// Whether load_npy can load into Tensor; reports why not (once) when it cannot.
template <class Tensor>
constexpr bool check_npy_target() {
  if constexpr (!is_tensor_v<Tensor>) {
    static_assert(diagnostic::always_false<Tensor>,
                  "dimtensor::load_npy<Tensor>: Tensor must be a tensor type, e.g. tensor<float, Batch>");
    return false;
  } else {
    return true;
  }
}

template <class Tensor>
inline constexpr bool npy_target_ok_v = is_tensor_v<Tensor>;

/// load_npy into a tensor whose elements the host writes directly.
template <class Tensor>
Tensor load_npy_host(std::istream& in, std::string_view name, bool whole_file) {
  using T = typename Tensor::value_type;
  using specs = typename Tensor::specs;
  constexpr std::string_view op = "load_npy";
  auto const prefix = npy_prefix(op, name);

  npy_header const h = read_npy_header(in, op, name);

  if (h.descr != npy_dtype<T>::descr) {
    std::string what = "dtype " + h.descr;
    if (!h.descr.empty() && h.descr.front() == '>') {
      throw io_error(prefix + what + " is big-endian; only little-endian files are supported (re-save with " +
                     "numpy's .astype('<" + h.descr.substr(1) + "'))");
    }
    auto const file_type = npy_dtype_name(h.descr);
    if (file_type.empty()) {
      throw io_error(prefix + what + " is not supported (supported: <f4 float32, <f8 float64, <i4 int32, " +
                     "<i8 int64, |b1 bool) and the tensor holds " + std::string(npy_dtype<T>::name));
    }
    throw io_error(prefix + what + " (" + std::string(file_type) + ") but the tensor holds " +
                   std::string(npy_dtype<T>::name) + " (" + std::string(npy_dtype<T>::descr) +
                   "); load_npy does not convert: load into a tensor of " + std::string(file_type) +
                   " and convert with dimtensor::cast");
  }
  if (h.fortran_order) {
    throw io_error(prefix + "fortran_order is True (column-major data); only C order is supported (re-save with " +
                   "numpy.ascontiguousarray)");
  }

  constexpr std::size_t R = Tensor::rank;
  if (h.shape.size() != R) {
    std::string dims_text = "[";
    for (std::size_t i = 0; i < R; ++i) {
      if (i) dims_text += ", ";
      dims_text += names_of<specs>::value[i];
    }
    dims_text += "]";
    throw io_error(prefix + "the file holds shape " + npy_shape_string(h.shape, 16) + " (rank " +
                   std::to_string(h.shape.size()) + ") but the tensor has dims " + dims_text + " (rank " +
                   std::to_string(R) + ")");
  }
  typename Tensor::extents_type ext{};
  for (std::size_t i = 0; i < R; ++i) {
    ext[i] = h.shape[i];
    index_t const want = static_extents_of<specs>::value[i];
    if (want != dynamic_extent && want != ext[i]) {
      throw io_error(prefix + "extent mismatch for dimension " + std::string(names_of<specs>::value[i]) +
                     ": " + std::to_string(ext[i]) + " (file, shape " + npy_shape_string(h.shape) + ") vs " +
                     std::to_string(want) + " (static)");
    }
  }

  index_t const count = h.element_count();
  auto const nbytes = static_cast<std::streamoff>(count) * static_cast<std::streamoff>(sizeof(T));
  std::streamoff const left = bytes_left(in);
  auto const data_error = [&](std::streamoff have, std::string_view what) {
    throw io_error(prefix + std::string(what) + ": the shape " + npy_shape_string(h.shape) + " of " +
                   h.descr + " needs " + std::to_string(nbytes) + " bytes of data but the file has " +
                   std::to_string(have) + " after the " + std::to_string(h.data_offset) + "-byte header");
  };
  if (left >= 0 && left < nbytes) data_error(left, "truncated data");
  if (whole_file && left > nbytes) data_error(left, "trailing bytes after the data");

  // Bools are staged to check their bytes; streams that cannot tell their
  // size are staged so that nothing is allocated for data that is not there.
  bool const staged = left < 0 || std::is_same_v<T, bool>;
  std::string bytes;
  if (staged) {
    bytes = read_at_most(in, nbytes);
    if (static_cast<std::streamoff>(bytes.size()) != nbytes) {
      data_error(static_cast<std::streamoff>(bytes.size()), "truncated data");
    }
  }

  Tensor t(uninitialized, ext);
  if (count == 0) return t;
  if constexpr (std::is_same_v<T, bool>) {
    for (index_t i = 0; i < count; ++i) {
      auto const b = static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
      if (b > 1) {
        throw io_error(prefix + "malformed bool data: byte " + std::to_string(b) + " at element " +
                       std::to_string(i) + " (|b1 elements must be 0 or 1)");
      }
      t.data()[i] = b != 0;
    }
  } else {
    if (staged) {
      std::memcpy(t.data(), bytes.data(), static_cast<std::size_t>(nbytes));
    } else {
      in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(nbytes));
      if (in.gcount() != nbytes) data_error(in.gcount(), "truncated data");
    }
    if constexpr (std::endian::native == std::endian::big) byteswap_in_place(t.data(), count);
  }
  return t;
}

/// load_npy into any tensor: on a backend the host cannot write, the file is
/// read into a cpu tensor which is then copied to the backend.
template <class Tensor>
Tensor load_npy_impl(std::istream& in, std::string_view name, bool whole_file) {
  using T = typename Tensor::value_type;
  using specs = typename Tensor::specs;
  if constexpr (!Tensor::backend::host_accessible) {
    return to<typename Tensor::backend>(load_npy_host<tensor_with_dims<cpu, T, specs>>(in, name, whole_file));
  } else {
    return load_npy_host<Tensor>(in, name, whole_file);
  }
}

}  // namespace detail

/// @brief Loads one array from an `.npy` stream into a new tensor of type
/// @p Tensor (a `basic_tensor` of any backend), leaving the stream after its
/// data (so arrays saved one after another into one stream load one after
/// another); @p name prefixes error messages.  Checks as load_npy(path) does.
template <class Tensor>
Tensor load_npy(std::istream& in, std::string_view name) {
  if constexpr (!detail::npy_target_ok_v<Tensor>) {
    (void)detail::check_npy_target<Tensor>();
    (void)in;
    (void)name;
    return Tensor{};
  } else {
    return detail::load_npy_impl<Tensor>(in, name, false);
  }
}

/// @brief Loads an `.npy` file into a new tensor of type @p Tensor:
/// `auto x = load_npy<tensor<float, Batch, Queries, KVPairs>>("x.npy");`.
///
/// The file's dtype must be the tensor's element type exactly (no
/// conversion), its rank the tensor's rank, its extents the tensor's static
/// extents; the data must be C order and exactly as long as the shape says
/// (no trailing bytes).  On a backend the host cannot write (`cuda`) the
/// data is read on the host and then copied to the backend.
/// Every failure is an `io_error` whose message names the call, the file and
/// what disagrees (`load_npy: x.npy: dtype <f8 (float64) but the tensor holds float32 …`).
template <class Tensor>
Tensor load_npy(std::filesystem::path const& path) {
  if constexpr (!detail::npy_target_ok_v<Tensor>) {
    (void)detail::check_npy_target<Tensor>();
    (void)path;
    return Tensor{};
  } else {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) detail::throw_open_error("load_npy", "open", path, errno);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) detail::throw_open_error("load_npy", "open", path, EISDIR);
    return detail::load_npy_impl<Tensor>(in, path.string(), true);
  }
}

/// @brief Writes an expression to an `.npy` stream (C order, dtype of its
/// element type); evaluates it first if it is not a tensor, and copies its
/// elements to the host when the host cannot read them (`cuda`).
template <Expression E>
void save_npy(std::ostream& out, E const& x) {
  using T = typename E::value_type;
  auto const t = detail::to_host(x);
  auto const shape = detail::shape_vector(t.extents());
  write_npy_header(out, detail::npy_dtype<T>::descr, shape);
  index_t const n = t.size();
  if (n == 0) return;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<char> bytes(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) bytes[static_cast<std::size_t>(i)] = t.data()[i] ? 1 : 0;
    out.write(bytes.data(), static_cast<std::streamsize>(n));
  } else if constexpr (std::endian::native == std::endian::big) {
    std::vector<T> copy(t.data(), t.data() + n);
    detail::byteswap_in_place(copy.data(), n);
    out.write(reinterpret_cast<char const*>(copy.data()), static_cast<std::streamsize>(n * sizeof(T)));
  } else {
    out.write(reinterpret_cast<char const*>(t.data()), static_cast<std::streamsize>(n * sizeof(T)));
  }
}

/// @brief Writes an expression to an `.npy` file (C order, the dtype of its
/// element type: float → `<f4`, double → `<f8`, std::int32_t → `<i4`,
/// std::int64_t → `<i8`, bool → `|b1`); evaluates it first if needed.
/// Throws `io_error` naming the file when it cannot be created or written.
template <Expression E>
void save_npy(std::filesystem::path const& path, E const& x) {
  auto const t = eval(x);  // evaluate before touching the file: a shape_error must not leave it truncated
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) detail::throw_open_error("save_npy", "create", path, errno);
  save_npy(out, t);
  out.flush();
  if (!out) detail::throw_open_error("save_npy", "write", path, errno);
  out.close();
  if (!out) detail::throw_open_error("save_npy", "write", path, errno);
}

/// Absorbs the result of a call whose compile-time check failed.
inline void save_npy(std::filesystem::path const&, ill_formed) {}

}  // namespace dimtensor
