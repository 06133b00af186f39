#pragma once
/// @file
/// @brief A small strict JSON reader and writer (RFC 8259) for the headers
/// of the file formats dimtensor reads (safetensors), so that the library
/// needs no JSON dependency.  The reader and writer are compiled once, in
/// src/io/json.cpp (the `dimtensor::runtime` library).
///
/// The reader accepts exactly RFC 8259 text and nothing else: no comments,
/// no trailing commas, no single quotes, no NaN/Infinity, no leading zeros,
/// no raw control characters or invalid UTF-8 in strings, no unpaired
/// surrogates in `\u` escapes, no duplicate keys in an object.  Nesting is
/// limited (64 levels by default) so that hostile input cannot overflow the
/// stack.  Every failure is a `json::parse_error` (a `value_error`) that
/// says what was expected and where: byte offset, line and column.
///
/// The writer prints compact JSON (no spaces) as serde_json and Python's
/// `json.dumps(..., separators=(",", ":"), ensure_ascii=False)` do: strings
/// are written as UTF-8, only `"`, `\` and control characters are escaped.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <dimtensor/core/error.hpp>

namespace dimtensor::detail::json {

class value;
struct member;

/// The elements of a JSON array.
using array = std::vector<value>;

/// The members of a JSON object, in the order they were written; the parser
/// guarantees unique keys, and the writer prints them in this order.
using object = std::vector<member>;

/// What a JSON value holds.  Numbers are split: a number written without
/// fraction or exponent that fits an `std::int64_t` is an `integer`; every
/// other number is a `number` (a double).
enum class kind { null, boolean, integer, number, string, array, object };

/// "null", "a boolean", "an integer", … for messages such as "found an array".
constexpr std::string_view kind_name(kind k) noexcept {
  switch (k) {
    case kind::null:
      return "null";
    case kind::boolean:
      return "a boolean";
    case kind::integer:
      return "an integer";
    case kind::number:
      return "a number";
    case kind::string:
      return "a string";
    case kind::array:
      return "an array";
    case kind::object:
      return "an object";
  }
  return "?";
}

/// @brief A JSON value: null, boolean, integer, number, string, array or object.
class value {
 public:
  /// null.
  value() noexcept;
  /// null.
  value(std::nullptr_t) noexcept;  // NOLINT: implicit, as a JSON literal
  /// true or false.
  value(bool b) noexcept;  // NOLINT
  /// An integer; `value_error` when it does not fit an `std::int64_t`.
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  value(I i);  // NOLINT
  /// A number (must be finite to be written).
  template <std::floating_point F>
  value(F x) noexcept;  // NOLINT
  /// A string (UTF-8).
  value(std::string s) noexcept;  // NOLINT
  /// A string (UTF-8); spelled out so that a literal does not become a bool.
  value(char const* s);  // NOLINT
  /// A string (UTF-8).
  value(std::string_view s);  // NOLINT
  /// An array.
  value(array a) noexcept;  // NOLINT
  /// An object (keys should be unique: the writer does not check).
  value(object o) noexcept;  // NOLINT

  /// What the value holds.
  kind type() const noexcept { return static_cast<kind>(v_.index()); }
  /// Whether it is null.
  bool is_null() const noexcept { return type() == kind::null; }
  /// Whether it is an integer or a number.
  bool is_numeric() const noexcept { return type() == kind::integer || type() == kind::number; }

  /// The boolean; `value_error` for any other kind.
  bool as_bool() const { return get<bool>(kind::boolean); }
  /// The integer; `value_error` for any other kind (a number with a fraction included).
  std::int64_t as_integer() const { return get<std::int64_t>(kind::integer); }
  /// The numeric value of an integer or a number; `value_error` for any other kind.
  double as_number() const {
    if (type() == kind::integer) return static_cast<double>(std::get<std::int64_t>(v_));
    return get<double>(kind::number);
  }
  /// The string; `value_error` for any other kind.
  std::string const& as_string() const { return get<std::string>(kind::string); }
  /// The elements; `value_error` for any other kind.
  array const& as_array() const { return get<array>(kind::array); }
  /// The members; `value_error` for any other kind.
  object const& as_object() const { return get<object>(kind::object); }

  /// The member named @p key of an object, or nullptr when there is none
  /// (or when the value is not an object).  Linear: objects here are small.
  value const* find(std::string_view key) const noexcept;

  /// Structural equality (an integer never equals a number).
  friend bool operator==(value const& a, value const& b);

 private:
  template <class I>
  static std::int64_t to_int64(I i) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(std::int64_t)) {
      if (i > static_cast<std::make_unsigned_t<std::int64_t>>(std::numeric_limits<std::int64_t>::max())) {
        throw value_error("json::value: the integer " + std::to_string(i) + " does not fit a signed 64-bit integer");
      }
    }
    return static_cast<std::int64_t>(i);
  }

  template <class T>
  T const& get(kind want) const {
    if (auto const* p = std::get_if<T>(&v_)) return *p;
    throw value_error("json::value: expected " + std::string(kind_name(want)) + ", found " +
                      std::string(kind_name(type())));
  }

  // The alternatives are in the order of `kind`.
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, array, object> v_;
};

/// @brief One member of a JSON object: its key and its value.  A struct of
/// its own rather than a `std::pair`, which some front ends (nvcc's) would
/// instantiate while `value` is still incomplete.
struct member {
  /// Builds the member from anything a key and a value are made from.
  template <class K, class V>
  member(K&& key, V&& v) : first(std::forward<K>(key)), second(std::forward<V>(v)) {}
  /// The key.
  std::string first;
  /// The value.
  value second;
  /// Equal keys and equal values.
  friend bool operator==(member const& a, member const& b) = default;
};

// value's constructors and equality are defined once `member` is complete
// (nvcc's front end instantiates the variant's members where they are written).
inline value::value() noexcept = default;
inline value::value(std::nullptr_t) noexcept {}
inline value::value(bool b) noexcept : v_(b) {}
template <std::integral I>
  requires(!std::same_as<I, bool>)
value::value(I i) : v_(to_int64(i)) {}
template <std::floating_point F>
value::value(F x) noexcept : v_(static_cast<double>(x)) {}
inline value::value(std::string s) noexcept : v_(std::move(s)) {}
inline value::value(char const* s) : v_(std::string(s)) {}
inline value::value(std::string_view s) : v_(std::string(s)) {}
inline value::value(array a) noexcept : v_(std::move(a)) {}
inline value::value(object o) noexcept : v_(std::move(o)) {}
/// @brief Malformed JSON text: what was expected, and where.
class parse_error : public value_error {
 public:
  /// @p reason says what is wrong; @p offset, @p line and @p column (1-based, in bytes) where.
  parse_error(std::string const& reason, std::size_t offset, std::size_t line, std::size_t column)
      : value_error(reason + " at byte " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
                    std::to_string(column) + ")"),
        reason_(reason),
        offset_(offset),
        line_(line),
        column_(column) {}

  /// What is wrong, without the position.
  std::string const& reason() const noexcept { return reason_; }
  /// Byte offset (0-based) of the offending character in the text.
  std::size_t offset() const noexcept { return offset_; }
  /// Line (1-based) of the offending character.
  std::size_t line() const noexcept { return line_; }
  /// Column (1-based, in bytes) of the offending character.
  std::size_t column() const noexcept { return column_; }

 private:
  std::string reason_;
  std::size_t offset_;
  std::size_t line_;
  std::size_t column_;
};

/// The deepest nesting of arrays and objects that parse() accepts by default.
inline constexpr std::size_t default_max_depth = 64;

/// Length of the well-formed UTF-8 sequence at the start of @p s (Unicode,
/// table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or 0.
constexpr std::size_t utf8_sequence_length(std::string_view s) noexcept {
  if (s.empty()) return 0;
  auto const b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  auto const cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return i < s.size() && b(i) >= lo && b(i) <= hi;
  };
  unsigned const c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/// Appends code point @p cp (at most U+10FFFF, no surrogate) to @p out as UTF-8.
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

/// Whether @p s is well-formed UTF-8.
constexpr bool is_valid_utf8(std::string_view s) noexcept {
  while (!s.empty()) {
    std::size_t const n = utf8_sequence_length(s);
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

/// @brief Parses one JSON value, optionally surrounded by whitespace.
///
/// Throws `parse_error` naming what was expected and where.  Arrays and
/// objects may nest @p max_depth levels deep (the outermost is level 1).
value parse(std::string_view text, std::size_t max_depth = default_max_depth);

/// @brief Appends @p s quoted and escaped; `value_error` when @p s is not
/// valid UTF-8 (a JSON text must be).
void write_string(std::string& out, std::string_view s);

/// @brief Appends @p v as compact JSON; `value_error` for a non-finite
/// number or a string that is not valid UTF-8.  A number keeps a fraction
/// (`1.0`, not `1`) so that it reads back as a number, not an integer.
void write(std::string& out, value const& v);

/// @brief @p v as compact JSON text (see write()).
std::string dump(value const& v);

}  // namespace dimtensor::detail::json
