#pragma once
/// @file
/// @brief What the attention modules share: the dims they create (`Heads`,
/// `HeadFeat`, `BatchHeads`, `Score`), their compile-time diagnoses, the
/// typed store behind every module's `attention_weights<Dims...>()`, and
/// `nn::attention_base`: the modes, the kept weights and the last step of
/// the forward pass of a module with its own dropout.

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

#include <boost/mp11/list.hpp>

#include <dimtensor/config.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/ops/attention.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/masked_softmax.hpp>
#include <dimtensor/tensor/tensor.hpp>

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
struct dot_product_attention : named<"dot_product_attention"> {};
/// `nn::additive_attention::operator()`.
struct additive_attention : named<"additive_attention"> {};
/// `nn::multi_head_attention`.
struct multi_head_attention : named<"multi_head_attention"> {};
/// `nn::transpose_qkv`.
struct transpose_qkv : named<"transpose_qkv"> {};
/// `nn::transpose_output`.
struct transpose_output : named<"transpose_output"> {};
/// `nn::nadaraya_watson`.
struct nadaraya_watson : named<"nadaraya_watson"> {};
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
                "for self-attention, rename the keys' and values' sequence dim (the dim named above) to the "
                "module's key-value dim, rename<dim, KV>(x)");
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

/// `transpose_qkv<Batch, Hidden>(x)` where x has Hidden before Batch: the
/// template arguments swapped, most likely.
template <class Call, class Batch, class Hidden, class Dims>
struct transpose_qkv_batch_after_hidden {
  static_assert(always_false<Call, Batch, Hidden, Dims>,
                "dimtensor: transpose_qkv<Batch, Hidden> takes the batch dim first and the dim split into heads "
                "second, and x has the second before the first (see transpose_qkv_batch_after_hidden<call, Batch, "
                "Hidden, dims of x> above); are the template arguments swapped?");
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

/// The dims of the list @p Wanted that a shape @p Specs lacks, in Wanted's order.
template <class Specs, class Wanted>
using dims_lacking = boost::mp11::mp_remove_if_q<
    Wanted, boost::mp11::mp_bind_front<boost::mp11::mp_contains, meta::tags_of<Specs>>>;

/// The dims of the list @p Wanted that a shape @p Specs has, in Wanted's order.
template <class Specs, class Wanted>
using dims_having = boost::mp11::mp_copy_if_q<
    Wanted, boost::mp11::mp_bind_front<boost::mp11::mp_contains, meta::tags_of<Specs>>>;

/// Which check fails first for an attention operand @p X that must have
/// every dim of @p Needed and none of @p Foreign: a diagnostic class, or void.
template <class Call, class Operand, class X, class Needed, class Foreign>
constexpr auto operand_diagnosis() {
  namespace mp = boost::mp11;
  using specs = typename X::specs;
  using missing = dims_lacking<specs, Needed>;
  using foreign = dims_having<specs, Foreign>;
  if constexpr (!mp::mp_empty<missing>::value) {
    return std::type_identity<diagnostic::attention_operand_lacks_dim<Call, Operand, mp::mp_front<missing>, specs>>{};
  } else if constexpr (!mp::mp_empty<foreign>::value) {
    return std::type_identity<
        diagnostic::attention_operand_has_foreign_dim<Call, Operand, mp::mp_front<foreign>, specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// The first of several diagnoses that is not void (void if all are), as
/// a type: `dimtensor::first_diagnosis` (core/checked.hpp).
template <class... Ds>
struct first_diagnosis {
  /// The diagnosis.
  using type = typename decltype(dimtensor::first_diagnosis(std::type_identity<Ds>{}...))::type;
};

/// Which operand check fails first for an attention call over (q, k, v):
/// queries need Queries and QueryFeat and not KV, keys KV and KeyFeat and
/// not Queries, values KV and not Queries (a diagnostic class, or void).
template <class Call, class Queries, class KV, class QueryFeat, class KeyFeat, class Q, class K, class V>
using qkv_diagnosis_t = typename first_diagnosis<
    typename decltype(operand_diagnosis<Call, operand::queries, Q, boost::mp11::mp_list<Queries, QueryFeat>,
                                        boost::mp11::mp_list<KV>>())::type,
    typename decltype(operand_diagnosis<Call, operand::keys, K, boost::mp11::mp_list<KV, KeyFeat>,
                                        boost::mp11::mp_list<Queries>>())::type,
    typename decltype(operand_diagnosis<Call, operand::values, V, boost::mp11::mp_list<KV>,
                                        boost::mp11::mp_list<Queries>>())::type>::type;

/// @brief The run-time check of an attention call's operands: the dims
/// queries and keys share (their batch dims, and the feature dim of
/// dot-product attention) less those of the list @p ExceptQK, then the
/// dims keys and values share (the key-value dim and the batch dims) less
/// those of @p ExceptKV (the features) must have the same extents;
/// `shape_error` "<call>: keys: extent mismatch for dimension <D>: …
/// (queries) vs … (keys)" otherwise.
template <class Q, class K, class V, class ExceptQK, class ExceptKV>
void check_qkv_extents(std::string_view call, Q const& queries, K const& keys, V const& values) {
  using dimtensor::check_operand_extents;
  using meta::shared_tags;
  check_operand_extents<shared_tags<typename expr_t<Q>::specs, typename expr_t<K>::specs, ExceptQK>>(
      call, queries, "queries", keys, "keys");
  check_operand_extents<shared_tags<typename expr_t<K>::specs, typename expr_t<V>::specs, ExceptKV>>(call, keys, "keys",
                                                                                                     values, "values");
}

/// @brief `shape_error` "<call>: <operand>: extent mismatch for dimension
/// <D>: <n> (<operand>) vs <m> (<layer>)" unless @p x's extent of D is the
/// layer's input size @p in (a module's operand against its projection).
template <class D, class X>
void check_layer_input(std::string_view call, X const& x, std::string_view operand, index_t in,
                       std::string_view layer) {
  index_t const n = x.extents()[meta::index_of_v<D, typename X::specs>];
  if (n != in) {
    throw_extent_mismatch(std::string(call) + ": " + std::string(operand), dim_name_v<D>, n, in,
                                             operand, layer);
  }
}

/// @brief The diagnosis for an attention call's valid lengths @p L (none
/// or one): typed lengths (`lengths<M, …>`) of another dim than the dim
/// @p KV the call attends over are `valid_lens_measure_another_dim<Call,
/// measured<M>, masked<KV>>`; otherwise void.
template <class Call, class KV, class... L>
struct lens_diagnosis {
  using type = void;
};
template <class Call, class KV, class L>
struct lens_diagnosis<Call, KV, L> {
  using type = lens_measure_diagnosis_t<Call, L, KV>;
};
/// `lens_diagnosis<Call, KV, L...>::type`.
template <class Call, class KV, class... L>
using lens_diagnosis_t = typename lens_diagnosis<Call, KV, L...>::type;

/// @brief The attention weights of a module's last call on each thread,
/// whatever their dims.
///
/// A module's forward pass is a template, so the weights' type depends on
/// the call; the store keeps the tensor as it was and hands it back as the
/// type it has, or as a type of the same dims whose static extents differ
/// (a query step from `unsqueeze` is `DecSteps::fixed<1>`; asking for
/// `<Batch, DecSteps, EncSteps>` gets it with DecSteps dynamic), checked at
/// run time (`value_error` naming both shapes otherwise).
///
/// Each thread has its own last call: several threads may run one shared
/// module (in eval mode) at once, and each reads back the weights of its
/// own call.  The entries sit behind a lock, one per thread that has
/// called, until the module goes (docs/design.md, "Threads").
class weights_store {
  /// A key unique to each running thread: the address of a thread-local
  /// (cheaper to include than <thread>'s ids, and as unique).
  static void const* this_thread_key() noexcept {
    thread_local char key = 0;
    return &key;
  }

 public:
  /// No weights yet.
  weights_store() = default;
  /// A copy of @p other's entries.
  weights_store(weights_store const& other) : entries_(other.copy_entries()) {}
  /// @p other's entries, taken.
  weights_store(weights_store&& other) noexcept : entries_(other.take_entries()) {}
  /// Replaces the entries with a copy of @p other's.
  weights_store& operator=(weights_store const& other) {
    if (this != &other) replace_entries(other.copy_entries());
    return *this;
  }
  /// Replaces the entries with @p other's, taken.
  weights_store& operator=(weights_store&& other) noexcept {
    if (this != &other) replace_entries(other.take_entries());
    return *this;
  }
  ~weights_store() = default;

  /// Keeps @p weights as this thread's, replacing what this thread kept.
  template <class Tensor>
  void set(Tensor weights) {
    // The shape is spelled only when an error needs it, not on every call.
    auto const describe = [](std::any const& value) {
      auto const& t = std::any_cast<Tensor const&>(value);
      return shape_string<typename Tensor::specs>(t.extents()) + " (" +
             joined_names<typename Tensor::specs>() + ")";
    };
    std::any value = std::move(weights);
    {
      std::lock_guard const lock(mutex_);
      auto const id = this_thread_key();
      auto const it = std::find_if(entries_.begin(), entries_.end(), [&](entry const& e) { return e.thread == id; });
      if (it == entries_.end()) {
        entries_.push_back(entry{id, std::move(value), describe, &dynamic_of<Tensor>, nullptr});
        return;
      }
      std::swap(it->value, value);
      it->describe = describe;
      it->as_dynamic = &dynamic_of<Tensor>;
      it->make = nullptr;
    }
    // The weights replaced are released here, outside the lock.
  }

  /// This thread's kept weights as a Tensor (a handle sharing their
  /// storage); @p module names the module in errors.
  template <class Tensor>
  Tensor get(std::string_view module) const {
    std::lock_guard const lock(mutex_);
    auto const id = this_thread_key();
    auto const it = std::find_if(entries_.begin(), entries_.end(), [&](entry const& e) { return e.thread == id; });
    if (it == entries_.end()) {
      throw value_error(std::string(module) +
                        ": no attention weights yet; they are kept by each call of the module, per thread");
    }
    if (it->make) {
      it->value = it->make();
      it->make = nullptr;
    }
    if (auto const* p = std::any_cast<Tensor>(&it->value)) return *p;
    std::any const same_dims = it->as_dynamic(it->value);
    if (auto const* d = std::any_cast<dynamic_t<Tensor>>(&same_dims)) {
      // The same dims: every static extent Tensor names must hold.
      auto const& wanted = meta::static_extents_of<typename Tensor::specs>::value;
      bool fits = true;
      for (std::size_t i = 0; i < wanted.size(); ++i) {
        fits = fits && (wanted[i] == dynamic_extent || wanted[i] == d->extents()[i]);
      }
      if (fits) return Tensor(d->storage(), d->data(), d->extents(), d->strides());
    }
    throw value_error(std::string(module) + ": the attention weights are " + it->describe(it->value) + ", not [" +
                      joined_names<typename Tensor::specs>() + "]");
  }

  /// @brief Keeps, as this thread's weights, the Tensor that @p make
  /// returns, computed when they are first asked for (under the store's
  /// lock) instead of now: the attention operation never forms the weights.
  template <class Tensor, class Make>
  void set_lazy(Make make) {
    auto const describe = [](std::any const& value) {
      auto const& t = std::any_cast<Tensor const&>(value);
      return shape_string<typename Tensor::specs>(t.extents()) + " (" +
             joined_names<typename Tensor::specs>() + ")";
    };
    std::function<std::any()> thunk = [make = std::move(make)]() -> std::any { return Tensor(make()); };
    std::any old;
    {
      std::lock_guard const lock(mutex_);
      auto const id = this_thread_key();
      auto const it = std::find_if(entries_.begin(), entries_.end(), [&](entry const& e) { return e.thread == id; });
      if (it == entries_.end()) {
        entries_.push_back(entry{id, std::any{}, describe, &dynamic_of<Tensor>, std::move(thunk)});
        return;
      }
      std::swap(it->value, old);
      it->describe = describe;
      it->as_dynamic = &dynamic_of<Tensor>;
      std::swap(it->make, thunk);
    }
    // What was kept is released here, outside the lock.
  }

  /// Whether a call on this thread has kept weights.
  bool has_value() const {
    std::lock_guard const lock(mutex_);
    auto const id = this_thread_key();
    return std::any_of(entries_.begin(), entries_.end(), [&](entry const& e) { return e.thread == id; });
  }

 private:
  /// One thread's last weights and how to spell their shape.
  struct entry {
    void const* thread;
    std::any value;
    std::string (*describe)(std::any const&) = nullptr;
    std::any (*as_dynamic)(std::any const&) = nullptr;
    /// When set, computes `value` (weights kept lazily, `set_lazy`).
    std::function<std::any()> make;
  };

  /// Tensor with every extent dynamic (the same dims).
  template <class Tensor>
  using dynamic_t = tensor_with_dims<typename Tensor::backend, typename Tensor::value_type,
                                     meta::tags_of<typename Tensor::specs>>;

  /// The kept Tensor (in @p value) as its dynamic_t, sharing its storage.
  template <class Tensor>
  static std::any dynamic_of(std::any const& value) {
    auto const& t = std::any_cast<Tensor const&>(value);
    return dynamic_t<Tensor>(t.storage(), t.data(), t.extents(), t.strides());
  }

  std::vector<entry> copy_entries() const {
    std::lock_guard const lock(mutex_);
    return entries_;
  }
  std::vector<entry> take_entries() noexcept {
    std::lock_guard const lock(mutex_);
    return std::exchange(entries_, {});
  }
  void replace_entries(std::vector<entry> entries) noexcept {
    {
      std::lock_guard const lock(mutex_);
      std::swap(entries_, entries);
    }
  }

  template <class L>
  static std::string joined_names() {
    std::string s;
    auto const& names = meta::names_of<L>::value;
    auto const& extents = meta::static_extents_of<L>::value;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i > 0) s += ", ";
      s += names[i];
      if (extents[i] != dynamic_extent) s += "::fixed<" + std::to_string(extents[i]) + ">";
    }
    return s;
  }

  mutable std::mutex mutex_;
  mutable std::vector<entry> entries_;  // mutable: get() computes lazily kept weights
};

/// Valid lengths to keep past the call (the lazily kept weights use them):
/// an expression evaluated, a tensor's handle, `std::nullopt` or a
/// `std::optional` as they are.
template <class L>
auto kept_lengths(L const& lens) {
  if constexpr (Expression<L>) {
    return dimtensor::eval(lens);
  } else {
    return lens;
  }
}

}  // namespace nn::detail

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

  /// @brief Scaled dot-product attention by the operation
  /// `scaled_dot_product_attention` (@p q, @p k, @p v evaluated), the
  /// weights kept to be computed when asked for: the same tensor `attend`
  /// keeps (masked softmax over KV of the scaled scores), from handles to
  /// @p q, @p k and the lengths.
  template <class Queries, class KV, class Feat, class Q, class K, class V, class... L>
  auto attend_scaled_dot_product(Q const& q, K const& k, V const& v, L const&... valid_lens) {
    auto out = scaled_dot_product_attention<Queries, KV, Feat>(q, k, v, valid_lens...);
    auto scores_of = [](Q const& qq, K const& kk) {
      index_t const d = qq.template extent<Feat>();
      return contract<Feat>(qq, kk) / static_cast<T>(std::sqrt(static_cast<double>(d)));
    };
    using weights_t = std::remove_cvref_t<decltype(masked_softmax<KV>(scores_of(q, k), valid_lens...))>;
    weights_.template set_lazy<weights_t>(
        [scores_of, qq = q.detach(), kk = k.detach(), ... l = detail::kept_lengths(valid_lens)] {
          autograd::no_grad const no_grad;
          return masked_softmax<KV>(scores_of(qq, kk), l...);
        });
    return out;
  }

  /// The last call's attention weights.
  detail::weights_store weights_;
};

}  // namespace nn

}  // namespace dimtensor
