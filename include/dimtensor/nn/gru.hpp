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
/// weights' gradients; only h·W_hhᵀ and its transpose run per step.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::gru<Time, Batch, In, Hidden>::operator()`.
struct gru {};
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
    } else if constexpr (dimtensor::detail::rank_v<specs> != 3 || !dimtensor::detail::contains_v<Time, specs> ||
                         !dimtensor::detail::contains_v<Batch, specs> || !dimtensor::detail::contains_v<In, specs>) {
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
    } else if constexpr (!std::is_same_v<dimtensor::detail::tags_of<specs>, dims<Layers, Batch, Hidden>>) {
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

/// What one GRU layer keeps of its forward pass for the backward one.
template <class Time, class Batch, class Hidden, class D, class T, class Backend>
struct gru_saved {
  /// The layer's input, time-major and contiguous.
  basic_tensor<Backend, T, Time, Batch, D> xs;
  /// hs[0] the initial state, hs[t + 1] the state after step t.
  basic_tensor<Backend, T, Time, Batch, Hidden> hs;
  /// The gates r and z, the candidate n and W_hn h + b_hn of every step.
  basic_tensor<Backend, T, Time, Batch, Hidden> r, z, n, hn;
};

/// The forward pass of one GRU layer over a whole sequence, unrecorded.
template <class Time, class Batch, class Hidden, class D, class T, class Backend, class X, class H>
gru_saved<Time, Batch, Hidden, D, T, Backend> gru_layer_pass(gru_layer<D, Hidden, T, Backend> const& p, X const& x,
                                                             std::optional<H> const& h0, index_t layer) {
  using seq_t = basic_tensor<Backend, T, Time, Batch, Hidden>;
  using step_t = basic_tensor<Backend, T, Batch, Hidden>;
  using gates_t = basic_tensor<Backend, T, Time, Batch, Gates>;
  using step_gates_t = basic_tensor<Backend, T, Batch, Gates>;
  using input_t = basic_tensor<Backend, T, Time, Batch, D>;

  autograd::no_grad const guard;
  auto const tm = dimtensor::permute<Time, Batch, D>(x.detach()).contiguous();
  gru_saved<Time, Batch, Hidden, D, T, Backend> s{input_t(tm.storage(), tm.data(), tm.extents(), tm.strides()), {}, {}, {}, {},
                                         {}};
  index_t const steps = s.xs.extents()[0];
  index_t const batch = s.xs.extents()[1];
  index_t const hidden = p.weight_hh.extents()[1];
  index_t const bh = batch * hidden;

  // The input projections of every step, in one contraction.
  gates_t const g(dimtensor::detail::contract_tensors<D>("gru", s.xs, p.weight_ih) + p.bias_ih);

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
    step_gates_t const gh(dimtensor::detail::contract_tensors<Hidden>("gru", hp, p.weight_hh) + p.bias_hh);
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

/// @brief Back-propagation through time for one layer: from @p g, the
/// gradient of the layer's outputs, hands gradients to the input @p x,
/// the parameters @p p and the initial state @p h0 (entry @p layer).
template <class Time, class Batch, class Hidden, class D, class T, class Backend, class X, class H>
void gru_layer_backward(basic_tensor<Backend, T, Time, Batch, Hidden> const& g,
                        gru_saved<Time, Batch, Hidden, D, T, Backend> const& s, gru_layer<D, Hidden, T, Backend> const& p,
                        X const& x, std::optional<H> const& h0, index_t layer) {
  using step_t = basic_tensor<Backend, T, Batch, Hidden>;
  using gates_t = basic_tensor<Backend, T, Time, Batch, Gates>;
  using step_gates_t = basic_tensor<Backend, T, Batch, Gates>;
  using rows_gates_t = basic_tensor<Backend, T, TimeBatch, Gates>;

  index_t const steps = s.r.extents()[0];
  index_t const batch = s.r.extents()[1];
  index_t const hidden = s.r.extents()[2];
  index_t const bh = batch * hidden;
  typename step_t::extents_type const se{batch, hidden};
  typename step_t::extents_type const dense{hidden, 1};
  typename step_t::extents_type const gate_str{3 * hidden, 1};
  typename gates_t::extents_type const gates_ext{steps, batch, 3 * hidden};

  auto const gc = g.contiguous();
  // The gradients of the pre-activations: of x·W_ihᵀ + b_ih and of h·W_hhᵀ + b_hh.
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
    step_t const r = at(s.r), z = at(s.z), n = at(s.n), hn = at(s.hn);
    step_t const hp = view_of<step_t>(s.hs, o, se, dense);
    dh = step_t(dh + at(gc));
    step_t dr = gate(dgx, 0), dz = gate(dgx, 1), dn = gate(dgx, 2);
    dz.assign(dh * (hp - n) * z * (T(1) - z));
    dn.assign(dh * (T(1) - z) * (T(1) - n * n));
    dr.assign(dn * hn * r * (T(1) - r));
    gate(dgh, 0).assign(dr);
    gate(dgh, 1).assign(dz);
    gate(dgh, 2).assign(dn * r);
    step_gates_t const dgh_t = view_of<step_gates_t>(dgh, go, {batch, 3 * hidden}, {3 * hidden, 1});
    dh = step_t(dh * z + dimtensor::detail::contract_tensors<Gates>("gru", dgh_t, p.weight_hh));
  }

  index_t const rows = steps * batch;
  rows_gates_t const dgx_rows(dgx.storage(), dgx.data(), {rows, 3 * hidden}, {3 * hidden, 1});
  rows_gates_t const dgh_rows(dgh.storage(), dgh.data(), {rows, 3 * hidden}, {3 * hidden, 1});
  if (p.weight_ih.requires_grad()) {
    basic_tensor<Backend, T, TimeBatch, D> const x_rows(s.xs.storage(), s.xs.data(), {rows, s.xs.extents()[2]},
                                         {s.xs.extents()[2], 1});
    autograd::propagate(p.weight_ih, dimtensor::detail::contract_tensors<TimeBatch>("gru", dgx_rows, x_rows));
  }
  if (p.weight_hh.requires_grad()) {
    basic_tensor<Backend, T, TimeBatch, Hidden> const h_rows(s.hs.storage(), s.hs.data(), {rows, hidden}, {hidden, 1});
    autograd::propagate(p.weight_hh, dimtensor::detail::contract_tensors<TimeBatch>("gru", dgh_rows, h_rows));
  }
  autograd::propagate(p.bias_ih, dgx);  // summed over Time and Batch
  autograd::propagate(p.bias_hh, dgh);
  if (autograd::any_requires_grad(x)) {
    auto const dx = dimtensor::detail::contract_tensors<Gates>("gru", dgx, p.weight_ih);  // [Time, Batch, D]
    autograd::propagate(x, permute_to<dimtensor::detail::tags_of<typename X::specs>>::apply(dx));
  }
  if (h0 && h0->requires_grad()) {
    H dh0(h0->extents());
    view_of<step_t>(dh0, layer * bh, se, dense).assign(dh);
    autograd::propagate(*h0, dh0);
  }
}

/// @brief One GRU layer over a whole sequence, recorded as one operation:
/// [Time, Batch, Hidden], the state after each step.
///
/// @p x has the dims Time, Batch and D in any order.  @p h0 is the
/// network's initial state [Layers, Batch, Hidden] (entry @p layer is this
/// layer's), or empty for zeros.
template <class Time, class Batch, class Hidden, class D, class T, class Backend, class X, class H>
basic_tensor<Backend, T, Time, Batch, Hidden> gru_layer_forward(gru_layer<D, Hidden, T, Backend> const& p, X const& x,
                                                                std::optional<H> const& h0, index_t layer) {
  using seq_t = basic_tensor<Backend, T, Time, Batch, Hidden>;
  auto saved = gru_layer_pass<Time, Batch, Hidden>(p, x, h0, layer);
  auto const& ext = saved.r.extents();
  seq_t out(saved.hs.storage(), saved.hs.data() + ext[1] * ext[2], ext, saved.r.strides());
  bool const state_needs = h0 && h0->requires_grad();
  if (autograd::is_grad_enabled() &&
      (autograd::any_requires_grad(x) || p.weight_ih.requires_grad() || p.weight_hh.requires_grad() ||
       p.bias_ih.requires_grad() || p.bias_hh.requires_grad() || state_needs)) {
    auto rule = [s = std::move(saved), p, x, h0, layer](seq_t const& g) {
      gru_layer_backward(g, s, p, x, h0, layer);
    };
    auto node = autograd::make_rule_node<seq_t>("gru", out.extents(), std::move(rule));
    autograd::detail::collect_states(node->inputs, x);
    autograd::detail::collect_states(node->inputs, p.weight_ih);
    autograd::detail::collect_states(node->inputs, p.weight_hh);
    autograd::detail::collect_states(node->inputs, p.bias_ih);
    autograd::detail::collect_states(node->inputs, p.bias_hh);
    if (state_needs) autograd::detail::collect_states(node->inputs, *h0);
    out.attach_grad_fn(std::move(node));
  }
  return out;
}

/// @brief The last step of each layer's outputs @p ys, stacked:
/// [Layers, Batch, Hidden], recorded (its gradient goes to each layer's last step).
template <class Time, class Batch, class Hidden, class T, class Backend>
basic_tensor<Backend, T, Layers, Batch, Hidden> gru_final_state(
    std::vector<basic_tensor<Backend, T, Time, Batch, Hidden>> const& ys) {
  using seq_t = basic_tensor<Backend, T, Time, Batch, Hidden>;
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
    auto rule = [ys, steps, bh, se, dense](state_t const& g) {
      auto const gc = g.contiguous();
      for (std::size_t l = 0; l < ys.size(); ++l) {
        if (!ys[l].requires_grad()) continue;
        seq_t dy(ys[l].extents());
        view_of<step_t>(dy, (steps - 1) * bh, se, dense).assign(view_of<step_t>(gc, static_cast<index_t>(l) * bh, se, dense));
        autograd::propagate(ys[l], dy);
      }
    };
    auto node = autograd::make_rule_node<state_t>("gru", out.extents(), std::move(rule));
    for (auto const& y : ys) autograd::detail::collect_states(node->inputs, y);
    out.attach_grad_fn(std::move(node));
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
class gru {
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
  gru& train(bool on = true) noexcept {
    dropout.train(on);
    return *this;
  }
  /// Evaluation mode: no dropout; returns *this.
  gru& eval() noexcept { return train(false); }
  /// Whether in training mode.
  bool is_training() const noexcept { return dropout.is_training(); }

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
    using diagnosis = typename decltype(detail::gru_state_diagnosis<Batch, Hidden, T, Backend, S>())::type;
    if constexpr (!std::is_void_v<diagnosis>) {
      diagnostic::fire<diagnosis>();  // the compile error, unless the state was ill_formed
      return ill_formed{};
    } else {
      auto const st = dimtensor::eval(state);
      return run(x, std::optional<std::remove_cvref_t<decltype(st)>>(st));
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
    using diagnosis = typename decltype(detail::gru_input_diagnosis<Time, Batch, In, T, Backend, X>())::type;
    if constexpr (!std::is_void_v<diagnosis>) {
      diagnostic::fire<diagnosis>();  // the compile error, unless x was ill_formed
      return ill_formed{};
    } else {
      using seq_t = basic_tensor<Backend, T, Time, Batch, Hidden>;
      auto const xt = dimtensor::eval(x);
      using xt_t = std::remove_cvref_t<decltype(xt)>;
      index_t const in = xt.template extent<In>();
      if (in != input_size()) {
        dimtensor::detail::throw_extent_mismatch("gru", dim_name_v<In>, in, input_size(), "input", "weight_ih_l0");
      }
      index_t const steps = xt.template extent<Time>();
      if (steps == 0) throw value_error("gru: the input has no steps (" + std::string(dim_name_v<Time>) + " is 0)");
      if (h0) {
        auto const& e = h0->extents();
        index_t const want[3] = {num_layers(), static_cast<index_t>(xt.template extent<Batch>()), hidden_size()};
        char const* what[3] = {"given state", "given state", "given state"};
        for (std::size_t i = 0; i < 3; ++i) {
          if (e[i] != want[i]) {
            dimtensor::detail::throw_extent_mismatch("gru", dimtensor::detail::names_of<typename state_type::specs>::value[i],
                                                     e[i], want[i], what[i],
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
      using target = boost::mp11::mp_replace<dimtensor::detail::tags_of<typename xt_t::specs>, In, Hidden>;
      if constexpr (std::is_same_v<target, dims<Time, Batch, Hidden>>) {
        return std::pair<seq_t, state_type>(ys.back(), std::move(state));
      } else {
        auto out = detail::permute_to<target>::apply(ys.back());
        return std::pair<decltype(out), state_type>(std::move(out), std::move(state));
      }
    }
  }
};

}  // namespace nn
}  // namespace dimtensor
