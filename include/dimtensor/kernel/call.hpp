#pragma once
/// @file
/// @brief One tag per call of the library: the name its errors give, the
/// class its compile-time diagnoses name (`not_a_dimension_of<call::softmax,
/// …>`), and, for an elementwise function, the function itself, its
/// gradient and its code in a recorded program.
///
/// An elementwise function's tag is a function object callable on host and
/// device. When it has a gradient it also says, per operand, what the
/// gradient reads (`gradient_reads`) and computes it (`gradient<Which>`),
/// and it is listed in `recorded_functions`, whose order gives the codes of
/// the autograd interpreter (autograd/program.hpp): adding such a function
/// is its tag here, its public call in ops/elementwise.hpp, and its tests
/// (docs/design.md, "An operation's files").
///
/// Modules name their own calls' tags in their headers (`call::linear` in
/// nn/linear.hpp, …), with a `name` too.

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <boost/mp11/list.hpp>

#include <dimtensor/config.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dimtensor::call {

/// @brief Which operand values an elementwise function's gradient for one
/// operand reads, from the result's gradient g and the operands a and b:
/// only what is read is computed.
enum class reads : unsigned char {
  nothing,  ///< g alone (`-g`)
  a,        ///< g and a
  b,        ///< g and b
  both,     ///< g, a and b
  passes,   ///< none: the gradient is g itself
  result    ///< g and the function's own value, given in a's place (e^a for exp: no second exponential)
};

/// @name Elementwise functions with a gradient
/// @{

/// a + b.
struct plus {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator+";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
  /// g for both operands.
  static constexpr reads gradient_reads(int) { return reads::passes; }
  /// g.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T, T) {
    return g;
  }
};
/// a - b.
struct minus {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator-";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return a - b;
  }
  /// g for a, -g for b.
  static constexpr reads gradient_reads(int which) { return which == 0 ? reads::passes : reads::nothing; }
  /// g for a, -g for b.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T, T) {
    if constexpr (Which == 0)
      return g;
    else
      return -g;
  }
};
/// a b.
struct multiplies {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator*";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return a * b;
  }
  /// g b for a, g a for b.
  static constexpr reads gradient_reads(int which) { return which == 0 ? reads::b : reads::a; }
  /// g b for a, g a for b.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T b) {
    if constexpr (Which == 0)
      return g * b;
    else
      return g * a;
  }
};
/// a / b.
struct divides {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator/";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return a / b;
  }
  /// g / b for a, -g a / b² for b.
  static constexpr reads gradient_reads(int which) { return which == 0 ? reads::b : reads::both; }
  /// g / b for a, -g a / b² for b.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T b) {
    if constexpr (Which == 0)
      return g / b;
    else
      return -g * a / (b * b);
  }
};
/// -a (`operator-` and `neg`).
struct negate {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator-";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return -x;
  }
  /// -g.
  static constexpr reads gradient_reads(int) { return reads::nothing; }
  /// -g.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T, T) {
    return -g;
  }
};
/// Natural logarithm.
struct log {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "log";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return static_cast<T>(std::log(x));
  }
  /// g / a.
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g / a.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g / a;
  }
};
/// e^x (vectorizable for float).
struct exp {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "exp";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return math::exp(x);
    else
      return static_cast<T>(std::exp(static_cast<double>(x)));
  }
  /// g y, y = e^a: the function's own value (as PyTorch's ExpBackward).
  static constexpr reads gradient_reads(int) { return reads::result; }
  /// g y, given y = e^a in a's place.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T y, T) {
    return g * y;
  }
};
/// tanh (vectorizable for float).
struct tanh {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "tanh";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return math::tanh(x);
    else
      return static_cast<T>(std::tanh(static_cast<double>(x)));
  }
  /// g (1 - y²), y = tanh(a): the function's own value.
  static constexpr reads gradient_reads(int) { return reads::result; }
  /// g (1 - y²), given y = tanh(a) in a's place.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T y, T) {
    return g * (T(1) - y * y);
  }
};
/// Logistic sigmoid 1 / (1 + e^-x) (vectorizable for float).
struct sigmoid {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "sigmoid";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return math::sigmoid(x);
    else
      return static_cast<T>(math::sigmoid(static_cast<double>(x)));
  }
  /// g (1 - s) s, s = sigmoid(a): the function's own value.
  static constexpr reads gradient_reads(int) { return reads::result; }
  /// g (1 - s) s, given s = sigmoid(a) in a's place.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T s, T) {
    return g * (T(1) - s) * s;
  }
};
/// Square root.
struct sqrt {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "sqrt";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return static_cast<T>(std::sqrt(x));
  }
  /// g / (2 sqrt(a)).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g / (2 sqrt(a)).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g / (T(2) * sqrt{}(a));
  }
};
/// Sine.
struct sin {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "sin";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return static_cast<T>(std::sin(x));
  }
  /// g cos(a).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g cos(a).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g * static_cast<T>(std::cos(a));
  }
};
/// Cosine.
struct cos {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "cos";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return static_cast<T>(std::cos(x));
  }
  /// -g sin(a).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// -g sin(a).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g * -static_cast<T>(std::sin(a));
  }
};
/// |x|.
struct abs {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "abs";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return x < T(0) ? -x : x;
  }
  /// g sgn(a).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g sgn(a).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g * static_cast<T>((T(0) < a) - (a < T(0)));
  }
};
/// max(x, 0).
struct relu {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "relu";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x : T(0);
  }
  /// g where a > 0, else 0.
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g where a > 0, else 0.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return a > T(0) ? g : T(0);
  }
};
/// x².
struct square {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "square";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return x * x;
  }
  /// 2 g a.
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// 2 g a.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g * (T(2) * a);
  }
};
/// The Gauss error function, as `torch.erf` (GELU's exact form needs it).
struct erf {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "erf";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      return math::erf(x);
    else if constexpr (std::is_floating_point_v<T>)
      return std::erf(x);
    else
      return static_cast<T>(std::erf(static_cast<double>(x)));
  }
  /// g 2/√π e^(-a²).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g 2/√π e^(-a²), as PyTorch's derivative.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return g * (T(1.12837916709551257390) * exp{}(-(a * a)));
  }
};
/// @brief GELU, x Φ(x) = x (1 + erf(x / √2)) / 2, as `torch.nn.functional.gelu`
/// (its exact form, approximate='none'): one function, so that its forward
/// and its gradient are each one pass.
struct gelu {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "gelu";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return x * (T(0.5) * (T(1) + erf{}(x * T(0.70710678118654752440))));
  }
  /// g (Φ(a) + a φ(a)).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g (Φ(a) + a φ(a)), as PyTorch's GeluBackward.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    T const cdf = T(0.5) * (T(1) + erf{}(a * T(0.70710678118654752440)));
    T const pdf = exp{}(T(-0.5) * a * a) * T(0.39894228040143267794);
    return g * (cdf + a * pdf);
  }
};
/// @brief GELU's tanh approximation, x (1 + tanh(√(2/π) (x + 0.044715 x³))) / 2,
/// as `torch.nn.functional.gelu(x, approximate='tanh')` (GPT-2's `gelu_new`):
/// one function, its forward and its gradient each one pass.
struct gelu_tanh {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "gelu_tanh";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    T const inner = T(0.79788456080286535588) * (x + T(0.044715) * (x * x * x));
    return T(0.5) * x * (T(1) + tanh{}(inner));
  }
  /// g (½ (1 + t) + ½ a (1 - t²) √(2/π) (1 + 3 · 0.044715 a²)), t the tanh.
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// As PyTorch's GeluBackward with approximate='tanh'.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    T const beta = T(0.79788456080286535588);  // √(2/π)
    T const kappa = T(0.044715);
    T const a2 = a * a;
    T const t = tanh{}(beta * (a + kappa * (a2 * a)));
    T const left = T(0.5) * a;
    T const right = T(1) + t;
    T const left_derivative = T(0.5) * right;
    T const right_derivative = left * ((T(1) - t * t) * (beta * (T(1) + T(3) * kappa * a2)));
    return g * (left_derivative + right_derivative);
  }
};
/// @brief SiLU (swish), x σ(x), as `torch.nn.functional.silu`.
struct silu {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "silu";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    return x * sigmoid{}(x);
  }
  /// g σ(a) (1 + a (1 - σ(a))).
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g σ(a) (1 + a (1 - σ(a))), as PyTorch's SiluBackward.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    T const s = sigmoid{}(a);
    return g * s * (T(1) + a * (T(1) - s));
  }
};
/// a to the power b.
struct pow {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "pow";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return static_cast<T>(std::pow(a, b));
  }
  /// Both operands' gradients read both.
  static constexpr reads gradient_reads(int) { return reads::both; }
  /// g b a^(b-1) for a (0 where b is 0); g a^b log(a) for b (0 where a is
  /// 0 and b >= 0).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T b) {
    if constexpr (Which == 0)
      return b == T(0) ? T(0) : g * (b * pow{}(a, static_cast<T>(b - T(1))));
    else
      return (a == T(0) && b >= T(0)) ? T(0) : g * (pow{}(a, b) * log{}(a));
  }
};
/// The larger of a and b.
struct maximum {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "maximum";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return a < b ? b : a;
  }
  /// Both operands' gradients read both.
  static constexpr reads gradient_reads(int) { return reads::both; }
  /// g to the larger operand, g/2 on ties (PyTorch's rule).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T b) {
    T const mine = Which == 0 ? a : b;
    T const other = Which == 0 ? b : a;
    return mine == other ? g / T(2) : (other < mine ? g : T(0));
  }
};
/// The smaller of a and b.
struct minimum {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "minimum";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return b < a ? b : a;
  }
  /// Both operands' gradients read both.
  static constexpr reads gradient_reads(int) { return reads::both; }
  /// g to the smaller operand, g/2 on ties (PyTorch's rule).
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T b) {
    T const mine = Which == 0 ? a : b;
    T const other = Which == 0 ? b : a;
    return mine == other ? g / T(2) : (mine < other ? g : T(0));
  }
};
/// `cond ? a : b`.
struct where {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "where";
  /// Applies the function (a condition of another type is tested against 0).
  template <class C, class T>
  DIMTENSOR_HOST_DEVICE T operator()(C c, T a, T b) const {
    return c ? a : b;
  }
  /// The condition (read as a) decides.
  static constexpr reads gradient_reads(int) { return reads::a; }
  /// g where the condition holds for a (Which 1), where it does not for b
  /// (Which 2); the condition has none.
  template <int Which, class T>
  DIMTENSOR_HOST_DEVICE static T gradient(T g, T a, T) {
    return (Which == 1) == (a != T(0)) ? g : T(0);
  }
};
/// @}

/// @brief The elementwise functions a recorded program knows: a step's
/// interpreter code is its function's place here (autograd/program.hpp).
/// Appending is how a new function gets its gradient.
using recorded_functions = boost::mp11::mp_list<plus, minus, multiplies, divides, negate, log, exp, tanh, sigmoid, sqrt,
                                                sin, cos, abs, relu, square, erf, pow, maximum, minimum, where,
                                                gelu, silu, gelu_tanh>;

/// @name Elementwise functions without a gradient
/// @{

/// a == b.
struct eq {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "eq";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const {
    return a == b;
  }
};
/// a != b.
struct ne {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "ne";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const {
    return a != b;
  }
};
/// a < b.
struct less {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator<";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const {
    return a < b;
  }
};
/// a <= b.
struct less_equal {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator<=";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const {
    return a <= b;
  }
};
/// a > b.
struct greater {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator>";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const {
    return a > b;
  }
};
/// a >= b.
struct greater_equal {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "operator>=";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const {
    return a >= b;
  }
};
/// Converts to To (a recorded program passes the gradient through when To
/// is the result's own type; autograd/program.hpp).
template <class To>
struct cast {
  /// The call in errors and in the graph.
  static constexpr std::string_view name = "cast";
  /// Applies the function.
  template <class T>
  DIMTENSOR_HOST_DEVICE To operator()(T x) const {
    return static_cast<To>(x);
  }
};
/// @}

/// @name Calls that diagnose shapes
/// @{

/// A string as a template argument: a call's name.
template <std::size_t N>
struct fixed_string {
  /// The characters and a terminating zero.
  char text[N];
  /// From a string literal.
  constexpr fixed_string(char const (&s)[N]) {  // NOLINT: implicit, for `named<"softmax">`
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};

/// The base of a tag that only names a call.
template <fixed_string Text>
struct named {
  /// The call in errors.
  static constexpr std::string_view name{Text.text, sizeof(Text.text) - 1};
};

/// `unsqueeze<D, I>(x)`.
struct unsqueeze : named<"unsqueeze"> {};
/// `squeeze<D>(x)`.
struct squeeze : named<"squeeze"> {};
/// `transpose<A, B>(x)`.
struct transpose : named<"transpose"> {};
/// `permute<D...>(x)`.
struct permute : named<"permute"> {};
/// `rename<From, To>(x)`.
struct rename : named<"rename"> {};
/// `split<D, Outer, Inner>(x, n)`.
struct split : named<"split"> {};
/// `merge<A, B, To>(x)`.
struct merge : named<"merge"> {};
/// `repeat_interleave<D>(x, n)`.
struct repeat_interleave : named<"repeat_interleave"> {};
/// `concat<D>(a, b, …)`.
struct concat : named<"concat"> {};
/// `stack<D>(a, b, …)`.
struct stack : named<"stack"> {};
/// `slice<D>(x, …)`.
struct slice : named<"slice"> {};
/// `select<D>(x, i)`.
struct select : named<"select"> {};
/// `index_select<D>(x, indices)`.
struct index_select : named<"index_select"> {};
/// `sum<D>(x)`.
struct sum : named<"sum"> {};
/// `mean<D>(x)`.
struct mean : named<"mean"> {};
/// `max<D>(x)`.
struct max : named<"max"> {};
/// `min<D>(x)`.
struct min : named<"min"> {};
/// `argmax<D>(x)`.
struct argmax : named<"argmax"> {};
/// `softmax<D>(x)`.
struct softmax : named<"softmax"> {};
/// `log_softmax<D>(x)`.
struct log_softmax : named<"log_softmax"> {};
/// `sequence_mask<D>(x, lens)`.
struct sequence_mask : named<"sequence_mask"> {};
/// `masked_softmax<D>(x, lens)`.
struct masked_softmax : named<"masked_softmax"> {};
/// `scaled_dot_product_attention<Queries, KV, Feat>(q, k, v, masking)`.
struct scaled_dot_product_attention : named<"scaled_dot_product_attention"> {};
/// The valid lengths a call takes.
struct valid_lengths : named<"valid_lengths"> {};
/// `bmm(a, b)`.
struct bmm : named<"bmm"> {};
/// `contract<D...>(a, b)`.
struct contract : named<"contract"> {};
/// A tensor's construction or assignment.
struct tensor : named<"tensor"> {};
/// `zeros`, `ones`, `full`, `arange`, … .
struct factory : named<"factory"> {};
/// `x(Batch(i), …)`.
struct element_access : named<"element access"> {};
/// `x.requires_grad_()`.
struct requires_grad : named<"requires_grad_"> {};
/// `x.backward()`.
struct backward : named<"backward"> {};
/// @}

}  // namespace dimtensor::call
