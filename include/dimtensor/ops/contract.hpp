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
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// A contraction (contract, bmm) of bool tensors.
template <class Call>
struct contraction_of_bool {
  static_assert(always_false<Call>,
                "dimtensor: contractions need numbers, not bool; cast the operands first, e.g. cast<float>(x) "
                "(see contraction_of_bool<call> above)");
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
template <std::size_t N, std::size_t R>
dim_group merge_dims(std::array<std::size_t, N> const& pos, std::array<index_t, R> const& ext,
                     std::array<index_t, R> const& str) {
  dim_group g{1, 0, true};
  for (std::size_t i = N; i-- > 0;) {
    index_t const e = ext[pos[i]];
    index_t const s = str[pos[i]];
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

/// The concatenation of position arrays (a permutation of a layout's dims).
template <std::size_t... N>
constexpr auto concat_positions(std::array<std::size_t, N> const&... parts) {
  std::array<std::size_t, (N + ... + 0)> out{};
  std::size_t k = 0;
  ((
       [&] {
         for (auto p : parts) out[k++] = p;
       }()),
   ...);
  return out;
}

/// Copies a strided layout into @p dst, contiguous in the dim order @p perm.
template <class Backend, class T, std::size_t R>
void copy_permuted(T* dst, T const* src, std::array<index_t, R> const& ext, std::array<index_t, R> const& str,
                   std::array<std::size_t, R> const& perm) {
  std::array<index_t, R> pext{};
  std::array<index_t, R> pstr{};
  for (std::size_t i = 0; i < R; ++i) {
    pext[i] = ext[perm[i]];
    pstr[i] = str[perm[i]];
  }
  backend_strided_copy(Backend{}, dst, row_major_strides(pext), src, pstr, pext);
}

/// One operand read as a batch of matrices: its groups and, when they did
/// not merge, the contiguous copy they are read from.
template <class Backend, class T, std::size_t R, std::size_t NB, std::size_t NR, std::size_t NC>
struct matrix_operand {
  using storage_type = typename Backend::template storage<T>;
  std::shared_ptr<storage_type> copy;
  kernel::strided_matrix<T const> view{};

  matrix_operand(T const* data, std::array<index_t, R> const& ext, std::array<index_t, R> const& str,
                 std::array<std::size_t, NB> const& batch, std::array<std::size_t, NR> const& rows,
                 std::array<std::size_t, NC> const& cols) {
    dim_group b = merge_dims(batch, ext, str);
    dim_group r = merge_dims(rows, ext, str);
    dim_group c = merge_dims(cols, ext, str);
    if (!(b.ok && r.ok && c.ok)) {
      copy = std::make_shared<storage_type>(b.extent * r.extent * c.extent);
      copy_permuted<Backend>(copy->data(), data, ext, str, concat_positions(batch, rows, cols));
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
template <class Backend, class T, std::size_t RA, std::size_t RB, std::size_t RC, std::size_t NB, std::size_t NM,
          std::size_t NK, std::size_t NN, std::size_t NB2, std::size_t NK2, std::size_t NB3, std::size_t NM3,
          std::size_t NN3>
void batched_product(T const* a, std::array<index_t, RA> const& ea, std::array<index_t, RA> const& sa,
                     std::array<std::size_t, NB> const& a_batch, std::array<std::size_t, NM> const& a_rows,
                     std::array<std::size_t, NK> const& a_k, T const* b, std::array<index_t, RB> const& eb,
                     std::array<index_t, RB> const& sb, std::array<std::size_t, NB2> const& b_batch,
                     std::array<std::size_t, NK2> const& b_k, std::array<std::size_t, NN> const& b_cols, T* c,
                     std::array<index_t, RC> const& ec, std::array<index_t, RC> const& sc,
                     std::array<std::size_t, NB3> const& c_batch, std::array<std::size_t, NM3> const& c_rows,
                     std::array<std::size_t, NN3> const& c_cols) {
  static_assert(NB == NB2 && NB == NB3 && NK == NK2 && NM == NM3 && NN == NN3);
  static_assert(NB + NM + NK == RA && NB + NK + NN == RB && NB + NM + NN == RC);
  matrix_operand<Backend, T, RA, NB, NM, NK> const ma(a, ea, sa, a_batch, a_rows, a_k);
  matrix_operand<Backend, T, RB, NB, NK, NN> const mb(b, eb, sb, b_batch, b_k, b_cols);

  index_t const batch = merge_dims(c_batch, ec, sc).extent;
  index_t const m = merge_dims(c_rows, ec, sc).extent;
  index_t const n = merge_dims(c_cols, ec, sc).extent;
  index_t const k = merge_dims(a_k, ea, sa).extent;
  if (batch * m * n == 0) return;

  dim_group const cb = merge_dims(c_batch, ec, sc);
  dim_group const cr = merge_dims(c_rows, ec, sc);
  dim_group const cc = merge_dims(c_cols, ec, sc);
  if (cb.ok && cr.ok && cc.ok) {
    backend_gemm_batched(Backend{}, batch, m, n, k, ma.view, mb.view,
                         kernel::strided_matrix<T>{c, cb.stride, cr.stride, cc.stride});
    return;
  }
  // C's order interleaves batch and free dims so that they cannot be
  // written with one stride each: compute [batch…, rows…, cols…]
  // contiguously, then permute it into C's order.
  typename Backend::template storage<T> tmp(batch * m * n);
  backend_gemm_batched(Backend{}, batch, m, n, k, ma.view, mb.view,
                       kernel::strided_matrix<T>{tmp.data(), m * n, n, 1});
  constexpr std::size_t rc = RC;
  auto const order = concat_positions(c_batch, c_rows, c_cols);
  std::array<index_t, rc> ordered_ext{};
  for (std::size_t i = 0; i < rc; ++i) ordered_ext[i] = ec[order[i]];
  auto const tmp_str = row_major_strides(ordered_ext);
  std::array<index_t, rc> src_str{};  // tmp's strides, by C's dims
  for (std::size_t i = 0; i < rc; ++i) src_str[order[i]] = tmp_str[i];
  backend_strided_copy(Backend{}, c, sc, static_cast<T const*>(tmp.data()), src_str, ec);
}

/// @brief The gradient of a = [batch…, free_a…, D] in contract<D>(a, b)
/// from the result's gradient @p g: Σ over b's free dims of g · b, itself a
/// contraction (over b's free dims; none makes it an outer product), as a
/// fresh tensor of a's type.
template <class D, class TA, class TB, class G>
TA contract_gradient_left(TA const& a, TB const& b, G const& g) {
  using plan = contraction_plan<D, typename TA::specs, typename TB::specs>;
  using LA = typename TA::specs;
  using LB = typename TB::specs;
  using LR = typename G::specs;
  TA da(uninitialized, a.extents());
  if (da.size() == 0) return da;
  batched_product<typename TA::backend>(
      g.data(), g.extents(), g.strides(), positions_in<LR, typename plan::batch>::value,
      positions_in<LR, typename plan::free_a>::value, positions_in<LR, typename plan::free_b>::value, b.data(),
      b.extents(), b.strides(), positions_in<LB, typename plan::batch>::value,
      positions_in<LB, typename plan::free_b>::value, std::array<std::size_t, 1>{index_of_v<D, LB>}, da.data(),
      da.extents(), da.strides(), positions_in<LA, typename plan::batch>::value,
      positions_in<LA, typename plan::free_a>::value, std::array<std::size_t, 1>{index_of_v<D, LA>});
  return da;
}

/// @brief The gradient of b = [batch…, D, free_b…] in contract<D>(a, b)
/// from the result's gradient @p g: Σ over a's free dims of a · g, as a
/// fresh tensor of b's type.
template <class D, class TA, class TB, class G>
TB contract_gradient_right(TA const& a, TB const& b, G const& g) {
  using plan = contraction_plan<D, typename TA::specs, typename TB::specs>;
  using LA = typename TA::specs;
  using LB = typename TB::specs;
  using LR = typename G::specs;
  TB db(uninitialized, b.extents());
  if (db.size() == 0) return db;
  batched_product<typename TB::backend>(
      a.data(), a.extents(), a.strides(), positions_in<LA, typename plan::batch>::value,
      std::array<std::size_t, 1>{index_of_v<D, LA>}, positions_in<LA, typename plan::free_a>::value, g.data(),
      g.extents(), g.strides(), positions_in<LR, typename plan::batch>::value,
      positions_in<LR, typename plan::free_a>::value, positions_in<LR, typename plan::free_b>::value, db.data(),
      db.extents(), db.strides(), positions_in<LB, typename plan::batch>::value,
      std::array<std::size_t, 1>{index_of_v<D, LB>}, positions_in<LB, typename plan::free_b>::value);
  return db;
}

/// Contracts two tensors over D (checked at compile time already): checks
/// the shared extents at run time, then one batched matrix product.  When
/// an operand requires gradients, records the rule: each operand's
/// gradient is the contraction of the result's gradient with the other
/// operand (the same GEMM path).
template <class D, class TA, class TB>
auto contract_tensors(std::string_view name, TA const& a, TB const& b) {
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
  if (out.size() != 0) {
    batched_product<Backend>(a.data(), ea, a.strides(), positions_in<LA, typename plan::batch>::value,
                             positions_in<LA, typename plan::free_a>::value,
                             std::array<std::size_t, 1>{index_of_v<D, LA>}, b.data(), eb, b.strides(),
                             positions_in<LB, typename plan::batch>::value,
                             std::array<std::size_t, 1>{index_of_v<D, LB>},
                             positions_in<LB, typename plan::free_b>::value, out.data(), ext, out.strides(),
                             positions_in<LR, typename plan::batch>::value,
                             positions_in<LR, typename plan::free_a>::value,
                             positions_in<LR, typename plan::free_b>::value);
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (autograd::should_record(a, b)) {
      autograd::record(
          name, out,
          [a, b](result_type const& g) {
            if (a.requires_grad()) autograd::propagate(a, contract_gradient_left<D>(a, b, g));
            if (b.requires_grad()) autograd::propagate(b, contract_gradient_right<D>(a, b, g));
          },
          a, b);
    }
  }
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
template <class Call, class D, class LA, class LB>
constexpr auto shared_extents_diagnosis() {
  using plan = contraction_plan<D, LA, LB>;
  if constexpr (plan::extents_ok) {
    return std::type_identity<void>{};
  } else {
    using X = mp::mp_at_c<typename plan::shared, plan::first_clash>;
    return std::type_identity<diagnostic::extent_mismatch<
        Call, X, diagnostic::extents<static_extent_v<spec_for<X, LA>>, static_extent_v<spec_for<X, LB>>>>>{};
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
/// Operands may be any expressions (lazy ones are evaluated first, see
/// `contract_operand`) of the same element type (`element_types_differ`
/// otherwise).  The result is a fresh contiguous tensor.  Differentiable in
/// both operands (float and double): see the file's notes on gradients.
template <class D, class A, class B>
  requires detail::ContractArg<A> && detail::ContractArg<B>
auto contract(A const& a, B const& b) {
  using diagnosis = typename decltype(detail::contract_diagnosis<D, A, B>())::type;
  if constexpr (!std::is_void_v<diagnosis>) {
    diagnostic::fire<diagnosis>();  // the compile error, unless an operand was ill_formed
    return ill_formed{};
  } else {
    return detail::contract_operands<D>("contract", a, b);
  }
}

}  // namespace dimtensor
