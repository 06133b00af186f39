// Printing's non-template part and its element-type instances: PyTorch's
// layout of the elements (io/print.hpp describes the rules), compiled once
// into the dimtensor::runtime library.
#include <dimtensor/io/print.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace dimtensor::detail {
namespace {

/// A finite double as Python's `'{:.{p}f}'` or `'{:.{p}e}'` writes it (locale-free).
std::string python_float(double v, int precision, std::chars_format fmt) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // %.<p>f of the largest double has 309 integer digits.
  std::array<char, 512> buf{};
  auto const r = std::to_chars(buf.data(), buf.data() + buf.size(), v, fmt, std::clamp(precision, 0, 100));
  return std::string(buf.data(), r.ptr);
}

/// Formats elements of one tensor the way PyTorch's `_Formatter` does: the
/// mode and width are chosen once from all (shown) elements.
template <class T>
class element_formatter {
 public:
  element_formatter(std::vector<T> const& shown, int precision) : precision_(precision) {
    if constexpr (std::is_floating_point_v<T>) {
      double lo = 0;
      double hi = 0;
      bool any = false;
      for (T v : shown) {
        if (!std::isfinite(v) || v == 0) continue;
        double const a = std::abs(static_cast<double>(v));
        lo = any ? std::min(lo, a) : a;
        hi = any ? std::max(hi, a) : a;
        any = true;
        if (v != std::ceil(v)) int_mode_ = false;
      }
      if (!any) return;
      sci_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
      for (T v : shown) {
        if (!std::isfinite(v) || v == 0) continue;
        auto const d = static_cast<double>(v);
        std::size_t const w = sci_        ? python_float(d, precision_, std::chars_format::scientific).size()
                              : int_mode_ ? python_float(d, 0, std::chars_format::fixed).size() + 1
                                          : python_float(d, precision_, std::chars_format::fixed).size();
        width_ = std::max(width_, w);
      }
    } else {
      for (T v : shown) width_ = std::max(width_, plain(v).size());
    }
  }

  /// Characters of the widest element (PyTorch's `max_width`).
  std::size_t width() const noexcept { return width_; }

  /// One element, right-aligned to the common width.
  std::string operator()(T v) const {
    std::string s;
    if constexpr (std::is_floating_point_v<T>) {
      auto const d = static_cast<double>(v);
      if (sci_) {
        s = python_float(d, precision_, std::chars_format::scientific);
      } else if (int_mode_) {
        s = python_float(d, 0, std::chars_format::fixed);
        if (std::isfinite(d)) s += '.';
      } else {
        s = python_float(d, precision_, std::chars_format::fixed);
      }
    } else {
      s = plain(v);
    }
    if (s.size() < width_) s.insert(0, width_ - s.size(), ' ');
    return s;
  }

 private:
  static std::string plain(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      return v ? "True" : "False";
    } else {
      return std::to_string(v);
    }
  }

  int precision_;
  bool int_mode_ = true;
  bool sci_ = false;
  std::size_t width_ = 1;
};

/// Lays out the elements of a contiguous row-major buffer (PyTorch's `_tensor_str_with_formatter`).
template <class T>
class tensor_printer {
 public:
  tensor_printer(T const* data, std::vector<index_t> ext, print_options const& opts)
      : data_(data), ext_(std::move(ext)), opts_(opts), strides_(ext_.size(), 1) {
    for (std::size_t k = ext_.size(); k-- > 1;) strides_[k - 1] = strides_[k] * ext_[k];
    index_t n = 1;
    for (auto e : ext_) n *= e;
    summarize_ = n > opts_.threshold;
  }

  /// The bracketed body, starting at column @p indent.
  std::string body(std::size_t indent) {
    std::vector<T> shown;
    collect(0, 0, shown);
    element_formatter<T> const fmt(shown, opts_.precision);
    return block(0, 0, indent, fmt);
  }

 private:
  bool summarized(std::size_t d) const { return summarize_ && ext_[d] > 2 * opts_.edgeitems; }

  // The indices shown along dim d: all, or the first and last edgeitems (-1 marks the gap).
  std::vector<index_t> shown_indices(std::size_t d) const {
    std::vector<index_t> idx;
    if (!summarized(d)) {
      for (index_t i = 0; i < ext_[d]; ++i) idx.push_back(i);
    } else {
      for (index_t i = 0; i < opts_.edgeitems; ++i) idx.push_back(i);
      idx.push_back(-1);
      for (index_t i = ext_[d] - opts_.edgeitems; i < ext_[d]; ++i) idx.push_back(i);
    }
    return idx;
  }

  // The elements the formatter sizes itself on: only those shown.
  void collect(std::size_t d, index_t offset, std::vector<T>& out) const {
    if (d == ext_.size()) {
      out.push_back(data_[offset]);
      return;
    }
    for (index_t i : shown_indices(d)) {
      if (i >= 0) collect(d + 1, offset + i * strides_[d], out);
    }
  }

  std::string block(std::size_t d, index_t offset, std::size_t indent, element_formatter<T> const& fmt) const {
    std::size_t const rank = ext_.size() - d;
    if (rank == 0) return fmt(data_[offset]);
    if (rank == 1) return vector_str(d, offset, indent, fmt);
    std::vector<std::string> slices;
    for (index_t i : shown_indices(d)) {
      slices.push_back(i < 0 ? std::string("...") : block(d + 1, offset + i * strides_[d], indent + 1, fmt));
    }
    std::string const sep = "," + std::string(rank - 1, '\n') + std::string(indent + 1, ' ');
    std::string s = "[";
    for (std::size_t k = 0; k < slices.size(); ++k) {
      if (k) s += sep;
      s += slices[k];
    }
    return s + "]";
  }

  std::string vector_str(std::size_t d, index_t offset, std::size_t indent, element_formatter<T> const& fmt) const {
    std::vector<std::string> items;
    if (summarize_ && opts_.edgeitems == 0) {
      items.emplace_back("...");
    } else {
      for (index_t i : shown_indices(d))
        items.push_back(i < 0 ? std::string(" ...") : fmt(data_[offset + i * strides_[d]]));
    }
    auto const line = static_cast<double>(opts_.linewidth) - static_cast<double>(indent);
    auto const per_line = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::max(0.0, std::floor(line / static_cast<double>(fmt.width() + 2)))));
    std::string const sep = ",\n" + std::string(indent + 1, ' ');
    std::string s = "[";
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k) s += k % per_line == 0 ? sep : std::string(", ");
      s += items[k];
    }
    return s + "]";
  }

  T const* data_;
  std::vector<index_t> ext_;
  print_options opts_;
  std::vector<index_t> strides_;
  bool summarize_ = false;
};

}  // namespace

template <class T>
std::string print_body(T const* data, std::vector<index_t> ext, print_options const& opts, std::size_t indent) {
  return tensor_printer<T>(data, std::move(ext), opts).body(indent);
}

template std::string print_body<float>(float const*, std::vector<index_t>, print_options const&, std::size_t);
template std::string print_body<double>(double const*, std::vector<index_t>, print_options const&, std::size_t);
template std::string print_body<std::int32_t>(std::int32_t const*, std::vector<index_t>, print_options const&,
                                              std::size_t);
template std::string print_body<std::int64_t>(std::int64_t const*, std::vector<index_t>, print_options const&,
                                              std::size_t);
template std::string print_body<bool>(bool const*, std::vector<index_t>, print_options const&, std::size_t);

std::string add_suffixes(std::string s, std::vector<std::string> const& suffixes, std::size_t indent, int linewidth) {
  auto const nl = s.rfind('\n');
  // Python's len(s) - s.rfind("\n") + 1, with rfind giving -1 when there is no line break.
  auto last_line =
      static_cast<std::ptrdiff_t>(s.size()) - (nl == std::string::npos ? -1 : static_cast<std::ptrdiff_t>(nl)) + 1;
  for (auto const& suffix : suffixes) {
    auto const len = static_cast<std::ptrdiff_t>(suffix.size());
    if (last_line + len + 2 > linewidth) {
      s += ",\n" + std::string(indent, ' ') + suffix;
      last_line = static_cast<std::ptrdiff_t>(indent) + len;
    } else {
      s += ", " + suffix;
      last_line += len + 2;
    }
  }
  return s + ")";
}

}  // namespace dimtensor::detail
