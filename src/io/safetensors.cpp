// The non-template part of include/dimtensor/io/safetensors.hpp: the
// header's parsing and validation, the lookups and their messages, and the
// writer's file layout, compiled once into the dimtensor::runtime library.
#include <dimtensor/io/safetensors.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace dimtensor {
namespace detail {

safetensors_dtype_info const* find_safetensors_dtype(std::string_view name) noexcept {
  for (auto const& d : safetensors_dtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::size_t safetensors_dtype_order(std::string_view name) noexcept {
  return static_cast<std::size_t>(find_safetensors_dtype(name) - safetensors_dtypes.data());
}

std::string_view safetensors_element_name(std::string_view dtype) noexcept {
  if (dtype == "F32") return safetensors_element_name_of<float>;
  if (dtype == "F64") return safetensors_element_name_of<double>;
  if (dtype == "I32") return safetensors_element_name_of<std::int32_t>;
  if (dtype == "I64") return safetensors_element_name_of<std::int64_t>;
  if (dtype == "BOOL") return safetensors_element_name_of<bool>;
  return {};
}

std::string safetensors_shape_string(std::span<index_t const> shape, std::size_t max_shown) {
  return "[" + extent_list(shape, max_shown) + "]";
}

std::string safetensors_key_text(std::string_view key) {
  bool const plain = !key.empty() && key.size() <= 120 && std::all_of(key.begin(), key.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  return plain ? std::string(key) : npy_quote(key);
}

std::string safetensors_snippet(std::string_view text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string s = "`";
  for (char const ch : text) {
    auto const c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      s += ch;
    } else {
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  return s + "`";
}

std::string safetensors_offsets_string(safetensors_entry const& e) {
  return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

std::uint64_t read_le_u64(unsigned char const* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace detail

safetensors_reader::safetensors_reader(std::filesystem::path file) : path_(std::move(file)) {
  errno = 0;
  std::ifstream in(path_, std::ios::binary);
  if (!in) detail::throw_open_error(op_open, "open", path_, errno);
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) detail::throw_open_error(op_open, "open", path_, EISDIR);
  auto const size = std::filesystem::file_size(path_, ec);
  if (ec) detail::throw_open_error(op_open, "read the size of", path_, ec.value());
  file_size_ = static_cast<std::uint64_t>(size);

  if (file_size_ < 8) {
    fail("the file has " + std::to_string(file_size_) +
         " bytes; a safetensors file starts with an 8-byte header length");
  }
  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  if (in.gcount() != 8) fail("cannot read the 8-byte header length");
  header_size_ = detail::read_le_u64(len_bytes);
  if (header_size_ > safetensors_max_header_bytes) {
    fail("the header length " + std::to_string(header_size_) + " exceeds the limit of " +
         std::to_string(safetensors_max_header_bytes) + " bytes (is this a safetensors file?)");
  }
  if (header_size_ > file_size_ - 8) {
    fail("the header length " + std::to_string(header_size_) + " is larger than the rest of the file (" +
         std::to_string(file_size_ - 8) + " bytes after the 8-byte length)");
  }
  std::string header(static_cast<std::size_t>(header_size_), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  if (static_cast<std::uint64_t>(in.gcount()) != header_size_) {
    fail("cannot read the " + std::to_string(header_size_) + "-byte header");
  }
  parse_header(header);
  validate_layout();
}

std::vector<std::string> safetensors_reader::keys() const {
  std::vector<std::string> k;
  k.reserve(entries_.size());
  for (auto const& [name, e] : entries_) k.push_back(name);
  return k;
}

void safetensors_reader::parse_header(std::string_view header) {
  detail::json::value root;
  try {
    root = detail::json::parse(header);
  } catch (detail::json::parse_error const& e) {
    std::size_t const from = e.offset() > 24 ? e.offset() - 24 : 0;
    fail("the header is not valid JSON: " + e.reason() + " at byte " + std::to_string(e.offset()) +
         " of the header (line " + std::to_string(e.line()) + ", column " + std::to_string(e.column()) + "), near " +
         detail::safetensors_snippet(header.substr(from, 48)));
  }
  if (root.type() != detail::json::kind::object) {
    fail("the header is " + std::string(detail::json::kind_name(root.type())) +
         "; it must be a JSON object of tensor entries");
  }
  for (auto const& [key, v] : root.as_object()) {
    if (key == metadata_key) {
      parse_metadata(v);
    } else {
      entries_.emplace(key, parse_entry(key, v));
    }
  }
}

void safetensors_reader::parse_metadata(detail::json::value const& v) {
  using detail::json::kind;
  if (v.is_null()) return;  // the reference implementation reads null as no metadata
  if (v.type() != kind::object) {
    fail("\"__metadata__\" is " + std::string(detail::json::kind_name(v.type())) + "; it must be an object of strings");
  }
  for (auto const& [k, s] : v.as_object()) {
    if (s.type() != kind::string) {
      fail("\"__metadata__\" maps " + detail::npy_quote(k) + " to " + std::string(detail::json::kind_name(s.type())) +
           "; its values must be strings");
    }
    metadata_.emplace(k, s.as_string());
  }
}

safetensors_entry safetensors_reader::parse_entry(std::string_view key, detail::json::value const& v) const {
  using detail::json::kind;
  if (v.type() != kind::object) {
    fail_entry(key, "the entry is " + std::string(detail::json::kind_name(v.type())) +
                        "; it must be an object with \"dtype\", \"shape\" and \"data_offsets\"");
  }
  auto const field = [&](std::string_view name, kind want) -> detail::json::value const& {
    auto const* f = v.find(name);
    if (f == nullptr) fail_entry(key, "the entry has no \"" + std::string(name) + "\"");
    if (f->type() != want) {
      fail_entry(key, "\"" + std::string(name) + "\" is " + std::string(detail::json::kind_name(f->type())) +
                          "; it must be " + std::string(detail::json::kind_name(want)));
    }
    return *f;
  };
  safetensors_entry e;
  e.dtype = field("dtype", kind::string).as_string();
  if (detail::find_safetensors_dtype(e.dtype) == nullptr) {
    std::string known;
    for (auto const& d : detail::safetensors_dtypes) known += (known.empty() ? "" : ", ") + std::string(d.name);
    fail_entry(key, "unknown dtype " + detail::npy_quote(e.dtype) + " (the format defines " + known + ")");
  }
  for (auto const& x : field("shape", kind::array).as_array()) e.shape.push_back(parse_count<index_t>(key, "shape", x));
  auto const& offsets = field("data_offsets", kind::array).as_array();
  if (offsets.size() != 2) {
    fail_entry(key, "\"data_offsets\" has " + std::to_string(offsets.size()) + " elements; it must be [begin, end]");
  }
  e.begin = parse_count<std::size_t>(key, "data_offsets", offsets[0]);
  e.end = parse_count<std::size_t>(key, "data_offsets", offsets[1]);
  // Other members are ignored, as by the reference implementation.
  return e;
}

void safetensors_reader::validate_layout() const {
  std::uint64_t const data_size = file_size_ - 8 - header_size_;
  std::vector<std::pair<std::string const*, safetensors_entry const*>> order;
  order.reserve(entries_.size());
  for (auto const& [k, e] : entries_) order.emplace_back(&k, &e);
  std::stable_sort(order.begin(), order.end(), [](auto const& a, auto const& b) {
    return std::pair(a.second->begin, a.second->end) < std::pair(b.second->begin, b.second->end);
  });

  for (auto const& [k, e] : order) {
    std::string const offsets = "data_offsets " + detail::safetensors_offsets_string(*e);
    if (e->begin > e->end) fail_entry(*k, offsets + ": begin > end");
    if (e->end > data_size) {
      fail_entry(*k, offsets + " lie outside the data section, which has " + std::to_string(data_size) +
                         " bytes (the file has " + std::to_string(file_size_) + ", the header " +
                         std::to_string(header_size_) + ")");
    }
    std::size_t const bits = detail::find_safetensors_dtype(e->dtype)->bits;
    std::string const what = "dtype " + e->dtype + " and shape " + detail::safetensors_shape_string(e->shape);
    // The product of the non-zero extents must be addressable too: a tensor
    // computes strides from them even when another extent is 0.
    std::uint64_t const limit = static_cast<std::uint64_t>(std::numeric_limits<index_t>::max()) / 64;
    std::uint64_t count = 1;
    bool empty = false;
    for (index_t x : e->shape) {
      auto const u = static_cast<std::uint64_t>(x);
      if (u == 0) {
        empty = true;
      } else if (count > limit / u) {
        fail_entry(*k, what + " hold more elements than memory can address");
      } else {
        count *= u;
      }
    }
    if (empty) count = 0;
    std::uint64_t const nbits = count * bits;
    if (nbits % 8 != 0) fail_entry(*k, what + " do not fill a whole number of bytes");
    if (nbits / 8 != e->end - e->begin) {
      fail_entry(*k, what + " need " + std::to_string(nbits / 8) + " bytes but " + offsets + " hold " +
                         std::to_string(e->end - e->begin));
    }
  }

  std::uint64_t covered = 0;
  std::pair<std::string const*, safetensors_entry const*> prev{nullptr, nullptr};
  for (auto const& cur : order) {
    auto const& [k, e] = cur;
    if (e->begin < covered) {
      fail_entry(*k, "data_offsets " + detail::safetensors_offsets_string(*e) + " overlap those of " +
                         detail::safetensors_key_text(*prev.first) + " " +
                         detail::safetensors_offsets_string(*prev.second) + " (entries must not overlap)");
    }
    if (e->begin > covered) {
      fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e->begin) +
           ") of the data section belong to no tensor (a hole before " + detail::safetensors_key_text(*k) +
           "; the entries must cover the data section exactly)");
    }
    covered = e->end;
    prev = cur;
  }
  if (covered != data_size) {
    fail("bytes [" + std::to_string(covered) + ", " + std::to_string(data_size) +
         ") at the end of the data section belong to no tensor (the entries must cover the data section "
         "exactly)");
  }
}

safetensors_entry const& safetensors_reader::entry_for(std::string_view op, std::string_view key) const {
  auto const it = entries_.find(key);
  if (it != entries_.end()) return it->second;
  std::string what = prefix(op) + "no tensor named " + detail::safetensors_key_text(key);
  if (entries_.empty()) throw io_error(what + "; the file holds no tensors");
  // The keys around where key would sort: likely the one that was meant.
  constexpr std::ptrdiff_t shown = 5;
  auto first = entries_.lower_bound(key);
  for (std::ptrdiff_t i = 0; i < shown / 2 && first != entries_.begin(); ++i) --first;
  what += "; the file holds " + std::to_string(entries_.size()) + (entries_.size() == 1 ? " tensor" : " tensors") +
          (static_cast<std::ptrdiff_t>(entries_.size()) > shown ? ", among them " : ": ");
  std::ptrdiff_t n = 0;
  for (auto i = first; i != entries_.end() && n < shown; ++i, ++n) {
    if (n) what += ", ";
    what += detail::safetensors_key_text(i->first);
  }
  throw io_error(what);
}

void safetensors_writer::add_metadata(std::string key, std::string value) {
  check_key("add_metadata", key, metadata_.contains(key), false);
  if (!detail::json::is_valid_utf8(value)) {
    throw value_error("safetensors_writer::add_metadata: the value of " + detail::safetensors_key_text(key) +
                      " is not valid UTF-8");
  }
  metadata_.emplace(std::move(key), std::move(value));
}

void safetensors_writer::save(std::filesystem::path const& file) const {
  namespace json = detail::json;
  std::vector<std::pair<std::string const*, pending const*>> order;
  order.reserve(tensors_.size());
  for (auto const& [k, p] : tensors_) order.emplace_back(&k, &p);
  std::stable_sort(order.begin(), order.end(), [](auto const& a, auto const& b) {
    return detail::safetensors_dtype_order(a.second->dtype) > detail::safetensors_dtype_order(b.second->dtype);
  });

  json::object root;
  if (!metadata_.empty()) {
    json::object m;
    for (auto const& [k, v] : metadata_) m.emplace_back(k, v);
    root.emplace_back("__metadata__", std::move(m));
  }
  std::size_t offset = 0;
  for (auto const& [k, p] : order) {
    json::array shape(p->shape.begin(), p->shape.end());
    json::object entry;
    entry.emplace_back("dtype", p->dtype);
    entry.emplace_back("shape", std::move(shape));
    entry.emplace_back("data_offsets", json::array{offset, offset + p->bytes.size()});
    root.emplace_back(*k, std::move(entry));
    offset += p->bytes.size();
  }
  std::string header = json::dump(root);
  header.append((8 - header.size() % 8) % 8, ' ');

  char len[8];
  for (std::size_t i = 0; i < 8; ++i) len[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);

  errno = 0;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) detail::throw_open_error(op_save, "create", file, errno);
  out.write(len, 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (auto const& [k, p] : order) out.write(p->bytes.data(), static_cast<std::streamsize>(p->bytes.size()));
  out.flush();
  if (!out) detail::throw_open_error(op_save, "write", file, errno);
  out.close();
  if (!out) detail::throw_open_error(op_save, "write", file, errno);
}

void safetensors_writer::check_key(std::string_view op, std::string const& key, bool duplicate, bool tensor) {
  std::string const where = "safetensors_writer::" + std::string(op) + ": ";
  if (key.empty()) throw value_error(where + "the key is empty");
  if (tensor && key == "__metadata__") {
    throw value_error(where + "the key \"__metadata__\" is reserved for the metadata strings (add_metadata)");
  }
  if (!detail::json::is_valid_utf8(key)) {
    throw value_error(where + "the key " + detail::safetensors_key_text(key) + " is not valid UTF-8");
  }
  if (duplicate) throw value_error(where + "the key " + detail::safetensors_key_text(key) + " was added before");
}

}  // namespace dimtensor
