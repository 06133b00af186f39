#pragma once
/// @file
/// @brief `text::marian_tokenizer`: Marian's tokenizer (`transformers`'
/// `MarianTokenizer`, the opus-mt models' `source.spm`, `target.spm` and
/// `vocab.json`), on SentencePiece.  In the library `dimtensor::sentencepiece`
/// (built where CMake finds Debian's `libsentencepiece-dev`; link it).
///
/// @code
/// dt::text::marian_tokenizer const tok("opus-mt-en-fr/");
/// std::vector<std::int64_t> ids = tok.encode("Hello world.");   // the pieces' ids, then </s>
/// std::string text = tok.decode(output_ids);                     // special tokens left out
/// @endcode
///
/// As `MarianTokenizer` without `sacremoses`: the text is split around the
/// special tokens (`</s>`, `<unk>`, `<pad>`) as written, a leading language
/// code (`>>fr<<`) is a token of its own, the rest is the source model's
/// pieces, each the id `vocab.json` gives it or `<unk>`'s; decoding joins
/// the pieces with the source model (the vocabulary is shared) and turns
/// `▁` into spaces.  Moses' punctuation normalization is not applied.
/// Missing files or a malformed `vocab.json` are `io_error`s naming the
/// file.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dimtensor::text {

/// @brief Marian's tokenizer from a folder (dims-free; copies share the
/// loaded models).
class marian_tokenizer {
 public:
  /// Reads @p folder's `source.spm`, `target.spm` and `vocab.json`.
  explicit marian_tokenizer(std::filesystem::path const& folder);

  /// The pieces of @p text (with a leading language code as one).
  std::vector<std::string> tokenize(std::string_view text) const;
  /// The ids of @p text, `</s>` last.
  std::vector<std::int64_t> encode(std::string_view text) const;
  /// The text of @p ids, the special tokens left out unless
  /// @p skip_special_tokens is false.
  std::string decode(std::span<std::int64_t const> ids, bool skip_special_tokens = true) const;
  /// The id of @p token in `vocab.json`, or none.
  std::optional<std::int64_t> token_to_id(std::string_view token) const;
  /// `</s>`'s id.
  std::int64_t eos_id() const noexcept;
  /// `<pad>`'s id.
  std::int64_t pad_id() const noexcept;
  /// The number of entries of `vocab.json`.
  std::int64_t vocab_size() const noexcept;

 private:
  struct impl;
  std::shared_ptr<impl const> impl_;
};

}  // namespace dimtensor::text
