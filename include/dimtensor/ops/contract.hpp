#pragma once
/// @file
/// @brief `contract<D>(a, b)`: the named contraction (einsum by dimension
/// name), lowered to one batched matrix product.
///
/// D is summed over; every other dim the operands share is a batch dim
/// (matched by name, so its position may differ); the rest are free.  The
/// result has a's dims without D, in a's order, then b's dims that a lacks,
/// in b's order:
///
///     q [Batch, Queries, Hidden] · k [Batch, KVPairs, Hidden], contract<Hidden>  → [Batch, Queries, KVPairs]
///     w [Batch, Queries, KVPairs] · v [Batch, KVPairs, ValueFeat], contract<KVPairs> → [Batch, Queries, ValueFeat]
///     x [Batch, Queries, In] · W [Out, In], contract<In>             → [Batch, Queries, Out]
///
/// Lowering: each operand is seen as a batch of matrices, a as
/// [batch…, free…, D] and b as [batch…, D, free…], by reading its strides
/// (no copy); only when a group of dims cannot be read with one stride is
/// the operand copied into that order.  The kernel takes transposed layouts
/// as they are (BLAS Trans), and the result is written in place when its
/// layout allows, else permuted into it.
///
/// Gradients: a contraction's gradient is a contraction.  With g the
/// result's gradient, a's is g · b summed over b's free dims and b's is
/// a · g summed over a's free dims (batch dims stay batch dims), so both go
/// through the same lowering and the same threaded GEMM, written directly
/// in the operand's own dim order.  A weight without batch dims
/// (`contract<In>(x [Batch, Queries, In], w [Out, In])`) gets its gradient
/// summed over Batch and Queries inside that one product.

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/tensor/partial.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// A contraction (contract, bmm) of bool tensors.
template <class Call>
struct contraction_of_bool {
  static_assert(always_false<Call>,
                "dimtensor: contractions need numbers, not bool; cast the operands first, e.g. cast<float>(x) "
                "(see contraction_of_bool<call> above)");
};

/// contract_affine_checked with a bias whose dims are not b's one free dim.
template <class BiasDims, class FreeDims>
struct affine_bias_not_free_dim {
  static_assert(always_false<BiasDims, FreeDims>,
                "dimtensor: contract_affine_checked adds the bias along b's one free dim, the result's last "
                "(see affine_bias_not_free_dim<the bias's dims, b's free dims> above); give the bias that dim alone");
};

}  // namespace diagnostic

/// @brief Customization point: how a contraction (`contract`, `bmm`)
/// obtains an operand of type E.
///
/// contract and bmm call `contract_operand<E>::materialize(e)` for each
/// operand and nothing else, so this is the one place where an operand
/// becomes memory.  The primary template uses a tensor as it is (whatever
/// its strides) and evaluates a lazy expression into a fresh tensor.
/// Fusing a lazy operand into the contraction (e.g. additive attention's
/// `w_v · tanh(q + k)`, whose 4-D operand should never be stored) starts
/// here: a specialization for that node type, with a kernel that reads the
/// node while it sums, replaces the materialization (that kernel is future
/// work).
template <class E>
struct contract_operand {
  /// A tensor holding the operand's elements (the operand itself if it is one).
  static auto materialize(E const& e) { return eval(e); }
};

namespace detail {

namespace mp = boost::mp11;

template <class A>
concept ContractArg = Expression<expr_t<A>> || is_ill_formed_v<A>;

/// The type-level plan of contracting LA with LB over D.
template <class D, class LA, class LB>
struct contraction_plan {
  using tags_a = tags_of<LA>;
  using tags_b = tags_of<LB>;
  template <class X>
  using in_a = mp::mp_contains<tags_a, X>;
  template <class X>
  using in_b = mp::mp_contains<tags_b, X>;
  template <class X>
  using is_batch = mp::mp_bool<in_b<X>::value && !std::is_same_v<X, D>>;
  template <class S>
  using spec_in_a = in_a<dim_of<S>>;

  /// Shared dims other than D, in a's order.
  using batch = mp::mp_copy_if<tags_a, is_batch>;
  /// a's dims that b lacks, in a's order.
  using free_a = mp::mp_remove_if<tags_a, in_b>;
  /// b's dims that a lacks, in b's order.
  using free_b = mp::mp_remove_if<tags_b, in_a>;
  /// D and the batch dims: their extents must agree.
  using shared = mp::mp_push_front<batch, D>;

  // A batch dim keeps a static extent if either operand has one.
  template <class S>
  using result_spec = mp::mp_eval_if_c<!in_b<dim_of<S>>::value || is_static_v<S>, S, spec_for, dim_of<S>, LB>;
  /// The result: a's dims without D, then b's free dims.
  using result = mp::mp_append<mp::mp_transform<result_spec, remove_dim<D, LA>>, mp::mp_remove_if<LB, spec_in_a>>;

  template <class X>
  using extents_clash =
      mp::mp_bool<is_static_v<spec_for<X, LA>> && is_static_v<spec_for<X, LB>> &&
                  static_extent_v<spec_for<X, LA>> != static_extent_v<spec_for<X, LB>>>;
  static constexpr std::size_t first_clash = mp::mp_find_if<shared, extents_clash>::value;
  static constexpr bool extents_ok = first_clash == mp::mp_size<shared>::value;
};

/// Positions in L of the tags of a list.
template <class L, class Tags>
struct positions_in;
template <class L, template <class...> class List, class... Ds>
struct positions_in<L, List<Ds...>> {
  static constexpr std::array<std::size_t, sizeof...(Ds)> value{index_of_v<Ds, L>...};
};

/// Names of the tags of a list.
template <class Tags>
struct tag_names;
template <template <class...> class List, class... Ds>
struct tag_names<List<Ds...>> {
  static constexpr std::array<std::string_view, sizeof...(Ds)> value{dim_name_v<Ds>...};
};

/// A group of dims read as one: `extent` elements `stride` apart.
struct dim_group {
  index_t extent;
  index_t stride;
  bool ok;
};

/// Whether the dims at @p pos (outermost first) of a layout can be read as
/// one dim, and how.  Dims of extent 1 may have any stride.
inline dim_group merge_dims(kernel::positions const& pos, kernel::layout const& l) {
  dim_group g{1, 0, true};
  for (std::size_t i = pos.size; i-- > 0;) {
    index_t const e = l.ext[pos.at[i]];
    index_t const s = l.str[pos.at[i]];
    if (e == 1) continue;
    if (g.extent == 1) {
      g.stride = s;
    } else if (s != g.stride * g.extent) {
      g.ok = false;
    }
    g.extent *= e;
  }
  return g;
}

/// The concatenation of three position lists (a permutation of a layout's dims).
inline kernel::positions concat_positions(kernel::positions const& x, kernel::positions const& y, kernel::positions const& z) {
  kernel::positions out;
  for (kernel::positions const* part : {&x, &y, &z}) {
    for (std::size_t i = 0; i < part->size; ++i) out.at[out.size++] = part->at[i];
  }
  return out;
}

/// Extents and strides in the order @p perm, padded with leading extents 1
/// to kernel::max_rank (so one strided copy serves every rank).
inline void permuted_padded(kernel::layout const& l, kernel::positions const& perm,
                            std::array<index_t, kernel::max_rank>& ext, std::array<index_t, kernel::max_rank>& str) {
  std::size_t const lead = kernel::max_rank - perm.size;
  for (std::size_t i = 0; i < kernel::max_rank; ++i) {
    ext[i] = 1;
    str[i] = 0;
  }
  for (std::size_t i = 0; i < perm.size; ++i) {
    ext[lead + i] = l.ext[perm.at[i]];
    str[lead + i] = l.str[perm.at[i]];
  }
}

/// Copies a strided layout into @p dst, contiguous in the dim order @p perm.
template <class Backend, class T>
void copy_permuted(T* dst, T const* src, kernel::layout const& l, kernel::positions const& perm) {
  std::array<index_t, kernel::max_rank> pext{};
  std::array<index_t, kernel::max_rank> pstr{};
  permuted_padded(l, perm, pext, pstr);
  backend_strided_copy(Backend{}, dst, row_major_strides(pext), src, pstr, pext);
}

/// The batch dims at @p pos as two levels, outer and inner, each read with
/// one stride, where one split of them allows it.
struct batch_levels {
  bool ok = false;
  index_t inner = 0;
  index_t inner_stride = 0;
  index_t outer_stride = 0;
};

inline batch_levels split_batch(kernel::positions const& pos, kernel::layout const& l) {
  for (std::size_t split = 1; split < pos.size; ++split) {
    kernel::positions outer, inner;
    for (std::size_t i = 0; i < pos.size; ++i) {
      kernel::positions& part = i < split ? outer : inner;
      part.at[part.size++] = pos.at[i];
    }
    dim_group const o = merge_dims(outer, l);
    dim_group const in = merge_dims(inner, l);
    if (o.ok && in.ok) return {true, in.extent, in.stride, o.stride};
  }
  return {};
}

/// Whether Backend's batched product takes a batch of two levels
/// (kernel::strided_matrix): the CPU's does.
template <class Backend>
inline constexpr bool two_level_batches = std::is_same_v<Backend, cpu>;

/// Whether Backend's GEMM adds into C (`accumulate`), so that a bias C is
/// filled with is added without a pass of its own (`contract_affine_checked`).
template <class Backend>
inline constexpr bool gemm_accumulates = std::is_same_v<Backend, cpu>;

/// One operand read as a batch of matrices: its groups and, when they did
/// not merge, the contiguous copy they are read from.  On the CPU a batch
/// whose dims merge into two groups, not one ([Batch, Steps, Heads, Feat]
/// read as (Batch, Heads) matrices of [Steps, Feat]), is read in place.
template <class Backend, class T>
struct matrix_operand {
  using storage_type = typename Backend::template storage<T>;
  std::shared_ptr<storage_type> copy;
  kernel::strided_matrix<T const> view{};

  matrix_operand(T const* data, kernel::layout const& l, kernel::positions const& batch, kernel::positions const& rows,
                 kernel::positions const& cols) {
    dim_group b = merge_dims(batch, l);
    dim_group r = merge_dims(rows, l);
    dim_group c = merge_dims(cols, l);
    if constexpr (two_level_batches<Backend>) {
      if (!b.ok && r.ok && c.ok) {
        batch_levels const s = split_batch(batch, l);
        if (s.ok) {
          view = {data, s.inner_stride, r.stride, c.stride, s.inner, s.outer_stride};
          return;
        }
      }
    }
    if (!(b.ok && r.ok && c.ok)) {
      copy = std::make_shared<storage_type>(b.extent * r.extent * c.extent);
      copy_permuted<Backend>(copy->data(), data, l, concat_positions(batch, rows, cols));
      data = copy->data();
      b = {b.extent, r.extent * c.extent, true};
      r = {r.extent, c.extent, true};
      c = {c.extent, 1, true};
    }
    view = {data, b.stride, r.stride, c.stride};
  }
};

/// @brief The batched matrix product C = A · B over strided layouts whose
/// dims are grouped by position: A's matrices are its @p a_rows × @p a_k
/// dims, B's its @p b_k × @p b_cols dims, C's its @p c_rows × @p c_cols
/// dims, and the @p a_batch, @p b_batch, @p c_batch dims (in the same order
/// of tags on every side) index the batch.  Each list of positions is a
/// permutation of its layout's dims.
///
/// One call of the backend's threaded GEMM: a group of dims is read with
/// one stride where the layout allows (a transposed or sliced view is read
/// in place), else the operand is copied into the group order; C is written
/// in place when its groups merge, else computed contiguously and permuted
/// into it.  The forward contraction and both of its gradients use it.
/// Layouts and positions are run-time data: one body per backend and
/// element type.
template <class Backend, class T>
void batched_product(T const* a, kernel::layout const& la, kernel::positions const& a_batch, kernel::positions const& a_rows,
                     kernel::positions const& a_k, T const* b, kernel::layout const& lb, kernel::positions const& b_batch,
                     kernel::positions const& b_k, kernel::positions const& b_cols, T* c, kernel::layout const& lc,
                     kernel::positions const& c_batch, kernel::positions const& c_rows, kernel::positions const& c_cols) {
  dim_group const cb = merge_dims(c_batch, lc);
  dim_group const cr = merge_dims(c_rows, lc);
  dim_group const cc = merge_dims(c_cols, lc);
  index_t const batch = cb.extent;
  index_t const m = cr.extent;
  index_t const n = cc.extent;
  index_t const k = merge_dims(a_k, la).extent;
  if (batch * m * n == 0) return;
  matrix_operand<Backend, T> const ma(a, la, a_batch, a_rows, a_k);
  matrix_operand<Backend, T> const mb(b, lb, b_batch, b_k, b_cols);

  if (cb.ok && cr.ok && cc.ok) {
    backend_gemm_batched(Backend{}, batch, m, n, k, ma.view, mb.view,
                         kernel::strided_matrix<T>{c, cb.stride, cr.stride, cc.stride});
    return;
  }
  if constexpr (two_level_batches<Backend>) {
    if (cr.ok && cc.ok) {
      batch_levels const s = split_batch(c_batch, lc);
      if (s.ok) {
        backend_gemm_batched(Backend{}, batch, m, n, k, ma.view, mb.view,
                             kernel::strided_matrix<T>{c, s.inner_stride, cr.stride, cc.stride, s.inner, s.outer_stride});
        return;
      }
    }
  }
  // C's order interleaves batch and free dims so that they cannot be
  // written with one stride each: compute [batch…, rows…, cols…]
  // contiguously, then permute it into C's order.
  typename Backend::template storage<T> tmp(batch * m * n);
  backend_gemm_batched(Backend{}, batch, m, n, k, ma.view, mb.view,
                       kernel::strided_matrix<T>{tmp.data(), m * n, n, 1});
  kernel::positions const order = concat_positions(c_batch, c_rows, c_cols);
  std::array<index_t, kernel::max_rank> ordered_ext{};
  std::array<index_t, kernel::max_rank> unused{};
  permuted_padded(lc, order, ordered_ext, unused);
  auto const tmp_str = row_major_strides(ordered_ext);
  std::size_t const lead = kernel::max_rank - lc.rank;
  std::array<index_t, kernel::max_rank> src_str{};  // tmp's strides, by C's dims
  std::array<index_t, kernel::max_rank> dst_ext{};
  std::array<index_t, kernel::max_rank> dst_str{};
  for (std::size_t i = 0; i < kernel::max_rank; ++i) dst_ext[i] = 1;
  for (std::size_t i = 0; i < lc.rank; ++i) {
    src_str[lead + order.at[i]] = tmp_str[lead + i];
    dst_ext[lead + i] = lc.ext[i];
    dst_str[lead + i] = lc.str[i];
  }
  backend_strided_copy(Backend{}, c, dst_str, static_cast<T const*>(tmp.data()), src_str, dst_ext);
}

/// @brief The node of a contraction: each operand's gradient is the
/// contraction of the result's gradient with the other operand (the same
/// GEMM path), one body per backend and element type.
/// @p l's extents, row-major (the padding extents past its rank are 1): the
/// layout of a fresh result or gradient of those extents.
inline kernel::layout dense_layout(kernel::layout l) {
  for (std::size_t i = l.rank; i < kernel::max_rank; ++i) l.ext[i] = 1;
  l.str = row_major_strides(l.ext);
  return l;
}

/// An operand of a contraction as run-time data: its elements (kept alive),
/// layout, dims by role (batch, free, contracted), and its autograd state
/// when it requires gradients.
template <class T>
struct contract_side {
  std::shared_ptr<void const> keep;
  T const* data = nullptr;
  kernel::layout layout;
  kernel::positions batch, free, d;
  std::shared_ptr<autograd::tensor_state> state;
};

template <class Backend, class T>
class contract_node final : public autograd::node {
 public:
  /// An operand: its elements (kept alive), layout, dims by role, state.
  using operand = contract_side<T>;

  /// The node named @p name of a result of extents @p result (dims by role:
  /// @p batch, @p free_a, @p free_b).
  contract_node(std::string_view name, operand a, operand b, kernel::layout result, kernel::positions batch,
                kernel::positions free_a, kernel::positions free_b, operand bias = {})
      : node(name), a_(std::move(a)), b_(std::move(b)), bias_(std::move(bias)), r_(result), r_batch_(batch),
        r_free_a_(free_a), r_free_b_(free_b) {
    if (a_.state) inputs.push_back(a_.state);
    if (b_.state) inputs.push_back(b_.state);
    if (bias_.state) inputs.push_back(bias_.state);
  }

  /// Hands each operand that requires gradients its gradient.
  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    if (a_.state) {
      // Σ over b's free dims of g · b.
      kernel::layout const la = dense_layout(a_.layout);
      index_t const n = element_count(la.ext);
      auto da = std::make_shared<typename Backend::template storage<T>>(n);
      if (n != 0) {
        batched_product<Backend>(g, r_, r_batch_, r_free_a_, r_free_b_, b_.data, b_.layout, b_.batch, b_.free, b_.d,
                                 da->data(), la, a_.batch, a_.free, a_.d);
      }
      autograd::add_gradient<Backend, T>(*a_.state, std::move(da), n);
    }
    if (b_.state) {
      // Σ over a's free dims of a · g.
      kernel::layout const lb = dense_layout(b_.layout);
      index_t const n = element_count(lb.ext);
      auto db = std::make_shared<typename Backend::template storage<T>>(n);
      if (n != 0) {
        batched_product<Backend>(a_.data, a_.layout, a_.batch, a_.d, a_.free, g, r_, r_batch_, r_free_a_, r_free_b_,
                                 db->data(), lb, b_.batch, b_.d, b_.free);
      }
      autograd::add_gradient<Backend, T>(*b_.state, std::move(db), n);
    }
    if (bias_.state) {
      // Σ over every row of g: the bias is the result's last dim.
      index_t const n = r_.ext[r_.rank - 1];
      index_t const rows = n == 0 ? 0 : element_count(r_.ext) / n;
      auto dbias = std::make_shared<typename Backend::template storage<T>>(n);
      backend_sum(Backend{}, g, dbias->data(), index_t{1}, rows, n);
      autograd::add_gradient<Backend, T>(*bias_.state, std::move(dbias), n);
    }
  }

 private:
  operand a_, b_, bias_;
  kernel::layout r_;
  kernel::positions r_batch_, r_free_a_, r_free_b_;
};

/// @brief The run-time part of a contraction, one body per backend and
/// element type: the batched product of @p a and @p b into @p out (layout
/// @p lr, dims by role @p r_batch, @p r_free_a, @p r_free_b), and, when
/// @p record, the node whose rule gives each operand that requires
/// gradients its gradient (null otherwise).  With a @p bias (its data not
/// null; only where `gemm_accumulates<Backend>`, the contraction has no
/// batch dims and the bias is over the result's last dim, its only free
/// dim of b) the result is the bias in every row plus the product, in one
/// GEMM call, and the node sums the bias's gradient.
template <class Backend, class T>
std::shared_ptr<autograd::node> contract_run(std::string_view name, contract_side<T> a, contract_side<T> b, T* out,
                                             kernel::layout const& lr, kernel::positions const& r_batch,
                                             kernel::positions const& r_free_a, kernel::positions const& r_free_b,
                                             bool record, contract_side<T> bias) {
  kernel::layout const dense = dense_layout(lr);  // the result's gradient is contiguous
  if (bias.data != nullptr) {
    // out = bias in every row, then += a · b in the same GEMM call.
    if constexpr (gemm_accumulates<Backend>) {
      index_t const n = lr.ext[lr.rank - 1];
      index_t const m = n == 0 ? 0 : element_count(dense.ext) / n;
      index_t const k = merge_dims(a.d, a.layout).extent;
      if (m * n != 0) {
        backend_strided_copy(Backend{}, out, std::array<index_t, 2>{n, 1}, bias.data,
                             std::array<index_t, 2>{0, bias.layout.str[0]}, std::array<index_t, 2>{m, n});
        matrix_operand<Backend, T> const ma(a.data, a.layout, a.batch, a.free, a.d);
        matrix_operand<Backend, T> const mb(b.data, b.layout, b.batch, b.d, b.free);
        backend_gemm_batched(Backend{}, 1, m, n, k, ma.view, mb.view, kernel::strided_matrix<T>{out, m * n, n, 1},
                             true);
      }
    } else {
      // contract_tensors adds the bias after the product on these backends
      throw error(std::string(name) + ": a bias in the product on a backend whose GEMM does not add into its result");
    }
  } else if (element_count(dense.ext) != 0) {
    batched_product<Backend, T>(a.data, a.layout, a.batch, a.free, a.d, b.data, b.layout, b.batch, b.d, b.free, out, lr,
                                r_batch, r_free_a, r_free_b);
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (record) {
      return std::make_shared<contract_node<Backend, T>>(name, std::move(a), std::move(b), dense, r_batch, r_free_a,
                                                         r_free_b, std::move(bias));
    }
  }
  return nullptr;
}

/// Contracts two tensors over D (checked at compile time already): checks
/// the shared extents at run time, then one batched matrix product.  When
/// an operand requires gradients, records the rule: each operand's
/// gradient is the contraction of the result's gradient with the other
/// operand (the same GEMM path).
template <class D, class TA, class TB, class TC = TA>
auto contract_tensors(std::string_view name, TA const& a, TB const& b, TC const* bias = nullptr) {
  using Backend = typename TA::backend;
  using T = typename TA::value_type;
  using LA = typename TA::specs;
  using LB = typename TB::specs;
  using plan = contraction_plan<D, LA, LB>;
  using result_type = tensor_with_dims<Backend, T, typename plan::result>;
  using LR = typename plan::result;

  auto const& ea = a.extents();
  auto const& eb = b.extents();
  {
    constexpr auto in_a = positions_in<LA, typename plan::shared>::value;
    constexpr auto in_b = positions_in<LB, typename plan::shared>::value;
    for (std::size_t i = 0; i < in_a.size(); ++i) {
      if (ea[in_a[i]] != eb[in_b[i]]) {
        throw_extent_mismatch(name, tag_names<typename plan::shared>::value[i], ea[in_a[i]], eb[in_b[i]]);
      }
    }
  }

  // Result extents: a's without D, then b's free dims.
  typename result_type::extents_type ext{};
  {
    constexpr auto from_a = positions_in<LA, tags_of<remove_dim<D, LA>>>::value;
    constexpr auto from_b = positions_in<LB, typename plan::free_b>::value;
    for (std::size_t i = 0; i < from_a.size(); ++i) ext[i] = ea[from_a[i]];
    for (std::size_t i = 0; i < from_b.size(); ++i) ext[from_a.size() + i] = eb[from_b[i]];
  }
  result_type out(uninitialized, ext);
  constexpr auto a_batch = positions_in<LA, typename plan::batch>::value;
  constexpr auto a_free = positions_in<LA, typename plan::free_a>::value;
  constexpr std::array<std::size_t, 1> a_d{index_of_v<D, LA>};
  constexpr auto b_batch = positions_in<LB, typename plan::batch>::value;
  constexpr auto b_free = positions_in<LB, typename plan::free_b>::value;
  constexpr std::array<std::size_t, 1> b_d{index_of_v<D, LB>};
  constexpr auto r_batch = positions_in<LR, typename plan::batch>::value;
  constexpr auto r_free_a = positions_in<LR, typename plan::free_a>::value;
  constexpr auto r_free_b = positions_in<LR, typename plan::free_b>::value;
  auto side = [](auto const& t, kernel::positions batch, kernel::positions free, kernel::positions d) {
    contract_side<T> o{t.storage(), t.data(), kernel::layout(t.extents(), t.strides()), batch, free, d, nullptr};
    if constexpr (std::is_floating_point_v<T>) {
      if (t.requires_grad()) o.state = t.grad_state();
    }
    return o;
  };
  bool record = false;
  contract_side<T> bias_side;
  if (bias != nullptr) {
    bias_side = side(*bias, kernel::positions{}, kernel::positions{}, kernel::positions{});
    if constexpr (std::is_floating_point_v<T>) record = autograd::should_record(*bias);
  }
  if constexpr (std::is_floating_point_v<T>) record = record || autograd::should_record(a, b);
  auto node = contract_run<Backend, T>(name, side(a, a_batch, a_free, a_d), side(b, b_batch, b_free, b_d), out.data(),
                                       kernel::layout(ext, out.strides()), r_batch, r_free_a, r_free_b, record,
                                       std::move(bias_side));
  if (node) out.attach_grad_fn(std::move(node));
  return out;
}

/// What is wrong with the operands of a contraction whatever the dims:
/// a diagnostic class (named, not yet instantiated), `ill_formed` when an
/// operand already is (reported before), or void.
template <class Call, class A, class B>
constexpr auto operands_diagnosis() {
  if constexpr (any_ill_formed_v<A, B>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!std::is_same_v<typename A::backend, typename B::backend>) {
    return std::type_identity<diagnostic::backends_differ<Call, typename A::backend, typename B::backend>>{};
  } else if constexpr (!std::is_same_v<typename A::value_type, typename B::value_type>) {
    return std::type_identity<diagnostic::element_types_differ<Call, typename A::value_type, typename B::value_type>>{};
  } else if constexpr (std::is_same_v<typename A::value_type, bool>) {
    return std::type_identity<diagnostic::contraction_of_bool<Call>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// The first shared dim (D or a batch dim) whose static extents differ, as
/// an extent_mismatch diagnostic, or void.
/// Whether the operands' dims LA and LB shard the dim X over different mesh axes (or one only).
template <class LA, class LB>
struct sharded_differently_in {
  /// The question, for Mp11.
  template <class X>
  using fn = mp::mp_bool<!std::is_same_v<axis_of<spec_for<X, LA>>, axis_of<spec_for<X, LB>>>>;
};

template <class Call, class D, class LA, class LB>
constexpr auto shared_extents_diagnosis() {
  using plan = contraction_plan<D, LA, LB>;
  // The first shared dim the operands shard over different mesh axes (or one only).
  using axes_clash = mp::mp_find_if_q<typename plan::shared, sharded_differently_in<LA, LB>>;
  if constexpr (!plan::extents_ok) {
    using X = mp::mp_at_c<typename plan::shared, plan::first_clash>;
    return std::type_identity<diagnostic::extent_mismatch<
        Call, X, diagnostic::extents<static_extent_v<spec_for<X, LA>>, static_extent_v<spec_for<X, LB>>>>>{};
  } else if constexpr (axes_clash::value < mp::mp_size<typename plan::shared>::value) {
    using X = mp::mp_at<typename plan::shared, axes_clash>;
    return std::type_identity<diagnostic::sharded_differently<
        Call, X, diagnostic::left_axis<typename diagnostic::axis_name_of<axis_of<spec_for<X, LA>>>::type>,
        diagnostic::right_axis<typename diagnostic::axis_name_of<axis_of<spec_for<X, LB>>>::type>>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// What is wrong with contract<D>(a, b), as operands_diagnosis says.
template <class D, class A, class B>
constexpr auto contract_diagnosis() {
  using operands = typename decltype(operands_diagnosis<call::contract, A, B>())::type;
  if constexpr (!std::is_void_v<operands>) {
    return std::type_identity<operands>{};
  } else if constexpr (!contains_v<D, typename A::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::contract, D, typename A::specs>>{};
  } else if constexpr (!contains_v<D, typename B::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::contract, D, typename B::specs>>{};
  } else {
    return shared_extents_diagnosis<call::contract, D, typename A::specs, typename B::specs>();
  }
}

/// Materializes both operands and contracts them.
template <class D, class A, class B>
auto contract_operands(std::string_view name, A const& a, B const& b) {
  auto const ta = contract_operand<A>::materialize(a);
  auto const tb = contract_operand<B>::materialize(b);
  return contract_tensors<D>(name, ta, tb);
}

}  // namespace detail

/// @brief contract<D>(a, b) for evaluated tensors whose dims the caller has
/// already checked at compile time (a module over its own dims): checks
/// the shared extents at run time (its errors name @p name), then one
/// batched matrix product, and records the rule when an operand requires
/// gradients.
template <class D, class TA, class TB>
auto contract_checked(std::string_view name, TA const& a, TB const& b) {
  return detail::contract_tensors<D>(name, a, b);
}

namespace detail {

/// contract_affine_checked once the bias's dim is known to be b's free dim.
template <class D, class TA, class TB, class TC>
auto contract_affine_tensors(std::string_view name, TA const& a, TB const& b, TC const& bias) {
  using plan = contraction_plan<D, typename TA::specs, typename TB::specs>;
  using Out = boost::mp11::mp_front<meta::tags_of<typename TC::specs>>;
  index_t const n = b.template extent<Out>();
  if (bias.template extent<Out>() != n) {
    throw_extent_mismatch(name, dim_name_v<Out>, bias.template extent<Out>(), n, "bias", "weight");
  }
  if constexpr (gemm_accumulates<typename TA::backend> && boost::mp11::mp_empty<typename plan::batch>::value) {
    return contract_tensors<D>(name, a, b, &bias);
  } else {
    auto y = contract_tensors<D>(name, a, b);
    y = y + bias;  // y ends with the bias's dim, so the bias aligns from the right
    return y;
  }
}

}  // namespace detail

/// @brief contract_checked<D>(a, b) + bias, where @p bias is a vector over
/// b's one free dim (a linear layer: x · Wᵀ + b).  On a backend whose GEMM
/// accumulates (the CPU) the result is filled with the bias and the product
/// added to it in the same GEMM call, and the node also hands the bias its
/// gradient (the sum of the result's gradient over every other dim);
/// elsewhere, or when the contraction has batch dims, the bias is added
/// after the product.  The bias's dims must be b's one free dim
/// (`affine_bias_not_free_dim<the bias's dims, b's free dims>` at compile
/// time) and its extent that dim's (`shape_error` naming @p name, the dim
/// and both sizes).
template <class D, class TA, class TB, class TC>
auto contract_affine_checked(std::string_view name, TA const& a, TB const& b, TC const& bias) {
  using plan = detail::contraction_plan<D, typename TA::specs, typename TB::specs>;
  using bias_dims = meta::tags_of<typename TC::specs>;
  constexpr bool one_free_dim =
      std::is_same_v<bias_dims, typename plan::free_b> && boost::mp11::mp_size<bias_dims>::value == 1;
  using diagnosis =
      std::conditional_t<one_free_dim, void, diagnostic::affine_bias_not_free_dim<bias_dims, typename plan::free_b>>;
  if constexpr (rejects(std::type_identity<diagnosis>{})) {
    return ill_formed{};
  } else {
    return detail::contract_affine_tensors<D>(name, a, b, bias);
  }
}

/// @brief Contracts @p a and @p b over the dim D, by name (einsum with
/// named indices).
///
/// D must be a dim of both (`not_a_dimension_of<call::contract, D, dims<…>>`
/// otherwise).  Every other dim both have is a batch dim: its extents must
/// agree (`extent_mismatch` at compile time for static extents,
/// `shape_error` naming "contract", the dim and both sizes at run time).
/// The result has a's dims without D, in a's order, then b's dims that a
/// lacks, in b's order; dims only one operand has are carried along, so a
/// weight without batch dims is applied to every batch element:
/// `contract<In>(x /*[Batch, Queries, In]*/, w /*[Out, In]*/)` is
/// [Batch, Queries, Out].
///
/// A D sharded over a mesh axis (`D::sharded<Axis>`, in both operands) makes
/// the result this rank's part of the sum (`partial`, completed by
/// `dist::all_reduce`); a shared dim sharded differently in the operands is
/// `sharded_differently<call::contract, …>`.
///
/// Operands may be any expressions (lazy ones are evaluated first, see
/// `contract_operand`) of the same element type (`element_types_differ`
/// otherwise).  The result is a fresh contiguous tensor.  Differentiable in
/// both operands (float and double): see the file's notes on gradients.
template <class D, class A, class B>
  requires detail::ContractArg<A> && detail::ContractArg<B>
auto contract(A const& a, B const& b) {
  if constexpr (rejects(detail::contract_diagnosis<D, A, B>())) {
    return ill_formed{};
  } else {
    using spec = meta::spec_for<D, typename expr_t<A>::specs>;
    if constexpr (is_sharded_v<spec>) {
      // A sum over a sharded dim: this rank's part of it.
      auto out = detail::contract_operands<D>("contract", a, b);
      return partial<decltype(out), D, axis_of<spec>, call::sum>(
          std::move(out), a.extents()[meta::index_of_v<D, typename expr_t<A>::specs>]);
    } else {
      return detail::contract_operands<D>("contract", a, b);
    }
  }
}

}  // namespace dimtensor

/// @cond INTERNAL
// The contraction's run-time part and node, and the permuted copies, compiled
// once into dimtensor::runtime for the CPU's float and double
// (src/instances/contract.cpp defines them): a file calls those copies
// (config.hpp, DIMTENSOR_EXTERN_INSTANCES).
#define DIMTENSOR_CONTRACT_INSTANCES(how, B, T)                                                                 \
  how void detail::copy_permuted<B, T>(T*, T const*, kernel::layout const&, kernel::positions const&);  \
  how struct detail::matrix_operand<B, T>;                                                                      \
  how void detail::batched_product<B, T>(T const*, kernel::layout const&, kernel::positions const&,     \
                                         kernel::positions const&, kernel::positions const&, T const*,  \
                                         kernel::layout const&, kernel::positions const&,               \
                                         kernel::positions const&, kernel::positions const&, T*,        \
                                         kernel::layout const&, kernel::positions const&,               \
                                         kernel::positions const&, kernel::positions const&);           \
  how std::shared_ptr<autograd::node> detail::contract_run<B, T>(                                               \
      std::string_view, detail::contract_side<T>, detail::contract_side<T>, T*, kernel::layout const&,      \
      kernel::positions const&, kernel::positions const&, kernel::positions const&, bool,           \
      detail::contract_side<T>);                                                                                \
  how class detail::contract_node<B, T>;

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_CONTRACT_INSTANCES)
}  // namespace dimtensor
/// @endcond
