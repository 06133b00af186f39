#pragma once
/// @file
/// @brief Nadaraya–Watson kernel regression as attention pooling, the
/// chapter's first section: `nadaraya_watson_weights<KV>` (Gaussian kernel)
/// and `nadaraya_watson<KV>` (the pooled prediction).
///
///     queries [Queries]   keys [KV] or [Queries, KV]   values [KV] or [Queries, KV]
///     weights = softmax<KV>(-((queries - keys) · w)² / 2)       [Queries, KV]
///     output  = Σ_KV weights · values                           [Queries]
///
/// With w = 1 this is d2l's non-parametric pooling
/// (`softmax(-(X_repeat - x_train)**2 / 2, dim=1)`, then `matmul` with
/// y_train); with a learned w it is `NWKernelRegression`'s forward pass.

#include <type_traits>

#include <boost/mp11/list.hpp>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/softmax.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn {

/// @brief The Gaussian-kernel attention weights of @p queries over @p keys
/// along KV: softmax<KV>(-((q - k)·w)² / 2).
///
/// queries must not have KV (`attention_operand_has_foreign_dim`), keys
/// must (`attention_operand_lacks_dim`); the queries get KV as their last
/// dim (extent 1) and broadcast against the keys from the right, so keys
/// are [KV] (shared by all queries) or [Queries, KV] (one row per query).
/// The arithmetic is d2l's, in its order, so the numbers are PyTorch's.
///
/// The kernel width @p w is a number, or a tensor broadcast against the
/// differences (d2l's `NWKernelRegression` learns it: a rank-0 or
/// one-element tensor that requires gradients).  Differentiable in the
/// queries, keys and a tensor w.
template <class KV, class Q, class K, class W = double>
  requires(std::is_arithmetic_v<W> || is_tensor_v<W>)
auto nadaraya_watson_weights(Q const& queries, K const& keys, W const& w = 1) {
  namespace mp = boost::mp11;
  if constexpr (any_ill_formed_v<Q, K>) {
    return ill_formed{};
  } else {
    using call_t = call::nadaraya_watson;
    if constexpr (rejects(first_diagnosis(
                      detail::operand_diagnosis<call_t, operand::queries, expr_t<Q>, mp::mp_list<>, mp::mp_list<KV>>(),
                      detail::operand_diagnosis<call_t, operand::keys, expr_t<K>, mp::mp_list<KV>, mp::mp_list<>>()))) {
      return ill_formed{};
    } else {
      using T = typename expr_t<Q>::value_type;
      auto const difference = unsqueeze<KV, expr_t<Q>::rank>(queries) - keys;
      if constexpr (is_tensor_v<W>) {
        return softmax<KV>(-square(difference * w) / static_cast<T>(2));
      } else {
        if (w == 1) return softmax<KV>(-square(difference) / static_cast<T>(2));
        return softmax<KV>(-square(difference * static_cast<T>(w)) / static_cast<T>(2));
      }
    }
  }
}

/// @brief Nadaraya–Watson pooling: the values averaged with
/// `nadaraya_watson_weights<KV>(queries, keys, w)` as weights.
///
/// @code
/// auto y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train);   // [Test]
/// @endcode
///
/// values must have KV (`attention_operand_lacks_dim`).  @p w as for
/// `nadaraya_watson_weights`; differentiable in every tensor operand.
template <class KV, class Q, class K, class V, class W = double>
  requires(std::is_arithmetic_v<W> || is_tensor_v<W>)
auto nadaraya_watson(Q const& queries, K const& keys, V const& values, W const& w = 1) {
  namespace mp = boost::mp11;
  if constexpr (is_ill_formed_v<V>) {
    return ill_formed{};
  } else {
    if constexpr (rejects(detail::operand_diagnosis<call::nadaraya_watson, operand::values, expr_t<V>, mp::mp_list<KV>,
                                                    mp::mp_list<>>())) {
      return ill_formed{};
    } else {
      return contract<KV>(nadaraya_watson_weights<KV>(queries, keys, w), values);
    }
  }
}

}  // namespace dimtensor::nn
