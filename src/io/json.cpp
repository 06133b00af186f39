// The JSON reader and writer of include/dimtensor/io/detail/json.hpp,
// compiled once into the dimtensor::runtime library.
#include <dimtensor/io/detail/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace dimtensor::detail::json {

bool operator==(value const& a, value const& b) { return a.v_ == b.v_; }

value const* value::find(std::string_view key) const noexcept {
  if (auto const* o = std::get_if<object>(&v_)) {
    for (member const& m : *o) {
      if (m.first == key) return &m.second;
    }
  }
  return nullptr;
}

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// "'x'" for a printable ASCII character, "byte 0xNN" otherwise.
std::string describe_byte(char ch) {
  auto const c = static_cast<unsigned char>(ch);
  if (c >= 0x21 && c < 0x7f) return std::string("'") + ch + "'";
  return std::string("byte 0x") + hex_digits[c >> 4] + hex_digits[c & 15];
}

// Recursive descent over the text; depth is bounded by max_depth, so the
// recursion is too.
class parser {
 public:
  parser(std::string_view text, std::size_t max_depth) : text_(text), max_depth_(max_depth) {}

  value parse_document() {
    skip_space();
    if (at_end()) fail("empty text: expected a JSON value");
    value v = parse_value(0);
    skip_space();
    if (!at_end()) fail("unexpected " + describe_byte(text_[pos_]) + " after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(std::string const& reason) const { fail_at(reason, pos_); }

  [[noreturn]] void fail_at(std::string const& reason, std::size_t at) const {
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    throw parse_error(reason, at, line, at - line_start + 1);
  }

  bool at_end() const noexcept { return pos_ >= text_.size(); }

  void skip_space() noexcept {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  value parse_value(std::size_t depth) {
    if (at_end()) fail("unexpected end of text: expected a value");
    switch (text_[pos_]) {
      case '{':
        return parse_object(depth + 1);
      case '[':
        return parse_array(depth + 1);
      case '"':
        return value(parse_string());
      case 't':
        return parse_literal("true", value(true));
      case 'f':
        return parse_literal("false", value(false));
      case 'n':
        return parse_literal("null", value(nullptr));
      default:
        break;
    }
    char const c = text_[pos_];
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    fail("unexpected " + describe_byte(c) + ": expected a value");
  }

  void enter(std::size_t depth) const {
    if (depth > max_depth_) {
      fail("arrays and objects nested deeper than " + std::to_string(max_depth_) + " levels");
    }
  }

  value parse_literal(std::string_view word, value v) {
    if (text_.substr(pos_, word.size()) != word) {
      fail("invalid literal: expected '" + std::string(word) + "'");
    }
    pos_ += word.size();
    return v;
  }

  value parse_array(std::size_t depth) {
    enter(depth);
    ++pos_;  // '['
    array a;
    skip_space();
    if (!at_end() && text_[pos_] == ']') {
      ++pos_;
      return value(std::move(a));
    }
    for (;;) {
      skip_space();
      a.push_back(parse_value(depth));
      skip_space();
      if (at_end()) fail("unexpected end of text: expected ',' or ']' in an array");
      if (text_[pos_] == ']') {
        ++pos_;
        return value(std::move(a));
      }
      if (text_[pos_] != ',') fail("unexpected " + describe_byte(text_[pos_]) + ": expected ',' or ']' in an array");
      ++pos_;
      skip_space();
      if (!at_end() && text_[pos_] == ']') fail("trailing ',' before ']'");
    }
  }

  value parse_object(std::size_t depth) {
    enter(depth);
    ++pos_;  // '{'
    object o;
    std::vector<std::size_t> key_offsets;
    skip_space();
    if (!at_end() && text_[pos_] == '}') {
      ++pos_;
      return value(std::move(o));
    }
    for (;;) {
      skip_space();
      if (at_end()) fail("unexpected end of text: expected a string key");
      if (text_[pos_] != '"') {
        fail(text_[pos_] == '}' ? std::string("trailing ',' before '}'")
                                : "unexpected " + describe_byte(text_[pos_]) + ": expected a string key");
      }
      key_offsets.push_back(pos_);
      std::string key = parse_string();
      skip_space();
      if (at_end() || text_[pos_] != ':') {
        fail(at_end() ? std::string("unexpected end of text: expected ':' after a key")
                      : "unexpected " + describe_byte(text_[pos_]) + ": expected ':' after a key");
      }
      ++pos_;
      skip_space();
      value v = parse_value(depth);
      o.emplace_back(std::move(key), std::move(v));
      skip_space();
      if (at_end()) fail("unexpected end of text: expected ',' or '}' in an object");
      if (text_[pos_] == '}') {
        ++pos_;
        break;
      }
      if (text_[pos_] != ',') fail("unexpected " + describe_byte(text_[pos_]) + ": expected ',' or '}' in an object");
      ++pos_;
    }
    check_unique_keys(o, key_offsets);
    return value(std::move(o));
  }

  // Sorting indices keeps this O(n log n): a header may hold many keys.
  void check_unique_keys(object const& o, std::vector<std::size_t> const& key_offsets) const {
    if (o.size() < 2) return;
    std::vector<std::size_t> order(o.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return o[a].first < o[b].first; });
    std::size_t dup = o.size();
    for (std::size_t i = 1; i < order.size(); ++i) {
      if (o[order[i]].first == o[order[i - 1]].first) dup = std::min(dup, order[i]);
    }
    if (dup != o.size())
      fail_at("duplicate key " + quote_for_message(o[dup].first) + " in an object", key_offsets[dup]);
  }

  static std::string quote_for_message(std::string_view s) {
    constexpr std::size_t max_shown = 80;
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size() && i < max_shown; ++i) {
      auto const c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        out += static_cast<char>(c);
      } else {
        out += "\\x";
        out += hex_digits[c >> 4];
        out += hex_digits[c & 15];
      }
    }
    if (s.size() > max_shown) out += "...";
    return out + "\"";
  }

  std::uint32_t parse_hex4() {
    if (text_.size() - pos_ < 4) fail("unexpected end of text in a \\u escape: expected 4 hex digits");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char const c = text_[pos_];
      std::uint32_t d = 0;
      if (c >= '0' && c <= '9') {
        d = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        fail("unexpected " + describe_byte(c) + " in a \\u escape: expected 4 hex digits");
      }
      v = v * 16 + d;
      ++pos_;
    }
    return v;
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string s;
    for (;;) {
      std::size_t run = pos_;
      while (run < text_.size()) {
        auto const c = static_cast<unsigned char>(text_[run]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++run;
      }
      s.append(text_.substr(pos_, run - pos_));
      pos_ = run;
      if (at_end()) fail("unexpected end of text in a string: expected '\"'");
      auto const c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return s;
      }
      if (c < 0x20) {
        fail(std::string("raw control character U+00") + hex_digits[c >> 4] + hex_digits[c & 15] +
             " in a string (it must be escaped)");
      }
      if (c >= 0x80) {
        std::size_t const n = utf8_sequence_length(text_.substr(pos_));
        if (n == 0) fail("invalid UTF-8 " + describe_byte(text_[pos_]) + " in a string");
        s.append(text_.substr(pos_, n));
        pos_ += n;
        continue;
      }
      parse_escape(s);
    }
  }

  void parse_escape(std::string& s) {
    std::size_t const start = pos_;
    ++pos_;  // '\'
    if (at_end()) fail("unexpected end of text in an escape sequence");
    char const e = text_[pos_++];
    switch (e) {
      case '"':
        s += '"';
        return;
      case '\\':
        s += '\\';
        return;
      case '/':
        s += '/';
        return;
      case 'b':
        s += '\b';
        return;
      case 'f':
        s += '\f';
        return;
      case 'n':
        s += '\n';
        return;
      case 'r':
        s += '\r';
        return;
      case 't':
        s += '\t';
        return;
      case 'u':
        break;
      default:
        fail_at("invalid escape sequence '\\" + std::string(1, e) + "' in a string", start);
    }
    std::uint32_t cp = parse_hex4();
    if (cp >= 0xdc00 && cp <= 0xdfff) fail_at("unpaired low surrogate in a \\u escape", start);
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (text_.substr(pos_, 2) != "\\u") fail_at("high surrogate not followed by a \\u low surrogate", start);
      pos_ += 2;
      std::uint32_t const low = parse_hex4();
      if (low < 0xdc00 || low > 0xdfff) fail_at("high surrogate not followed by a \\u low surrogate", start);
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    append_utf8(s, cp);
  }

  value parse_number() {
    std::size_t const start = pos_;
    bool integral = true;
    if (text_[pos_] == '-') ++pos_;
    auto const digit = [&] { return !at_end() && text_[pos_] >= '0' && text_[pos_] <= '9'; };
    if (!digit()) fail("expected a digit after '-'");
    if (text_[pos_] == '0') {
      ++pos_;
      if (digit()) fail_at("leading zero in a number", start);
    } else {
      while (digit()) ++pos_;
    }
    if (!at_end() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (!digit()) fail("expected a digit after '.' in a number");
      while (digit()) ++pos_;
    }
    if (!at_end() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (!at_end() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digit()) fail("expected a digit in the exponent of a number");
      while (digit()) ++pos_;
    }
    char const* const first = text_.data() + start;
    char const* const last = text_.data() + pos_;
    if (integral) {
      std::int64_t i = 0;
      auto const r = std::from_chars(first, last, i);
      if (r.ec == std::errc{} && r.ptr == last) return value(i);
    }
    double d = 0;
    auto const r = std::from_chars(first, last, d);
    if (r.ec != std::errc{} || r.ptr != last || !std::isfinite(d)) {
      fail_at("number " + std::string(first, last) + " out of the range of a double", start);
    }
    return value(d);
  }

  std::string_view text_;
  std::size_t max_depth_;
  std::size_t pos_ = 0;
};

}  // namespace

value parse(std::string_view text, std::size_t max_depth) { return parser(text, max_depth).parse_document(); }

void write_string(std::string& out, std::string_view s) {
  if (!is_valid_utf8(s)) throw value_error("json::write: a string is not valid UTF-8");
  out += '"';
  for (char const ch : s) {
    auto const c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex_digits[c >> 4];
          out += hex_digits[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void write(std::string& out, value const& v) {
  switch (v.type()) {
    case kind::null:
      out += "null";
      return;
    case kind::boolean:
      out += v.as_bool() ? "true" : "false";
      return;
    case kind::integer:
      out += std::to_string(v.as_integer());
      return;
    case kind::number: {
      double const d = v.as_number();
      if (!std::isfinite(d)) throw value_error("json::write: " + std::to_string(d) + " has no JSON spelling");
      char buf[32];
      auto const r = std::to_chars(buf, buf + sizeof buf, d);
      std::string_view const text(buf, static_cast<std::size_t>(r.ptr - buf));
      out += text;
      if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
      return;
    }
    case kind::string:
      write_string(out, v.as_string());
      return;
    case kind::array: {
      out += '[';
      bool first = true;
      for (auto const& e : v.as_array()) {
        if (!first) out += ',';
        first = false;
        write(out, e);
      }
      out += ']';
      return;
    }
    case kind::object: {
      out += '{';
      bool first = true;
      for (auto const& [k, e] : v.as_object()) {
        if (!first) out += ',';
        first = false;
        write_string(out, k);
        out += ':';
        write(out, e);
      }
      out += '}';
      return;
    }
  }
}

std::string dump(value const& v) {
  std::string out;
  write(out, v);
  return out;
}

}  // namespace dimtensor::detail::json
