// Conformance of the attention kernels of the backend contract
// (backend_attention_forward and backend_attention_backward,
// kernel/attention.hpp's problem) on every backend: the CPU's fused kernels
// (float, double) and the generic ones of Thrust's host systems, against
// plain loops in double: d2l's masking (scores past a row's length replaced
// by -1e6, so a row of length 0 averages the values), rows read through
// offsets and a row stride wider than the features, no lengths, and the
// sizes that take the CPU's register tiles, its BLAS path and its online
// softmax past 1,024 keys.
#include "unit/backends/conformance/conformance.hpp"

#include <dimtensor/backends/cpu/fused_attention.hpp>
#include <dimtensor/kernel/attention.hpp>

namespace conformance {

namespace {

/// One problem: sizes, row strides wider than the features, lengths.
struct attention_case {
  index_t batch, queries, kv, d, dv;
  /// Consecutive query rows sharing one length (1: a length per row,
  /// queries: one per entry); 0: no lengths.
  index_t repeat;
  bool masked() const { return repeat > 0; }
};

std::ostream& operator<<(std::ostream& os, attention_case const& c) {
  return os << "batch " << c.batch << ", queries " << c.queries << ", kv " << c.kv << ", d " << c.d << ", dv " << c.dv
            << (c.masked() ? ", a length per " + std::to_string(c.repeat) + " rows" : std::string(", no lengths"));
}

/// Row i of entry b's valid length (the kernels' row_lengths form).
index_t length_of(attention_case const& c, std::vector<index_t> const& lens, index_t b, index_t i) {
  return c.masked() ? lens[static_cast<std::size_t>((b * c.queries + i) / c.repeat)] : c.kv;
}

/// Entry b's offsets for rows of @p rows elements, @p stride apart.
std::vector<index_t> entry_offsets(index_t batch, index_t rows, index_t stride) {
  std::vector<index_t> off(static_cast<std::size_t>(batch));
  for (index_t b = 0; b < batch; ++b) off[static_cast<std::size_t>(b)] = b * rows * stride;
  return off;
}

/// The plain loops: the weights of entry b, row i (d2l's masking).
std::vector<double> weights_row(attention_case const& c, std::vector<double> const& q, std::vector<double> const& k,
                                index_t sq, index_t sk, std::vector<index_t> const& lens, index_t b, index_t i,
                                double scale) {
  std::vector<double> w(static_cast<std::size_t>(c.kv));
  index_t const len = length_of(c, lens, b, i);
  double m = -1e300;
  for (index_t j = 0; j < c.kv; ++j) {
    double s = 0;
    for (index_t f = 0; f < c.d; ++f) {
      s += q[static_cast<std::size_t>((b * c.queries + i) * sq + f)] * k[static_cast<std::size_t>((b * c.kv + j) * sk + f)];
    }
    s = j < len ? s / scale : -1e6;
    w[static_cast<std::size_t>(j)] = s;
    m = std::max(m, s);
  }
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(x - m));
  for (double& x : w) x /= sum;
  return w;
}

template <class T>
std::vector<double> widened(std::vector<T> const& v) {
  return {v.begin(), v.end()};
}

}  // namespace

TEMPLATE_TEST_CASE("conformance: backend_attention_forward and backend_attention_backward",
                   "[backends][conformance][attention]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(707);
  auto check = [&](auto zero, attention_case const& c) {
    using T = decltype(zero);
    INFO(type_name<T>() << " " << c);
    double const tol = std::is_same_v<T, float> ? 2e-4 : 1e-9;
    // Rows wider than their features: the kernels must read through the stride.
    index_t const sq = c.d + 3, sk = c.d + 1, sv = c.dv + 2, so = c.dv + 1;
    auto const hq = gen.uniform<T>(c.batch * c.queries * sq, -1, 1);
    auto const hk = gen.uniform<T>(c.batch * c.kv * sk, -1, 1);
    auto const hv = gen.uniform<T>(c.batch * c.kv * sv, -1, 1);
    auto const hg = gen.uniform<T>(c.batch * c.queries * so, -1, 1);
    index_t const rows = c.batch * c.queries;
    std::vector<index_t> lens = gen.lengths<index_t>(c.masked() ? (rows + c.repeat - 1) / c.repeat : 1, c.kv);
    buffer<B, index_t> const lens_b(lens);  // the backend's memory
    buffer<B, T> const q(hq), k(hk), v(hv), g(hg);
    buffer<B, T> out(poisoned<T>(c.batch * c.queries * so));
    buffer<B, T> stats(std::vector<T>(static_cast<std::size_t>(2 * c.batch * c.queries + 1), T(0)));
    auto const oq = entry_offsets(c.batch, c.queries, sq), ok = entry_offsets(c.batch, c.kv, sk),
               ov = entry_offsets(c.batch, c.kv, sv), oo = entry_offsets(c.batch, c.queries, so);
    dt::kernel::attention_problem<T> p;
    p.batch = c.batch;
    p.queries = c.queries;
    p.kv = c.kv;
    p.d = c.d;
    p.dv = c.dv;
    p.q = {q.data(), oq.data(), sq};
    p.k = {k.data(), ok.data(), sk};
    p.v = {v.data(), ov.data(), sv};
    p.lens = {c.masked() ? lens_b.data() : nullptr, c.masked() ? c.repeat : 1};
    p.scale = static_cast<T>(std::sqrt(static_cast<double>(c.d)));
    T* const st = stats.data();
    dt::backend_attention_forward(B{}, p, dt::kernel::attention_operand<T>{out.data(), oo.data(), so}, st,
                                  st + c.batch * c.queries);
    // dq written; dk and dv start at 0 (a kernel may add into them).
    buffer<B, T> dq(poisoned<T>(c.batch * c.queries * sq)), dk(std::vector<T>(hk.size(), T(0))),
        dv(std::vector<T>(hv.size(), T(0)));
    dt::backend_attention_backward(B{}, p, static_cast<T const*>(st), static_cast<T const*>(st + c.batch * c.queries),
                                   dt::kernel::attention_operand<T const>{g.data(), oo.data(), so},
                                   dt::kernel::attention_operand<T>{dq.data(), oq.data(), sq},
                                   dt::kernel::attention_operand<T>{dk.data(), ok.data(), sk},
                                   dt::kernel::attention_operand<T>{dv.data(), ov.data(), sv});

    auto const q64 = widened(hq), k64 = widened(hk), v64 = widened(hv), g64 = widened(hg);
    double const scale = static_cast<double>(p.scale);
    std::vector<double> want_out(hg.size(), 0.0), want_dq(hq.size(), 0.0), want_dk(hk.size(), 0.0),
        want_dv(hv.size(), 0.0);
    for (index_t b = 0; b < c.batch; ++b) {
      for (index_t i = 0; i < c.queries; ++i) {
        auto const w = weights_row(c, q64, k64, sq, sk, lens, b, i, scale);
        index_t const len = length_of(c, lens, b, i);
        std::vector<double> dw(static_cast<std::size_t>(c.kv), 0.0);
        for (index_t j = 0; j < c.kv; ++j) {
          double const wj = w[static_cast<std::size_t>(j)];
          for (index_t f = 0; f < c.dv; ++f) {
            double const vj = v64[static_cast<std::size_t>((b * c.kv + j) * sv + f)];
            double const gi = g64[static_cast<std::size_t>((b * c.queries + i) * so + f)];
            want_out[static_cast<std::size_t>((b * c.queries + i) * so + f)] += wj * vj;
            want_dv[static_cast<std::size_t>((b * c.kv + j) * sv + f)] += wj * gi;
            dw[static_cast<std::size_t>(j)] += gi * vj;
          }
        }
        double dot = 0;
        for (index_t j = 0; j < c.kv; ++j) dot += w[static_cast<std::size_t>(j)] * dw[static_cast<std::size_t>(j)];
        for (index_t j = 0; j < len; ++j) {  // the masked scores were replaced: no gradient
          double const ds = w[static_cast<std::size_t>(j)] * (dw[static_cast<std::size_t>(j)] - dot) / scale;
          for (index_t f = 0; f < c.d; ++f) {
            want_dq[static_cast<std::size_t>((b * c.queries + i) * sq + f)] +=
                ds * k64[static_cast<std::size_t>((b * c.kv + j) * sk + f)];
            want_dk[static_cast<std::size_t>((b * c.kv + j) * sk + f)] +=
                ds * q64[static_cast<std::size_t>((b * c.queries + i) * sq + f)];
          }
        }
      }
    }
    // Only the rows' features are compared (the padding past them is not the kernels').
    auto features = [](std::vector<double> const& all, index_t rows, index_t stride, index_t width) {
      std::vector<double> out;
      for (index_t r = 0; r < rows; ++r) {
        for (index_t f = 0; f < width; ++f) out.push_back(all[static_cast<std::size_t>(r * stride + f)]);
      }
      return out;
    };
    auto host_features = [&](std::vector<T> const& all, index_t rows, index_t stride, index_t width) {
      return features(widened(all), rows, stride, width);
    };
    index_t const nq = c.batch * c.queries, nk = c.batch * c.kv;
    CHECK(first_difference(host_features(out.host(), nq, so, c.dv), features(want_out, nq, so, c.dv), tol) == "");
    CHECK(first_difference(host_features(dq.host(), nq, sq, c.d), features(want_dq, nq, sq, c.d), tol) == "");
    CHECK(first_difference(host_features(dk.host(), nk, sk, c.d), features(want_dk, nk, sk, c.d), tol) == "");
    CHECK(first_difference(host_features(dv.host(), nk, sv, c.dv), features(want_dv, nk, sv, c.dv), tol) == "");
  };
  // {batch, queries, kv, d, dv, repeat}
  std::vector<attention_case> const cases = {
      {2, 5, 7, 5, 3, 1},       // small products: loops (BLAS past 4,096 multiply-adds)
      {3, 9, 20, 16, 16, 1},    // float: the register tiles (values' features whole vectors of 16)
      {2, 70, 33, 8, 32, 1},    // more rows than a block
      {2, 6, 11, 4, 4, 0},      // no lengths
      {4, 6, 11, 4, 4, 6},      // a length per entry (d2l's 1-D lengths)
      {4, 6, 11, 4, 4, 12},     // a length per two entries (1-D lengths over heads)
      {3, 8, 13, 4, 5, 2},      // a length per two rows
      {1, 3, 1100, 16, 16, 1}   // past 1,024 keys: float's online softmax
  };
  for (auto const& c : cases) {
    check(float{}, c);
    check(double{}, c);
  }
}

}  // namespace conformance
