#pragma once
/// @file
/// @brief What the attention modules share: the dims they create (`Heads`,
/// `HeadFeat`, `BatchHeads`, `Score`), their compile-time diagnoses, and the
/// typed store behind every module's `attention_weights<Dims...>()`.

#include <any>
#include <string>
#include <type_traits>
#include <utility>

#include <dimtensor/config.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>

namespace dimtensor {

namespace nn {

/// The heads of multi-head attention, when they are a dim of their own.
DIMTENSOR_DIM(Heads);
/// The features of one head: num_hiddens / num_heads of them.
DIMTENSOR_DIM(HeadFeat);
/// Batch and heads merged into one dim (d2l's `batch_size * num_heads`).
DIMTENSOR_DIM(BatchHeads);
/// The one output of additive attention's `w_v`: [.., Hidden] → [.., Score=1].
DIMTENSOR_DIM(Score);

}  // namespace nn

namespace call {
/// `nn::dot_product_attention::operator()`.
struct dot_product_attention {};
/// `nn::additive_attention::operator()`.
struct additive_attention {};
/// `nn::multi_head_attention`.
struct multi_head_attention {};
/// `nn::transpose_qkv`.
struct transpose_qkv {};
/// `nn::transpose_output`.
struct transpose_output {};
/// `nn::nadaraya_watson`.
struct nadaraya_watson {};
}  // namespace call

/// Tags naming the operand of an attention call in diagnostics.
namespace operand {
/// The queries.
struct queries {};
/// The keys.
struct keys {};
/// The values.
struct values {};
}  // namespace operand

namespace diagnostic {

/// An attention call's operand (`operand::queries`, …) lacks the dim @p D
/// that the module names; the operand's dims are @p Dims.
template <class Call, class Operand, class D, class Dims>
struct attention_operand_lacks_dim {
  static_assert(always_false<Call, Operand, D, Dims>,
                "dimtensor: an attention operand lacks a dim that the module names (see "
                "attention_operand_lacks_dim<call, operand, missing dim, dims of the operand> above); "
                "the module's template arguments say which dims queries, keys and values must have");
};

/// An attention call's operand has the dim @p D, which belongs to another
/// operand (queries with the key-value dim, keys with the queries' dim).
template <class Call, class Operand, class D, class Dims>
struct attention_operand_has_foreign_dim {
  static_assert(always_false<Call, Operand, D, Dims>,
                "dimtensor: an attention operand has a dim that belongs to another operand (see "
                "attention_operand_has_foreign_dim<call, operand, dim, dims of the operand> above); "
                "for self-attention rename the keys' and values' sequence dim, e.g. rename<Queries, KVPairs>(x)");
};

/// A static head count @p Heads that does not divide the static hidden size @p Hidden.
template <class Call, class HiddenDim, index_t Hidden, index_t Heads>
struct heads_do_not_divide {
  static_assert(always_false<Call, HiddenDim>,
                "dimtensor: the number of heads must divide the hidden size (see "
                "heads_do_not_divide<call, hidden dim, hidden size, heads> above)");
};

/// `transpose_output` given a tensor without the merged batch-and-heads dim.
template <class Call, class Merged, class Dims>
struct transpose_output_of_unmerged {
  static_assert(always_false<Call, Merged, Dims>,
                "dimtensor: transpose_output undoes transpose_qkv, so its input must have the merged "
                "batch-and-heads dim (see transpose_output_of_unmerged<call, merged dim, dims of the input> above); "
                "it was given a tensor whose heads are not merged into the batch");
};

/// `forward_d2l` takes the queries' first dim as the batch (d2l's
/// `X.shape[0]`), but the queries' first dim is @p First, a dim the module
/// names otherwise.
template <class Call, class First, class Dims>
struct d2l_form_needs_batch_first {
  static_assert(always_false<Call, First, Dims>,
                "dimtensor: d2l's multi-head attention merges the batch, its operands' first dim, with the heads; "
                "these queries start with a dim the module uses otherwise (see d2l_form_needs_batch_first<call, "
                "first dim, dims of the queries> above); permute the batch dim to the front or use the named form");
};

}  // namespace diagnostic

namespace nn::detail {

/// Which check fails first for an attention operand @p X that must have
/// every dim of @p Needed and none of @p Foreign: a diagnostic class, or void.
template <class Call, class Operand, class X, class Needed, class Foreign>
constexpr auto operand_diagnosis() {
  namespace mp = boost::mp11;
  using specs = typename X::specs;
  using tags = dimtensor::detail::tags_of<specs>;
  using missing = mp::mp_remove_if_q<Needed, mp::mp_bind_front<mp::mp_contains, tags>>;
  using foreign = mp::mp_copy_if_q<Foreign, mp::mp_bind_front<mp::mp_contains, tags>>;
  if constexpr (!mp::mp_empty<missing>::value) {
    return std::type_identity<diagnostic::attention_operand_lacks_dim<Call, Operand, mp::mp_front<missing>, specs>>{};
  } else if constexpr (!mp::mp_empty<foreign>::value) {
    return std::type_identity<
        diagnostic::attention_operand_has_foreign_dim<Call, Operand, mp::mp_front<foreign>, specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// The first of several diagnoses that is not void (void if all are).
template <class... Ds>
struct first_diagnosis {
  using type = void;
};
template <class D, class... Ds>
struct first_diagnosis<D, Ds...> {
  using type = std::conditional_t<std::is_void_v<D>, typename first_diagnosis<Ds...>::type, D>;
};

/// @brief The attention weights of a module's last call, whatever their dims.
///
/// A module's forward pass is a template, so the weights' type depends on
/// the call; the store keeps the tensor as it was and hands it back only
/// as the type it has, checked at run time (`value_error` naming both).
class weights_store {
 public:
  /// Keeps @p weights, replacing what was kept.
  template <class Tensor>
  void set(Tensor weights) {
    shape_ = dimtensor::detail::shape_string<typename Tensor::specs>(weights.extents());
    value_ = std::move(weights);
  }

  /// The kept weights as a Tensor; @p module names the module in errors.
  template <class Tensor>
  Tensor const& get(std::string_view module) const {
    if (!value_.has_value()) {
      throw value_error(std::string(module) +
                        ": no attention weights yet; they are kept by each call of the module");
    }
    auto const* p = std::any_cast<Tensor>(&value_);
    if (p == nullptr) {
      throw value_error(std::string(module) + ": the attention weights are " + shape_ + ", not [" +
                        joined_names<typename Tensor::specs>() + "]");
    }
    return *p;
  }

  /// Whether a call has kept weights.
  bool has_value() const noexcept { return value_.has_value(); }

 private:
  template <class L>
  static std::string joined_names() {
    std::string s;
    auto const& names = dimtensor::detail::names_of<L>::value;
    auto const& extents = dimtensor::detail::static_extents_of<L>::value;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i > 0) s += ", ";
      s += names[i];
      if (extents[i] != dynamic_extent) s += "::fixed<" + std::to_string(extents[i]) + ">";
    }
    return s;
  }

  std::any value_;
  std::string shape_;
};

}  // namespace nn::detail

}  // namespace dimtensor
