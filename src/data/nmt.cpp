// The non-template part of include/dimtensor/data/nmt.hpp: reading,
// preprocessing and tokenizing a parallel corpus, the vocabulary, the index
// arrays and the loader's split, compiled once into the dimtensor::runtime
// library.  range-v3 stays in this file so that the header is cheap to include.
#include <dimtensor/data/nmt.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <numeric>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dimtensor/io/detail/json.hpp>

#include <range/v3/algorithm/count.hpp>
#include <range/v3/algorithm/stable_sort.hpp>
#include <range/v3/functional/comparisons.hpp>
#include <range/v3/range/conversion.hpp>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/filter.hpp>
#include <range/v3/view/join.hpp>
#include <range/v3/view/split.hpp>
#include <range/v3/view/transform.hpp>

namespace dimtensor::data {
namespace {

namespace views = ranges::views;

// --- UTF-8 --------------------------------------------------------------------

// A code point decoded from UTF-8 and the bytes it took; size 0 when the
// bytes at the position are not a well-formed UTF-8 sequence (Unicode's
// table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
struct decoded {
  char32_t code_point = 0;
  std::size_t size = 0;
};

decoded decode_utf8(std::string_view s, std::size_t pos) {
  auto const byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char const b0 = byte(pos);
  if (b0 < 0x80) return {b0, 1};
  std::size_t n = 0;
  unsigned char lo = 0x80;  // the range of the second byte, which rules out overlongs and surrogates
  unsigned char hi = 0xBF;
  char32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {};
  }
  if (s.size() - pos < n) return {};
  for (std::size_t k = 1; k < n; ++k) {
    unsigned char const b = byte(pos + k);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return {};
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return {cp, n};
}

using dimtensor::detail::json::append_utf8;

// The 0-based offset of the first byte of @p line that does not start a
// well-formed UTF-8 sequence, if any.
std::optional<std::size_t> first_invalid_utf8(std::string_view line) {
  for (std::size_t pos = 0; pos < line.size();) {
    auto const d = decode_utf8(line, pos);
    if (d.size == 0) return pos;
    pos += d.size;
  }
  return std::nullopt;
}

// Python's str.lower() for one code point of ASCII, the Latin-1 Supplement
// and Latin Extended-A, except U+0130 (two code points, handled by the
// caller); every other code point is its own lowercase here.
char32_t to_lower(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 0x20;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;  // À–Þ, not ×
  // Latin Extended-A pairs capital, small: even capitals up to U+0137 and
  // from U+014A to U+0177, odd ones from U+0139 to U+0148 and U+0179 to U+017E.
  if (c >= 0x100 && c <= 0x137) return c % 2 == 0 ? c + 1 : c;
  if (c >= 0x139 && c <= 0x148) return c % 2 == 1 ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return c % 2 == 0 ? c + 1 : c;
  if (c == 0x178) return 0xFF;  // Ÿ → ÿ
  if (c >= 0x179 && c <= 0x17E) return c % 2 == 1 ? c + 1 : c;
  return c;
}

bool is_nmt_punctuation(char32_t c) { return c == U',' || c == U'.' || c == U'!' || c == U'?'; }

// A line's tokens: split on ' ', empty tokens (two spaces in a row, a
// leading or trailing space) dropped.
std::vector<std::string> split_tokens(std::string_view text) {
  return text | views::split(' ') | views::filter([](auto const& token) { return !ranges::empty(token); }) |
         views::transform([](auto const& token) { return ranges::to<std::string>(token); }) |
         ranges::to<std::vector>;
}

// Why a line (without its '\r') is not a translation pair, or nothing when
// it is one, whose tokens are then appended to @p out.
std::optional<std::string> read_pair(std::string_view line, std::size_t line_number, nmt_pairs& out) {
  auto const tabs = ranges::count(line, '\t');
  if (tabs == 0) return "no tab";
  if (tabs > 1) return "more than one tab";
  auto const tab = line.find('\t');
  auto source = split_tokens(line.substr(0, tab));
  if (source.empty()) return "empty source";
  auto target = split_tokens(line.substr(tab + 1));
  if (target.empty()) return "empty target";
  out.source.push_back(std::move(source));
  out.target.push_back(std::move(target));
  out.lines.push_back(line_number);
  return std::nullopt;
}

// tokenize_nmt, preprocessing each line first when @p preprocess is set
// (after checking it is valid UTF-8 as given).
nmt_corpus read_corpus(std::string_view text, std::optional<std::size_t> num_examples, bool preprocess) {
  nmt_corpus corpus;
  if (num_examples == std::size_t{0}) return corpus;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark: not part of line 1
  for (auto const& [index, range] : views::enumerate(text | views::split('\n'))) {
    std::size_t const line_number = static_cast<std::size_t>(index) + 1;
    auto line = ranges::to<std::string>(range);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    if (auto const bad = first_invalid_utf8(line)) {
      corpus.skipped.push_back({line_number, "invalid UTF-8 at byte " + std::to_string(*bad + 1)});
      continue;
    }
    if (preprocess) line = preprocess_nmt(line);
    if (auto reason = read_pair(line, line_number, corpus)) {
      corpus.skipped.push_back({line_number, std::move(*reason)});
    } else if (num_examples && corpus.size() == *num_examples) {
      break;
    }
  }
  return corpus;
}

// Appends pair i of @p from to @p to.
void append_pair(nmt_pairs& to, nmt_pairs const& from, std::size_t i) {
  to.source.push_back(from.source[i]);
  to.target.push_back(from.target[i]);
  to.lines.push_back(from.lines[i]);
}

}  // namespace

// --- Reading, preprocessing, tokenizing ---------------------------------------

namespace {

// The 1-based line of byte @p pos of @p text.
std::size_t line_of(std::string_view text, std::size_t pos) {
  return static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) + 1;
}

// The encoding a text with NUL bytes is likely in, from its first bytes:
// ASCII text in UTF-16 has every other byte 0, in UTF-32 three of four.
std::string_view guess_wide_encoding(std::string_view text) {
  auto const zero = [&](std::size_t i) { return i < text.size() && text[i] == '\0'; };
  if (!zero(0) && zero(1) && zero(2) && zero(3)) return "UTF-32 little-endian";
  if (zero(0) && zero(1) && zero(2) && !zero(3)) return "UTF-32 big-endian";
  if (!zero(0) && zero(1)) return "UTF-16 little-endian";
  if (zero(0) && !zero(1)) return "UTF-16 big-endian";
  return {};
}

}  // namespace

std::string read_data_nmt(std::filesystem::path const& file) {
  auto const fail = [&](std::string_view verb, int err) {
    throw io_error("read_data_nmt: cannot " + std::string(verb) + " " + file.string() + ": " +
                   (err != 0 ? std::generic_category().message(err) : std::string("unknown error")));
  };
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) fail("open", EISDIR);
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("open", errno);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("read", errno);

  // The text is UTF-8. A UTF-8 byte-order mark (which Windows editors
  // write) is not part of the first line; any other encoding is an error
  // that says which, since its bytes would otherwise become tokens.
  auto const not_utf8 = [&](std::size_t line, std::string const& what) {
    throw io_error("read_data_nmt: " + file.string() + ": line " + std::to_string(line) + ": " + what +
                   "; the corpus must be UTF-8 (convert it, e.g. with iconv -t UTF-8)");
  };
  std::string_view const bytes = text;
  if (bytes.starts_with(std::string_view("\xFF\xFE\0\0", 4))) not_utf8(1, "a UTF-32 little-endian byte-order mark");
  if (bytes.starts_with(std::string_view("\0\0\xFE\xFF", 4))) not_utf8(1, "a UTF-32 big-endian byte-order mark");
  if (bytes.starts_with("\xFF\xFE")) not_utf8(1, "a UTF-16 little-endian byte-order mark");
  if (bytes.starts_with("\xFE\xFF")) not_utf8(1, "a UTF-16 big-endian byte-order mark");
  if (auto const nul = bytes.find('\0'); nul != std::string_view::npos) {
    auto const guess = guess_wide_encoding(bytes);
    not_utf8(line_of(bytes, nul),
             "a NUL byte at byte " + std::to_string(nul + 1) + " of the file (" +
                 (guess.empty() ? std::string("text has none") : "the text looks " + std::string(guess)) + ")");
  }
  if (bytes.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  std::size_t line_start = 0;
  for (std::size_t line = 1; line_start <= text.size(); ++line) {
    auto const end = std::min(text.find('\n', line_start), text.size());
    if (auto const bad = first_invalid_utf8(std::string_view(text).substr(line_start, end - line_start))) {
      not_utf8(line, "invalid UTF-8 at byte " + std::to_string(*bad + 1) + " of the line");
    }
    line_start = end + 1;
  }
  return text;
}

std::string preprocess_nmt(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  bool after_space = false;  // whether the previous character (after replacing) is ' '
  bool first = true;
  for (std::size_t pos = 0; pos < text.size();) {
    auto const d = decode_utf8(text, pos);
    if (d.size == 0) {  // not UTF-8: copied as it is, a character that is no space
      out += text[pos++];
      after_space = false;
      first = false;
      continue;
    }
    pos += d.size;
    char32_t c = d.code_point;
    if (c == 0x202F || c == 0xA0) c = U' ';
    if (!first && is_nmt_punctuation(c) && !after_space) out += ' ';
    if (c == 0x130) {
      out += "i\xCC\x87";  // İ: Python lowercases it to i and U+0307 COMBINING DOT ABOVE
    } else {
      append_utf8(out, to_lower(c));
    }
    after_space = c == U' ';
    first = false;
  }
  return out;
}

nmt_corpus tokenize_nmt(std::string_view text, std::optional<std::size_t> num_examples) {
  return read_corpus(text, num_examples, false);
}

nmt_corpus parse_nmt(std::string_view raw_text, std::optional<std::size_t> num_examples) {
  return read_corpus(raw_text, num_examples, true);
}

void report_skipped(std::ostream& out, std::string_view name, std::span<skipped_line const> skipped,
                    std::size_t max_shown) {
  std::size_t const shown = std::min(max_shown, skipped.size());
  for (auto const& s : skipped.first(shown)) out << name << ':' << s.line << ": " << s.reason << ", skipped\n";
  if (skipped.size() > shown) {
    out << name << ": " << skipped.size() - shown << " more malformed line" << (skipped.size() - shown == 1 ? "" : "s")
        << " skipped\n";
  }
}

// --- The vocabulary ----------------------------------------------------------

vocab::vocab() { add("<unk>"); }

vocab::vocab(std::vector<std::vector<std::string>> const& lines, std::size_t min_freq,
             std::vector<std::string> const& reserved_tokens)
    : vocab() {
  for (auto const& token : reserved_tokens) {
    if (contains(token)) {
      throw value_error("vocab: the reserved token '" + token + "' is " +
                        (token == "<unk>" ? std::string("<unk>, which every vocabulary has at index 0")
                                          : std::string("listed twice")));
    }
    add(token);
  }

  // Counted in order of first occurrence, as Python's Counter keeps them, so
  // that the stable sort leaves ties in that order.
  std::unordered_map<std::string_view, std::size_t> slot;
  for (std::string const& token : lines | views::join) {
    auto const [it, inserted] = slot.try_emplace(token, token_freqs_.size());
    if (inserted) {
      token_freqs_.emplace_back(token, 1);
    } else {
      ++token_freqs_[it->second].second;
    }
  }
  ranges::stable_sort(token_freqs_, ranges::greater{}, &token_freq::second);

  for (auto const& [token, freq] : token_freqs_) {
    if (freq < min_freq) break;
    if (!contains(token)) add(token);
  }
}

void vocab::add(std::string const& token) {
  token_to_idx_.emplace(token, static_cast<std::int64_t>(idx_to_token_.size()));
  idx_to_token_.push_back(token);
}

std::int64_t vocab::index(std::string_view token) const {
  auto const it = token_to_idx_.find(token);
  return it == token_to_idx_.end() ? unk() : it->second;
}

bool vocab::contains(std::string_view token) const { return token_to_idx_.find(token) != token_to_idx_.end(); }

std::vector<std::int64_t> vocab::indices(std::span<std::string const> tokens) const {
  return tokens | views::transform([this](std::string const& token) { return index(token); }) |
         ranges::to<std::vector>;
}

std::string const& vocab::token(std::int64_t i) const {
  if (i < 0 || static_cast<std::size_t>(i) >= size()) {
    throw value_error("vocab: index " + std::to_string(i) + " is outside [0, " + std::to_string(size()) + ")");
  }
  return idx_to_token_[static_cast<std::size_t>(i)];
}

std::vector<std::string> vocab::to_tokens(std::span<std::int64_t const> indices) const {
  return indices | views::transform([this](std::int64_t i) { return token(i); }) | ranges::to<std::vector>;
}

// --- Arrays of indices --------------------------------------------------------

std::vector<std::int64_t> truncate_pad(std::vector<std::int64_t> line, std::size_t num_steps, std::int64_t padding) {
  line.resize(num_steps, padding);
  return line;
}

nmt_index_array index_array_nmt(std::vector<std::vector<std::string>> const& lines, vocab const& v,
                                std::size_t num_steps) {
  for (std::string_view special : {"<pad>", "<eos>"}) {
    if (!v.contains(special)) {
      throw value_error("build_array_nmt: the vocabulary has no " + std::string(special) +
                        " (build it with reserved tokens <pad>, <bos>, <eos>)");
    }
  }
  std::int64_t const pad = v["<pad>"];
  std::int64_t const eos = v["<eos>"];
  nmt_index_array out;
  out.num_steps = num_steps;
  out.values.reserve(lines.size() * num_steps);
  out.valid_len.reserve(lines.size());
  for (auto const& line : lines) {
    auto indices = v.indices(line);
    indices.push_back(eos);
    auto const row = truncate_pad(std::move(indices), num_steps, pad);
    out.values.insert(out.values.end(), row.begin(), row.end());
    out.valid_len.push_back(static_cast<std::int64_t>(row.size()) - ranges::count(row, pad));
  }
  return out;
}

// --- The loader ---------------------------------------------------------------

std::ostream* default_warning_sink() noexcept { return &std::cerr; }

nmt_dataset_base::nmt_dataset_base(std::filesystem::path const& file, nmt_options const& options)
    : nmt_dataset_base(read_data_nmt(file), file.string(), options) {}

nmt_dataset_base::nmt_dataset_base(std::string_view raw_text, std::string_view name, nmt_options const& options) {
  if (options.num_steps == 0) throw value_error("nmt_dataset: num_steps must be positive");
  nmt_corpus corpus = parse_nmt(raw_text, options.num_examples);
  if (options.warnings != nullptr && !corpus.skipped.empty()) report_skipped(*options.warnings, name, corpus.skipped);
  skipped_ = std::move(corpus.skipped);

  std::size_t const period = options.test_period;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    append_pair(period != 0 && i % period == period - 1 ? test_ : train_, corpus, i);
  }

  std::vector<std::string> const reserved{"<pad>", "<bos>", "<eos>"};
  src_vocab_ = vocab(train_.source, options.min_freq, reserved);
  tgt_vocab_ = vocab(train_.target, options.min_freq, reserved);
  src_ = index_array_nmt(train_.source, src_vocab_, options.num_steps);
  tgt_ = index_array_nmt(train_.target, tgt_vocab_, options.num_steps);
}

std::vector<std::size_t> nmt_dataset_base::shuffled_order(generator& gen) const {
  std::vector<std::size_t> order(size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = order.size(); i > 1; --i) {
    auto const j = static_cast<std::size_t>(gen.next_below(i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

void nmt_dataset_base::gather(std::span<std::size_t const> pairs, std::int64_t* X, std::int64_t* X_valid_len,
                              std::int64_t* Y, std::int64_t* Y_valid_len) const {
  std::size_t const steps = num_steps();
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    std::size_t const p = pairs[k];
    if (p >= size()) {
      throw value_error("nmt_dataset: training pair " + std::to_string(p) + " of " + std::to_string(size()));
    }
    std::copy_n(src_.values.begin() + static_cast<std::ptrdiff_t>(p * steps), steps, X + k * steps);
    std::copy_n(tgt_.values.begin() + static_cast<std::ptrdiff_t>(p * steps), steps, Y + k * steps);
    X_valid_len[k] = src_.valid_len[p];
    Y_valid_len[k] = tgt_.valid_len[p];
  }
}

}  // namespace dimtensor::data
