#pragma once
/// @file
/// @brief `concat<D>(a, b, ...)` and `concat<D>(list)`: tensors joined along
/// one dim; `concat_as<Into, Da, Db>(a, b)`: different dims joined into a
/// new one.  Copies.

#include <array>
#include <iterator>
#include <ranges>
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// @brief The node of a concatenation: each operand's gradient is its range
/// of the result's gradient along the joined dim.
template <class B, class T>
class concat_node final : public autograd::node {
 public:
  /// One operand: its state (null when it needs no gradient), padded
  /// extents, and where its range starts in the result (in elements).
  struct part {
    std::shared_ptr<autograd::tensor_state> state;
    autograd::padded_extents ext;
    index_t offset;
    index_t size;
  };

  /// The concatenation of @p parts into a result of padded extents @p ext.
  concat_node(autograd::padded_extents const& ext, std::vector<part> parts)
      : node("concat"), ext_(ext), parts_(std::move(parts)) {
    for (part const& p : parts_) {
      if (p.state) inputs.push_back(p.state);
    }
  }

  /// Copies each operand's range out of the gradient and adds it.
  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    auto const gstr = row_major_strides(ext_);
    for (part const& p : parts_) {
      if (!p.state) continue;
      auto dx = std::make_shared<typename B::template storage<T>>(p.size);
      backend_strided_copy(B{}, dx->data(), row_major_strides(p.ext), g + p.offset, gstr, p.ext);
      autograd::add_gradient<B, T>(*p.state, std::move(dx), p.size);
    }
  }

 private:
  autograd::padded_extents ext_;
  std::vector<part> parts_;
};

/// @brief Copies @p views (each of @p out's rank, laid along position
/// @p pos one after the other) into @p out and records the node that hands
/// each its range of the gradient; @p states are the operands' gradient
/// states (null when one needs no gradient or `record` is false).
template <class Out, class View>
void join_views(std::size_t pos, Out& out, std::vector<View> const& views,
                std::vector<std::shared_ptr<autograd::tensor_state>> const& states, bool record) {
  using B = typename Out::backend;
  using T = typename Out::value_type;
  if (out.size() > 0) {
    index_t offset = 0;
    for (View const& v : views) {
      backend_strided_copy(B{}, out.data() + offset * out.strides()[pos], out.strides(), v.data(), v.strides(),
                           v.extents());
      offset += v.extents()[pos];
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (record) {
      if constexpr (Out::rank > kernel::max_rank) {
        autograd::throw_rank_not_recorded("a concatenation", Out::rank);
      } else {
        using node_t = concat_node<B, T>;
        std::vector<typename node_t::part> list;
        list.reserve(views.size());
        auto const dense = row_major_strides(out.extents());
        index_t offset = 0;
        for (std::size_t k = 0; k < views.size(); ++k) {
          View const& v = views[k];
          list.push_back({states[k], autograd::detail::padded(v.extents(), index_t{1}),
                          v.size() > 0 ? offset * dense[pos] : 0, v.size()});
          offset += v.extents()[pos];
        }
        out.attach_grad_fn(std::make_shared<node_t>(autograd::detail::padded(out.extents(), index_t{1}),
                                                    std::move(list)));
      }
    }
  }
}

/// The gradient state of @p t when it needs one, else null.
template <class Tensor>
std::shared_ptr<autograd::tensor_state> state_if_required(Tensor const& t) {
  if constexpr (std::is_floating_point_v<typename Tensor::value_type>) {
    return t.requires_grad() ? t.grad_state() : nullptr;
  } else {
    return nullptr;
  }
}

/// The evaluated tensors of a range of expressions, as a vector.
template <class R>
auto evaluated_list(R&& parts) {
  using part_t = std::remove_cvref_t<decltype(eval(std::declval<std::ranges::range_reference_t<R>>()))>;
  std::vector<part_t> out;
  if constexpr (std::ranges::sized_range<R>) out.reserve(static_cast<std::size_t>(std::ranges::size(parts)));
  for (auto&& p : parts) out.push_back(eval(p));
  return out;
}

}  // namespace detail

namespace diagnostic {

/// Which operand of a call (0 is the first).
template <std::size_t K>
struct operand {};
/// The dim the first operand has at a position.
template <class D>
struct expected {};
/// The dim another operand has there.
template <class D>
struct found {};
/// Stands for "no dim": the operand's rank ends before the position.
struct no_dimension {};

template <class Call, class Operand, class Position, class Expected, class Found>
struct dims_differ {
  static_assert(always_false<Call, Operand, Position, Expected, Found>,
                "dimtensor: the operands must have the same dims in the same order; at this position the "
                "operand has another dim than the first operand (see dims_differ<call, operand<k>, "
                "at_position<i>, expected<dim of the first>, found<dim of operand k>> above)");
};

}  // namespace diagnostic

namespace detail {

template <class L, std::size_t N>
using concat_padded_tags =
    mp::mp_append<mp::mp_rename<tags_of<L>, mp::mp_list>,
                  mp::mp_repeat_c<mp::mp_list<diagnostic::no_dimension>, N - rank_v<L>>>;

/// Where the tags of L and M first differ (L and M differ).
template <class L, class M>
struct concat_first_difference {
  static constexpr std::size_t n = rank_v<L> > rank_v<M> ? rank_v<L> : rank_v<M>;
  using left = concat_padded_tags<L, n>;
  using right = concat_padded_tags<M, n>;
  static constexpr std::size_t position = mp::mp_find<mp::mp_transform<mp::mp_same, left, right>, mp::mp_false>::value;
  using expected = mp::mp_at_c<left, position>;
  using found = mp::mp_at_c<right, position>;
};

template <class L0>
struct concat_tags_differ {
  template <class L>
  using fn = mp::mp_bool<!same_tags_v<L0, L>>;
};

/// The first static extent that disagrees across operands (positions other
/// than the concatenated one), and the result's static extents.
template <std::size_t Pos, class L0, class... Ls>
struct concat_extents {
  static constexpr std::size_t r = rank_v<L0>;
  static constexpr std::array<std::array<index_t, r>, 1 + sizeof...(Ls)> all{static_extents_of<L0>::value,
                                                                               static_extents_of<Ls>::value...};
  struct mismatch_t {
    std::size_t position = r;
    index_t first = 0;
    index_t second = 0;
  };
  static constexpr mismatch_t mismatch = [] {
    for (std::size_t i = 0; i < r; ++i) {
      if (i == Pos) continue;
      index_t seen = dynamic_extent;
      for (auto const& a : all) {
        if (a[i] == dynamic_extent) continue;
        if (seen == dynamic_extent) {
          seen = a[i];
        } else if (a[i] != seen) {
          return mismatch_t{i, seen, a[i]};
        }
      }
    }
    return mismatch_t{};
  }();
  static constexpr std::array<index_t, r> result = [] {
    std::array<index_t, r> out{};
    for (std::size_t i = 0; i < r; ++i) {
      index_t e = dynamic_extent;
      if (i == Pos) {
        e = 0;
        for (auto const& a : all) {
          if (a[i] == dynamic_extent) {
            e = dynamic_extent;
            break;
          }
          e += a[i];
        }
      } else {
        for (auto const& a : all) {
          if (a[i] != dynamic_extent) e = a[i];
        }
      }
      out[i] = e;
    }
    return out;
  }();
  template <class I>
  using spec = std::conditional_t<result[I::value] == dynamic_extent, dim_of<spec_at<L0, I::value>>,
                                  fixed<dim_of<spec_at<L0, I::value>>, (result[I::value] >= 0 ? result[I::value] : 0)>>;
  using type = mp::mp_rename<mp::mp_transform<spec, mp::mp_iota_c<r>>, dims>;
};

template <class T>
struct concat_type_differs {
  template <class U>
  using fn = mp::mp_bool<!std::is_same_v<T, U>>;
};

template <class B>
struct concat_backend_differs {
  template <class X>
  using fn = mp::mp_bool<!std::is_same_v<B, typename X::backend>>;
};

/// What is wrong with concat<D>(x0, xs...): a diagnostic class (named, not
/// yet instantiated), `ill_formed` when an operand already is (reported
/// before), or void.
template <class D, class X0, class... Xs>
constexpr auto concat_diagnosis() {
  if constexpr (any_ill_formed_v<X0, Xs...>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L0 = typename X0::specs;
    using operands = mp::mp_list<Xs...>;
    using others = mp::mp_list<typename Xs::specs...>;
    using types = mp::mp_list<typename Xs::value_type...>;
    constexpr std::size_t bad_backend = mp::mp_find_if_q<operands, concat_backend_differs<typename X0::backend>>::value;
    constexpr std::size_t bad_type = mp::mp_find_if_q<types, concat_type_differs<typename X0::value_type>>::value;
    constexpr std::size_t bad_dims = mp::mp_find_if_q<others, concat_tags_differ<L0>>::value;
    if constexpr (bad_backend < sizeof...(Xs)) {
      return std::type_identity<diagnostic::backends_differ<call::concat, typename X0::backend,
                                                            typename mp::mp_at_c<operands, bad_backend>::backend>>{};
    } else if constexpr (bad_type < sizeof...(Xs)) {
      return std::type_identity<
          diagnostic::element_types_differ<call::concat, typename X0::value_type, mp::mp_at_c<types, bad_type>>>{};
    } else if constexpr (!contains_v<D, L0>) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::concat, D, L0>>{};
    } else if constexpr (bad_dims < sizeof...(Xs)) {
      using diff = concat_first_difference<L0, mp::mp_at_c<others, bad_dims>>;
      return std::type_identity<diagnostic::dims_differ<
          call::concat, diagnostic::operand<bad_dims + 1>, diagnostic::at_position<diff::position>,
          diagnostic::expected<typename diff::expected>, diagnostic::found<typename diff::found>>>{};
    } else {
      using ex = concat_extents<index_of_v<D, L0>, L0, typename Xs::specs...>;
      if constexpr (ex::mismatch.position < rank_v<L0>) {
        return std::type_identity<
            diagnostic::extent_mismatch<call::concat, dim_of<spec_at<L0, ex::mismatch.position>>,
                                        diagnostic::extents<ex::mismatch.first, ex::mismatch.second>>>{};
      } else {
        return std::type_identity<void>{};
      }
    }
  }
}

}  // namespace detail

/// @brief Joins two or more tensors along the dim D, in order:
/// `concat<Steps>(a, b)` maps [Batch=2, Steps=3, Embed] and
/// [Batch=2, Steps=4, Embed] to [Batch=2, Steps=7, Embed] (d2l's
/// `torch.cat(..., dim=1)`).
///
/// Every operand must have the same dims in the same order and the same
/// element type.  D's extent in the result is the sum, static when every
/// operand's is; the other dims keep any static extent.  Copies into a new
/// contiguous tensor; expressions are evaluated first.  Each operand's
/// gradient is its range of the result's.  Dims that differ
/// (`dims_differ`, naming the operand and the first differing position),
/// element types that differ (`element_types_differ`), D not a dim
/// (`not_a_dimension_of`) or static extents that disagree
/// (`extent_mismatch`) are compile errors; dynamic extents other than D's that
/// disagree are a `shape_error` naming the dim and both sizes.
template <class D, class X0, class... Xs>
  requires(sizeof...(Xs) >= 1 && (Expression<X0> || is_ill_formed_v<X0>) &&
           ((Expression<Xs> || is_ill_formed_v<Xs>) && ...))
auto concat(X0 const& x0, Xs const&... xs) {
  if constexpr (rejects(detail::concat_diagnosis<D, X0, Xs...>())) {
    return ill_formed{};
  } else {
    using L0 = typename X0::specs;
    using B = typename X0::backend;
    constexpr std::size_t pos = detail::index_of_v<D, L0>;
    constexpr std::size_t r = X0::rank;
    using ex = detail::concat_extents<pos, L0, typename Xs::specs...>;
    using T = typename X0::value_type;
    using out_t = tensor_with_dims<B, T, typename ex::type>;
    auto const parts = std::tuple{eval(x0), eval(xs)...};
    auto ext = std::get<0>(parts).extents();
    ext[pos] = 0;
    std::apply(
        [&](auto const&... p) {
          std::size_t k = 0;
          (
              [&] {
                for (std::size_t i = 0; i < r; ++i) {
                  if (i != pos && p.extents()[i] != ext[i]) {
                    detail::throw_extent_mismatch("concat", detail::names_of<L0>::value[i], ext[i], p.extents()[i],
                                                  "operand 0", "operand " + std::to_string(k));
                  }
                }
                ext[pos] = detail::checked_extent_sum("concat", ext[pos], p.extents()[pos], [&] {
                  return "dimension " + std::string(detail::names_of<L0>::value[pos]) + " joined over " +
                         std::to_string(k + 1) + " operands";
                });
                ++k;
              }(),
              ...);
        },
        parts);
    out_t out(uninitialized, ext);
    if (out.size() > 0) {
      index_t offset = 0;
      std::apply(
          [&](auto const&... p) {
            ((backend_strided_copy(B{}, out.data() + offset * out.strides()[pos], out.strides(), p.data(), p.strides(),
                                   p.extents()),
              offset += p.extents()[pos]),
             ...);
          },
          parts);
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (std::apply([](auto const&... p) { return autograd::should_record(p...); }, parts)) {
        if constexpr (out_t::rank > kernel::max_rank) {
          autograd::throw_rank_not_recorded("a concatenation", out_t::rank);
        } else {
          // Each operand's gradient is its range of g along D.
          using node_t = detail::concat_node<B, T>;
          std::vector<typename node_t::part> list;
          auto const dense = detail::row_major_strides(ext);
          index_t offset = 0;
          auto add = [&](auto const& p) {
            list.push_back({p.requires_grad() ? p.grad_state() : nullptr,
                            autograd::detail::padded(p.extents(), index_t{1}), p.size() > 0 ? offset * dense[pos] : 0,
                            p.size()});
            offset += p.extents()[pos];
          };
          std::apply([&](auto const&... p) { (add(p), ...); }, parts);
          out.attach_grad_fn(std::make_shared<node_t>(autograd::detail::padded(ext, index_t{1}), std::move(list)));
        }
      }
    }
    return out;
  }
}

/// @brief Joins a run-time list of tensors along the dim D, in order
/// (d2l's `torch.cat(outputs, dim=0)` over decoding steps):
/// `concat<Steps>(steps)` maps a `std::vector` of [Steps=1, Batch, Vocab]
/// to [Steps=n, Batch, Vocab].
///
/// @p parts is any range (`std::vector`, `std::array`, a view) of
/// expressions of one type.  D's extent in the result is the sum, dynamic;
/// the other dims keep any static extent.  One copy of every element (not a
/// chain of binary concats), and one node: each operand's gradient is its
/// range of the result's.  D not a dim is a compile error
/// (`not_a_dimension_of`); an empty list is a `value_error`; extents other
/// than D's that disagree are a `shape_error` naming the dim, the operands
/// and both sizes.
template <class D, std::ranges::input_range R>
  requires(Expression<std::remove_cvref_t<std::ranges::range_reference_t<R>>>)
auto concat(R&& parts) {
  using X = std::remove_cvref_t<std::ranges::range_reference_t<R>>;
  using L = typename X::specs;
  if constexpr (!detail::contains_v<D, L>) {
    (void)diagnostic::fire<diagnostic::not_a_dimension_of<call::concat, D, L>>;
    return ill_formed{};
  } else {
    constexpr std::size_t pos = detail::index_of_v<D, L>;
    constexpr std::size_t r = X::rank;
    auto const list = detail::evaluated_list(std::forward<R>(parts));
    if (list.empty()) throw value_error("concat: the list of tensors is empty");
    auto ext = list.front().extents();
    ext[pos] = 0;
    std::vector<std::shared_ptr<autograd::tensor_state>> states;
    states.reserve(list.size());
    bool record = false;
    for (std::size_t k = 0; k < list.size(); ++k) {
      auto const& p = list[k];
      for (std::size_t i = 0; i < r; ++i) {
        if (i != pos && p.extents()[i] != ext[i]) {
          detail::throw_extent_mismatch("concat", detail::names_of<L>::value[i], ext[i], p.extents()[i], "operand 0",
                                        "operand " + std::to_string(k));
        }
      }
      ext[pos] = detail::checked_extent_sum("concat", ext[pos], p.extents()[pos], [&] {
        return "dimension " + std::string(dim_name_v<D>) + " joined over " + std::to_string(k + 1) + " operands";
      });
      states.push_back(detail::state_if_required(p));
      if constexpr (std::is_floating_point_v<typename X::value_type>) record = record || autograd::should_record(p);
    }
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, boost::mp11::mp_replace_at_c<L, pos, D>>;
    out_t out(uninitialized, ext);
    detail::join_views(pos, out, list, states, record);
    return out;
  }
}

namespace detail {
/// @p x with the dim From called Into (itself when From is Into).
template <class From, class Into, class X>
auto renamed_to(X const& x) {
  if constexpr (std::is_same_v<From, Into>) {
    return x;
  } else {
    return rename<From, Into>(x);
  }
}
}  // namespace detail

/// @brief Joins operands along different dims into the dim @p Into:
/// operand k's dim `Ds[k]` is renamed Into, then `concat<Into>`.
/// `concat_as<DecIn, Hidden, Embed>(context, x)` maps [Batch, Hidden=16]
/// and [Batch, Embed=8] to [Batch, DecIn=24] (d2l's `torch.cat((context,
/// x), dim=-1)`, where the two feature sizes lose their names).
///
/// Into's extent is the sum, static when every joined extent is.  Every
/// operand names one dim (a compile error otherwise); each renamed operand
/// must then have the same dims in the same order (concat's
/// `dims_differ`); a named dim missing from its operand, or Into already
/// one of an operand's other dims, is rename's compile error
/// (`not_a_dimension_of`, `already_a_dimension_of`).  Differentiable: each
/// operand's gradient is its range of the result's, under its own dim.
template <class Into, class... Ds, class... Xs>
  requires(sizeof...(Xs) >= 2 && ((Expression<Xs> || is_ill_formed_v<Xs>) && ...))
auto concat_as(Xs const&... xs) {
  static_assert(sizeof...(Ds) == sizeof...(Xs),
                "dimtensor: concat_as<Into, D0, D1, ...>(x0, x1, ...) names one dim per operand: "
                "operand k is joined along its dim Dk, renamed Into");
  if constexpr (sizeof...(Ds) != sizeof...(Xs)) {
    return ill_formed{};
  } else {
    return concat<Into>(detail::renamed_to<Ds, Into>(xs)...);
  }
}

}  // namespace dimtensor
