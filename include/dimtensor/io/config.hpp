#pragma once
/// @file
/// @brief `nn::model_config`: a model's `config.json` (as Hugging Face
/// `transformers` writes it beside the weights), read once, its fields
/// fetched by key with their JSON kinds checked.  The model families
/// (`dimtensor/models/`) read their typed configurations through it.
///
/// @code
/// dt::nn::model_config const file("bert-tiny/");            // a folder holding config.json, or the file
/// auto const hidden = file.extent("hidden_size");          // a positive integer, or io_error
/// auto const eps = file.number_or("layer_norm_eps", 1e-12); // the default when the key is absent
/// @endcode
///
/// Every failure is an `io_error` naming the file and the key: a missing
/// file, text that is not JSON, a key of the wrong kind (a string where a
/// number belongs), an extent that is not a positive integer.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cstdint>

#include <dimtensor/config.hpp>

namespace dimtensor::nn {

/// @brief A `config.json`: its top-level fields by key (dims-free, in the
/// runtime library).
class model_config {
 public:
  /// Reads @p source: a JSON file, or a folder holding `config.json`.
  explicit model_config(std::filesystem::path const& source);

  /// The file read.
  std::filesystem::path const& path() const noexcept { return path_; }
  /// Whether the top-level object has @p key (a JSON null counts as absent).
  bool contains(std::string_view key) const;
  /// The top-level keys, as written.
  std::vector<std::string> keys() const;

  /// @p key's integer; `io_error` when absent or not an integer.
  std::int64_t integer(std::string_view key) const;
  /// @p key's integer, or @p fallback when absent.
  std::int64_t integer_or(std::string_view key, std::int64_t fallback) const;
  /// @p key's positive integer (an extent); `io_error` otherwise.
  index_t extent(std::string_view key) const;
  /// @p key's positive integer, or @p fallback when absent.
  index_t extent_or(std::string_view key, index_t fallback) const;
  /// @p key's number (an integer reads as one too).
  double number(std::string_view key) const;
  /// @p key's number, or @p fallback when absent.
  double number_or(std::string_view key, double fallback) const;
  /// @p key's string.
  std::string string(std::string_view key) const;
  /// @p key's string, or @p fallback when absent.
  std::string string_or(std::string_view key, std::string_view fallback) const;
  /// @p key's boolean.
  bool boolean(std::string_view key) const;
  /// @p key's boolean, or @p fallback when absent.
  bool boolean_or(std::string_view key, bool fallback) const;

 private:
  struct fields;
  std::filesystem::path path_;
  std::shared_ptr<fields const> fields_;
};

}  // namespace dimtensor::nn
