// The Unicode facts the tokenizers read (src/text/unicode.hpp).

#include "unicode.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include <dimtensor/core/error.hpp>
#include <dimtensor/io/detail/json.hpp>
#include <dimtensor/text/tokenizer.hpp>

namespace dimtensor::text::detail {

namespace {

struct class_range {
  char32_t first;
  char32_t last;
  char_class value;
};

struct mapping {
  char32_t from;
  std::uint16_t offset;
  std::uint8_t size;
};

#include "unicode_data.inc"

// Hangul syllables decompose by arithmetic (Unicode §3.12).
constexpr char32_t hangul_first = 0xAC00;
constexpr char32_t hangul_count = 11172;

mapping const* find_mapping(mapping const* begin, mapping const* end, char32_t c) {
  auto const* at = std::lower_bound(begin, end, c, [](mapping const& m, char32_t v) { return m.from < v; });
  return at != end && at->from == c ? at : nullptr;
}

}  // namespace

char_class class_of(char32_t c) noexcept {
  auto const* end = std::end(category_ranges);
  auto const* at = std::upper_bound(std::begin(category_ranges), end, c,
                                    [](char32_t v, class_range const& r) { return v < r.first; });
  return at == std::begin(category_ranges) ? char_class::other : (at - 1)->value;
}

bool is_white_space(char32_t c) noexcept {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

void append_lower(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out += (c >= 'A' && c <= 'Z') ? c + 32 : c;
    return;
  }
  if (auto const* m = find_mapping(std::begin(lower_map), std::end(lower_map), c)) {
    out.append(mapping_pool + m->offset, m->size);
  } else {
    out += c;
  }
}

void append_stripped(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out += c;
    return;
  }
  if (c >= hangul_first && c < hangul_first + hangul_count) {
    char32_t const s = c - hangul_first;
    out += static_cast<char32_t>(0x1100 + s / (21 * 28));
    out += static_cast<char32_t>(0x1161 + (s % (21 * 28)) / 28);
    if (s % 28 != 0) out += static_cast<char32_t>(0x11A7 + s % 28);
    return;
  }
  if (auto const* m = find_mapping(std::begin(strip_map), std::end(strip_map), c)) {
    out.append(mapping_pool + m->offset, m->size);
  } else if (class_of(c) != char_class::mark_nonspacing) {
    out += c;
  }
}

bool is_cjk(char32_t c) noexcept {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::u32string utf8_decode(std::string_view text, std::string_view what) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    // a well-formed sequence (no overlong forms, surrogates or values past U+10FFFF)
    std::size_t const n = dimtensor::detail::json::utf8_sequence_length(text.substr(i));
    if (n == 0) throw value_error(std::string(what) + ": the text is not UTF-8 at byte " + std::to_string(i));
    auto const b0 = static_cast<unsigned char>(text[i]);
    char32_t c = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (std::size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out += c;
    i += n;
  }
  return out;
}

void utf8_append(char32_t c, std::string& out) { dimtensor::detail::json::append_utf8(out, c); }

std::string utf8_encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) utf8_append(c, out);
  return out;
}

}  // namespace dimtensor::text::detail

namespace dimtensor::text {

std::string_view unicode_version() noexcept { return detail::unicode_version; }

}  // namespace dimtensor::text
