#pragma once
/// @file
/// @brief The machine-translation data pipeline of d2l ("Machine Translation
/// and the Dataset"): `read_data_nmt`, `preprocess_nmt`, `tokenize_nmt`,
/// `vocab`, `truncate_pad`, `build_array_nmt` and the loader `nmt_dataset`
/// (d2l's `load_data_nmt`), with a held-out test split and shuffled minibatches.
///
/// The text functions, the vocabulary and the loader's bookkeeping are
/// compiled once into the `dimtensor::runtime` library (src/data/nmt.cpp);
/// this header declares them and adds the few templates that make tensors
/// of the user's dims.  The arrays are `std::int64_t` tensors on `host_backend` (the `cpu`
/// backend): what `nn::embedding` looks up and what `sequence_mask`,
/// `masked_softmax` and `masked_softmax_ce_loss` take as valid lengths.
///
/// Differences from d2l, each on purpose:
/// - bad lines (no tab, more than one tab, an empty side, invalid UTF-8) are
///   skipped and reported with their 1-based line number, not silently
///   dropped or split into garbage; lines starting with `#` and empty lines
///   are neither pairs nor errors;
/// - tokens are split on ' ' with empty tokens dropped (d2l keeps the empty
///   strings that two spaces in a row make);
/// - `num_examples` is the number of pairs read (d2l's `i > num_examples`
///   reads one line more);
/// - a trailing carriage return (a file with CRLF line ends) is removed from each line;
/// - the loader holds out every `test_period`-th pair for evaluation and
///   builds its vocabularies from the other pairs only.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/tensor/lengths.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::data {

// --- Reading, preprocessing, tokenizing ---------------------------------------

/// @brief The whole file's text (d2l's `read_data_nmt`, given the file
/// instead of downloading it), which must be UTF-8.  A UTF-8 byte-order mark
/// at its start (as Windows editors write) is dropped, so it never becomes
/// part of the first token.  Throws `io_error` naming the path when the file
/// cannot be opened or read, and naming the path, the line and the encoding
/// when the text is not UTF-8: a UTF-16 or UTF-32 byte-order mark, NUL bytes
/// (UTF-16 or UTF-32 without a mark; the message says which it looks like),
/// or a byte sequence that is not valid UTF-8.
std::string read_data_nmt(std::filesystem::path const& file);

/// @brief d2l's `preprocess_nmt`: U+202F (narrow no-break space) and U+00A0
/// (no-break space) become ' ', letters are lowercased, and a ' ' is
/// inserted before each comma, period, exclamation and question mark that
/// does not follow a ' ' (nor start the text).
///
/// The text is decoded as UTF-8.  Lowercasing is Python's `str.lower()` on
/// ASCII, the Latin-1 Supplement (À–Þ except ×) and Latin Extended-A
/// (U+0100–U+017F: Œ → œ, Ÿ → ÿ, İ → "i̇" as Python writes it), which covers
/// French, the other Western European languages and most Central European
/// ones; other letters (Greek, Cyrillic, …) are kept as they are.  Bytes that
/// are not valid UTF-8 are copied unchanged, one "character" each; '\n' is
/// never added or removed, so the line numbers of the text stay those of the
/// file and invalid lines stay invalid for `tokenize_nmt` to report.
std::string preprocess_nmt(std::string_view text);

/// A line that held no translation pair: its 1-based number in the text and why.
struct skipped_line {
  /// 1-based line number in the text (the file) read.
  std::size_t line = 0;
  /// "no tab", "more than one tab", "empty source", "empty target" or
  /// "invalid UTF-8 at byte N" (N 1-based within the line).
  std::string reason;

  friend bool operator==(skipped_line const&, skipped_line const&) = default;
};

/// Translation pairs as token lists, d2l's `source, target`.
struct nmt_pairs {
  /// The source sentence of each pair, split into tokens.
  std::vector<std::vector<std::string>> source;
  /// The target sentence of each pair, split into tokens.
  std::vector<std::vector<std::string>> target;
  /// The 1-based line of the text each pair came from.
  std::vector<std::size_t> lines;

  /// The number of pairs.
  std::size_t size() const noexcept { return source.size(); }
};

/// What `tokenize_nmt` and `parse_nmt` read: the pairs and the lines they skipped.
struct nmt_corpus : nmt_pairs {
  /// The lines skipped as malformed, in order (comments and empty lines are not listed).
  std::vector<skipped_line> skipped;
};

/// @brief d2l's `tokenize_nmt`: each line of @p text that is
/// `source<TAB>target` becomes a pair of token lists (split on ' ', empty
/// tokens dropped).
///
/// A UTF-8 byte-order mark at the start of @p text is dropped.
/// Lines that are empty or start with `#` are ignored.  Malformed lines (no
/// tab, more than one tab, a side without tokens, bytes that are not valid
/// UTF-8) are skipped and listed in `skipped` with their 1-based line
/// number; the lines after them are still read.  A trailing carriage
/// return is removed from each line.  At most @p num_examples pairs are read (all when
/// absent); reading stops at the line that completes them, so no later line
/// is reported.  The text is tokenized as given: pass it through
/// `preprocess_nmt` first (which keeps its lines), or call `parse_nmt`.
nmt_corpus tokenize_nmt(std::string_view text, std::optional<std::size_t> num_examples = {});

/// @brief The raw text of a file to pairs: each line is checked to be
/// valid UTF-8 as read, then preprocessed (`preprocess_nmt`) and tokenized
/// (`tokenize_nmt`); line numbers are those of the file.  The same pairs and
/// skipped lines as `tokenize_nmt(preprocess_nmt(raw_text), num_examples)`.
nmt_corpus parse_nmt(std::string_view raw_text, std::optional<std::size_t> num_examples = {});

/// @brief Writes one line `<name>:<line>: <reason>, skipped` per skipped
/// line to @p out, the first @p max_shown of them, then
/// `<name>: N more malformed lines skipped` when there are more.
void report_skipped(std::ostream& out, std::string_view name, std::span<skipped_line const> skipped,
                    std::size_t max_shown = 20);

// --- The vocabulary ----------------------------------------------------------

/// @brief d2l's `Vocab(tokens, min_freq, reserved_tokens)`: the tokens of a
/// corpus numbered by frequency.
///
/// Index 0 is `<unk>`, then the reserved tokens in order, then every token of
/// the corpus seen at least @p min_freq times and not already present, most
/// frequent first, tokens of equal frequency in the order they first occur
/// (Python's stable `sorted` over a `Counter`).  A token the vocabulary does
/// not hold has the index of `<unk>`.
class vocab {
 public:
  /// One token, frequency.
  using token_freq = std::pair<std::string, std::size_t>;

  /// A vocabulary of `<unk>` alone (d2l's `Vocab()`).
  vocab();

  /// The vocabulary of the tokens of @p lines (counted over all lines).
  /// `value_error` when @p reserved_tokens repeats a token or holds `<unk>`.
  explicit vocab(std::vector<std::vector<std::string>> const& lines, std::size_t min_freq = 0,
                 std::vector<std::string> const& reserved_tokens = {});

  /// The number of tokens, `<unk>` and the reserved ones included (d2l's `len(vocab)`).
  std::size_t size() const noexcept { return idx_to_token_.size(); }

  /// The index of @p token, `unk()` when the vocabulary does not hold it.
  std::int64_t index(std::string_view token) const;
  /// The index of @p token (d2l's `vocab[token]`).
  std::int64_t operator[](std::string_view token) const { return index(token); }
  /// The index of each token (d2l's `vocab[tokens]`).
  std::vector<std::int64_t> indices(std::span<std::string const> tokens) const;
  /// Whether the vocabulary holds @p token.
  bool contains(std::string_view token) const;

  /// The token of index @p i; `value_error` outside [0, size()).
  std::string const& token(std::int64_t i) const;
  /// The token of each index (d2l's `to_tokens`); `value_error` for an index outside [0, size()).
  std::vector<std::string> to_tokens(std::span<std::int64_t const> indices) const;

  /// The index of `<unk>`: 0.
  static constexpr std::int64_t unk() noexcept { return 0; }
  /// Every token of the corpus with its count, most frequent first, ties in
  /// the order of first occurrence; tokens below min_freq included (d2l's `token_freqs`).
  std::vector<token_freq> const& token_freqs() const noexcept { return token_freqs_; }
  /// The tokens by index (d2l's `idx_to_token`).
  std::vector<std::string> const& idx_to_token() const noexcept { return idx_to_token_; }

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  void add(std::string const& token);

  std::vector<std::string> idx_to_token_;
  std::unordered_map<std::string, std::int64_t, string_hash, std::equal_to<>> token_to_idx_;
  std::vector<token_freq> token_freqs_;
};

// --- Arrays of indices --------------------------------------------------------

/// @brief d2l's `truncate_pad`: the first @p num_steps indices of @p line,
/// or @p line followed by @p padding up to @p num_steps.
std::vector<std::int64_t> truncate_pad(std::vector<std::int64_t> line, std::size_t num_steps, std::int64_t padding);

/// The values `build_array_nmt` puts into tensors: row-major indices and valid lengths.
struct nmt_index_array {
  /// `rows() * num_steps` indices, row after row.
  std::vector<std::int64_t> values;
  /// The number of indices of each row that are not `<pad>`.
  std::vector<std::int64_t> valid_len;
  /// The length of every row.
  std::size_t num_steps = 0;

  /// The number of rows.
  std::size_t rows() const noexcept { return valid_len.size(); }
};

/// @brief The non-template part of `build_array_nmt`: each line's indices,
/// then `<eos>`, truncated or padded with `<pad>` to @p num_steps; the valid
/// length of a row is its number of indices that are not `<pad>`.
/// `value_error` when @p v holds no `<pad>` or no `<eos>`.
nmt_index_array index_array_nmt(std::vector<std::vector<std::string>> const& lines, vocab const& v,
                                std::size_t num_steps);

/// What `build_array_nmt` returns: d2l's `array, valid_len`.
template <class Batch, class Steps>
struct nmt_array {
  /// The indices, [Batch, Steps].
  basic_tensor<host_backend, std::int64_t, Batch, Steps> array;
  /// The valid length of each row, [Batch], lengths along Steps.
  basic_lengths<dim_of<Steps>, host_backend, std::int64_t, Batch> valid_len;
};

namespace detail {

/// A [Batch, Steps] tensor and its [Batch] valid lengths copied from @p a's rows @p rows.
template <class Batch, class Steps>
nmt_array<Batch, Steps> nmt_tensors(nmt_index_array const& a) {
  auto const n = static_cast<index_t>(a.rows());
  auto const steps = static_cast<index_t>(a.num_steps);
  nmt_array<Batch, Steps> out{basic_tensor<host_backend, std::int64_t, Batch, Steps>(uninitialized, {n, steps}),
                              basic_lengths<dim_of<Steps>, host_backend, std::int64_t, Batch>(uninitialized, {n})};
  std::copy(a.values.begin(), a.values.end(), out.array.data());
  std::copy(a.valid_len.begin(), a.valid_len.end(), out.valid_len.data());
  return out;
}

}  // namespace detail

/// @brief d2l's `build_array_nmt(lines, vocab, num_steps)`: the lines as a
/// [Batch, Steps] tensor of indices, each line ending in `<eos>` and
/// truncated or padded with `<pad>` to @p num_steps, and the [Batch] valid
/// lengths (the indices of each row that are not `<pad>`).
///
/// @p Batch and @p Steps are dimension specs; a static extent that is not
/// the number of lines or @p num_steps is a `shape_error`.  `value_error`
/// when @p v holds no `<pad>` or no `<eos>`.
template <class Batch, class Steps>
nmt_array<Batch, Steps> build_array_nmt(std::vector<std::vector<std::string>> const& lines, vocab const& v,
                                        std::size_t num_steps) {
  static_assert(DimSpec<Batch> && DimSpec<Steps>,
                "dimtensor: build_array_nmt<Batch, Steps> needs dimension tags declared with DIMTENSOR_DIM");
  return detail::nmt_tensors<Batch, Steps>(index_array_nmt(lines, v, num_steps));
}

// --- The loader ---------------------------------------------------------------

/// `&std::cerr`: where `nmt_options` reports skipped lines unless told
/// otherwise (a function, so that this header parses no `<iostream>`).
std::ostream* default_warning_sink() noexcept;

/// @brief How `nmt_dataset` reads a corpus; d2l's `load_data_nmt` defaults.
struct nmt_options {
  /// The length of every row, `<eos>` and padding included (d2l's `num_steps`); must be positive.
  std::size_t num_steps = 10;
  /// The number of pairs read from the start of the file, test pairs
  /// included (d2l's `num_examples`); all of them when empty.
  std::optional<std::size_t> num_examples = 600;
  /// Pair i (0-based among the pairs read) is held out for testing when
  /// `i % test_period == test_period - 1`: every 10th pair by default; 0
  /// holds out none.
  std::size_t test_period = 10;
  /// The vocabularies keep the training tokens seen at least this often (d2l: 2).
  std::size_t min_freq = 2;
  /// Where skipped lines are reported (`report_skipped`, as `<file>:<line>:
  /// <reason>, skipped`), std::cerr by default; nullptr reports nothing.
  /// `skipped()` lists them either way.
  std::ostream* warnings = default_warning_sink();
};

/// @brief The non-template part of `nmt_dataset`: the pairs, the split, the
/// vocabularies and the training arrays as plain vectors.
class nmt_dataset_base {
 public:
  /// The source vocabulary: `<unk>` 0, `<pad>` 1, `<bos>` 2, `<eos>` 3, then
  /// the training pairs' source tokens seen at least min_freq times.
  vocab const& src_vocab() const noexcept { return src_vocab_; }
  /// The target vocabulary, numbered as the source one.
  vocab const& tgt_vocab() const noexcept { return tgt_vocab_; }
  /// The length of every row.
  std::size_t num_steps() const noexcept { return src_.num_steps; }
  /// The number of training pairs.
  std::size_t size() const noexcept { return train_.size(); }
  /// The training pairs, in file order.
  nmt_pairs const& train_pairs() const noexcept { return train_; }
  /// The held-out pairs, in file order: never in a batch nor in the
  /// vocabularies; translate `test_pairs().source[i]` and compare with
  /// `test_pairs().target[i]` (BLEU).
  nmt_pairs const& test_pairs() const noexcept { return test_; }
  /// The malformed lines the file held, skipped.
  std::vector<skipped_line> const& skipped() const noexcept { return skipped_; }
  /// The training sources as indices (`index_array_nmt`), row i for training pair i.
  nmt_index_array const& src_indices() const noexcept { return src_; }
  /// The training targets as indices, row i for training pair i.
  nmt_index_array const& tgt_indices() const noexcept { return tgt_; }

  /// @brief The training pairs' indices 0 … size()-1 in a random order drawn
  /// from @p gen: Fisher–Yates, `j = gen.next_below(i + 1)` for i from
  /// size()-1 down to 1, the same on every platform.
  std::vector<std::size_t> shuffled_order(generator& gen) const;

  /// @brief Copies the rows of the training pairs @p pairs into @p X and @p Y
  /// (`pairs.size() * num_steps()` indices each) and their valid lengths into
  /// @p X_valid_len and @p Y_valid_len; `value_error` for a pair >= size().
  void gather(std::span<std::size_t const> pairs, std::int64_t* X, std::int64_t* X_valid_len, std::int64_t* Y,
              std::int64_t* Y_valid_len) const;

 protected:
  /// Reads @p file (`read_data_nmt`; `io_error` naming it) and splits,
  /// counts and indexes its pairs as @p options say.
  nmt_dataset_base(std::filesystem::path const& file, nmt_options const& options);
  /// The same from the raw text of a file; @p name prefixes the reports.
  nmt_dataset_base(std::string_view raw_text, std::string_view name, nmt_options const& options);

 private:
  vocab src_vocab_;
  vocab tgt_vocab_;
  nmt_pairs train_;
  nmt_pairs test_;
  std::vector<skipped_line> skipped_;
  nmt_index_array src_;
  nmt_index_array tgt_;
};

/// @brief A minibatch: d2l's `X, X_valid_len, Y, Y_valid_len`, with a
/// run-time Batch extent (the last batch of an epoch may be smaller).
template <class Batch, class Steps, class TgtSteps = Steps>
struct nmt_batch {
  /// Source indices, [Batch, Steps].
  basic_tensor<host_backend, std::int64_t, Batch, Steps> X;
  /// Source valid lengths, [Batch], along Steps.
  basic_lengths<dim_of<Steps>, host_backend, std::int64_t, Batch> X_valid_len;
  /// Target indices, [Batch, TgtSteps].
  basic_tensor<host_backend, std::int64_t, Batch, TgtSteps> Y;
  /// Target valid lengths, [Batch], along TgtSteps.
  basic_lengths<dim_of<TgtSteps>, host_backend, std::int64_t, Batch> Y_valid_len;
};

template <class Batch, class Steps, class TgtSteps = Steps>
class nmt_dataset;

/// @brief One epoch of minibatches of an `nmt_dataset` (what `batches()`
/// returns): the training pairs in the order `order()`, cut into batches of
/// `batch_size`, the last one smaller when the pairs do not divide evenly.
/// Each batch is made when its iterator is dereferenced; the dataset must
/// outlive the range.
template <class Batch, class Steps, class TgtSteps = Steps>
class nmt_batches {
 public:
  /// An input iterator over the batches; dereferencing makes the batch.
  class iterator {
   public:
    /// A batch.
    using value_type = nmt_batch<Batch, Steps, TgtSteps>;
    /// A distance between iterators.
    using difference_type = std::ptrdiff_t;
    /// An input iterator.
    using iterator_category = std::input_iterator_tag;

    /// A singular iterator.
    iterator() = default;
    /// The batch, made now.
    value_type operator*() const { return range_->batch(index_); }
    /// The next batch.
    iterator& operator++() {
      ++index_;
      return *this;
    }
    /// The next batch; returns the iterator as it was.
    iterator operator++(int) {
      auto old = *this;
      ++index_;
      return old;
    }
    /// Whether both stand at the same batch.
    friend bool operator==(iterator const& a, iterator const& b) noexcept { return a.index_ == b.index_; }

   private:
    friend class nmt_batches;
    iterator(nmt_batches const* range, std::size_t index) : range_(range), index_(index) {}
    nmt_batches const* range_ = nullptr;
    std::size_t index_ = 0;
  };

  /// The first batch.
  iterator begin() const { return iterator(this, 0); }
  /// Past the last batch.
  iterator end() const { return iterator(this, size()); }
  /// The number of batches: size of the dataset / batch_size, rounded up.
  std::size_t size() const noexcept { return (order_.size() + batch_size_ - 1) / batch_size_; }
  /// The training pairs in the order the batches hold them.
  std::vector<std::size_t> const& order() const noexcept { return order_; }
  /// The batch size (every batch's Batch extent but maybe the last one's).
  std::size_t batch_size() const noexcept { return batch_size_; }

  /// Batch @p i (0-based; `value_error` when i >= size()).
  nmt_batch<Batch, Steps, TgtSteps> batch(std::size_t i) const {
    if (i >= size()) {
      throw value_error("nmt_batches: batch " + std::to_string(i) + " of " + std::to_string(size()));
    }
    return rows(i, 0, rows_of(i));
  }

  /// The number of rows of batch @p i (batch_size() but maybe for the last; `value_error` when i >= size()).
  std::size_t rows_of(std::size_t i) const {
    if (i >= size()) {
      throw value_error("nmt_batches: batch " + std::to_string(i) + " of " + std::to_string(size()));
    }
    return std::min(batch_size_, order_.size() - i * batch_size_);
  }

  /// @brief Rows @p begin … @p end - 1 of batch @p i (a data-parallel
  /// rank's part of it); `value_error` when i >= size() or the rows are not
  /// within the batch's.
  nmt_batch<Batch, Steps, TgtSteps> rows(std::size_t i, std::size_t begin, std::size_t end) const {
    std::size_t const in_batch = rows_of(i);
    if (begin > end || end > in_batch) {
      throw value_error("nmt_batches: rows " + std::to_string(begin) + " to " + std::to_string(end) + " of batch " +
                        std::to_string(i) + ", which has " + std::to_string(in_batch));
    }
    std::size_t const first = i * batch_size_ + begin;
    std::size_t const n = end - begin;
    auto const rows = static_cast<index_t>(n);
    auto const steps = static_cast<index_t>(dataset_->num_steps());
    nmt_batch<Batch, Steps, TgtSteps> b{
        basic_tensor<host_backend, std::int64_t, Batch, Steps>(uninitialized, {rows, steps}),
        basic_lengths<dim_of<Steps>, host_backend, std::int64_t, Batch>(uninitialized, {rows}),
        basic_tensor<host_backend, std::int64_t, Batch, TgtSteps>(uninitialized, {rows, steps}),
        basic_lengths<dim_of<TgtSteps>, host_backend, std::int64_t, Batch>(uninitialized, {rows})};
    dataset_->gather(std::span<std::size_t const>(order_).subspan(first, n), b.X.data(), b.X_valid_len.data(),
                     b.Y.data(), b.Y_valid_len.data());
    return b;
  }

 private:
  friend class nmt_dataset<Batch, Steps, TgtSteps>;
  nmt_batches(nmt_dataset_base const* dataset, std::size_t batch_size, std::vector<std::size_t> order)
      : dataset_(dataset), batch_size_(batch_size), order_(std::move(order)) {}

  nmt_dataset_base const* dataset_;
  std::size_t batch_size_;
  std::vector<std::size_t> order_;
};

/// @brief d2l's `load_data_nmt`: a parallel corpus read, preprocessed,
/// tokenized, split into training and test pairs, numbered by two
/// vocabularies built from the training pairs, and served as shuffled
/// minibatches of [Batch, Steps] index tensors.
///
/// ```cpp
/// DIMTENSOR_DIM(Batch); DIMTENSOR_DIM(Steps);
/// dt::data::nmt_dataset<Batch, Steps> data("fra.txt", {.num_steps = 10, .num_examples = 600});
/// dt::generator gen(0);
/// for (int epoch = 0; epoch < 300; ++epoch)
///   for (auto const& [X, X_valid_len, Y, Y_valid_len] : data.batches(64, gen)) { ... }
/// ```
///
/// Batch must be a tag (its extent varies from batch to batch); Steps may
/// be a tag or `Steps::fixed<N>` with N = num_steps (`shape_error` otherwise).
/// The targets' steps are @p TgtSteps, Steps unless named: a model whose
/// source and target steps are dims of their own (`nn::seq2seq_attention_decoder`
/// reads [Batch, DecSteps]) takes `nmt_dataset<Batch, EncSteps, DecSteps>`.
template <class Batch, class Steps, class TgtSteps>
class nmt_dataset : public nmt_dataset_base {
  static_assert(DimTag<Batch>,
                "dimtensor: nmt_dataset<Batch, Steps> needs a dimension tag Batch (not Batch::fixed<N>: the "
                "last batch may be smaller)");
  static_assert(DimSpec<Steps> && DimSpec<TgtSteps>,
                "dimtensor: nmt_dataset<Batch, Steps, TgtSteps> needs dimension tags or static extents Steps and TgtSteps");

 public:
  /// [Batch, Steps] indices.
  using array_type = basic_tensor<host_backend, std::int64_t, Batch, Steps>;
  /// [Batch, TgtSteps] indices.
  using target_array_type = basic_tensor<host_backend, std::int64_t, Batch, TgtSteps>;
  /// [Batch] valid lengths of the sources, along Steps.
  using valid_len_type = basic_lengths<dim_of<Steps>, host_backend, std::int64_t, Batch>;
  /// [Batch] valid lengths of the targets, along TgtSteps.
  using target_valid_len_type = basic_lengths<dim_of<TgtSteps>, host_backend, std::int64_t, Batch>;

  /// Reads @p file (`io_error` naming it when it cannot be read) as
  /// @p options say; skipped lines go to `options.warnings`.  `value_error`
  /// when `options.num_steps` is 0.
  explicit nmt_dataset(std::filesystem::path const& file, nmt_options const& options = {})
      : nmt_dataset_base(file, options) {
    make_tensors();
  }

  /// The same from the raw text of a file; @p name stands for the file in the reports.
  static nmt_dataset from_text(std::string_view raw_text, nmt_options const& options = {},
                               std::string_view name = "<text>") {
    return nmt_dataset(raw_text, name, options);
  }

  /// The training sources, [Batch, Steps] (one row per training pair, file order).
  array_type const& src() const noexcept { return src_; }
  /// Their valid lengths, [Batch].
  valid_len_type const& src_valid_len() const noexcept { return src_valid_len_; }
  /// The training targets, [Batch, TgtSteps].
  target_array_type const& tgt() const noexcept { return tgt_; }
  /// Their valid lengths, [Batch].
  target_valid_len_type const& tgt_valid_len() const noexcept { return tgt_valid_len_; }

  /// @brief One epoch: every training pair once, in an order drawn from
  /// @p gen (`shuffled_order`), in batches of @p batch_size, the last one
  /// smaller when needed (d2l's `load_array(…, is_train=True)`).  Call it
  /// once per epoch; the generator's state makes each epoch's order new and
  /// a seed makes them all reproducible.  `value_error` when @p batch_size is 0.
  nmt_batches<Batch, Steps, TgtSteps> batches(std::size_t batch_size, generator& gen) const {
    if (batch_size == 0) throw value_error("nmt_dataset::batches: batch_size must be positive");
    return nmt_batches<Batch, Steps, TgtSteps>(this, batch_size, shuffled_order(gen));
  }

 private:
  nmt_dataset(std::string_view raw_text, std::string_view name, nmt_options const& options)
      : nmt_dataset_base(raw_text, name, options) {
    make_tensors();
  }

  void make_tensors() {
    auto src = detail::nmt_tensors<Batch, Steps>(src_indices());
    auto tgt = detail::nmt_tensors<Batch, TgtSteps>(tgt_indices());
    src_ = std::move(src.array);
    src_valid_len_ = std::move(src.valid_len);
    tgt_ = std::move(tgt.array);
    tgt_valid_len_ = std::move(tgt.valid_len);
  }

  array_type src_;
  valid_len_type src_valid_len_;
  target_array_type tgt_;
  target_valid_len_type tgt_valid_len_;
};

/// @brief d2l's `load_data_nmt(batch_size, num_steps, num_examples)`: the
/// dataset of @p file with d2l's settings and every 10th pair held out;
/// draw its minibatches with `batches(batch_size, gen)`.
template <class Batch, class Steps, class TgtSteps = Steps>
nmt_dataset<Batch, Steps, TgtSteps> load_data_nmt(std::filesystem::path const& file, std::size_t num_steps,
                                                  std::optional<std::size_t> num_examples = 600) {
  nmt_options options;
  options.num_steps = num_steps;
  options.num_examples = num_examples;
  return nmt_dataset<Batch, Steps, TgtSteps>(file, options);
}

}  // namespace dimtensor::data
