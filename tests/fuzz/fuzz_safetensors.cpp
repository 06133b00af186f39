/// @file
/// @brief libFuzzer target: the input as a safetensors file, read by
/// `safetensors_reader` and each of its tensors loaded into several types.
///
/// Checks, beyond "no crash": a failed read or load throws `io_error`
/// naming the file and nothing else; an accepted header describes entries
/// whose sizes match their shapes and which tile the data section exactly;
/// a loaded tensor holds the bytes of its entry (F16 and BF16 converted
/// exactly); and safetensors_writer → safetensors_reader →
/// safetensors_writer gives the same file twice, with the same elements,
/// bit for bit, and the same metadata.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/io/safetensors.hpp>
#include <dimtensor/tensor/tensor.hpp>

#include "fuzz_support.hpp"

namespace {

DIMTENSOR_DIM(Rows);
DIMTENSOR_DIM(Cols);
DIMTENSOR_DIM(Depth);

namespace dt = dimtensor;
namespace fs = std::filesystem;
using dimtensor_fuzz::require;

/// An F16 value as float, computed apart from the library's conversion.
float reference_half(std::uint16_t h) {
  bool const negative = (h & 0x8000u) != 0;
  int const exponent = (h >> 10) & 0x1f;
  int const mantissa = h & 0x3ff;
  if (exponent == 0x1f) {
    return std::bit_cast<float>((negative ? 0x80000000u : 0u) | 0x7f800000u | (static_cast<std::uint32_t>(mantissa) << 13));
  }
  float const magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                        : std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
  return negative ? -magnitude : magnitude;
}

/// The elements must be the entry's bytes, converted only from F16 or BF16.
template <class Tensor>
void check_elements(Tensor const& t, dt::safetensors_entry const& e, unsigned char const* bytes) {
  using T = typename Tensor::value_type;
  auto const count = static_cast<std::size_t>(t.size());
  if (e.dtype == "F16" || e.dtype == "BF16") {
    require(std::is_floating_point_v<T>, "F16 or BF16 loaded into a non-floating type");
    require(e.end - e.begin == 2 * count, "F16 or BF16 entry of the wrong size loaded");
    for (std::size_t i = 0; i < count; ++i) {
      auto const bits = static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      float const f = e.dtype == "F16" ? reference_half(bits)
                                       : std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
      T const want = static_cast<T>(f);
      require(std::memcmp(&want, t.data() + i, sizeof(T)) == 0, "F16 or BF16 element converted wrongly");
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    require(e.end - e.begin == count, "BOOL entry of the wrong size loaded");
    for (std::size_t i = 0; i < count; ++i) require(bytes[i] == (t.data()[i] ? 1 : 0), "BOOL element differs");
  } else {
    require(e.end - e.begin == count * sizeof(T), "entry of the wrong size loaded");
    require(count == 0 || std::memcmp(t.data(), bytes, count * sizeof(T)) == 0, "elements differ from the file");
  }
}

/// What the reader promises of an accepted header.
void check_layout(dt::safetensors_reader const& reader, std::size_t file_size) {
  std::vector<std::string> const keys = reader.keys();
  require(std::is_sorted(keys.begin(), keys.end()), "keys() not sorted");
  require(std::adjacent_find(keys.begin(), keys.end()) == keys.end(), "keys() has a duplicate");
  require(reader.header_size() + 8 <= file_size, "header larger than the file");
  std::uint64_t const data_size = file_size - 8 - reader.header_size();
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (auto const& key : keys) {
    require(key != "__metadata__", "__metadata__ listed as a tensor");
    require(reader.contains(key), "contains() denies a key of keys()");
    auto const& e = reader.entry(key);
    require(e.begin <= e.end && e.end <= data_size, "entry outside the data section");
    spans.emplace_back(e.begin, e.end);
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t covered = 0;
  for (auto const& [begin, end] : spans) {
    require(begin == covered, "entries leave a hole or overlap");
    covered = end;
  }
  require(covered == data_size, "entries do not reach the end of the data section");
}

/// Writes @p t under @p key, with @p metadata, to @p file; the file's bytes.
template <class Tensor>
std::string write(fs::path const& file, std::string const& key, Tensor const& t,
                  std::map<std::string, std::string> const& metadata) {
  dt::safetensors_writer writer;
  writer.add(key, t);
  for (auto const& [k, v] : metadata) writer.add_metadata(k, v);
  writer.save(file);
  return dimtensor_fuzz::read_file(file);
}

template <class Tensor>
void check_round_trip(std::string const& key, Tensor const& t, std::map<std::string, std::string> metadata) {
  // The writer refuses empty keys, which the format (and the reader) allow.
  std::string const name = key.empty() ? std::string("empty key") : key;
  std::erase_if(metadata, [](auto const& m) { return m.first.empty(); });
  fs::path const& first_file = dimtensor_fuzz::scratch_file("first.safetensors");
  fs::path const& second_file = dimtensor_fuzz::scratch_file("second.safetensors");
  std::string const first = write(first_file, name, t, metadata);
  std::optional<Tensor> u;
  try {
    dt::safetensors_reader const reader(first_file);
    require(reader.keys() == std::vector<std::string>{name}, "the written file has other keys");
    require(reader.metadata() == metadata, "the written file has other metadata");
    u = reader.load<Tensor>(name);
  } catch (dt::io_error const& e) {
    require(false, std::string("safetensors_writer wrote what safetensors_reader refuses: ") + e.what());
  }
  require(dimtensor_fuzz::bitwise_equal(t, *u), "elements changed in a write/read round trip");
  require(write(second_file, name, *u, metadata) == first, "writing a reloaded tensor gives other bytes");
}

template <class Tensor>
void check_load(dt::safetensors_reader const& reader, std::string const& key, std::string_view bytes) {
  std::optional<Tensor> t;
  try {
    t = reader.load<Tensor>(key);
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, reader.path().string());
    return;
  }
  auto const& e = reader.entry(key);
  auto const* data = reinterpret_cast<unsigned char const*>(bytes.data()) + 8 + reader.header_size() + e.begin;
  check_elements(*t, e, data);
  check_round_trip(key, *t, reader.metadata());
}

/// Calls `f.operator()<Tensor>()` for each of the tensor types loaded into.
template <class F>
void for_each_target(F&& f) {
  f.template operator()<dt::tensor<float>>();
  f.template operator()<dt::tensor<float, Rows>>();
  f.template operator()<dt::tensor<float, Rows, Cols>>();
  f.template operator()<dt::tensor<float, Rows, Cols, Depth>>();
  f.template operator()<dt::tensor<float, Rows::fixed<2>, Cols>>();
  f.template operator()<dt::tensor<double, Rows>>();
  f.template operator()<dt::tensor<double, Rows, Cols>>();
  f.template operator()<dt::tensor<std::int32_t, Rows>>();
  f.template operator()<dt::tensor<std::int64_t, Rows, Cols>>();
  f.template operator()<dt::tensor<bool, Rows>>();
  f.template operator()<dt::tensor<bool, Rows, Cols>>();
}
constexpr std::size_t target_count = 11;

/// Whether a tensor of T may load an entry of @p dtype.
template <class T>
bool dtype_fits(std::string_view dtype) {
  if (std::is_floating_point_v<T> && (dtype == "F16" || dtype == "BF16")) return true;
  if constexpr (std::is_same_v<T, float>) return dtype == "F32";
  if constexpr (std::is_same_v<T, double>) return dtype == "F64";
  if constexpr (std::is_same_v<T, std::int32_t>) return dtype == "I32";
  if constexpr (std::is_same_v<T, std::int64_t>) return dtype == "I64";
  if constexpr (std::is_same_v<T, bool>) return dtype == "BOOL";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const bytes(reinterpret_cast<char const*>(data), size);
  fs::path const& file = dimtensor_fuzz::scratch_file("input.safetensors");
  dimtensor_fuzz::write_file(file, bytes);
  std::optional<dt::safetensors_reader> reader;
  try {
    reader.emplace(file);
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, file.string());
    return 0;
  }
  check_layout(*reader, size);
  try {
    (void)reader->entry("\xff no such key");
    require(false, "entry() of an absent key returned");
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, file.string());
  }
  std::size_t other = size;
  for (auto const& key : reader->keys()) {
    // Every type of the entry's dtype and rank, and one other (its refusal
    // is quick to find; trying all of them would slow the search).
    auto const& e = reader->entry(key);
    other = (other + 1) % target_count;
    std::size_t index = 0;
    for_each_target([&]<class Tensor>() {
      bool const candidate = dtype_fits<typename Tensor::value_type>(e.dtype) && e.shape.size() == Tensor::rank;
      if (candidate || index == other) check_load<Tensor>(*reader, key, bytes);
      ++index;
    });
  }
  return 0;
}
