#pragma once
/// @file
/// @brief Hugging Face safetensors files, the format PyTorch users share
/// weights in: `safetensors_reader` (header, keys, `load<Tensor>(key)`),
/// `safetensors_writer` (`add(key, x)`, `save(path)`) and
/// `load_safetensors<Tensor>(path, key)`.
///
/// The format: 8 bytes, an unsigned little-endian 64-bit header size N; N
/// bytes of a UTF-8 JSON object mapping each tensor name to
/// `{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}` (offsets
/// relative to the first byte after the header) and, optionally,
/// `"__metadata__"` to an object of strings; then the data section,
/// little-endian, row-major, which the tensors cover exactly (no holes, no
/// overlaps, nothing after the last tensor).
///
/// The reader validates the whole header when it is constructed, as the
/// reference implementation does, and reads no tensor data then: `load()`
/// reopens the file and reads that one tensor's bytes, so a reader over a
/// checkpoint of many gigabytes holds only its header in memory.  Every
/// malformed file gives an `io_error` naming the file and the problem, never
/// a crash; the header is parsed by a strict JSON reader of our own
/// (io/detail/json.hpp), so dimtensor needs no JSON library.
///
/// Loading converts only where every value survives: F32 loads into float
/// (and double), F64 into double, I32 into std::int32_t, I64 into
/// std::int64_t, BOOL into bool, F16 and BF16 into float or double; F64
/// into float, and any integer into a floating type or back, are refused
/// (`io_error`).  The other dtypes of the format (I8, U8, I16,
/// U16, U32, U64, C64, the FP8, FP6 and FP4 kinds) are accepted in a file
/// and refused, with an `io_error`, only when loaded.

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/io/detail/json.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// The largest safetensors header accepted, in bytes (the reference implementation's limit).
inline constexpr std::uint64_t safetensors_max_header_bytes = 100'000'000;

/// @brief One tensor's entry in a safetensors header.
struct safetensors_entry {
  /// The dtype as the format spells it: `F32`, `F64`, `I64`, `BF16`, …
  std::string dtype;
  /// The extents, outermost first; empty for a rank-0 tensor.
  std::vector<index_t> shape;
  /// First byte of the tensor's data, relative to the start of the data section.
  std::size_t begin = 0;
  /// One past its last byte, relative to the start of the data section.
  std::size_t end = 0;
};

namespace detail {

/// A dtype of the safetensors format and the bits of one element.
struct safetensors_dtype_info {
  /// The format's spelling.
  std::string_view name;
  /// Bits per element (4 and 6 for the sub-byte float kinds).
  std::size_t bits;
};

/// Every dtype of the format, in the order of the reference implementation's
/// `Dtype` enum, which its writer sorts by (descending) to align the data.
inline constexpr std::array<safetensors_dtype_info, 22> safetensors_dtypes{{
    {"BOOL", 8},    {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6},     {"U8", 8},          {"I8", 8},
    {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},
    {"U16", 16},    {"F16", 16},    {"BF16", 16},   {"I32", 32},        {"U32", 32},        {"F32", 32},
    {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64},
}};

/// The table entry of @p name, or nullptr for a dtype the format does not define.
safetensors_dtype_info const* find_safetensors_dtype(std::string_view name) noexcept;

/// Position of @p name in safetensors_dtypes (the reference writer's sort key).
std::size_t safetensors_dtype_order(std::string_view name) noexcept;

/// The safetensors dtype of a dimtensor element type.
template <class T>
inline constexpr std::string_view safetensors_dtype_of = "";
template <>
inline constexpr std::string_view safetensors_dtype_of<float> = "F32";
template <>
inline constexpr std::string_view safetensors_dtype_of<double> = "F64";
template <>
inline constexpr std::string_view safetensors_dtype_of<std::int32_t> = "I32";
template <>
inline constexpr std::string_view safetensors_dtype_of<std::int64_t> = "I64";
template <>
inline constexpr std::string_view safetensors_dtype_of<bool> = "BOOL";

/// The C++ spelling of a dimtensor element type, for messages.
template <class T>
inline constexpr std::string_view safetensors_element_name_of = "";
template <>
inline constexpr std::string_view safetensors_element_name_of<float> = "float";
template <>
inline constexpr std::string_view safetensors_element_name_of<double> = "double";
template <>
inline constexpr std::string_view safetensors_element_name_of<std::int32_t> = "std::int32_t";
template <>
inline constexpr std::string_view safetensors_element_name_of<std::int64_t> = "std::int64_t";
template <>
inline constexpr std::string_view safetensors_element_name_of<bool> = "bool";

/// The dimtensor element type a dtype loads into without conversion ("" when none does).
std::string_view safetensors_element_name(std::string_view dtype) noexcept;

/// @brief An IEEE binary16 value as float, exactly (subnormals, infinities
/// and NaN payloads included).
inline float half_to_float(std::uint16_t h) noexcept {
  std::uint32_t const sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t const exponent = (h >> 10) & 0x1fu;
  std::uint32_t const mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Subnormal or zero: mantissa * 2^-24, exact in a float.
    float const magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
}

/// @brief A bfloat16 value as float, exactly: bfloat16 is the upper half of a float.
inline float bfloat16_to_float(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

/// "[2, 3]", "[]"; messages pass @p max_shown to stay readable for absurd ranks.
std::string safetensors_shape_string(std::span<index_t const> shape, std::size_t max_shown = 16);

/// A key fit for a message: as is when short printable ASCII, else quoted and escaped.
std::string safetensors_key_text(std::string_view key);

/// Header text around an error, fit for a message: printable ASCII as is,
/// other bytes as \xNN, between backquotes.
std::string safetensors_snippet(std::string_view text);

/// "[begin, end]"
std::string safetensors_offsets_string(safetensors_entry const& e);

/// Whether safetensors_reader::load can load into Tensor.
template <class Tensor>
inline constexpr bool safetensors_target_ok_v = is_tensor_v<Tensor>;

/// Reports (once) why Tensor cannot be loaded into.
template <class Tensor>
constexpr void check_safetensors_target() {
  if constexpr (!is_tensor_v<Tensor>) {
    static_assert(
        diagnostic::always_false<Tensor>,
        "dimtensor::safetensors_reader::load<Tensor>: Tensor must be a tensor type, e.g. tensor<float, Batch>");
  }
}

std::uint64_t read_le_u64(unsigned char const* p) noexcept;

}  // namespace detail

/// @brief Reads a safetensors file: its header at construction, one tensor per `load()`.
///
/// ```
/// dt::safetensors_reader weights("model.safetensors");
/// auto W_q = weights.load<dt::tensor<float, Hidden, QueryFeat>>("W_q.weight");
/// ```
class safetensors_reader {
 public:
  /// @brief Opens @p file and reads and validates its header (see the file's
  /// description); keeps only the header in memory.
  ///
  /// Throws `io_error` naming the file when it cannot be opened; is shorter
  /// than 8 bytes; declares a header longer than the file or than
  /// `safetensors_max_header_bytes`; has a header that is not valid JSON
  /// (the message says where), not an object, or whose entries lack
  /// `dtype`, `shape` or `data_offsets`, name a dtype the format does not
  /// define, have offsets outside the data section or with begin > end, or
  /// a byte size other than the product of the shape times the dtype's size;
  /// or when the entries overlap or leave bytes of the data section uncovered.
  explicit safetensors_reader(std::filesystem::path file);

  /// The file, as given.
  std::filesystem::path const& path() const noexcept { return path_; }

  /// The tensor names, sorted, without `__metadata__`.
  std::vector<std::string> keys() const;

  /// Whether the file holds a tensor named @p key.
  bool contains(std::string_view key) const { return entries_.find(key) != entries_.end(); }

  /// @brief The header entry of @p key; `io_error` naming the file and the
  /// key, and listing keys that exist near it in sorted order, when absent.
  safetensors_entry const& entry(std::string_view key) const { return entry_for("safetensors_reader::entry", key); }

  /// The `__metadata__` strings (empty when the file has none).
  std::map<std::string, std::string> const& metadata() const noexcept { return metadata_; }

  /// Size of the JSON header in bytes (padding included); the data section starts 8 bytes later.
  std::uint64_t header_size() const noexcept { return header_size_; }

  /// @brief The tensor stored under @p key as a new `Tensor`
  /// (`tensor<float, Hidden, KeyFeat>`, of any backend: on one the host
  /// cannot write, `cuda`, the data is read on the host and then copied).
  ///
  /// The file's rank must be the tensor type's, its extents the type's static
  /// extents, and its dtype the element type (F32 ↔ float, F64 ↔ double,
  /// I32 ↔ std::int32_t, I64 ↔ std::int64_t, BOOL ↔ bool), except that F16
  /// and BF16 load into float or double and F32 into double, converted
  /// exactly (nothing narrows: F64 into float is refused).  Every failure is
  /// an `io_error` naming the file, the key and what differs
  /// (`W_q.weight: shape [8, 20] but the tensor type has rank 3 …`,
  /// `dtype F64 but the tensor holds float …`); BOOL bytes other than 0 and 1
  /// and a file that changed since it was opened are `io_error`s too.
  template <class Tensor>
  Tensor load(std::string_view key) const {
    if constexpr (!detail::safetensors_target_ok_v<Tensor>) {
      detail::check_safetensors_target<Tensor>();
      (void)key;
      return Tensor{};
    } else if constexpr (!Tensor::backend::host_accessible) {
      using host_t = tensor_with_dims<cpu, typename Tensor::value_type, typename Tensor::specs>;
      return to<typename Tensor::backend>(load_impl<host_t>(key));
    } else {
      return load_impl<Tensor>(key);
    }
  }

  /// @brief The values of the tensor stored under @p key, row-major, as
  /// T (its shape is `entry(key).shape`): for reading a tensor whose rank
  /// or layout is known only at run time (nn::load_checkpoint's
  /// transposes and splits).  The element types and conversions are
  /// `load`'s, and so are the errors, less the shape's.
  template <class T>
  std::vector<T> values(std::string_view key) const {
    static_assert(std::is_floating_point_v<T> || std::is_same_v<T, std::int32_t> ||
                      std::is_same_v<T, std::int64_t>,
                  "dimtensor::safetensors_reader::values<T>: T must be float, double, std::int32_t or std::int64_t");
    safetensors_entry const& e = entry_for(op_values, key);
    std::string const where = prefix(op_values) + detail::safetensors_key_text(key) + ": ";
    check_dtype<T>(e, where);
    index_t count = 1;
    for (index_t extent : e.shape) count *= extent;  // the header's layout check bounds it by the file's size
    std::vector<T> out(static_cast<std::size_t>(count));
    read_data(op_values, e, where, out.data(), count);
    return out;
  }

 private:
  static constexpr std::string_view op_open = "safetensors_reader";
  static constexpr std::string_view op_load = "safetensors_reader::load";
  static constexpr std::string_view op_values = "safetensors_reader::values";
  static constexpr std::string_view metadata_key = "__metadata__";

  std::string prefix(std::string_view op) const { return std::string(op) + ": " + path_.string() + ": "; }

  [[noreturn]] void fail(std::string const& what) const { throw io_error(prefix(op_open) + what); }

  [[noreturn]] void fail_entry(std::string_view key, std::string const& what) const {
    fail(detail::safetensors_key_text(key) + ": " + what);
  }

  void parse_header(std::string_view header);

  void parse_metadata(detail::json::value const& v);

  // A non-negative integer that fits T, or an error naming the field.
  template <class T>
  T parse_count(std::string_view key, std::string_view field, detail::json::value const& v) const {
    if (v.type() != detail::json::kind::integer || v.as_integer() < 0) {
      std::string const found = v.type() == detail::json::kind::integer
                                    ? "the negative integer " + std::to_string(v.as_integer())
                                    : std::string(detail::json::kind_name(v.type()));
      fail_entry(key, "\"" + std::string(field) + "\" holds " + found + "; expected non-negative integers");
    }
    return static_cast<T>(v.as_integer());
  }

  safetensors_entry parse_entry(std::string_view key, detail::json::value const& v) const;

  // The reference implementation's rules: each entry's byte size is its
  // shape's times its dtype's, and the entries, sorted by offsets, tile the
  // data section from its first byte to the end of the file.
  void validate_layout() const;

  safetensors_entry const& entry_for(std::string_view op, std::string_view key) const;

  template <class Tensor>
  Tensor load_impl(std::string_view key) const {
    using T = typename Tensor::value_type;
    using specs = typename Tensor::specs;
    constexpr std::size_t R = Tensor::rank;

    safetensors_entry const& e = entry_for(op_load, key);
    std::string const where = prefix(op_load) + detail::safetensors_key_text(key) + ": ";
    check_dtype<T>(e, where);

    if (e.shape.size() != R) {
      std::string dims_text = "[";
      for (std::size_t i = 0; i < R; ++i) {
        if (i) dims_text += ", ";
        dims_text += detail::names_of<specs>::value[i];
      }
      throw io_error(where + "shape " + detail::safetensors_shape_string(e.shape) + " but the tensor type has rank " +
                     std::to_string(R) + " (dims " + dims_text + "])");
    }
    typename Tensor::extents_type ext{};
    for (std::size_t i = 0; i < R; ++i) {
      ext[i] = e.shape[i];
      index_t const want = detail::static_extents_of<specs>::value[i];
      if (want != dynamic_extent && want != ext[i]) {
        throw io_error(where + "shape " + detail::safetensors_shape_string(e.shape) +
                       ": extent mismatch for dimension " + std::string(detail::names_of<specs>::value[i]) + ": " +
                       std::to_string(ext[i]) + " (file) vs " + std::to_string(want) + " (static)");
      }
    }

    Tensor t(uninitialized, ext);
    read_data(op_load, e, where, t.data(), t.size());
    return t;
  }

  // The dtype of entry @p e loads into T (load's rules), else an io_error
  // after @p where.
  template <class T>
  void check_dtype(safetensors_entry const& e, std::string const& where) const {
    constexpr std::string_view want_dtype = detail::safetensors_dtype_of<T>;
    constexpr bool floating = std::is_floating_point_v<T>;
    constexpr std::string_view element_name = detail::safetensors_element_name_of<T>;

    bool const half = e.dtype == "F16";
    bool const bf16 = e.dtype == "BF16";
    bool const widen = std::is_same_v<T, double> && e.dtype == "F32";
    if (e.dtype != want_dtype && !(floating && (half || bf16)) && !widen) {
      auto const file_type = detail::safetensors_element_name(e.dtype);
      if (file_type.empty() && !half && !bf16) {
        throw io_error(where + "dtype " + e.dtype + " is not supported by dimtensor (it loads F32 into float, " +
                       "F64 into double, I32 into std::int32_t, I64 into std::int64_t, BOOL into bool, F16 and " +
                       "BF16 into float or double, F32 into double); the tensor holds " + std::string(element_name));
      }
      std::string const into = file_type.empty() ? "float or double" : std::string(file_type);
      throw io_error(where + "dtype " + e.dtype + " but the tensor holds " + std::string(element_name) + " (dtype " +
                     std::string(want_dtype) + "); load does not convert it: load into a tensor of " + into +
                     " and convert with dimtensor::cast");
    }
  }

  // The @p count elements of entry @p e (whose dtype check_dtype passed)
  // into @p out, for the call @p op.
  template <class T>
  void read_data(std::string_view op, safetensors_entry const& e, std::string const& where, T* out,
                 index_t count) const {
    constexpr bool floating = std::is_floating_point_v<T>;
    bool const half = e.dtype == "F16";
    bool const bf16 = e.dtype == "BF16";
    std::size_t const nbytes = e.end - e.begin;
    if (nbytes == 0) return;

    errno = 0;
    std::ifstream in(path_, std::ios::binary);
    if (!in) detail::throw_open_error(op, "open", path_, errno);
    std::error_code ec;
    auto const size_now = std::filesystem::file_size(path_, ec);
    if (ec || static_cast<std::uint64_t>(size_now) != file_size_) {
      throw io_error(where + "the file changed since its header was read (it had " + std::to_string(file_size_) +
                     " bytes, now " + (ec ? std::string("cannot tell") : std::to_string(size_now)) + ")");
    }
    in.seekg(static_cast<std::streamoff>(8 + header_size_ + e.begin));
    auto const read_into = [&](char* dst) {
      in.read(dst, static_cast<std::streamsize>(nbytes));
      if (!in || static_cast<std::size_t>(in.gcount()) != nbytes) {
        throw io_error(where + "cannot read its " + std::to_string(nbytes) + " bytes at offset " +
                       std::to_string(8 + header_size_ + e.begin) + " (did the file change?)");
      }
    };

    if (std::is_same_v<T, double> && e.dtype == "F32") {
      std::vector<float> narrow(static_cast<std::size_t>(count));
      read_into(reinterpret_cast<char*>(narrow.data()));
      if constexpr (std::endian::native == std::endian::big) detail::byteswap_in_place(narrow.data(), count);
      std::copy(narrow.begin(), narrow.end(), out);
    } else if (half || bf16 || std::is_same_v<T, bool>) {
      std::string bytes(nbytes, '\0');
      read_into(bytes.data());
      auto const* b = reinterpret_cast<unsigned char const*>(bytes.data());
      if constexpr (std::is_same_v<T, bool>) {
        for (index_t i = 0; i < count; ++i) {
          if (b[i] > 1) {
            throw io_error(where + "malformed BOOL data: byte " + std::to_string(b[i]) + " at element " +
                           std::to_string(i) + " (BOOL elements must be 0 or 1)");
          }
          out[i] = b[i] != 0;
        }
      } else if constexpr (floating) {
        for (index_t i = 0; i < count; ++i) {
          auto const bits = static_cast<std::uint16_t>(b[2 * i] | (b[2 * i + 1] << 8));
          out[i] = static_cast<T>(half ? detail::half_to_float(bits) : detail::bfloat16_to_float(bits));
        }
      }
    } else {
      read_into(reinterpret_cast<char*>(out));
      if constexpr (std::endian::native == std::endian::big) detail::byteswap_in_place(out, count);
    }
  }

  std::filesystem::path path_;
  std::map<std::string, safetensors_entry, std::less<>> entries_;
  std::map<std::string, std::string> metadata_;
  std::uint64_t file_size_ = 0;
  std::uint64_t header_size_ = 0;
};

/// @brief Collects tensors and writes one safetensors file.
///
/// ```
/// dt::safetensors_writer out;
/// out.add("W_q.weight", W_q);
/// out.add_metadata("format", "pt");
/// out.save("model.safetensors");
/// ```
/// The file is what the reference writer makes of the same tensors, byte for
/// byte: a compact JSON header with `__metadata__` first, then the entries
/// sorted by dtype (widest first, in the reference's dtype order, so that
/// every tensor's data is aligned to its element size) and then by key,
/// padded with spaces to a multiple of 8 bytes; then the data in that order.
class safetensors_writer {
 public:
  /// @brief Adds @p tensor (any expression of any backend: evaluated,
  /// copied in row-major order to the host, so later changes to it do not
  /// show in the file) under @p key.
  ///
  /// `value_error` when @p key is empty, is `__metadata__`, is not valid
  /// UTF-8, or was added before.
  template <Expression E>
  void add(std::string key, E const& tensor) {
    using T = typename E::value_type;
    check_key("add", key, tensors_.contains(key));
    auto const t = detail::to_host(tensor);
    pending p;
    p.dtype = detail::safetensors_dtype_of<T>;
    p.shape = detail::shape_vector(t.extents());
    index_t const n = t.size();
    p.bytes.resize(static_cast<std::size_t>(n) * sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      for (index_t i = 0; i < n; ++i) p.bytes[static_cast<std::size_t>(i)] = t.data()[i] ? 1 : 0;
    } else if (n > 0) {
      std::memcpy(p.bytes.data(), t.data(), p.bytes.size());
      if constexpr (std::endian::native == std::endian::big) {
        detail::byteswap_in_place(reinterpret_cast<T*>(p.bytes.data()), n);
      }
    }
    tensors_.emplace(std::move(key), std::move(p));
  }

  /// Absorbs the result of a call whose compile-time check failed.
  void add(std::string const&, ill_formed) {}

  /// @brief Adds a `__metadata__` string; `value_error` when @p key is empty,
  /// was added before, or either string is not valid UTF-8.
  void add_metadata(std::string key, std::string value);

  /// @brief Writes the file (replacing it); `io_error` naming the file when
  /// it cannot be created or written.
  void save(std::filesystem::path const& file) const;

 private:
  static constexpr std::string_view op_save = "safetensors_writer::save";

  struct pending {
    std::string_view dtype;
    std::vector<index_t> shape;
    std::string bytes;
  };

  static void check_key(std::string_view op, std::string const& key, bool duplicate, bool tensor = true);

  std::map<std::string, pending, std::less<>> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// @brief Loads the tensor stored under @p key in a safetensors file:
/// `safetensors_reader(file).load<Tensor>(key)`.
template <class Tensor>
Tensor load_safetensors(std::filesystem::path const& file, std::string_view key) {
  return safetensors_reader(file).load<Tensor>(key);
}

}  // namespace dimtensor
