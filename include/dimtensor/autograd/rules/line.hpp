#pragma once
/// @file
/// @brief The gradient rules of the operations on lines [outer, n, inner]
/// of a contiguous input (kernel/layout.hpp): the softmax family, the
/// reductions along a dim, `sequence_mask`, `repeat_interleave` and
/// `index_select`. One node class per backend and element type, whatever
/// the dims; an operation records itself with `record_lines` (how to write
/// a rule: docs/autograd.md, "Writing a rule").

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/kernel/layout.hpp>

namespace dimtensor::autograd {

/// The rules of the operations that work on lines `[outer, n, inner]`.
enum class line_rule : std::uint8_t {
  softmax,         ///< softmax's: y (g - Σ g y)
  log_softmax,     ///< log_softmax's: g - e^y Σ g
  masked_softmax,  ///< softmax's within the valid length, 0 beyond
  sum,             ///< the gradient expanded over n
  mean,            ///< the gradient over n expanded over n
  extremum,        ///< to the first extremum of each line
  extremum_all,    ///< split evenly among the elements equal to the extremum (one line)
  sequence_mask,   ///< the gradient within the valid length, 0 beyond
  sum_repeats,     ///< repeat_interleave's: the n repeats summed back
  index_add        ///< index_select's: each selected index adds its entries of g
};

/// @brief The node of an operation on lines `[outer, n, inner]` of its
/// contiguous input (softmax, log_softmax, masked_softmax, and the
/// reductions): one body per backend and element type, whatever the dims.
template <class Backend, class T>
class line_node final : public node {
 public:
  /// What a rule reads, kept alive with the node.
  struct saved {
    std::shared_ptr<void const> keep;           ///< keeps `data` alive
    T const* data = nullptr;                    ///< the result (softmax) or the input (extremum)
    std::shared_ptr<void const> extremum_keep;  ///< keeps `extremum` alive
    T const* extremum = nullptr;                ///< the extremum of each line (extremum)
    T extremum_all{};                           ///< the extremum (extremum_all)
    std::shared_ptr<void const> lens_keep;      ///< keeps `lens` alive
    std::int64_t const* lens = nullptr;         ///< valid lengths, or index_select's indices
    index_t repeat = 1;                         ///< lines per valid length
    index_t count = 0;                          ///< index_select's number of indices
    index_t skip = -1;                          ///< index_select's index that gets no gradient (-1: none)
  };

  /// The node named @p name of @p rule over lines @p s of the input
  /// @p source, of @p size elements.
  line_node(std::string_view name, line_rule rule, std::shared_ptr<tensor_state> source, index_t size,
            kernel::lines s, saved keep)
      : node(name), rule_(rule), size_(size), s_(s), saved_(std::move(keep)) {
    inputs.push_back(std::move(source));
  }

  /// Computes the input's gradient and adds it.
  void backward(tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    index_t const n = size_;
    auto dx = std::make_shared<typename Backend::template storage<T>>(n);
    T* const d = dx->data();
    T const* const y = saved_.data;
    switch (rule_) {
      case line_rule::softmax: backend_softmax_backward(Backend{}, y, g, d, s_.outer, s_.n, s_.inner); break;
      case line_rule::log_softmax: backend_log_softmax_backward(Backend{}, y, g, d, s_.outer, s_.n, s_.inner); break;
      case line_rule::masked_softmax:
        backend_masked_softmax_backward(Backend{}, y, g, d, s_.outer, s_.n, s_.inner, saved_.lens, saved_.repeat);
        break;
      case line_rule::sum:
      case line_rule::mean: {
        // g (one value per [outer, inner]) read with stride 0 along n.
        std::array<index_t, 3> const ext{s_.outer, s_.n, s_.inner};
        dimtensor::detail::strided_evaluator<T, 3> const ev{g, g, {s_.inner, 0, 1}, s_.n == 1};
        if (rule_ == line_rule::sum) {
          backend_assign(Backend{}, d, ext, ev);
        } else {
          using mean_ev = dimtensor::detail::map_evaluator<call::divides, dimtensor::detail::strided_evaluator<T, 3>, dimtensor::detail::scalar_evaluator<T>>;
          backend_assign(Backend{}, d, ext, mean_ev{call::divides{}, {ev, {static_cast<T>(s_.n)}}});
        }
        break;
      }
      case line_rule::extremum:
        backend_extremum_backward(Backend{}, y, saved_.extremum, g, d, s_.outer, s_.n, s_.inner);
        break;
      case line_rule::extremum_all: {
        T g0{};  // the one element of the result's gradient, read from the host
        backend_copy_to_host(Backend{}, &g0, g, 1);
        backend_extremum_all_backward(Backend{}, y, n, saved_.extremum_all, g0, d);
        break;
      }
      case line_rule::sequence_mask:
        backend_sequence_mask(Backend{}, g, d, s_.outer, s_.n, s_.inner, saved_.lens, saved_.repeat, T(0));
        break;
      case line_rule::sum_repeats: backend_sum(Backend{}, g, d, s_.outer, s_.n, s_.inner); break;
      case line_rule::index_add:
        backend_fill(Backend{}, d, n, T(0));
        backend_index_add(Backend{}, d, g, s_.outer, s_.n, s_.inner, saved_.lens, saved_.count, saved_.skip);
        break;
    }
    add_gradient<Backend, T>(*inputs.front(), std::move(dx), n);
  }

 private:
  line_rule rule_;
  index_t size_;
  kernel::lines s_;
  saved saved_;
};

/// Records @p out as made by @p rule from the contiguous input @p in, seen
/// as lines @p s.
template <class Out, class In>
void record_lines(std::string_view name, Out& out, In const& in, line_rule rule, kernel::lines s,
                  typename line_node<typename In::backend, typename In::value_type>::saved keep) {
  using node_t = line_node<typename In::backend, typename In::value_type>;
  out.attach_grad_fn(std::make_shared<node_t>(name, rule, in.grad_state(), in.size(), s, std::move(keep)));
}

}  // namespace dimtensor::autograd

/// @cond INTERNAL
// The line rule's node, compiled once into dimtensor::runtime for the CPU's
// float and double (src/instances/autograd.cpp defines them): a file calls
// those copies (config.hpp, DIMTENSOR_EXTERN_INSTANCES).
#define DIMTENSOR_LINE_INSTANCES(how, B, T)  \
  how class autograd::line_node<B, T>;

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_LINE_INSTANCES)
}  // namespace dimtensor
/// @endcond
