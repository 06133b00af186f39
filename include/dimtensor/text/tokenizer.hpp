#pragma once
/// @file
/// @brief `text::tokenizer`: a Hugging Face `tokenizer.json` (what
/// `transformers`' `save_pretrained` writes beside a model) read and run
/// as the `tokenizers` library runs it, for the two families the model
/// families need: BERT's WordPiece (the `BertNormalizer`: control
/// characters dropped, CJK characters split one by one, accents stripped,
/// lowercase; the `BertPreTokenizer`: whitespace and punctuation) and
/// GPT-2's byte-level BPE (GPT-2's split of words, numbers, punctuation and
/// spaces, the bytes as printable characters, the merges by rank).
///
/// @code
/// dt::text::tokenizer const tok("bert-tiny/");                // a folder holding tokenizer.json, or the file
/// std::vector<std::int64_t> ids = tok.encode("Déjà vu!");    // [CLS] deja vu ! [SEP], as the file's template says
/// std::string back = tok.decode(ids);                         // "deja vu!"
/// @endcode
///
/// Added tokens (`[MASK]`, `<|endoftext|>`) are found in the text as
/// written and keep their ids.  The file's truncation (its `max_length`,
/// from the right) applies to `encode`; its padding is left to the caller,
/// who pads a batch to its longest sequence.  A component the file names that is not
/// built here (another normalizer, pre-tokenizer or model, a BPE with
/// dropout or byte fallback) is an `io_error` naming the file and the
/// field, as is a file that is not JSON (with its line and column).  Text
/// that is not UTF-8 is a `value_error` naming the byte.  The Unicode
/// classes are Unicode `unicode_version()`'s (scripts/unicode_tables.py).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dimtensor::text {

/// @brief A tokenizer read from a `tokenizer.json` (dims-free, in the
/// runtime library; copies share the read tables).
class tokenizer {
 public:
  /// Reads @p source: a `tokenizer.json`, or a folder holding one.
  explicit tokenizer(std::filesystem::path const& source);

  /// The file read.
  std::filesystem::path const& path() const noexcept { return path_; }
  /// The model: "WordPiece" or "BPE".
  std::string const& model() const noexcept;
  /// The tokens of @p text, without the template's special tokens.
  std::vector<std::string> tokenize(std::string_view text) const;
  /// The ids of @p text, with the post-processor's special tokens
  /// (`[CLS]` … `[SEP]`) unless @p add_special_tokens is false, cut at the
  /// file's `truncation.max_length` (special tokens included) when it has one.
  std::vector<std::int64_t> encode(std::string_view text, bool add_special_tokens = true) const;
  /// The text of @p ids, the special tokens left out unless
  /// @p skip_special_tokens is false (the file's decoder: WordPiece's
  /// pieces joined, or the byte-level bytes).  `value_error` for an id
  /// outside the vocabulary.
  std::string decode(std::span<std::int64_t const> ids, bool skip_special_tokens = true) const;
  /// The id of @p token, or none.
  std::optional<std::int64_t> token_to_id(std::string_view token) const;
  /// The token of @p id; `value_error` outside the vocabulary.
  std::string const& id_to_token(std::int64_t id) const;
  /// The ids' upper bound: the largest id plus one.
  std::int64_t vocab_size() const noexcept;

 private:
  struct impl;
  std::filesystem::path path_;
  std::shared_ptr<impl const> impl_;
};

/// The version of Unicode whose classes the tokenizers use.
std::string_view unicode_version() noexcept;

}  // namespace dimtensor::text
