/// @file
/// @brief libFuzzer target: the input as an `.npy` stream, loaded into
/// tensors of several element types, ranks and extents.
///
/// Checks, beyond "no crash": a failed load throws `io_error` naming the
/// stream and nothing else; a stream that can seek and one that cannot give
/// the same result; a loaded tensor holds exactly the bytes after the header
/// and leaves the stream right after them; and save_npy → load_npy →
/// save_npy gives the same bytes twice and the same elements, bit for bit.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <type_traits>

#include <dimtensor/io/npy.hpp>
#include <dimtensor/tensor/tensor.hpp>

#include "fuzz_support.hpp"

namespace {

DIMTENSOR_DIM(Rows);
DIMTENSOR_DIM(Cols);
DIMTENSOR_DIM(Depth);

namespace dt = dimtensor;
using dimtensor_fuzz::require;

constexpr std::string_view stream_name = "fuzz.npy";

/// A stream buffer over bytes that cannot seek, as a pipe: the loader must
/// then stage the data instead of asking for the size first.
class unseekable_buffer : public std::streambuf {
 public:
  explicit unseekable_buffer(std::string bytes) : bytes_(std::move(bytes)) {
    setg(bytes_.data(), bytes_.data(), bytes_.data() + bytes_.size());
  }

 private:
  std::string bytes_;
};

template <class Tensor>
std::optional<Tensor> try_load(std::istream& in) {
  try {
    return dt::load_npy<Tensor>(in, stream_name);
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, stream_name);
    return std::nullopt;
  }
}

template <class Tensor>
std::string saved(Tensor const& t) {
  std::ostringstream out(std::ios::binary);
  dt::save_npy(out, t);
  require(static_cast<bool>(out), "save_npy to a string stream failed");
  return std::move(out).str();
}

template <class Tensor>
void check(std::string_view bytes) {
  using T = typename Tensor::value_type;
  std::istringstream seekable{std::string(bytes), std::ios::binary};
  std::optional<Tensor> const t = try_load<Tensor>(seekable);
  unseekable_buffer buffer{std::string(bytes)};
  std::istream unseekable(&buffer);
  std::optional<Tensor> const staged = try_load<Tensor>(unseekable);
  require(t.has_value() == staged.has_value(), "seekable and unseekable streams disagree on success");
  if (!t) return;
  require(dimtensor_fuzz::bitwise_equal(*t, *staged), "seekable and unseekable streams load different elements");

  std::istringstream again{std::string(bytes), std::ios::binary};
  dt::npy_header const h = dt::read_npy_header(again, stream_name);
  auto const count = static_cast<std::size_t>(t->size());
  std::size_t const nbytes = count * sizeof(T);
  require(h.data_offset + nbytes <= bytes.size(), "loaded more bytes than the stream holds");
  require(seekable.tellg() == static_cast<std::streamoff>(h.data_offset + nbytes),
          "the stream is not left right after the data");
  auto const* data = reinterpret_cast<unsigned char const*>(bytes.data() + h.data_offset);
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t i = 0; i < count; ++i) require(data[i] == (t->data()[i] ? 1 : 0), "bool element differs");
  } else {
    require(count == 0 || std::memcmp(t->data(), data, nbytes) == 0, "elements differ from the file's bytes");
  }

  std::string const first = saved(*t);
  std::istringstream first_in{first, std::ios::binary};
  std::optional<Tensor> const u = try_load<Tensor>(first_in);
  require(u.has_value(), "save_npy wrote what load_npy refuses");
  require(first_in.peek() == std::char_traits<char>::eof(), "save_npy wrote bytes load_npy leaves unread");
  require(dimtensor_fuzz::bitwise_equal(*t, *u), "elements changed in a save/load round trip");
  require(saved(*u) == first, "save_npy of a reloaded tensor gives other bytes");

  // Arrays saved one after another load one after another.
  std::optional<dt::tensor<float, Rows>> const next = try_load<dt::tensor<float, Rows>>(seekable);
  (void)next;
}

/// The `.npy` dtype a tensor of T loads from.
template <class T>
constexpr std::string_view descr_of() {
  if constexpr (std::is_same_v<T, float>) return "<f4";
  if constexpr (std::is_same_v<T, double>) return "<f8";
  if constexpr (std::is_same_v<T, std::int32_t>) return "<i4";
  if constexpr (std::is_same_v<T, std::int64_t>) return "<i8";
  if constexpr (std::is_same_v<T, bool>) return "|b1";
}

/// Calls `f.operator()<Tensor>()` for each of the tensor types loaded into.
template <class F>
void for_each_target(F&& f) {
  f.template operator()<dt::tensor<float>>();
  f.template operator()<dt::tensor<float, Rows>>();
  f.template operator()<dt::tensor<float, Rows, Cols>>();
  f.template operator()<dt::tensor<float, Rows, Cols, Depth>>();
  f.template operator()<dt::tensor<float, Rows::fixed<2>, Cols>>();
  f.template operator()<dt::tensor<double, Rows, Cols>>();
  f.template operator()<dt::tensor<std::int32_t, Rows, Cols, Depth>>();
  f.template operator()<dt::tensor<std::int64_t, Rows>>();
  f.template operator()<dt::tensor<bool, Rows, Cols>>();
}
constexpr std::size_t target_count = 9;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const bytes(reinterpret_cast<char const*>(data), size);
  std::optional<dt::npy_header> header;
  try {
    std::istringstream in{std::string(bytes), std::ios::binary};
    header = dt::read_npy_header(in, stream_name);
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, stream_name);
  }
  // Every type whose dtype and rank the header names, and one other (its
  // refusal is quick to find; trying all of them would slow the search).
  std::size_t const other = size % target_count;
  std::size_t index = 0;
  for_each_target([&]<class Tensor>() {
    bool const candidate = header && header->descr == descr_of<typename Tensor::value_type>() &&
                           header->shape.size() == Tensor::rank;
    if (candidate || index == other) check<Tensor>(bytes);
    ++index;
  });
  return 0;
}
