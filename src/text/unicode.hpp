// The Unicode facts the tokenizers read (src/text/unicode.cpp, tables in
// unicode_data.inc): a code point's class, White_Space, lowercase, the
// decomposition without nonspacing marks, BERT's CJK ranges; UTF-8 in and out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dimtensor::text::detail {

/// The classes the normalizers and pre-tokenizers test (general categories).
enum class char_class : unsigned char {
  letter,           ///< L*
  number,           ///< N*
  punctuation,      ///< P*
  mark_nonspacing,  ///< Mn
  other,            ///< C* (control, format, private use, surrogate, unassigned)
  symbol,           ///< anything else (S*, Z*, Mc, Me)
};

/// @p c's class.
char_class class_of(char32_t c) noexcept;
/// Whether @p c has Unicode's White_Space property.
bool is_white_space(char32_t c) noexcept;
/// Appends @p c's lowercase (one to three code points) to @p out.
void append_lower(char32_t c, std::u32string& out);
/// Appends @p c's canonical decomposition without its nonspacing marks
/// (nothing for a nonspacing mark) to @p out.
void append_stripped(char32_t c, std::u32string& out);
/// Whether @p c is in BERT's CJK ranges.
bool is_cjk(char32_t c) noexcept;

/// @p text decoded; `value_error` naming the byte where it is not UTF-8
/// (after @p what).
std::u32string utf8_decode(std::string_view text, std::string_view what);
/// @p c appended to @p out as UTF-8.
void utf8_append(char32_t c, std::string& out);
/// @p text as UTF-8.
std::string utf8_encode(std::u32string_view text);

}  // namespace dimtensor::text::detail
