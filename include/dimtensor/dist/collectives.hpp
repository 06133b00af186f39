#pragma once
/// @file
/// @brief The collectives on tensors: `all_reduce`, `broadcast`,
/// `all_gather<D>` and `reduce_scatter<D>` along a named dim, over a
/// `dist::communicator`.
///
/// Each call first compares what every rank brought (the call, the element
/// type, the dims, the extents, the operation or root): ranks that differ
/// all throw, with a message that names the dim, the extents and the ranks
/// (`shape_error` for extents and dims, `value_error` for the rest), before
/// any element moves.  So a mismatch is an exception on every rank, never a
/// hang nor a mix of two shapes.
///
/// The collectives move values; they are not recorded by autograd.  A
/// tensor that requires a gradient is refused while recording is on: call
/// them on `x.detach()` or under `autograd::no_grad`.  Tensors of any host
/// backend are reduced in place in their memory; tensors of a device
/// backend are reduced in the device's memory by a transport that takes it
/// (NCCL: `all_reduce`, `broadcast`), through a host copy otherwise.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/tensor/partial.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::call {
/// `dist::all_reduce(x, comm, op)`.
struct all_reduce : named<"all_reduce"> {};
/// `dist::broadcast(x, comm, root)`.
struct broadcast : named<"broadcast"> {};
/// `dist::all_gather<D>(x, comm)`.
struct all_gather : named<"all_gather"> {};
/// `dist::reduce_scatter<D>(x, comm, op)`.
struct reduce_scatter : named<"reduce_scatter"> {};
}  // namespace dimtensor::call

namespace dimtensor::diagnostic {
/// all_gather<D> or reduce_scatter<D> along a dim whose extent is in the type.
template <class Call, class Dim, class Dims>
struct collective_along_static_dim {
  static_assert(always_false<Call, Dim, Dims>,
                "dimtensor: all_gather<D> and reduce_scatter<D> change the extent of D, so D's extent cannot be "
                "static (Dim::fixed<n>) in the tensor's type (see collective_along_static_dim<call, dimension, "
                "dims> above)");
};
}  // namespace dimtensor::diagnostic

namespace dimtensor::dist {

namespace detail {

/// `value_error` when a collective is asked of @p x that requires a gradient while recording is on.
void refuse_recorded(std::string_view call, std::string_view shape);

/// The parts of @p n along a scattered dim over @p p ranks: n / p each, one
/// more for the first n % p ranks.
std::vector<index_t> scatter_parts(index_t n, int p);

/// @brief Calls `f(T* host, index_t n)` on @p x's elements in host memory,
/// row-major, and leaves in @p x what f wrote there: in place for a
/// contiguous tensor of a host backend, through a copy otherwise.
template <class Tensor, class F>
void with_host_elements(Tensor& x, F&& f) {
  using T = typename Tensor::value_type;
  using B = typename Tensor::backend;
  if constexpr (B::host_accessible) {
    if (x.is_contiguous()) {
      f(x.data(), x.size());
      return;
    }
  }
  Tensor c = x.contiguous();  // a copy when x is strided
  auto host = dimtensor::detail::host_buffer<T>(c.size());
  backend_copy_to_host(B{}, host.get(), static_cast<T const*>(c.data()), c.size());
  f(host.get(), c.size());
  backend_copy_from_host(B{}, c.data(), static_cast<T const*>(host.get()), c.size());
  if (c.data() != x.data()) {
    autograd::no_grad const guard;
    x.assign(c);
  }
}

/// @p x's elements, row-major, in host memory (a copy).
template <class Tensor>
std::unique_ptr<typename Tensor::value_type[]> host_copy(Tensor const& x) {
  using T = typename Tensor::value_type;
  Tensor c = x.contiguous();
  auto host = dimtensor::detail::host_buffer<T>(c.size());
  backend_copy_to_host(typename Tensor::backend{}, host.get(), static_cast<T const*>(c.data()), c.size());
  return host;
}

/// The product of @p ext's extents before and after position @p d.
template <std::size_t R>
std::pair<index_t, index_t> outer_inner(std::array<index_t, R> const& ext, std::size_t d) {
  index_t outer = 1;
  index_t inner = 1;
  for (std::size_t k = 0; k < d; ++k) outer *= ext[k];
  for (std::size_t k = d + 1; k < R; ++k) inner *= ext[k];
  return {outer, inner};
}

/// `value_error` for a mean of integers or bools, or a sum of bools, in @p call.
template <class T>
void check_reduction(std::string_view call, reduce_op op, std::string const& shape) {
  if constexpr (!std::is_floating_point_v<T>) {
    if (op == reduce_op::mean || (std::is_same_v<T, bool> && op == reduce_op::sum)) {
      throw value_error(std::string(call) + ": " + std::string(name_of(op)) + " of " +
                        std::string(name_of(scalar_type_of<T>())) + " elements " + shape +
                        "; use max or min, or convert the tensor first");
    }
  }
}

/// Divides @p n host elements by the number of ranks (a mean's last step).
template <class T>
void divide_by_ranks(T* p, index_t n, int ranks) {
  if constexpr (std::is_floating_point_v<T>) {
    T const r = static_cast<T>(ranks);
    for (index_t i = 0; i < n; ++i) p[i] = p[i] / r;
  }
}

/// Refuses a tensor that requires a gradient while recording is on.
template <class Tensor>
void check_not_recorded(std::string_view call, Tensor const& x) {
  if (x.requires_grad() && autograd::is_grad_enabled()) {
    refuse_recorded(call, shape_string<typename Tensor::specs>(x.extents()));
  }
}

/// "all_gather<Batch>".
template <class Call, class D>
std::string call_along() {
  return std::string(Call::name) + "<" + std::string(dim_name_v<D>) + ">";
}

}  // namespace detail

/// @brief Combines @p x over the ranks of @p comm with @p op, in place:
/// afterwards every rank holds the same elements.  Every rank gives a
/// tensor of the same type and extents (`shape_error` on every rank
/// otherwise, naming the dim and the ranks); `mean` is the sum divided by
/// the number of ranks, for float and double (`value_error` for integers
/// and bools, and for `sum` of bools).  Returns @p x.
template <class Tensor>
  requires is_tensor_v<Tensor>
Tensor& all_reduce(Tensor& x, communicator const& comm, reduce_op op = reduce_op::sum) {
  using T = typename Tensor::value_type;
  using L = typename Tensor::specs;
  detail::check_not_recorded(call::all_reduce::name, x);
  detail::check_reduction<T>(call::all_reduce::name, op, shape_string<L>(x.extents()));
  (void)detail::agree(comm.raw(), {detail::collective::all_reduce, call::all_reduce::name, scalar_type_of<T>(), op,
                                   0, -1, meta::names_of<L>::value, x.extents()});
  if constexpr (!Tensor::backend::host_accessible) {
    if (comm.raw().takes_device_memory()) {  // NCCL: the device's buffer itself
      autograd::no_grad const guard;
      Tensor c = x.is_contiguous() ? x : x.clone();
      comm.raw().all_reduce_device(c.data(), static_cast<std::size_t>(c.size()), scalar_type_of<T>(),
                                   op == reduce_op::mean ? reduce_op::sum : op);
      if constexpr (std::is_floating_point_v<T>) {
        if (op == reduce_op::mean) c.assign(c * (T(1) / static_cast<T>(comm.size())));
      }
      if (c.data() != x.data()) x.assign(c);
      return x;
    }
  }
  detail::with_host_elements(x, [&](T* p, index_t n) {
    comm.raw().all_reduce(p, static_cast<std::size_t>(n), scalar_type_of<T>(),
                          op == reduce_op::mean ? reduce_op::sum : op);
    if (op == reduce_op::mean) detail::divide_by_ranks(p, n, comm.size());
  });
  return x;
}

/// @brief Copies rank @p root's @p x to every other rank, in place.  Every
/// rank gives a tensor of the same type and extents and the same root
/// (an error on every rank otherwise).  Returns @p x.
template <class Tensor>
  requires is_tensor_v<Tensor>
Tensor& broadcast(Tensor& x, communicator const& comm, int root = 0) {
  using T = typename Tensor::value_type;
  using L = typename Tensor::specs;
  detail::check_not_recorded(call::broadcast::name, x);
  if (root < 0 || root >= comm.size()) {
    throw value_error("broadcast: the root is rank " + std::to_string(root) + ", but the group has ranks 0 to " +
                      std::to_string(comm.size() - 1));
  }
  (void)detail::agree(comm.raw(), {detail::collective::broadcast, call::broadcast::name, scalar_type_of<T>(),
                                   reduce_op::sum, root, -1, meta::names_of<L>::value, x.extents()});
  if constexpr (!Tensor::backend::host_accessible) {
    if (comm.raw().takes_device_memory()) {  // NCCL: the device's buffer itself
      autograd::no_grad const guard;
      Tensor c = x.is_contiguous() ? x : x.clone();
      comm.raw().broadcast_device(c.data(), static_cast<std::size_t>(c.size()) * sizeof(T), root);
      if (c.data() != x.data()) x.assign(c);
      return x;
    }
  }
  detail::with_host_elements(
      x, [&](T* p, index_t n) { comm.raw().broadcast(p, static_cast<std::size_t>(n) * sizeof(T), root); });
  return x;
}

/// @brief The ranks' @p x put end to end along @p D, in rank order: the
/// result's extent of D is the sum of the ranks' extents of D (which may
/// differ), its other extents are @p x's, which every rank must share
/// (`shape_error` on every rank otherwise, naming D, both ranks and their
/// shapes).  D's extent must be dynamic in the type (a compile error
/// names the dim otherwise).  A D sharded over a mesh axis
/// (`D::sharded<Axis>`) is whole in the result's type.
template <class D, class Tensor>
  requires is_tensor_v<Tensor>
auto all_gather(Tensor const& x, communicator const& comm) {
  using T = typename Tensor::value_type;
  using L = typename Tensor::specs;
  if constexpr (!meta::contains_v<D, L>) {
    (void)diagnostic::fire<diagnostic::not_a_dimension_of<call::all_gather, D, L>>;
    return ill_formed{};
  } else if constexpr (is_static_v<meta::spec_for<D, L>>) {
    (void)diagnostic::fire<diagnostic::collective_along_static_dim<call::all_gather, D, L>>;
    return ill_formed{};
  } else {
    constexpr std::size_t d = meta::index_of_v<D, L>;
    std::string const text = detail::call_along<call::all_gather, D>();
    detail::check_not_recorded(text, x);
    std::vector<index_t> const along =
        detail::agree(comm.raw(), {detail::collective::all_gather, text, scalar_type_of<T>(), reduce_op::sum, 0,
                                   static_cast<int>(d), meta::names_of<L>::value, x.extents()});
    auto [outer, inner] = detail::outer_inner(x.extents(), d);
    index_t total = 0;
    std::vector<std::size_t> bytes(along.size());
    for (std::size_t r = 0; r < along.size(); ++r) {
      total = checked_extent_sum(text, total, along[r], [] { return std::string(dim_name_v<D>); });
      bytes[r] = static_cast<std::size_t>(outer * along[r] * inner) * sizeof(T);
    }
    auto ext = x.extents();
    ext[d] = total;
    // The whole dim: a dim sharded over a mesh axis is whole after the gather.
    using whole_specs = boost::mp11::mp_replace_at_c<L, d, unsharded_t<meta::spec_for<D, L>>>;
    tensor_with_dims<typename Tensor::backend, T, whole_specs> out(ext);
    auto const mine = detail::host_copy(x);
    auto gathered = dimtensor::detail::host_buffer<T>(outer * total * inner);
    comm.raw().all_gather(mine.get(), gathered.get(), bytes);
    // gathered holds rank r's [outer, n_r, inner] after the ranks before it;
    // out is [outer, total, inner].
    std::unique_ptr<T[]> ordered;
    T const* result = gathered.get();
    if (outer > 1) {
      ordered = dimtensor::detail::host_buffer<T>(outer * total * inner);
      index_t from = 0;
      index_t column = 0;
      for (index_t n : along) {
        for (index_t o = 0; o < outer; ++o) {
          std::copy_n(gathered.get() + from + o * n * inner, n * inner,
                      ordered.get() + (o * total + column) * inner);
        }
        from += outer * n * inner;
        column += n;
      }
      result = ordered.get();
    }
    backend_copy_from_host(typename Tensor::backend{}, out.data(), result, out.size());
    return out;
  }
}

/// @brief Combines the ranks' @p x with @p op and gives rank r its part
/// along @p D: D's extent n is cut into parts of n / p elements, one more
/// for each of the first n % p ranks, in rank order.  Every rank gives the
/// same type and extents (`shape_error` on every rank otherwise).  D's
/// extent must be dynamic in the type.  `mean` divides by the number of
/// ranks (float and double only).
template <class D, class Tensor>
  requires is_tensor_v<Tensor>
auto reduce_scatter(Tensor const& x, communicator const& comm, reduce_op op = reduce_op::sum) {
  using T = typename Tensor::value_type;
  using L = typename Tensor::specs;
  if constexpr (!meta::contains_v<D, L>) {
    (void)diagnostic::fire<diagnostic::not_a_dimension_of<call::reduce_scatter, D, L>>;
    return ill_formed{};
  } else if constexpr (is_static_v<meta::spec_for<D, L>>) {
    (void)diagnostic::fire<diagnostic::collective_along_static_dim<call::reduce_scatter, D, L>>;
    return ill_formed{};
  } else {
    constexpr std::size_t d = meta::index_of_v<D, L>;
    std::string const text = detail::call_along<call::reduce_scatter, D>();
    detail::check_not_recorded(text, x);
    detail::check_reduction<T>(text, op, shape_string<L>(x.extents()));
    (void)detail::agree(comm.raw(), {detail::collective::reduce_scatter, text, scalar_type_of<T>(), op, 0, -1,
                                     meta::names_of<L>::value, x.extents()});
    auto [outer, inner] = detail::outer_inner(x.extents(), d);
    index_t const n = x.extents()[d];
    std::vector<index_t> const parts = detail::scatter_parts(n, comm.size());
    auto const mine = detail::host_copy(x);
    // Rank r's part, [outer, parts[r], inner], after the parts before it.
    auto send = dimtensor::detail::host_buffer<T>(outer * n * inner);
    std::vector<std::size_t> counts(parts.size());
    index_t to = 0;
    index_t start = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
      for (index_t o = 0; o < outer; ++o) {
        std::copy_n(mine.get() + (o * n + start) * inner, parts[r] * inner, send.get() + to);
        to += parts[r] * inner;
      }
      counts[r] = static_cast<std::size_t>(outer * parts[r] * inner);
      start += parts[r];
    }
    auto ext = x.extents();
    ext[d] = parts[static_cast<std::size_t>(comm.rank())];
    Tensor out(ext);
    auto received = dimtensor::detail::host_buffer<T>(out.size());
    comm.raw().reduce_scatter(send.get(), received.get(), counts, scalar_type_of<T>(),
                              op == reduce_op::mean ? reduce_op::sum : op);
    if (op == reduce_op::mean) detail::divide_by_ranks(received.get(), out.size(), comm.size());
    backend_copy_from_host(typename Tensor::backend{}, out.data(), static_cast<T const*>(received.get()), out.size());
    return out;
  }
}

/// @brief Completes this rank's part @p p of a reduction over a dim sharded
/// over a mesh axis (what `sum`, `mean`, `max`, `min` and `contract` over
/// `D::sharded<Axis>` return): the ranks' parts combined, the plain tensor
/// every rank then holds.  A sum adds the parts; a mean weighs each rank's
/// by the number of elements it reduced (so uneven parts give the mean of
/// the whole); max and min take the extreme.  @p comm is the group of the
/// axis.  The result is a value, not recorded by autograd (a partial loss
/// is back-propagated on each rank, see `partial::backward`).
template <class Tensor, class D, class Axis, class Reduction>
Tensor all_reduce(partial<Tensor, D, Axis, Reduction> const& p, communicator const& comm) {
  using T = typename Tensor::value_type;
  autograd::no_grad const guard;
  Tensor out = p.local_part().detach().clone();
  if constexpr (std::is_same_v<Reduction, call::mean>) {
    // sum over the ranks of (mean_r * n_r) / sum of n_r
    auto const n = static_cast<T>(p.reduced_extent());
    detail::with_host_elements(out, [&](T* e, index_t k) {
      for (index_t i = 0; i < k; ++i) e[i] = e[i] * n;
    });
    all_reduce(out, comm, reduce_op::sum);
    basic_tensor<dimtensor::host_backend, double> count(uninitialized, {});
    count.data()[0] = static_cast<double>(p.reduced_extent());
    all_reduce(count, comm, reduce_op::sum);
    T const total = static_cast<T>(count.data()[0]);
    detail::with_host_elements(out, [&](T* e, index_t k) {
      for (index_t i = 0; i < k; ++i) e[i] = e[i] / total;
    });
  } else if constexpr (std::is_same_v<Reduction, call::max>) {
    all_reduce(out, comm, reduce_op::max);
  } else if constexpr (std::is_same_v<Reduction, call::min>) {
    all_reduce(out, comm, reduce_op::min);
  } else {
    all_reduce(out, comm, reduce_op::sum);
  }
  return out;
}

}  // namespace dimtensor::dist
