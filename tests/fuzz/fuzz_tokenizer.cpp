/// @file
/// @brief libFuzzer target: the tokenizers on untrusted input.  The first
/// byte picks what the rest is:
/// - even: a text, encoded and decoded by the committed WordPiece (BERT's)
///   and byte-level BPE (GPT-2's) tokenizers
///   (tests/parity/data/tokenizers/);
/// - odd: a `tokenizer.json`, read, then used on a fixed text.
///
/// Checks, beyond "no crash": a text that is not UTF-8 is a `value_error`
/// and nothing else; every id is in the vocabulary; `tokenize` gives as many
/// tokens as `encode` without special tokens gives ids; the byte-level BPE
/// gives every UTF-8 text back from its ids, byte for byte (when the text
/// holds no added token); a malformed file is an `io_error` naming the
/// file, and a file that reads may still refuse a text only with a
/// `value_error`.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/text/tokenizer.hpp>

#include "fuzz_support.hpp"

namespace {

namespace dt = dimtensor;
using dimtensor_fuzz::require;

dt::text::tokenizer const& committed(char const* name) {
  static dt::text::tokenizer const bert(std::string(DIMTENSOR_FUZZ_TOKENIZERS_DIR) + "/bert/tokenizer.json");
  static dt::text::tokenizer const gpt2(std::string(DIMTENSOR_FUZZ_TOKENIZERS_DIR) + "/gpt2/tokenizer.json");
  return std::string_view(name) == "bert" ? bert : gpt2;
}

void check_text(dt::text::tokenizer const& tok, std::string const& text, bool round_trip) {
  std::vector<std::int64_t> ids;
  try {
    ids = tok.encode(text);
  } catch (dt::value_error const& e) {
    require(std::string_view(e.what()).find("not UTF-8") != std::string_view::npos, "a value_error other than UTF-8's");
    return;
  }
  for (auto id : ids) require(id >= 0 && id < tok.vocab_size(), "an id outside the vocabulary");
  require(tok.tokenize(text).size() == tok.encode(text, false).size(), "tokenize and encode disagree");
  std::string const back = tok.decode(ids);
  if (round_trip) require(back == text, "the byte-level BPE did not give the text back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  if (size == 0) return 0;
  std::string const rest(reinterpret_cast<char const*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    check_text(committed("bert"), rest, false);
    bool const has_added = rest.find("<|endoftext|>") != std::string::npos;
    check_text(committed("gpt2"), rest, !has_added);
    return 0;
  }
  auto const& file = dimtensor_fuzz::scratch_file("tokenizer.json");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(rest.data(), static_cast<std::streamsize>(rest.size()));
  }
  try {
    dt::text::tokenizer const tok(file);
    try {
      auto const ids = tok.encode("Déjà vu: 北京 😀 don't [MASK] 3.14");
      for (auto id : ids) require(id >= 0 && id < tok.vocab_size(), "an id outside the vocabulary");
      (void)tok.decode(ids, false);
    } catch (dt::value_error const&) {
      // a vocabulary that lacks a piece its merges make, or an id it cannot decode
    }
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, file.string());
  }
  return 0;
}
