#pragma once
/// @file
/// @brief Losses: `nn::mse_loss` (PyTorch's `nn.MSELoss`),
/// `nn::cross_entropy<Class>` (`F.cross_entropy` along a named class dim)
/// and `nn::masked_softmax_ce_loss<Steps, Vocab>` (d2l's
/// `MaskedSoftmaxCELoss`).
///
/// Every loss is differentiable with respect to its predictions (and
/// mse_loss with respect to its target too).  The reduction is a tag:
/// `nn::reduction::none` keeps one loss per element (a tensor of the
/// elements' dims), `nn::reduction::mean` (the default) and
/// `nn::reduction::sum` give a rank-0 tensor.
///
/// @code
/// auto l = dt::nn::mse_loss(y_hat, y_train, dt::nn::reduction::none);   // [Train]
/// dt::sum(l).backward();
/// auto ce = dt::nn::cross_entropy<Vocab>(logits, labels);              // logits [Batch, Steps, Vocab], labels [Batch, Steps]
/// @endcode

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

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
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::mse_loss`.
struct mse_loss : named<"mse_loss"> {};
/// `nn::cross_entropy`.
struct cross_entropy : named<"cross_entropy"> {};
/// `nn::masked_softmax_ce_loss`.
struct masked_softmax_ce_loss : named<"masked_softmax_ce_loss"> {};
}  // namespace call

namespace diagnostic {

/// A loss given a prediction of dims @p PredictionDims and a target of other dims.
template <class Call, class PredictionDims, class TargetDims>
struct loss_operands_differ {
  static_assert(always_false<Call, PredictionDims, TargetDims>,
                "dimtensor: a loss compares a prediction and a target of the same dims in the same order "
                "(see loss_operands_differ<call, dims of the prediction, dims of the target> above); "
                "transpose, permute or rename one of them first");
};

/// Class labels that are not integers.
template <class Call, class Element>
struct labels_not_integer {
  static_assert(always_false<Call, Element>,
                "dimtensor: class labels must hold std::int64_t (or std::int32_t) class indices; convert them "
                "with cast<std::int64_t>(labels) (see labels_not_integer<call, element type of the labels> above)");
};

/// Labels whose dims are not the logits' dims without the class dim.
template <class Call, class LabelDims, class LogitDimsWithoutClass>
struct labels_dims_differ {
  static_assert(always_false<Call, LabelDims, LogitDimsWithoutClass>,
                "dimtensor: the labels must have the logits' dims without the class dim, in the same order "
                "(see labels_dims_differ<call, dims of the labels, dims of the logits without the class dim> "
                "above)");
};

}  // namespace diagnostic

namespace nn {

/// @brief How a loss reduces its per-element losses: `reduction::none`,
/// `reduction::mean` (the default) or `reduction::sum` (PyTorch's
/// `reduction='none' | 'mean' | 'sum'`).
namespace reduction {
/// The type of `reduction::none`.
struct none_t {};
/// The type of `reduction::mean`.
struct mean_t {};
/// The type of `reduction::sum`.
struct sum_t {};
/// One loss per element: a tensor of the elements' dims.
inline constexpr none_t none{};
/// The mean of the per-element losses (rank 0).
inline constexpr mean_t mean{};
/// The sum of the per-element losses (rank 0).
inline constexpr sum_t sum{};
}  // namespace reduction

/// One of the reduction tags.
template <class R>
concept Reduction = std::is_same_v<R, reduction::none_t> || std::is_same_v<R, reduction::mean_t> ||
                    std::is_same_v<R, reduction::sum_t>;

namespace detail {

namespace dd = dimtensor::detail;

/// Writes the reduced loss: the double sum @p total (one element), divided
/// by @p count for a mean, rounded to T (on any backend).
template <class T>
struct finish_reduced_loss {
  T* out;              ///< The one-element result.
  double const* total; ///< The sum of the per-position losses.
  double count;        ///< The number of positions.
  bool is_mean;        ///< Whether to divide by count.

  /// Writes out[0] (i is 0).
  DIMTENSOR_HOST_DEVICE void operator()(index_t) const {
    out[0] = static_cast<T>(is_mean ? total[0] / count : total[0]);
  }
};

/// What is wrong with mse_loss(P, T): a diagnostic class (not yet
/// instantiated), `ill_formed` when an argument already is, or void.
template <class P, class T>
constexpr auto mse_loss_diagnosis() {
  if constexpr (any_ill_formed_v<P, T>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!std::is_same_v<typename P::backend, typename T::backend>) {
    return std::type_identity<diagnostic::backends_differ<call::mse_loss, typename P::backend, typename T::backend>>{};
  } else if constexpr (!std::is_same_v<typename P::value_type, typename T::value_type>) {
    return std::type_identity<
        diagnostic::element_types_differ<call::mse_loss, typename P::value_type, typename T::value_type>>{};
  } else if constexpr (!std::is_floating_point_v<typename P::value_type>) {
    return std::type_identity<diagnostic::needs_floating_point<call::mse_loss, typename P::value_type>>{};
  } else if constexpr (!dd::same_tags_v<typename P::specs, typename T::specs>) {
    return std::type_identity<diagnostic::loss_operands_differ<call::mse_loss, typename P::specs, typename T::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// What is wrong with cross-entropy along Class of logits X against labels
/// Lab, named as @p Call: a diagnostic class, `ill_formed`, or void.
template <class Call, class Class, class X, class Lab>
constexpr auto cross_entropy_diagnosis() {
  if constexpr (any_ill_formed_v<X, Lab>) {
    return std::type_identity<ill_formed>{};
  } else {
    using S = typename X::specs;
    using LS = typename Lab::specs;
    using LT = typename Lab::value_type;
    using rest = dd::remove_dim<Class, S>;
    if constexpr (!std::is_same_v<typename X::backend, typename Lab::backend>) {
      return std::type_identity<diagnostic::backends_differ<Call, typename X::backend, typename Lab::backend>>{};
    } else if constexpr (!std::is_floating_point_v<typename X::value_type>) {
      return std::type_identity<diagnostic::needs_floating_point<Call, typename X::value_type>>{};
    } else if constexpr (!dd::contains_v<Class, S>) {
      return std::type_identity<diagnostic::not_a_dimension_of<Call, Class, S>>{};
    } else if constexpr (!std::is_same_v<LT, std::int64_t> && !std::is_same_v<LT, std::int32_t>) {
      return std::type_identity<diagnostic::labels_not_integer<Call, LT>>{};
    } else if constexpr (!dd::same_tags_v<LS, rest>) {
      return std::type_identity<diagnostic::labels_dims_differ<Call, LS, rest>>{};
    } else if constexpr (dd::first_static_mismatch<LS, rest>() < dd::rank_v<LS>) {
      constexpr std::size_t bad = dd::first_static_mismatch<LS, rest>();
      return std::type_identity<diagnostic::extent_mismatch<
          Call, dim_of<dd::spec_at<LS, bad>>,
          diagnostic::extents<static_extent_v<dd::spec_at<rest, bad>>, static_extent_v<dd::spec_at<LS, bad>>>>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

/// @brief The node of a cross-entropy: (softmax - one-hot) times the
/// gradient of each position's loss (read with step @p g_step: 1 per
/// position, 0 for a reduced loss), times @p scale (1/count for a mean).
template <class B, class T>
class cross_entropy_node final : public autograd::node {
 public:
  /// What the rule reads, kept alive with the node.
  struct saved {
    std::shared_ptr<void const> in_keep;
    T const* in;
    std::shared_ptr<void const> labels_keep;
    std::int64_t const* labels;
    std::shared_ptr<void const> shift_keep;
    T const* shift;
    std::shared_ptr<void const> logs_keep;
    T const* logs;
    kernel::lines s;
    index_t g_step;
    T scale;
  };

  /// The node of the logits @p source, of @p size elements.
  cross_entropy_node(std::shared_ptr<autograd::tensor_state> source, index_t size, saved keep)
      : node("cross_entropy"), size_(size), saved_(std::move(keep)) {
    inputs.push_back(std::move(source));
  }

  /// Computes the logits' gradient and adds it.
  void backward(autograd::tensor_state const& out) override {
    auto grad = std::make_shared<typename B::template storage<T>>(size_);
    saved const& k = saved_;
    backend_cross_entropy_backward(B{}, k.in, k.labels, k.shift, k.logs, static_cast<T const*>(out.grad_data), k.g_step,
                                   k.scale, grad->data(), k.s.outer, k.s.n, k.s.inner);
    autograd::add_gradient<B, T>(*inputs.front(), std::move(grad), size_);
  }

 private:
  index_t size_;
  saved saved_;
};

/// Cross-entropy along Class, checks done; @p name names the call in run-time errors.
template <class Class, class R, class X, class Lab>
auto cross_entropy_unchecked(std::string_view name, X const& logits, Lab const& labels) {
  using S = typename X::specs;
  using LS = typename Lab::specs;
  using B = typename X::backend;
  using T = typename X::value_type;
  using rest = dd::remove_dim<Class, S>;
  using rows_t = tensor_with_dims<B, T, rest>;
  constexpr std::size_t I = dd::index_of_v<Class, S>;
  constexpr std::size_t RL = dd::rank_v<LS>;
  auto const in = eval(logits).contiguous();
  auto const lab = eval(labels).contiguous();
  auto const& xe = in.extents();
  auto const& le = lab.extents();
  for (std::size_t k = 0; k < RL; ++k) {
    std::size_t const at = k < I ? k : k + 1;
    if (le[k] != xe[at]) dd::throw_extent_mismatch(name, dd::names_of<LS>::value[k], xe[at], le[k], "logits", "labels");
  }
  index_t const classes = xe[I];
  index_t const bad = backend_first_out_of_range(B{}, lab.data(), lab.size(), classes);
  if (bad >= 0) {
    typename std::remove_cvref_t<decltype(lab)>::value_type label{};
    backend_copy_to_host(B{}, &label, lab.data() + bad, 1);
    std::array<index_t, RL> where{};
    index_t rem = bad;
    for (std::size_t k = RL; k-- > 0;) {
      where[k] = rem % le[k];
      rem /= le[k];
    }
    throw value_error(std::string(name) + ": label " + std::to_string(static_cast<index_t>(label)) +
                      " at labels" + dd::shape_string<LS>(where) + " is out of range for the class dimension " +
                      std::string(dim_name_v<Class>) + " of extent " + std::to_string(classes) +
                      " (a label must lie in [0, " + std::to_string(classes) + "))");
  }
  kernel::lines const s = kernel::lines_along<I>(xe);
  rows_t loss(uninitialized, dd::reduced_extents<I, false, rows_t::rank>(xe));
  rows_t shift(uninitialized, loss.extents());
  rows_t logs(uninitialized, loss.extents());
  backend_cross_entropy(B{}, in.data(), lab.data(), loss.data(), shift.data(), logs.data(), s.outer, s.n, s.inner);

  // The rule: (softmax - one-hot) times the gradient of each position's loss.
  auto const record = [&](auto& result, index_t g_step, T scale) {
    auto const wide = dd::as_int64(lab);
    typename cross_entropy_node<B, T>::saved keep{in.storage(), in.data(),     wide.storage(), wide.data(), shift.storage(),
                                                  shift.data(), logs.storage(), logs.data(),    s,           g_step,
                                                  scale};
    result.attach_grad_fn(std::make_shared<cross_entropy_node<B, T>>(in.grad_state(), in.size(), std::move(keep)));
  };
  if constexpr (std::is_same_v<R, reduction::none_t>) {
    if (autograd::should_record(in)) {
      record(loss, 1, T(1));
    }
    return loss;
  } else {
    using out_t = basic_tensor<B, T>;
    index_t const count = loss.size();
    constexpr bool is_mean = std::is_same_v<R, reduction::mean_t>;
    // The positions' losses add up in double on the backend, as sum's do.
    basic_tensor<B, double> total(uninitialized, {});
    if (count > 0) {
      backend_sum(B{}, static_cast<T const*>(loss.data()), total.data(), 1, count, 1);
    } else {
      total.fill(0.0);
    }
    out_t out(uninitialized, {});
    // A mean over no positions is NaN, as PyTorch's.
    backend_for_each(B{}, 1,
                     finish_reduced_loss<T>{out.data(), total.data(), static_cast<double>(count), is_mean});
    if (autograd::should_record(in)) {
      T const scale = is_mean ? static_cast<T>(1.0 / static_cast<double>(count)) : T(1);
      record(out, 0, scale);
    }
    return out;
  }
}

}  // namespace detail

/// @brief The squared error between @p prediction and @p target
/// (PyTorch's `nn.MSELoss(reduction=...)`): (prediction − target)²,
/// reduced by @p r (`reduction::mean` by default).
///
/// Both must have the same dims in the same order
/// (`loss_operands_differ<call::mse_loss, …>` otherwise) and the same
/// floating-point element type; dynamic extents that differ are a
/// `shape_error` naming the call first ("mse_loss: target: extent mismatch
/// for dimension …").  Differentiable with respect to both.
template <Operand P, Operand Tg, Reduction R = reduction::mean_t>
auto mse_loss(P const& prediction, Tg const& target, R r = {}) {
  (void)r;
  if constexpr (rejects(detail::mse_loss_diagnosis<expr_t<P>, expr_t<Tg>>())) {
    return ill_formed{};
  } else {
    return checked<call::mse_loss>(
        [&](auto const& prediction, auto const& target) {
          check_operand_extents<meta::tags_of<typename expr_t<P>::specs>>(
              "mse_loss", prediction, "prediction", target, "target");
          auto const squared = square(prediction - target);
          if constexpr (std::is_same_v<R, reduction::none_t>) {
            return eval(squared);
          } else if constexpr (std::is_same_v<R, reduction::mean_t>) {
            return dimtensor::mean(squared);
          } else {
            return dimtensor::sum(squared);
          }
        },
        prediction, target);
  }
}

/// @brief Cross-entropy of @p logits along the class dim Class against
/// integer class @p labels (PyTorch's `F.cross_entropy`, with the classes
/// named instead of placed second): −log softmax<Class>(logits) at each
/// label, reduced by @p r (`reduction::mean` by default, over every
/// position of the labels).
///
/// The labels are an int64 (or int32) tensor of the logits' dims without
/// Class, in the same order (`labels_dims_differ` otherwise); a label
/// outside [0, extent of Class) is a `value_error` naming it and its
/// position.  Computed in one pass (log-sum-exp, then the label's logit),
/// never as log(softmax(x)), so large logits are safe.  Differentiable with
/// respect to the logits: the gradient is (softmax − one-hot) times the
/// loss's gradient.  PyTorch's `ignore_index`, class weights and label
/// smoothing are not offered.
template <class Class, Operand X, Operand Lab,
          Reduction R = reduction::mean_t>
auto cross_entropy(X const& logits, Lab const& labels, R r = {}) {
  (void)r;
  if constexpr (rejects(detail::cross_entropy_diagnosis<call::cross_entropy, Class, expr_t<X>, expr_t<Lab>>())) {
    return ill_formed{};
  } else {
    return checked<call::cross_entropy>(
        [&](auto const& logits, auto const& labels) {
          return detail::cross_entropy_unchecked<Class, R>("cross_entropy", logits, labels);
        },
        logits, labels);
  }
}

/// @brief d2l's `MaskedSoftmaxCELoss` along named dims: the cross-entropy
/// of @p prediction along Vocab against @p label, with the positions at or
/// beyond each sequence's valid length along Steps weighted 0, averaged
/// over Steps.
///
/// For d2l's pred [Batch, Steps, Vocab], label [Batch, Steps] and
/// valid_len [Batch], the result is [Batch]:
///
///     weights = sequence_mask<Steps>(ones like label, valid_len)
///     mean<Steps>(cross_entropy<Vocab>(pred, label, reduction::none) * weights)
///
/// The dims are checked as cross_entropy's and sequence_mask's are, under
/// `call::masked_softmax_ce_loss`: label must be prediction's dims without
/// Vocab, Steps a dim of label, and valid_len's dims a leading part of the
/// label's dims without Steps.  Differentiable with respect to the prediction.
template <class Steps, class Vocab, Operand P, Operand Lab,
          Operand VL>
auto masked_softmax_ce_loss(P const& prediction, Lab const& label, VL const& valid_len) {
  using call_t = call::masked_softmax_ce_loss;
  auto const diagnose = [] {
    if constexpr (any_ill_formed_v<P, Lab, VL>) {
      return std::type_identity<ill_formed>{};
    } else {
      using LS = typename expr_t<Lab>::specs;
      using weights_t = tensor_with_dims<typename expr_t<P>::backend, typename expr_t<P>::value_type, LS>;
      if constexpr (!meta::contains_v<Steps, LS>) {
        return first_diagnosis(detail::cross_entropy_diagnosis<call_t, Vocab, expr_t<P>, expr_t<Lab>>(),
                               std::type_identity<diagnostic::not_a_dimension_of<call_t, Steps, LS>>{});
      } else {
        return first_diagnosis(detail::cross_entropy_diagnosis<call_t, Vocab, expr_t<P>, expr_t<Lab>>(),
                               valid_lens_diagnosis<call_t, Steps, weights_t, expr_t<VL>>());
      }
    }
  }();
  if constexpr (rejects(diagnose)) {
    return ill_formed{};
  } else {
    return checked<call_t>(
        [&](auto const& prediction, auto const& label, auto const& valid_len) {
          using weights_t = tensor_with_dims<typename expr_t<P>::backend, typename expr_t<P>::value_type,
                                             typename expr_t<Lab>::specs>;
          auto const lab = eval(label);
          check_operand_extents<meta::tags_of<typename expr_t<VL>::specs>>(
              "masked_softmax_ce_loss", lab, "label", valid_len, "valid_len");
          weights_t ones(uninitialized, lab.extents());
          ones.fill(1);
          auto const weights = sequence_mask<Steps>(ones, valid_len);
          auto const unweighted =
              detail::cross_entropy_unchecked<Vocab, reduction::none_t>("masked_softmax_ce_loss", prediction, lab);
          return dimtensor::mean<Steps>(unweighted * weights);
        },
        prediction, label, valid_len);
  }
}

}  // namespace nn
}  // namespace dimtensor
