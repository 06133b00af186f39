#pragma once
/// @file
/// @brief `nn::detail::weights_store`: the typed store behind every
/// attention module's `attention_weights<Dims...>()`, one entry per thread,
/// kept as computed or as how to compute it.

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
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace nn::detail {

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

}  // namespace nn::detail

}  // namespace dimtensor
