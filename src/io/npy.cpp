// The non-template part of include/dimtensor/io/npy.hpp: the .npy header's
// parser and writer and the messages, compiled once into the dimtensor::runtime
// library.
#include <dimtensor/io/npy.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <istream>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace dimtensor {
namespace detail {
namespace {

// Bytes per element of a supported descr (its trailing digits), 0 otherwise.
std::size_t npy_word_size(std::string_view descr) {
  if (npy_dtype_name(descr).empty()) return 0;
  return static_cast<std::size_t>(descr.back() - '0');
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
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
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

[[noreturn]] void throw_npy_error(std::string_view op, std::string_view name, std::string const& what) {
  throw io_error(npy_prefix(op, name) + what);
}

inline constexpr char npy_magic[] = "\x93NUMPY";
inline constexpr std::size_t npy_magic_size = 6;

}  // namespace

std::string_view npy_dtype_name(std::string_view descr) {
  if (descr == npy_dtype<float>::descr) return npy_dtype<float>::name;
  if (descr == npy_dtype<double>::descr) return npy_dtype<double>::name;
  if (descr == npy_dtype<std::int32_t>::descr) return npy_dtype<std::int32_t>::name;
  if (descr == npy_dtype<std::int64_t>::descr) return npy_dtype<std::int64_t>::name;
  if (descr == npy_dtype<bool>::descr) return npy_dtype<bool>::name;
  return {};
}

std::string extent_list(std::span<index_t const> shape, std::size_t max_shown) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    if (i == max_shown) {
      s += "... " + std::to_string(shape.size() - max_shown) + " more";
      break;
    }
    s += std::to_string(shape[i]);
  }
  return s;
}

std::string npy_shape_string(std::span<index_t const> shape, std::size_t max_shown) {
  std::string s = "(" + extent_list(shape, max_shown);
  if (shape.size() == 1) s += ',';
  return s + ")";
}

std::string npy_quote(std::string_view text) {
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

std::string npy_prefix(std::string_view op, std::string_view name) {
  return std::string(op) + ": " + std::string(name) + ": ";
}

npy_header read_npy_header(std::istream& in, std::string_view op, std::string_view name) {
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
    fail("unsupported .npy format version " + std::to_string(h.major_version) + "." + std::to_string(h.minor_version) +
         " (1.0, 2.0 and 3.0 are supported)");
  }

  unsigned char len_buf[4] = {};
  in.read(reinterpret_cast<char*>(len_buf), static_cast<std::streamsize>(len_bytes));
  if (static_cast<std::size_t>(in.gcount()) != len_bytes)
    fail("truncated header: the file ends inside the header length");
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
    if (count > max_count / e)
      fail("the shape " + npy_shape_string(h.shape, 16) + " holds too many elements to address");
    count *= e;
  }

  h.data_offset = npy_magic_size + 2 + len_bytes + header_len;
  return h;
}

std::streamoff bytes_left(std::istream& in) {
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

[[noreturn]] void throw_open_error(std::string_view op, std::string_view verb, std::filesystem::path const& path,
                                   int err) {
  throw io_error(std::string(op) + ": cannot " + std::string(verb) + " " + path.string() + ": " +
                 (err != 0 ? std::generic_category().message(err) : std::string("unknown error")));
}

std::string read_at_most(std::istream& in, std::streamoff n) {
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

}  // namespace detail

npy_header read_npy_header(std::istream& in, std::string_view name) {
  return detail::read_npy_header(in, "read_npy_header", name);
}

void write_npy_header(std::ostream& out, std::string_view descr, std::span<index_t const> shape) {
  std::string dict = "{'descr': '" + std::string(descr) +
                     "', 'fortran_order': False, 'shape': " + detail::npy_shape_string(shape) + ", }";
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

}  // namespace dimtensor
