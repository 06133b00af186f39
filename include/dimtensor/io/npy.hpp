#pragma once
/// @file
/// @brief NumPy `.npy` files: `load_npy<Tensor>(path)`, `save_npy(path, x)`,
/// and the raw header layer they share (`read_npy_header`, `write_npy_header`).
///
/// Supported: format versions 1.0, 2.0 and 3.0 for reading (1.0 written, or
/// 2.0 when the header outgrows 65535 bytes); little-endian dtypes `<f4`
/// (float), `<f8` (double), `<i4` (std::int32_t), `<i8` (std::int64_t) and
/// `|b1` (bool); C order only.
///
/// Loading never converts: the file's dtype must be exactly the tensor's
/// element type, its rank the tensor's rank and its extents the tensor's
/// static extents; anything else is an `io_error` naming the file and both
/// sides (convert after loading with `dimtensor::cast<T>` when needed).
/// Malformed input of any kind (bad magic, truncated or garbage header,
/// truncated data, a shape too large for the file) is an `io_error`, never a
/// crash: the header length is capped and the data size is checked against
/// the file size before anything is allocated.
///
/// Tensors of every backend load and save; elements the host cannot reach
/// (`cuda`) pass through a cpu copy.

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
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
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// The largest `.npy` header (the dict after the preamble) the readers accept, in bytes.
inline constexpr std::size_t npy_max_header_bytes = std::size_t{1} << 16;

/// @brief What an `.npy` header says: format version, dtype, order and shape.
struct npy_header {
  /// Format major version (1, 2 or 3).
  int major_version = 1;
  /// Format minor version (0).
  int minor_version = 0;
  /// The dtype as NumPy spells it: `<f4`, `<f8`, `<i4`, `<i8`, `|b1`, …
  std::string descr;
  /// Whether the data is stored column-major (never supported by the loaders).
  bool fortran_order = false;
  /// The extents, outermost first; empty for a 0-d array.
  std::vector<index_t> shape;
  /// Bytes of preamble and header: the first element follows this many
  /// bytes after the magic string (the file's start, for a file of one array).
  std::size_t data_offset = 0;

  /// Number of elements the shape holds: 0 when an extent is 0 (the
  /// product of the other extents is checked not to overflow when read).
  index_t element_count() const noexcept {
    index_t n = 1;
    for (auto e : shape) {
      if (e == 0) return 0;
      n *= e;
    }
    return n;
  }
};

namespace detail {

/// The `.npy` dtype and the dimtensor name of an element type.
template <class T>
struct npy_dtype;
template <>
struct npy_dtype<float> {
  static constexpr std::string_view descr = "<f4";
  static constexpr std::string_view name = "float32";
};
template <>
struct npy_dtype<double> {
  static constexpr std::string_view descr = "<f8";
  static constexpr std::string_view name = "float64";
};
template <>
struct npy_dtype<std::int32_t> {
  static constexpr std::string_view descr = "<i4";
  static constexpr std::string_view name = "int32";
};
template <>
struct npy_dtype<std::int64_t> {
  static constexpr std::string_view descr = "<i8";
  static constexpr std::string_view name = "int64";
};
template <>
struct npy_dtype<bool> {
  static constexpr std::string_view descr = "|b1";
  static constexpr std::string_view name = "bool";
};

/// The element type name for a supported descr, or "" when unsupported.
std::string_view npy_dtype_name(std::string_view descr);

/// The extents separated by ", ", the ones after the first @p max_shown
/// replaced by "... N more"; what the shape texts of both file formats list.
std::string extent_list(std::span<index_t const> shape, std::size_t max_shown);

/// Python's spelling of a shape: `(2, 3)`, `(3,)`, `()`; error messages
/// pass @p max_shown to stay readable for absurd ranks.
std::string npy_shape_string(std::span<index_t const> shape,
                             std::size_t max_shown = std::numeric_limits<std::size_t>::max());

/// Header text fit for an error message: bounded, with control and non-ASCII bytes escaped.
std::string npy_quote(std::string_view text);

/// "<op>: <file>: "
std::string npy_prefix(std::string_view op, std::string_view name);

/// Reads and checks the preamble and header; leaves @p in at the first element;
/// @p op and @p name prefix the messages.
npy_header read_npy_header(std::istream& in, std::string_view op, std::string_view name);

/// The bytes left in @p in from its current position, or -1 when it cannot seek.
std::streamoff bytes_left(std::istream& in);

template <class T>
void byteswap_in_place(T* data, index_t n) {
  if constexpr (sizeof(T) > 1) {
    for (index_t i = 0; i < n; ++i) {
      auto* b = reinterpret_cast<unsigned char*>(data + i);
      for (std::size_t k = 0; k < sizeof(T) / 2; ++k) std::swap(b[k], b[sizeof(T) - 1 - k]);
    }
  }
}

/// Converts an extents container to the shape vector of a header.
template <std::size_t R>
std::vector<index_t> shape_vector(std::array<index_t, R> const& ext) {
  return std::vector<index_t>(ext.begin(), ext.end());
}

[[noreturn]] void throw_open_error(std::string_view op, std::string_view verb, std::filesystem::path const& path,
                                   int err);

}  // namespace detail

/// @brief Reads the preamble and header of an `.npy` stream and checks that
/// they are well formed; leaves @p in at the first element.
///
/// @p name (the file name) prefixes every error message.  Throws `io_error`
/// on a bad magic, an unsupported version, a header that is truncated,
/// longer than `npy_max_header_bytes` or not a valid header dict, or a shape
/// whose byte size overflows.  The dtype and order are reported, not judged.
npy_header read_npy_header(std::istream& in, std::string_view name);

/// @brief Writes the preamble and header for an array of dtype @p descr and
/// shape @p shape, C order: version 1.0, or 2.0 when the header is too long
/// for 1.0; padded so that the data starts on a 64-byte boundary.
void write_npy_header(std::ostream& out, std::string_view descr, std::span<index_t const> shape);

namespace detail {

/// Reads up to @p n bytes, growing the buffer only as bytes arrive, so that a
/// header claiming a huge shape cannot make it allocate more than the stream holds.
std::string read_at_most(std::istream& in, std::streamoff n);

/// Whether load_npy can load into Tensor; reports why not (once) when it cannot.
template <class Tensor>
constexpr bool check_npy_target() {
  if constexpr (!is_tensor_v<Tensor>) {
    static_assert(diagnostic::always_false<Tensor>,
                  "dimtensor::load_npy<Tensor>: Tensor must be a tensor type, e.g. tensor<float, Batch>");
    return false;
  } else {
    return true;
  }
}

template <class Tensor>
inline constexpr bool npy_target_ok_v = is_tensor_v<Tensor>;

/// load_npy into a tensor whose elements the host writes directly.
template <class Tensor>
Tensor load_npy_host(std::istream& in, std::string_view name, bool whole_file) {
  using T = typename Tensor::value_type;
  using specs = typename Tensor::specs;
  constexpr std::string_view op = "load_npy";
  auto const prefix = npy_prefix(op, name);

  npy_header const h = read_npy_header(in, op, name);

  if (h.descr != npy_dtype<T>::descr) {
    std::string what = "dtype " + h.descr;
    if (!h.descr.empty() && h.descr.front() == '>') {
      throw io_error(prefix + what + " is big-endian; only little-endian files are supported (re-save with " +
                     "numpy's .astype('<" + h.descr.substr(1) + "'))");
    }
    auto const file_type = npy_dtype_name(h.descr);
    if (file_type.empty()) {
      throw io_error(prefix + what + " is not supported (supported: <f4 float32, <f8 float64, <i4 int32, " +
                     "<i8 int64, |b1 bool) and the tensor holds " + std::string(npy_dtype<T>::name));
    }
    throw io_error(prefix + what + " (" + std::string(file_type) + ") but the tensor holds " +
                   std::string(npy_dtype<T>::name) + " (" + std::string(npy_dtype<T>::descr) +
                   "); load_npy does not convert: load into a tensor of " + std::string(file_type) +
                   " and convert with dimtensor::cast");
  }
  if (h.fortran_order) {
    throw io_error(prefix + "fortran_order is True (column-major data); only C order is supported (re-save with " +
                   "numpy.ascontiguousarray)");
  }

  constexpr std::size_t R = Tensor::rank;
  if (h.shape.size() != R) {
    std::string dims_text = "[";
    for (std::size_t i = 0; i < R; ++i) {
      if (i) dims_text += ", ";
      dims_text += names_of<specs>::value[i];
    }
    dims_text += "]";
    throw io_error(prefix + "the file holds shape " + npy_shape_string(h.shape, 16) + " (rank " +
                   std::to_string(h.shape.size()) + ") but the tensor has dims " + dims_text + " (rank " +
                   std::to_string(R) + ")");
  }
  typename Tensor::extents_type ext{};
  for (std::size_t i = 0; i < R; ++i) {
    ext[i] = h.shape[i];
    index_t const want = static_extents_of<specs>::value[i];
    if (want != dynamic_extent && want != ext[i]) {
      throw io_error(prefix + "extent mismatch for dimension " + std::string(names_of<specs>::value[i]) +
                     ": " + std::to_string(ext[i]) + " (file, shape " + npy_shape_string(h.shape) + ") vs " +
                     std::to_string(want) + " (static)");
    }
  }

  index_t const count = h.element_count();
  auto const nbytes = static_cast<std::streamoff>(count) * static_cast<std::streamoff>(sizeof(T));
  std::streamoff const left = bytes_left(in);
  auto const data_error = [&](std::streamoff have, std::string_view what) {
    throw io_error(prefix + std::string(what) + ": the shape " + npy_shape_string(h.shape) + " of " +
                   h.descr + " needs " + std::to_string(nbytes) + " bytes of data but the file has " +
                   std::to_string(have) + " after the " + std::to_string(h.data_offset) + "-byte header");
  };
  if (left >= 0 && left < nbytes) data_error(left, "truncated data");
  if (whole_file && left > nbytes) data_error(left, "trailing bytes after the data");

  // Bools are staged to check their bytes; streams that cannot tell their
  // size are staged so that nothing is allocated for data that is not there.
  bool const staged = left < 0 || std::is_same_v<T, bool>;
  std::string bytes;
  if (staged) {
    bytes = read_at_most(in, nbytes);
    if (static_cast<std::streamoff>(bytes.size()) != nbytes) {
      data_error(static_cast<std::streamoff>(bytes.size()), "truncated data");
    }
  }

  Tensor t(uninitialized, ext);
  if (count == 0) return t;
  if constexpr (std::is_same_v<T, bool>) {
    for (index_t i = 0; i < count; ++i) {
      auto const b = static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
      if (b > 1) {
        throw io_error(prefix + "malformed bool data: byte " + std::to_string(b) + " at element " +
                       std::to_string(i) + " (|b1 elements must be 0 or 1)");
      }
      t.data()[i] = b != 0;
    }
  } else {
    if (staged) {
      std::memcpy(t.data(), bytes.data(), static_cast<std::size_t>(nbytes));
    } else {
      in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(nbytes));
      if (in.gcount() != nbytes) data_error(in.gcount(), "truncated data");
    }
    if constexpr (std::endian::native == std::endian::big) byteswap_in_place(t.data(), count);
  }
  return t;
}

/// load_npy into any tensor: on a backend the host cannot write, the file is
/// read into a cpu tensor which is then copied to the backend.
template <class Tensor>
Tensor load_npy_impl(std::istream& in, std::string_view name, bool whole_file) {
  using T = typename Tensor::value_type;
  using specs = typename Tensor::specs;
  if constexpr (!Tensor::backend::host_accessible) {
    return to<typename Tensor::backend>(load_npy_host<tensor_with_dims<cpu, T, specs>>(in, name, whole_file));
  } else {
    return load_npy_host<Tensor>(in, name, whole_file);
  }
}

}  // namespace detail

/// @brief Loads one array from an `.npy` stream into a new tensor of type
/// @p Tensor (a `basic_tensor` of any backend), leaving the stream after its
/// data (so arrays saved one after another into one stream load one after
/// another); @p name prefixes error messages.  Checks as load_npy(path) does.
template <class Tensor>
Tensor load_npy(std::istream& in, std::string_view name) {
  if constexpr (!detail::npy_target_ok_v<Tensor>) {
    (void)detail::check_npy_target<Tensor>();
    (void)in;
    (void)name;
    return Tensor{};
  } else {
    return detail::load_npy_impl<Tensor>(in, name, false);
  }
}

/// @brief Loads an `.npy` file into a new tensor of type @p Tensor:
/// `auto x = load_npy<tensor<float, Batch, Queries, KVPairs>>("x.npy");`.
///
/// The file's dtype must be the tensor's element type exactly (no
/// conversion), its rank the tensor's rank, its extents the tensor's static
/// extents; the data must be C order and exactly as long as the shape says
/// (no trailing bytes).  On a backend the host cannot write (`cuda`) the
/// data is read on the host and then copied to the backend.
/// Every failure is an `io_error` whose message names the call, the file and
/// what disagrees (`load_npy: x.npy: dtype <f8 (float64) but the tensor holds float32 …`).
template <class Tensor>
Tensor load_npy(std::filesystem::path const& path) {
  if constexpr (!detail::npy_target_ok_v<Tensor>) {
    (void)detail::check_npy_target<Tensor>();
    (void)path;
    return Tensor{};
  } else {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) detail::throw_open_error("load_npy", "open", path, errno);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) detail::throw_open_error("load_npy", "open", path, EISDIR);
    return detail::load_npy_impl<Tensor>(in, path.string(), true);
  }
}

/// @brief Writes an expression to an `.npy` stream (C order, dtype of its
/// element type); evaluates it first if it is not a tensor, and copies its
/// elements to the host when the host cannot read them (`cuda`).
template <Expression E>
void save_npy(std::ostream& out, E const& x) {
  using T = typename E::value_type;
  auto const t = detail::to_host(x);
  auto const shape = detail::shape_vector(t.extents());
  write_npy_header(out, detail::npy_dtype<T>::descr, shape);
  index_t const n = t.size();
  if (n == 0) return;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<char> bytes(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) bytes[static_cast<std::size_t>(i)] = t.data()[i] ? 1 : 0;
    out.write(bytes.data(), static_cast<std::streamsize>(n));
  } else if constexpr (std::endian::native == std::endian::big) {
    std::vector<T> copy(t.data(), t.data() + n);
    detail::byteswap_in_place(copy.data(), n);
    out.write(reinterpret_cast<char const*>(copy.data()), static_cast<std::streamsize>(n * sizeof(T)));
  } else {
    out.write(reinterpret_cast<char const*>(t.data()), static_cast<std::streamsize>(n * sizeof(T)));
  }
}

/// @brief Writes an expression to an `.npy` file (C order, the dtype of its
/// element type: float → `<f4`, double → `<f8`, std::int32_t → `<i4`,
/// std::int64_t → `<i8`, bool → `|b1`); evaluates it first if needed.
/// Throws `io_error` naming the file when it cannot be created or written.
template <Expression E>
void save_npy(std::filesystem::path const& path, E const& x) {
  auto const t = eval(x);  // evaluate before touching the file: a shape_error must not leave it truncated
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) detail::throw_open_error("save_npy", "create", path, errno);
  save_npy(out, t);
  out.flush();
  if (!out) detail::throw_open_error("save_npy", "write", path, errno);
  out.close();
  if (!out) detail::throw_open_error("save_npy", "write", path, errno);
}

/// Absorbs the result of a call whose compile-time check failed.
inline void save_npy(std::filesystem::path const&, ill_formed) {}

}  // namespace dimtensor
