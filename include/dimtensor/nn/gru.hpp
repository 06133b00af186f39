#pragma once
/// @file
/// @brief `nn::gru<Time, Batch, In, Hidden, T, Backend>`: PyTorch's `nn.GRU`
/// (multi-layer, dropout between layers), named by the dims it maps.
///
/// The template names the input's dims: its sequence dim Time, its batch
/// dim Batch and its feature dim In; Hidden names the hidden state's
/// features.  The input is a tensor of exactly the dims Time, Batch and In,
/// in any order (d2l's seq2seq feeds it time-major, [Time, Batch, In], as
/// `nn.GRU` without `batch_first` wants); the outputs have the input's dims
/// with In replaced by Hidden, in place, so a time-major input gives
/// PyTorch's [Time, Batch, Hidden].  The state is
/// [Layers, Batch, Hidden], as PyTorch's.  Naming the dims is what catches a
/// batch-major tensor given to a time-major network: the dims are found by
/// name, never by position.
///
/// Parameters keep PyTorch's names and layouts, so a `state_dict` loads as
/// it is: for each layer k, `weight_ih_l{k}` [Gates, In] (Hidden above the
/// first layer), `weight_hh_l{k}` [Gates, Hidden], `bias_ih_l{k}` and
/// `bias_hh_l{k}` [Gates], the gates stacked r, z, n (Gates = 3·Hidden).
///
/// Training: each layer is one recorded operation whose backward rule is
/// back-propagation through time.  The input projections of all steps are
/// one contraction per layer (forward and backward), and so are the
/// weights' gradients; only h·W_hhᵀ and its transpose run per step.  The
/// passes and the rule name the layer's dims with the GRU's own tags, so
/// they are compiled once per backend and element type (for `cpu` with
/// float and double, in the library: declared at this file's end); the
/// module's dims cost only a thin shell.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
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
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/select.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::gru<Time, Batch, In, Hidden>::operator()`.
struct gru : named<"gru"> {};
}  // namespace call

namespace diagnostic {

/// `gru<Time, Batch, In, Hidden>` applied to a tensor of dims @p Dims, which
/// are not exactly Time, Batch and In.
template <class Time, class Batch, class In, class Dims>
struct gru_input_dims {
  static_assert(always_false<Time, Batch, In, Dims>,
                "dimtensor: gru<Time, Batch, In, Hidden> takes a tensor of exactly the dims Time, Batch and In, "
                "in any order (see gru_input_dims<Time, Batch, In, dims of the tensor> above)");
};

/// `gru<Time, Batch, In, Hidden>::step` applied to a tensor of dims @p Dims,
/// which are not exactly Batch and In (one step's input has no Time).
template <class Time, class Batch, class In, class Dims>
struct gru_step_input_dims {
  static_assert(always_false<Time, Batch, In, Dims>,
                "dimtensor: gru<Time, Batch, In, Hidden>::step takes one step's input, a tensor of exactly the dims "
                "Batch and In, without Time (see gru_step_input_dims<Time, Batch, In, dims of the tensor> above); "
                "a whole sequence goes to operator()");
};

/// A gru's initial state of dims @p Dims, which are not [Layers, Batch, Hidden].
template <class Layers, class Batch, class Hidden, class Dims>
struct gru_state_dims {
  static_assert(always_false<Layers, Batch, Hidden, Dims>,
                "dimtensor: a gru's state has the dims [Layers, Batch, Hidden], in this order "
                "(see gru_state_dims<Layers, Batch, Hidden, dims of the state> above)");
};

}  // namespace diagnostic

namespace nn {

/// The layers of a recurrent network: the first dim of its state.
DIMTENSOR_DIM(Layers);
/// A GRU's three gates' features stacked (r, z, n): 3·Hidden of them, the
/// rows of its weights and biases.
DIMTENSOR_DIM(Gates);

namespace detail {

/// Time and Batch merged (row-major): the rows the weights' gradients sum over.
DIMTENSOR_DIM(TimeBatch);

/// A view of @p src's elements as an Out: @p ext and @p str from @p offset.
template <class Out, class Src>
Out view_of(Src const& src, index_t offset, typename Out::extents_type const& ext,
            typename Out::extents_type const& str) {
  return Out(src.storage(), src.data() + offset, ext, str);
}

/// What is wrong with applying gru<Time, Batch, In, …, T, Backend> to an X:
/// a diagnostic class (named, not yet instantiated), `ill_formed`, or void.
template <class Time, class Batch, class In, class T, class Backend, class X>
constexpr auto gru_input_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    using specs = typename expr_t<X>::specs;
    if constexpr (!std::is_same_v<typename expr_t<X>::backend, Backend>) {
      return std::type_identity<diagnostic::backends_differ<call::gru, typename expr_t<X>::backend, Backend>>{};
    } else if constexpr (!std::is_same_v<typename expr_t<X>::value_type, T>) {
      return std::type_identity<diagnostic::element_types_differ<call::gru, typename expr_t<X>::value_type, T>>{};
    } else if constexpr (meta::rank_v<specs> != 3 || !meta::contains_v<Time, specs> ||
                         !meta::contains_v<Batch, specs> || !meta::contains_v<In, specs>) {
      return std::type_identity<diagnostic::gru_input_dims<Time, Batch, In, specs>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

/// What is wrong with a state S for gru<…, Batch, …, Hidden, T, Backend>.
template <class Batch, class Hidden, class T, class Backend, class S>
constexpr auto gru_state_diagnosis() {
  if constexpr (is_ill_formed_v<S>) {
    return std::type_identity<ill_formed>{};
  } else {
    using specs = typename expr_t<S>::specs;
    if constexpr (!std::is_same_v<typename expr_t<S>::backend, Backend>) {
      return std::type_identity<diagnostic::backends_differ<call::gru, typename expr_t<S>::backend, Backend>>{};
    } else if constexpr (!std::is_same_v<typename expr_t<S>::value_type, T>) {
      return std::type_identity<diagnostic::element_types_differ<call::gru, typename expr_t<S>::value_type, T>>{};
    } else if constexpr (!std::is_same_v<meta::tags_of<specs>, dims<Layers, Batch, Hidden>>) {
      return std::type_identity<diagnostic::gru_state_dims<Layers, Batch, Hidden, specs>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

}  // namespace detail

/// @brief The parameters of one GRU layer reading the features In (the
/// network's input for the first layer, Hidden above it), on @p Backend.
template <class In, class Hidden, class T = float, class Backend = default_backend>
struct gru_layer {
  /// W_ir, W_iz, W_in stacked: [Gates, In], PyTorch's `weight_ih_l{k}`.
  basic_tensor<Backend, T, Gates, In> weight_ih;
  /// W_hr, W_hz, W_hn stacked: [Gates, Hidden], PyTorch's `weight_hh_l{k}`.
  basic_tensor<Backend, T, Gates, Hidden> weight_hh;
  /// b_ir, b_iz, b_in: [Gates], PyTorch's `bias_ih_l{k}`.
  basic_tensor<Backend, T, Gates> bias_ih;
  /// b_hr, b_hz, b_hn: [Gates], PyTorch's `bias_hh_l{k}`.
  basic_tensor<Backend, T, Gates> bias_hh;

  /// Draws every parameter, in PyTorch's order, uniform in [-1/√H, 1/√H)
  /// (`nn.GRU.reset_parameters`; on the host, so a seed gives the same
  /// numbers on every backend), each requiring gradients.
  gru_layer(index_t in, index_t hidden, generator& gen) {
    double const bound = 1.0 / std::sqrt(static_cast<double>(hidden));
    weight_ih = dimtensor::to<Backend>(uniform<T>(gen, -bound, bound, Gates(3 * hidden), In(in)));
    weight_hh = dimtensor::to<Backend>(uniform<T>(gen, -bound, bound, Gates(3 * hidden), Hidden(hidden)));
    bias_ih = dimtensor::to<Backend>(uniform<T>(gen, -bound, bound, Gates(3 * hidden)));
    bias_hh = dimtensor::to<Backend>(uniform<T>(gen, -bound, bound, Gates(3 * hidden)));
    weight_ih.requires_grad_();
    weight_hh.requires_grad_();
    bias_ih.requires_grad_();
    bias_hh.requires_grad_();
  }

  /// Calls `f(prefix + name + suffix, parameter)` for the four parameters, in PyTorch's order.
  template <class F, class Self>
  static void visit(Self& self, F& f, std::string const& prefix, std::string const& suffix) {
    f(prefix + "weight_ih" + suffix, self.weight_ih);
    f(prefix + "weight_hh" + suffix, self.weight_hh);
    f(prefix + "bias_ih" + suffix, self.bias_ih);
    f(prefix + "bias_hh" + suffix, self.bias_hh);
  }
};

namespace detail {

/// @name A layer's own dims
/// The passes and rules of a layer name its dims with these tags whatever
/// the user's dims, so that they are compiled once per backend and element
/// type: the typed shell (gru_layer_forward) sees the user's tensors as
/// these (aliases of the same elements) and back.
/// @{
DIMTENSOR_DIM(GruTime);
DIMTENSOR_DIM(GruBatch);
DIMTENSOR_DIM(GruIn);
DIMTENSOR_DIM(GruHidden);
/// @}

/// @p t's elements seen as an Out (the same extents and strides under other
/// dim names), outside the graph.
template <class Out, class Src>
Out alias_as(Src const& t) {
  return Out(t.storage(), t.data(), t.extents(), t.strides());
}

/// One layer's parameters under the layer's own dims, outside the graph,
/// with the states that take their gradients (null for those that need none).
template <class T, class Backend>
struct gru_weights {
  basic_tensor<Backend, T, Gates, GruIn> weight_ih;
  basic_tensor<Backend, T, Gates, GruHidden> weight_hh;
  basic_tensor<Backend, T, Gates> bias_ih;
  basic_tensor<Backend, T, Gates> bias_hh;
  std::shared_ptr<autograd::tensor_state> weight_ih_state, weight_hh_state, bias_ih_state, bias_hh_state;
};

/// The layer's sequences, [GruTime, GruBatch, GruHidden].
template <class T, class Backend>
using gru_seq = basic_tensor<Backend, T, GruTime, GruBatch, GruHidden>;
/// The layer's input, [GruTime, GruBatch, GruIn].
template <class T, class Backend>
using gru_input = basic_tensor<Backend, T, GruTime, GruBatch, GruIn>;
/// The network's state, [Layers, GruBatch, GruHidden].
template <class T, class Backend>
using gru_state = basic_tensor<Backend, T, Layers, GruBatch, GruHidden>;

/// What one GRU layer keeps of its forward pass for the backward one.
template <class T, class Backend>
struct gru_saved {
  /// The layer's input, time-major and contiguous.
  gru_input<T, Backend> xs;
  /// hs[0] the initial state, hs[t + 1] the state after step t.
  gru_seq<T, Backend> hs;
  /// The gates r and z, the candidate n and W_hn h + b_hn of every step.
  gru_seq<T, Backend> r, z, n, hn;
};

/// The forward pass of one GRU layer over a whole sequence, unrecorded:
/// @p x time-major, @p h0 the network's initial state (entry @p layer).
template <class T, class Backend>
gru_saved<T, Backend> gru_layer_pass(gru_weights<T, Backend> const& p, gru_input<T, Backend> const& x,
                                     std::optional<gru_state<T, Backend>> const& h0, index_t layer) {
  using seq_t = gru_seq<T, Backend>;
  using step_t = basic_tensor<Backend, T, GruBatch, GruHidden>;
  using gates_t = basic_tensor<Backend, T, GruTime, GruBatch, Gates>;
  using step_gates_t = basic_tensor<Backend, T, GruBatch, Gates>;

  autograd::no_grad const guard;
  gru_saved<T, Backend> s{x.contiguous(), {}, {}, {}, {}, {}};
  index_t const steps = s.xs.extents()[0];
  index_t const batch = s.xs.extents()[1];
  index_t const hidden = p.weight_hh.extents()[1];
  index_t const bh = batch * hidden;

  // The input projections of every step, in one contraction.
  gates_t const g(contract_checked<GruIn>("gru", s.xs, p.weight_ih) + p.bias_ih);

  typename step_t::extents_type const se{batch, hidden};
  typename step_t::extents_type const dense{hidden, 1};
  typename step_t::extents_type const gate_str{3 * hidden, 1};
  s.hs = seq_t(typename seq_t::extents_type{steps + 1, batch, hidden});
  if (h0) view_of<step_t>(s.hs, 0, se, dense).assign(view_of<step_t>(*h0, layer * bh, se, dense));
  typename seq_t::extents_type const seq_ext{steps, batch, hidden};
  s.r = seq_t(uninitialized, seq_ext);
  s.z = seq_t(uninitialized, seq_ext);
  s.n = seq_t(uninitialized, seq_ext);
  s.hn = seq_t(uninitialized, seq_ext);
  step_t h(uninitialized, se);  // the state, kept apart from hs so that no write reads its own target
  for (index_t t = 0; t < steps; ++t) {
    step_t const hp = view_of<step_t>(s.hs, t * bh, se, dense);
    step_gates_t const gh(contract_checked<GruHidden>("gru", hp, p.weight_hh) + p.bias_hh);
    index_t const go = t * batch * 3 * hidden;
    auto const gate = [&](auto const& src, index_t offset, index_t k) {
      return view_of<step_t>(src, offset + k * hidden, se, gate_str);
    };
    step_t rt = view_of<step_t>(s.r, t * bh, se, dense);
    step_t zt = view_of<step_t>(s.z, t * bh, se, dense);
    step_t nt = view_of<step_t>(s.n, t * bh, se, dense);
    step_t hnt = view_of<step_t>(s.hn, t * bh, se, dense);
    rt.assign(sigmoid(gate(g, go, 0) + gate(gh, 0, 0)));
    zt.assign(sigmoid(gate(g, go, 1) + gate(gh, 0, 1)));
    hnt.assign(gate(gh, 0, 2));
    nt.assign(tanh(gate(g, go, 2) + rt * hnt));
    h.assign((T(1) - zt) * nt + zt * hp);
    view_of<step_t>(s.hs, (t + 1) * bh, se, dense).assign(h);
  }
  return s;
}

/// Adds the fresh contiguous tensor @p g into the gradient of @p state.
template <class G>
void add_tensor_gradient(autograd::tensor_state& state, G const& g) {
  autograd::add_gradient<typename G::backend, typename G::value_type>(state, g.storage(), g.size());
}

/// @brief The node of one GRU layer: back-propagation through time, one
/// body per backend and element type.  Hands gradients to the layer's
/// time-major input, its parameters and the initial state (entry `layer`
/// of the network's state).
template <class T, class Backend>
class gru_layer_node final : public autograd::node {
 public:
  /// The node of the pass @p s of the parameters @p p over an input whose
  /// state is @p x_state, from the initial state @p h0 (its state @p h0_state).
  gru_layer_node(gru_saved<T, Backend> s, gru_weights<T, Backend> p, std::shared_ptr<autograd::tensor_state> x_state,
                 std::shared_ptr<autograd::tensor_state> h0_state, index_t h0_size, index_t layer)
      : node("gru"), s_(std::move(s)), p_(std::move(p)), x_state_(std::move(x_state)), h0_state_(std::move(h0_state)),
        h0_size_(h0_size), layer_(layer) {
    for (auto const* st : {&x_state_, &p_.weight_ih_state, &p_.weight_hh_state, &p_.bias_ih_state, &p_.bias_hh_state,
                           &h0_state_}) {
      if (*st) inputs.push_back(*st);
    }
  }

  /// Back-propagation through time from the outputs' gradient.
  void backward(autograd::tensor_state const& out) override {
    using storage_t = typename Backend::template storage<T>;
    using step_t = basic_tensor<Backend, T, GruBatch, GruHidden>;
    using gates_t = basic_tensor<Backend, T, GruTime, GruBatch, Gates>;
    using step_gates_t = basic_tensor<Backend, T, GruBatch, Gates>;
    using rows_gates_t = basic_tensor<Backend, T, TimeBatch, Gates>;
    if (out.grad_type != &autograd::type_tag<storage_t>) {
      throw value_error("backward: a gradient of another type than the result (a backward rule is wrong)");
    }
    index_t const steps = s_.r.extents()[0];
    index_t const batch = s_.r.extents()[1];
    index_t const hidden = s_.r.extents()[2];
    index_t const bh = batch * hidden;
    gru_seq<T, Backend> const gc(std::static_pointer_cast<storage_t>(out.grad), static_cast<T*>(out.grad_data),
                                 s_.r.extents(), s_.r.strides());
    typename step_t::extents_type const se{batch, hidden};
    typename step_t::extents_type const dense{hidden, 1};
    typename step_t::extents_type const gate_str{3 * hidden, 1};

    // The gradients of the pre-activations: of x·W_ihᵀ + b_ih and of h·W_hhᵀ + b_hh.
    typename gates_t::extents_type const gates_ext{steps, batch, 3 * hidden};
    gates_t dgx(uninitialized, gates_ext);
    gates_t dgh(uninitialized, gates_ext);
    step_t dh(se);
    for (index_t t = steps; t-- > 0;) {
      index_t const o = t * bh;
      index_t const go = t * batch * 3 * hidden;
      auto const at = [&](auto const& src) { return view_of<step_t>(src, o, se, dense); };
      auto const gate = [&](auto const& src, index_t k) {
        return view_of<step_t>(src, go + k * hidden, se, gate_str);
      };
      step_t const r = at(s_.r), z = at(s_.z), n = at(s_.n), hn = at(s_.hn);
      step_t const hp = view_of<step_t>(s_.hs, o, se, dense);
      dh = step_t(dh + at(gc));
      step_t dr = gate(dgx, 0), dz = gate(dgx, 1), dn = gate(dgx, 2);
      dz.assign(dh * (hp - n) * z * (T(1) - z));
      dn.assign(dh * (T(1) - z) * (T(1) - n * n));
      dr.assign(dn * hn * r * (T(1) - r));
      gate(dgh, 0).assign(dr);
      gate(dgh, 1).assign(dz);
      gate(dgh, 2).assign(dn * r);
      step_gates_t const dgh_t = view_of<step_gates_t>(dgh, go, {batch, 3 * hidden}, {3 * hidden, 1});
      dh = step_t(dh * z + contract_checked<Gates>("gru", dgh_t, p_.weight_hh));
    }

    index_t const rows = steps * batch;
    rows_gates_t const dgx_rows(dgx.storage(), dgx.data(), {rows, 3 * hidden}, {3 * hidden, 1});
    rows_gates_t const dgh_rows(dgh.storage(), dgh.data(), {rows, 3 * hidden}, {3 * hidden, 1});
    if (p_.weight_ih_state) {
      basic_tensor<Backend, T, TimeBatch, GruIn> const x_rows(s_.xs.storage(), s_.xs.data(),
                                                             {rows, s_.xs.extents()[2]}, {s_.xs.extents()[2], 1});
      add_tensor_gradient(*p_.weight_ih_state,
                          contract_checked<TimeBatch>("gru", dgx_rows, x_rows));
    }
    if (p_.weight_hh_state) {
      basic_tensor<Backend, T, TimeBatch, GruHidden> const h_rows(s_.hs.storage(), s_.hs.data(), {rows, hidden},
                                                                 {hidden, 1});
      add_tensor_gradient(*p_.weight_hh_state,
                          contract_checked<TimeBatch>("gru", dgh_rows, h_rows));
    }
    // The biases' gradients: dgx and dgh summed over Time and Batch, the
    // positions a bias is broadcast over.
    constexpr std::size_t last = kernel::max_rank - 1;
    autograd::padded_extents gates_padded{};
    autograd::broadcast_mask over_rows{};
    for (auto& e : gates_padded) e = 1;
    gates_padded[last - 2] = steps;
    gates_padded[last - 1] = batch;
    gates_padded[last] = 3 * hidden;
    over_rows[last - 2] = over_rows[last - 1] = true;
    for (auto [state, d] : {std::pair{p_.bias_ih_state.get(), &dgx}, std::pair{p_.bias_hh_state.get(), &dgh}}) {
      if (state) autograd::accumulate_gradient<Backend, T>(*state, d->data(), gates_padded, over_rows);
    }
    if (x_state_) add_tensor_gradient(*x_state_, contract_checked<Gates>("gru", dgx, p_.weight_ih));
    if (h0_state_) {
      auto dh0 = std::make_shared<storage_t>(h0_size_);
      backend_fill(Backend{}, dh0->data(), h0_size_, T(0));
      backend_copy(Backend{}, dh0->data() + layer_ * bh, static_cast<T const*>(dh.data()), bh);
      autograd::add_gradient<Backend, T>(*h0_state_, std::move(dh0), h0_size_);
    }
  }

 private:
  gru_saved<T, Backend> s_;
  gru_weights<T, Backend> p_;
  std::shared_ptr<autograd::tensor_state> x_state_, h0_state_;
  index_t h0_size_;
  index_t layer_;
};

/// @brief One GRU layer over the time-major input @p x (the state of its
/// user's tensor: @p x_state), from @p h0 (the network's state, its state
/// @p h0_state): the states after each step, [GruTime, GruBatch,
/// GruHidden], and, when @p record, the node of the layer (null otherwise).
/// One body per backend and element type.
template <class T, class Backend>
std::pair<gru_seq<T, Backend>, std::shared_ptr<autograd::node>> gru_layer_run(
    gru_weights<T, Backend> const& p, gru_input<T, Backend> const& x, std::shared_ptr<autograd::tensor_state> x_state,
    std::optional<gru_state<T, Backend>> const& h0, std::shared_ptr<autograd::tensor_state> h0_state, index_t layer,
    bool record) {
  auto saved = gru_layer_pass(p, x, h0, layer);
  auto const& ext = saved.r.extents();
  gru_seq<T, Backend> out(saved.hs.storage(), saved.hs.data() + ext[1] * ext[2], ext, saved.r.strides());
  std::shared_ptr<autograd::node> node;
  if (record) {
    index_t const h0_size = h0 ? h0->size() : 0;
    node = std::make_shared<gru_layer_node<T, Backend>>(std::move(saved), p, std::move(x_state), std::move(h0_state),
                                                        h0_size, layer);
  }
  return {std::move(out), std::move(node)};
}

/// @brief One GRU layer over a whole sequence, recorded as one operation:
/// [Time, Batch, Hidden], the state after each step.
///
/// @p x has the dims Time, Batch and D in any order.  @p h0 is the
/// network's initial state [Layers, Batch, Hidden] (entry @p layer is this
/// layer's), or empty for zeros.  A thin shell: the layer runs under its
/// own dims (gru_layer_run).
template <class Time, class Batch, class Hidden, class D, class T, class Backend, class X, class H>
basic_tensor<Backend, T, Time, Batch, Hidden> gru_layer_forward(gru_layer<D, Hidden, T, Backend> const& p, X const& x,
                                                                std::optional<H> const& h0, index_t layer) {
  using seq_t = basic_tensor<Backend, T, Time, Batch, Hidden>;
  auto const state_of = [](auto const& t) {
    return t.requires_grad() ? t.grad_state() : std::shared_ptr<autograd::tensor_state>{};
  };
  bool const state_needs = h0 && h0->requires_grad();
  bool const record = autograd::is_grad_enabled() &&
                      (autograd::any_requires_grad(x) || p.weight_ih.requires_grad() || p.weight_hh.requires_grad() ||
                       p.bias_ih.requires_grad() || p.bias_hh.requires_grad() || state_needs);
  // Time-major: a view of x (recorded when x requires gradients), whose
  // gradient the layer's rule writes densely.
  auto const tm = dimtensor::permute<Time, Batch, D>(x);
  gru_weights<T, Backend> const w{alias_as<basic_tensor<Backend, T, Gates, GruIn>>(p.weight_ih),
                                  alias_as<basic_tensor<Backend, T, Gates, GruHidden>>(p.weight_hh),
                                  p.bias_ih.detach(),
                                  p.bias_hh.detach(),
                                  state_of(p.weight_ih),
                                  state_of(p.weight_hh),
                                  state_of(p.bias_ih),
                                  state_of(p.bias_hh)};
  std::optional<gru_state<T, Backend>> state;
  if (h0) state = alias_as<gru_state<T, Backend>>(*h0);
  auto [out, node] = gru_layer_run<T, Backend>(w, alias_as<gru_input<T, Backend>>(tm), state_of(tm), state,
                                               state_needs ? h0->grad_state() : nullptr, layer, record);
  seq_t result = alias_as<seq_t>(out);
  if (node) result.attach_grad_fn(std::move(node));
  return result;
}

/// @brief The node of a GRU's final state: entry l of its gradient goes to
/// the last step of layer l's outputs.  One body per backend and element type.
template <class T, class Backend>
class gru_final_node final : public autograd::node {
 public:
  /// The node over the layers' outputs of states @p ys (null for those that
  /// need no gradient), each of @p steps steps of @p bh elements.
  gru_final_node(std::vector<std::shared_ptr<autograd::tensor_state>> ys, index_t steps, index_t bh)
      : node("gru"), ys_(std::move(ys)), steps_(steps), bh_(bh) {
    for (auto const& y : ys_) {
      if (y) inputs.push_back(y);
    }
  }

  /// Writes each layer's entry of the gradient into its last step.
  void backward(autograd::tensor_state const& out) override {
    using storage_t = typename Backend::template storage<T>;
    T const* const g = static_cast<T const*>(out.grad_data);
    index_t const n = steps_ * bh_;
    for (std::size_t l = 0; l < ys_.size(); ++l) {
      if (!ys_[l]) continue;
      auto dy = std::make_shared<storage_t>(n);
      backend_fill(Backend{}, dy->data(), n, T(0));
      backend_copy(Backend{}, dy->data() + (steps_ - 1) * bh_, g + static_cast<index_t>(l) * bh_, bh_);
      autograd::add_gradient<Backend, T>(*ys_[l], std::move(dy), n);
    }
  }

 private:
  std::vector<std::shared_ptr<autograd::tensor_state>> ys_;
  index_t steps_;
  index_t bh_;
};

/// @brief The last step of each layer's outputs @p ys, stacked:
/// [Layers, Batch, Hidden], recorded (its gradient goes to each layer's last step).
template <class Time, class Batch, class Hidden, class T, class Backend>
basic_tensor<Backend, T, Layers, Batch, Hidden> gru_final_state(
    std::vector<basic_tensor<Backend, T, Time, Batch, Hidden>> const& ys) {
  using state_t = basic_tensor<Backend, T, Layers, Batch, Hidden>;
  using step_t = basic_tensor<Backend, T, Batch, Hidden>;
  auto const& ext = ys.front().extents();
  index_t const steps = ext[0];
  index_t const bh = ext[1] * ext[2];
  typename step_t::extents_type const se{ext[1], ext[2]};
  typename step_t::extents_type const dense{ext[2], 1};
  state_t out(uninitialized, {static_cast<index_t>(ys.size()), ext[1], ext[2]});
  {
    autograd::no_grad const guard;
    for (std::size_t l = 0; l < ys.size(); ++l) {
      view_of<step_t>(out, static_cast<index_t>(l) * bh, se, dense)
          .assign(view_of<step_t>(ys[l], (steps - 1) * bh, se, dense));
    }
  }
  bool needs = false;
  for (auto const& y : ys) needs = needs || y.requires_grad();
  if (autograd::is_grad_enabled() && needs) {
    std::vector<std::shared_ptr<autograd::tensor_state>> states;
    states.reserve(ys.size());
    for (auto const& y : ys) states.push_back(y.requires_grad() ? y.grad_state() : nullptr);
    out.attach_grad_fn(std::make_shared<gru_final_node<T, Backend>>(std::move(states), steps, bh));
  }
  return out;
}

}  // namespace detail

/// @brief `nn.GRU(input_size, hidden_size, num_layers, dropout=p)`: a
/// multi-layer gated recurrent unit over the dim Time of a tensor of the
/// dims Time, Batch and In (in any order), mapping In to Hidden.
///
/// Each step of each layer computes, as PyTorch does,
///
///     r = σ(W_ir x + b_ir + W_hr h + b_hr)
///     z = σ(W_iz x + b_iz + W_hz h + b_hz)
///     n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
///     h' = (1 - z) ⊙ n + z ⊙ h
///
/// and the layers above the first read the outputs of the one below, through
/// dropout with probability p in training mode.  The module starts in
/// training mode (as PyTorch's); `eval()` turns dropout off.  Parameters,
/// input, state and outputs live on @p Backend.
///
/// @code
/// dt::nn::gru<Time, Batch, Embed, Hidden> rnn(Embed(32), Hidden(64), 2, 0.1);   // d2l's Seq2SeqEncoder
/// auto [outputs, state] = rnn(X);        // X [Time, Batch, Embed] → [Time, Batch, Hidden], [Layers, Batch, Hidden]
/// auto [out2, state2] = rnn(Y, state);   // from a given state
/// @endcode
template <class Time, class Batch, class In, class Hidden, class T = float, class Backend = default_backend>
class gru : public module<gru<Time, Batch, In, Hidden, T, Backend>> {
  static_assert(DimTag<Time> && DimTag<Batch> && DimTag<In> && DimTag<Hidden>,
                "dimtensor: gru<Time, Batch, In, Hidden, T> needs dimension tags declared with DIMTENSOR_DIM");
  static_assert(std::is_floating_point_v<T>, "dimtensor: gru<Time, Batch, In, Hidden, T> needs a floating-point T");

 public:
  /// The element type.
  using value_type = T;
  /// The backend of the parameters, the input, the state and the outputs.
  using backend = Backend;
  /// The state, [Layers, Batch, Hidden].
  using state_type = basic_tensor<Backend, T, Layers, Batch, Hidden>;

  /// The first layer's parameters (`weight_ih_l0`, … ), reading In.
  gru_layer<In, Hidden, T, Backend> first_layer;
  /// The parameters of layers 1, 2, …: `upper_layers[k - 1]` is layer k, reading Hidden.
  std::vector<gru_layer<Hidden, Hidden, T, Backend>> upper_layers;
  /// The dropout between layers (its own generator).
  nn::dropout dropout;

  /// @brief `nn.GRU(input_size, num_hiddens, num_layers, dropout=p)`, the
  /// parameters drawn from @p gen in PyTorch's order, uniform in
  /// [-1/√hidden, 1/√hidden); the dropout masks from a generator seeded
  /// with @p dropout_seed.  `value_error` unless the extents and the layer
  /// count are positive and p is in [0, 1).
  gru(In input_size, Hidden num_hiddens, index_t num_layers, double p, generator& gen,
      std::uint64_t dropout_seed = generator::default_seed)
      : first_layer(checked_first(input_size, num_hiddens, num_layers), num_hiddens.value, gen),
        dropout(p, dropout_seed) {
    upper_layers.reserve(static_cast<std::size_t>(num_layers - 1));
    for (index_t k = 1; k < num_layers; ++k) upper_layers.emplace_back(num_hiddens.value, num_hiddens.value, gen);
  }
  /// As above, drawing from `default_generator()`.
  gru(In input_size, Hidden num_hiddens, index_t num_layers = 1, double p = 0)
      : gru(input_size, num_hiddens, num_layers, p, default_generator()) {}

  /// The number of layers.
  index_t num_layers() const noexcept { return 1 + static_cast<index_t>(upper_layers.size()); }
  /// The extent of In.
  index_t input_size() const { return first_layer.weight_ih.extents()[1]; }
  /// The extent of Hidden.
  index_t hidden_size() const { return first_layer.weight_hh.extents()[1]; }

  /// Training mode (dropout between layers) or not; returns *this.
  gru& train(bool on = true) {
    using base_module = module<gru>;
    base_module::train(on);
    dropout.train(on);
    return *this;
  }
  /// Evaluation mode: no dropout; returns *this.
  gru& eval() { return train(false); }

  /// A zero state for @p batch sequences, [Layers, Batch, Hidden].
  state_type zero_state(Batch batch) const {
    return state_type(typename state_type::extents_type{num_layers(), batch.value, hidden_size()});
  }

  /// @brief Runs the network over @p x from a zero state: the outputs (the
  /// last layer's state after each step; x's dims with In replaced by
  /// Hidden) and the final state [Layers, Batch, Hidden], as a pair.
  ///
  /// x must have exactly the dims Time, Batch and In (`gru_input_dims`
  /// otherwise, at compile time), In of extent input_size() (`shape_error`
  /// naming In) and at least one step (`value_error`).
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x) {
    return run(x, std::optional<state_type>{});
  }

  /// @brief As above, from the state @p state, [Layers, Batch, Hidden]
  /// (`gru_state_dims` otherwise; its extents must be num_layers(), x's
  /// Batch and hidden_size(), `shape_error` naming the dim otherwise).
  template <class X, class S>
    requires((Expression<expr_t<X>> || is_ill_formed_v<X>) && (Expression<expr_t<S>> || is_ill_formed_v<S>))
  auto operator()(X const& x, S const& state) {
    if constexpr (rejects(detail::gru_state_diagnosis<Batch, Hidden, T, Backend, S>())) {
      return ill_formed{};
    } else {
      return checked<call::gru>(
          [&](auto const& x, auto const& state) {
            auto const st = dimtensor::eval(state);
            return run(x, std::optional<std::remove_cvref_t<decltype(st)>>(st));
          },
          x, state);
    }
  }

  /// @brief One step of the network, for decoding a token at a time: @p x
  /// is one step's input, [Batch, In] (no Time), @p state the state
  /// [Layers, Batch, Hidden]; returns the top layer's new state [Batch,
  /// Hidden] (the step's output) and the new state, as a pair.
  ///
  /// The same computation, parameters and gradients as `(*this)(x', state)`
  /// for x' = x with a Time of one step; x must have exactly the dims Batch
  /// and In (`gru_step_input_dims` otherwise).
  template <class X, class S>
    requires((Expression<expr_t<X>> || is_ill_formed_v<X>) && (Expression<expr_t<S>> || is_ill_formed_v<S>))
  auto step(X const& x, S const& state) {
    if constexpr (any_ill_formed_v<X, S>) {
      return ill_formed{};
    } else if constexpr (expr_t<X>::rank != 2 || !meta::contains_v<Batch, typename expr_t<X>::specs> ||
                         !meta::contains_v<In, typename expr_t<X>::specs>) {
      (void)diagnostic::fire<diagnostic::gru_step_input_dims<Time, Batch, In, typename expr_t<X>::specs>>;
      return ill_formed{};
    } else {
      auto [outputs, next] = (*this)(dimtensor::unsqueeze<Time, 0>(x), state);
      if constexpr (is_ill_formed_v<decltype(outputs)>) {
        return ill_formed{};
      } else {
        auto out = dimtensor::select<Time>(outputs, 0);
        return std::pair<decltype(out), decltype(next)>(std::move(out), std::move(next));
      }
    }
  }

  /// @brief Calls `f(key, parameter)` for each parameter under its PyTorch
  /// `state_dict` key, @p prefix first: `weight_ih_l0`, `weight_hh_l0`,
  /// `bias_ih_l0`, `bias_hh_l0`, then layer 1's, …  The protocol of
  /// nn/module.hpp.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    visit(*this, f, prefix);
  }
  /// As above, read-only.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    visit(*this, f, prefix);
  }

 private:
  template <class Self, class F>
  static void visit(Self& self, F& f, std::string const& prefix) {
    gru_layer<In, Hidden, T, Backend>::visit(self.first_layer, f, prefix, "_l0");
    for (std::size_t k = 0; k < self.upper_layers.size(); ++k) {
      gru_layer<Hidden, Hidden, T, Backend>::visit(self.upper_layers[k], f, prefix, "_l" + std::to_string(k + 1));
    }
  }

  static index_t checked_first(In input_size, Hidden num_hiddens, index_t num_layers) {
    if (input_size.value <= 0 || num_hiddens.value <= 0 || num_layers <= 0) {
      throw value_error("gru: extents and the number of layers must be positive, got " +
                        std::string(dim_name_v<In>) + " " + std::to_string(input_size.value) + ", " +
                        std::string(dim_name_v<Hidden>) + " " + std::to_string(num_hiddens.value) + " and " +
                        std::to_string(num_layers) + " layers");
    }
    return input_size.value;
  }

  template <class X, class H>
  auto run(X const& x, std::optional<H> const& h0) {
    if constexpr (rejects(detail::gru_input_diagnosis<Time, Batch, In, T, Backend, X>())) {
      return ill_formed{};
    } else {
      return checked<call::gru>(
          [&](auto const& x) {
            using seq_t = basic_tensor<Backend, T, Time, Batch, Hidden>;
            auto const xt = dimtensor::eval(x);
            using xt_t = std::remove_cvref_t<decltype(xt)>;
            index_t const in = xt.template extent<In>();
            if (in != input_size()) {
              throw_extent_mismatch("gru", dim_name_v<In>, in, input_size(), "input",
                                                       "weight_ih_l0");
            }
            index_t const steps = xt.template extent<Time>();
            if (steps == 0)
              throw value_error("gru: the input has no steps (" + std::string(dim_name_v<Time>) + " is 0)");
            if (h0) {
              auto const& e = h0->extents();
              index_t const want[3] = {num_layers(), static_cast<index_t>(xt.template extent<Batch>()), hidden_size()};
              char const* what[3] = {"given state", "given state", "given state"};
              for (std::size_t i = 0; i < 3; ++i) {
                if (e[i] != want[i]) {
                  throw_extent_mismatch(
                      "gru", meta::names_of<typename state_type::specs>::value[i], e[i], want[i], what[i],
                      i == 1 ? "input" : "module");
                }
              }
            }
            std::vector<seq_t> ys;
            ys.reserve(static_cast<std::size_t>(num_layers()));
            ys.push_back(detail::gru_layer_forward<Time, Batch, Hidden>(first_layer, xt, h0, 0));
            for (std::size_t k = 0; k < upper_layers.size(); ++k) {
              seq_t const below = ys.back();
              seq_t const in_k = dropout.is_training() && dropout.p() > 0 ? seq_t(dropout(below)) : below;
              ys.push_back(detail::gru_layer_forward<Time, Batch, Hidden>(upper_layers[k], in_k, h0,
                                                                          static_cast<index_t>(k + 1)));
            }
            auto state = detail::gru_final_state(ys);
            using target = boost::mp11::mp_replace<meta::tags_of<typename xt_t::specs>, In, Hidden>;
            if constexpr (std::is_same_v<target, dims<Time, Batch, Hidden>>) {
              return std::pair<seq_t, state_type>(ys.back(), std::move(state));
            } else {
              auto out = detail::permute_to<target>::apply(ys.back());
              return std::pair<decltype(out), state_type>(std::move(out), std::move(state));
            }
          },
          x);
    }
  }
};

}  // namespace nn
}  // namespace dimtensor

/// @cond INTERNAL
// The GRU layer's passes, back-propagation through time and nodes, compiled
// once into dimtensor::runtime for the CPU's float and double
// (src/instances/gru.cpp defines them): a file calls those copies (config.hpp,
// DIMTENSOR_EXTERN_INSTANCES).
#define DIMTENSOR_GRU_INSTANCES(how, B, T)                                                                                \
  how nn::detail::gru_saved<T, B> nn::detail::gru_layer_pass<T, B>(nn::detail::gru_weights<T, B> const&,                  \
                                                                   nn::detail::gru_input<T, B> const&,                    \
                                                                   std::optional<nn::detail::gru_state<T, B>> const&,     \
                                                                   index_t);                                              \
  how class nn::detail::gru_layer_node<T, B>;                                                                             \
  how std::pair<nn::detail::gru_seq<T, B>, std::shared_ptr<autograd::node>> nn::detail::gru_layer_run<T, B>(              \
      nn::detail::gru_weights<T, B> const&, nn::detail::gru_input<T, B> const&, std::shared_ptr<autograd::tensor_state>,  \
      std::optional<nn::detail::gru_state<T, B>> const&, std::shared_ptr<autograd::tensor_state>, index_t, bool);         \
  how class nn::detail::gru_final_node<T, B>;

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_GRU_INSTANCES)
}  // namespace dimtensor
/// @endcond
