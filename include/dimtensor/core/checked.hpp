#pragma once
/// @file
/// @brief `rejects(diagnosis)` and `checked<Call>(body, operands…)`: the
/// protocol of every call that checks its operands at compile time,
/// written once.
///
/// A call's shape rule and its diagnosis are one constexpr function that
/// returns `std::type_identity<D>`: `void` when the operands are right,
/// `ill_formed` when one of them is a rejected call's result (reported
/// already), otherwise the diagnosis D (a class of core/diagnostic.hpp
/// whose name and arguments are the error). A call reads
///
/// @code
/// if constexpr (rejects(detail::linear_diagnosis<In, Out, T, Backend, X>())) {
///   return ill_formed{};
/// } else {
///   return checked<call::linear>([&](auto const& x) { … }, x);
/// }
/// @endcode
///
/// `rejects` fires D (so that the diagnosis is the first error) and says
/// whether the call is rejected; `checked` runs the body under
/// `in_call(Call::name, …)`, so that a run-time error names the call the
/// user wrote first. Hana's `dispatch_if` with a deleted implementation is
/// the model. The `if constexpr` stays at the call: only a discarded
/// statement of a template is left uncompiled, and a body passed as a
/// lambda to a function would be compiled with its enclosing function,
/// rejected operands included (their types' members, the return types of
/// the calls on them), giving errors after or before the diagnosis.

#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/function.hpp>
#include <boost/mp11/list.hpp>

#include <dimtensor/config.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/shape.hpp>

namespace dimtensor {

/// @brief The first of the diagnoses @p ds that is not void (`void` when
/// all are): each a `std::type_identity<D>`, as a call's diagnosis
/// function returns them.
template <class... D>
constexpr auto first_diagnosis(std::type_identity<D>... ds) {
  ((void)ds, ...);
  using found = boost::mp11::mp_find_if<boost::mp11::mp_list<D...>, boost::mp11::mp_not_fn<std::is_void>::template fn>;
  if constexpr (found::value == sizeof...(D)) {
    return std::type_identity<void>{};
  } else {
    return std::type_identity<boost::mp11::mp_at<boost::mp11::mp_list<D...>, found>>{};
  }
}

/// @cond
namespace detail {
template <class D>
struct rejection {
  static constexpr bool value = diagnostic::fire<D>;  // instantiates D: its static_assert is the error
};
template <>
struct rejection<void> {
  static constexpr bool value = false;
};
}  // namespace detail
/// @endcond

/// @brief Whether a call whose diagnosis is @p D is rejected: true for a
/// diagnosis, which it fires (the compile error), and for `ill_formed` (an
/// operand rejected before: nothing more is reported); false for void.
template <class D>
constexpr bool rejects(std::type_identity<D>) {
  return detail::rejection<D>::value;
}

/// @brief The body of the call named by the tag @p Call, once its operands
/// passed: `body(operands…)` under `in_call(Call::name, …)`.
template <class Call, class Body, class... Operands>
decltype(auto) checked(Body&& body, Operands const&... operands) {
  return detail::in_call(Call::name, [&]() -> decltype(auto) { return body(operands...); });
}

}  // namespace dimtensor
