#pragma once
/// @file
/// @brief `nn::attention_base`: what an attention module with its own
/// dropout and kept weights shares (the modes, `attention_weights<…>()`,
/// and the last step of the forward pass, from scores or from the
/// attention operation).

#include <algorithm>
#include <any>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <dimtensor/config.hpp>
#include <dimtensor/nn/attention/weights_store.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/attention.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/masked_softmax.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace nn {

/// @brief What an attention module with its own dropout and kept weights
/// shares (CRTP): `train()`/`eval()` (nn::module's, reaching the reflected
/// members), `attention_weights<Dims...>()`, and the last step of the
/// forward pass, from scores to output.
///
/// @p Derived has a public `nn::dropout dropout` among its
/// `BOOST_HANA_DEFINE_STRUCT` members and a
/// `static constexpr std::string_view module_name`, the name its errors
/// give; its forward pass ends with `this->template attend<KV>(scores,
/// values, valid_lens...)`.  @p T is the weights' element type and
/// @p Backend their backend (the module's).
template <class Derived, class T, class Backend = default_backend>
class attention_base : public module<Derived> {
 public:
  /// @brief The attention weights of this thread's last call, as the
  /// tensor type with dims @p Specs (e.g. `<Batch, Queries, KVPairs>`);
  /// `value_error` naming both shapes when the last call's weights had
  /// other dims, or when this thread has made no call yet.
  ///
  /// A handle to the weights (sharing their storage), which stays valid
  /// after the next call replaces the module's own.  It is detached: no
  /// gradient flows through it (differentiate the module's output instead).
  template <class... Specs>
  basic_tensor<Backend, T, Specs...> attention_weights() const {
    return weights_.template get<basic_tensor<Backend, T, Specs...>>(Derived::module_name);
  }

 protected:
  /// @brief d2l's `masked_softmax(scores, valid_lens)` over @p KV, kept as
  /// the module's weights, then the sum over KV of @p values weighted by
  /// them after dropout: `bmm(dropout(weights), values)`.
  template <class KV, class S, class V, class... L>
  auto attend(S const& scores, V const& values, L const&... valid_lens) {
    auto weights = masked_softmax<KV>(scores, valid_lens...);
    if constexpr (is_ill_formed_v<decltype(weights)>) {
      return ill_formed{};
    } else {
      // Kept outside the graph: the weights are for looking at, and a kept
      // handle that recorded its operation would hold the whole graph of
      // the call alive until the next one.
      weights_.set(weights.detach());
      return contract<KV>(static_cast<Derived&>(*this).dropout(weights), values);
    }
  }

  /// @brief Whether the output may come from the attention operation,
  /// which never forms the weights: the weights' dropout is off (eval
  /// mode, or p = 0).
  bool weights_unused() const noexcept {
    auto const& d = static_cast<Derived const&>(*this).dropout;
    return !d.is_training() || d.p() == 0;
  }

  /// @brief Keeps the weights of scaled dot-product attention over @p q
  /// and @p k (evaluated) under the masking @p m, to be computed when asked
  /// for: the same tensor `attend` keeps (masked softmax over KV of the
  /// scaled scores), from handles to @p q, @p k and the lengths.  For a
  /// module whose output comes from `scaled_dot_product_attention`, which
  /// never forms the weights.
  template <class Queries, class KV, class Feat, class Q, class K, class M>
  void keep_weights_lazily(Q const& q, K const& k, M const& m) {
    auto scores_of = [](Q const& qq, K const& kk) {
      index_t const d = qq.template extent<Feat>();
      return contract<Feat>(qq, kk) / static_cast<T>(std::sqrt(static_cast<double>(d)));
    };
    using weights_t = std::remove_cvref_t<decltype(masked_softmax<KV>(scores_of(q, k), m))>;
    weights_.template set_lazy<weights_t>([scores_of, qq = q.detach(), kk = k.detach(), m] {
      autograd::no_grad const no_grad;
      return masked_softmax<KV>(scores_of(qq, kk), m);
    });
  }

  /// The last call's attention weights.
  detail::weights_store weights_;
};

}  // namespace nn

}  // namespace dimtensor
