// Backend conformance, the batched matrix product (gemm.hpp):
// backend_gemm_batched on every backend (cpu, thrust_cpp, thrust_omp) for
// float and double (BLAS where the build has it) and int64 (the reference
// kernel), with each operand row-major, transposed, sliced (no unit stride,
// which BLAS cannot read in place) or broadcast over the batch, the result
// row-major, column-major or sliced; vectors, k = 0, empty batches, and
// sizes that split a product among threads.  Results are compared with a
// plain triple loop in double: exactly for integers, for floating point
// within a bound on the rounding of a dot product of length k; elements of
// the result's buffer between its strided elements must stay untouched.
#include "unit/backends/conformance/conformance.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace conformance {
namespace {

/// How a batch of rows x cols matrices lies in its buffer.
enum class layout {
  row_major,    // [batch, rows, cols]
  col_major,    // each matrix transposed: [batch, cols, rows]
  sliced,       // every other column of [batch, rows, 2 cols + 1]: no unit stride
  broadcast,    // one row-major matrix for the whole batch (batch stride 0)
};

char const* layout_name(layout l) {
  switch (l) {
    case layout::row_major: return "row-major";
    case layout::col_major: return "column-major";
    case layout::sliced: return "sliced";
    case layout::broadcast: return "broadcast";
  }
  return "?";
}

/// The strides of @p l for rows x cols matrices, and the buffer's size.
struct placement {
  index_t batch_stride, row_stride, col_stride, size;
};

placement place(layout l, index_t batch, index_t rows, index_t cols) {
  switch (l) {
    case layout::row_major: return {rows * cols, cols, 1, batch * rows * cols};
    case layout::col_major: return {rows * cols, 1, rows, batch * rows * cols};
    case layout::sliced: return {rows * (2 * cols + 1), 2 * cols + 1, 2, batch * rows * (2 * cols + 1)};
    case layout::broadcast: return {0, cols, 1, rows * cols};
  }
  return {};
}

/// Element (b, r, c) of a batch placed as @p p.
std::size_t at(placement const& p, index_t b, index_t r, index_t c) {
  return static_cast<std::size_t>(b * p.batch_stride + r * p.row_stride + c * p.col_stride);
}

/// One product's sizes.
struct sizes {
  index_t batch, m, n, k;
};

/// Runs C = A · B on backend Bk with the given layouts and compares C's
/// whole buffer with a triple loop over the same inputs.
template <class Bk, class T>
void check_product(sizes s, layout la, layout lb, layout lc, values& gen) {
  INFO(type_name<T>() << " batch " << s.batch << ", m " << s.m << ", n " << s.n << ", k " << s.k << "; A "
                      << layout_name(la) << ", B " << layout_name(lb) << ", C " << layout_name(lc));
  placement const pa = place(la, s.batch, s.m, s.k);
  placement const pb = place(lb, s.batch, s.k, s.n);
  placement const pc = place(lc, s.batch, s.m, s.n);
  // The gaps of sliced operands hold values too, which a product must not read.
  auto const a = gen.uniform<T>(pa.size, -4, 4);
  auto const b = gen.uniform<T>(pb.size, -4, 4);
  buffer<Bk, T> const ab(a);
  buffer<Bk, T> const bb(b);
  buffer<Bk, T> cb(poisoned<T>(pc.size));
  dt::backend_gemm_batched(Bk{}, s.batch, s.m, s.n, s.k,
                           dt::backends::cpu::strided_matrix<T const>{ab.data(), pa.batch_stride, pa.row_stride,
                                                                      pa.col_stride},
                           dt::backends::cpu::strided_matrix<T const>{bb.data(), pb.batch_stride, pb.row_stride,
                                                                      pb.col_stride},
                           dt::backends::cpu::strided_matrix<T>{cb.data(), pc.batch_stride, pc.row_stride,
                                                                pc.col_stride});
  auto const c = cb.host();

  std::vector<double> want(static_cast<std::size_t>(pc.size), -12345.0);
  std::vector<double> bound(want.size(), 0.0);  // sum of |a||b|: what rounding scales with
  for (index_t bi = 0; bi < s.batch; ++bi) {
    for (index_t r = 0; r < s.m; ++r) {
      for (index_t col = 0; col < s.n; ++col) {
        double acc = 0;
        double abs_acc = 0;
        for (index_t p = 0; p < s.k; ++p) {
          double const x = static_cast<double>(a[at(pa, bi, r, p)]) * static_cast<double>(b[at(pb, bi, p, col)]);
          acc += x;
          abs_acc += std::abs(x);
        }
        want[at(pc, bi, r, col)] = acc;
        bound[at(pc, bi, r, col)] = abs_acc;
      }
    }
  }
  std::string first;
  for (std::size_t e = 0; e < want.size() && first.empty(); ++e) {
    double const got = static_cast<double>(c[e]);
    double allowed = 0;
    if constexpr (std::is_floating_point_v<T>) {
      allowed = 2.0 * static_cast<double>(s.k + 1) * std::numeric_limits<T>::epsilon() * bound[e];
    }
    if (!(std::abs(got - want[e]) <= allowed)) {
      first = "element " + std::to_string(e) + ": " + std::to_string(got) + ", want " + std::to_string(want[e]);
    }
  }
  CHECK(first == "");
}

}  // namespace

TEMPLATE_TEST_CASE("conformance: backend_gemm_batched on every layout of its operands",
                   "[backends][conformance][gemm]", CONFORMANCE_TEST_BACKENDS) {
  using Bk = TestType;
  values gen(201);
  std::vector<layout> const operand_layouts = {layout::row_major, layout::col_major, layout::sliced,
                                               layout::broadcast};
  std::vector<layout> const result_layouts = {layout::row_major, layout::col_major, layout::sliced};

  SECTION("small products, every combination of layouts") {
    for (sizes s : {sizes{2, 3, 4, 5}, sizes{1, 1, 1, 1}, sizes{3, 17, 1, 9}, sizes{2, 1, 20, 7}}) {
      for (layout la : operand_layouts) {
        for (layout lb : operand_layouts) {
          for (layout lc : result_layouts) {
            check_product<Bk, float>(s, la, lb, lc, gen);
            check_product<Bk, double>(s, la, lb, lc, gen);
            check_product<Bk, std::int64_t>(s, la, lb, lc, gen);
          }
        }
      }
    }
  }

  SECTION("k = 0 writes zeros; an empty batch or matrix writes nothing") {
    for (layout lc : result_layouts) {
      check_product<Bk, float>({2, 4, 3, 0}, layout::row_major, layout::row_major, lc, gen);
      check_product<Bk, double>({2, 4, 3, 0}, layout::col_major, layout::sliced, lc, gen);
      check_product<Bk, std::int64_t>({2, 4, 3, 0}, layout::row_major, layout::row_major, lc, gen);
      check_product<Bk, float>({0, 3, 3, 3}, layout::row_major, layout::row_major, lc, gen);
      check_product<Bk, double>({2, 0, 3, 3}, layout::row_major, layout::row_major, lc, gen);
      check_product<Bk, std::int64_t>({2, 3, 0, 3}, layout::row_major, layout::row_major, lc, gen);
    }
  }

  SECTION("products large enough to be split among threads") {
    // Two products, each one thread's; one product cut into row blocks; an
    // integer batch through the reference kernel's row blocks.
    for (sizes s : {sizes{2, 130, 70, 40}, sizes{1, 150, 70, 40}}) {
      check_product<Bk, float>(s, layout::row_major, layout::row_major, layout::row_major, gen);
      check_product<Bk, double>(s, layout::col_major, layout::sliced, layout::col_major, gen);
      check_product<Bk, float>(s, layout::broadcast, layout::col_major, layout::sliced, gen);
    }
    check_product<Bk, std::int64_t>({3, 70, 60, 30}, layout::row_major, layout::col_major, layout::row_major, gen);
  }

  SECTION("a known product") {
    // [[1, 2], [3, 4]] · [[5, 6], [7, 8]] = [[19, 22], [43, 50]], and the
    // same with the left matrix transposed in place: [[26, 30], [38, 44]].
    buffer<Bk, double> const a({1, 2, 3, 4});
    buffer<Bk, double> const b({5, 6, 7, 8});
    buffer<Bk, double> c(poisoned<double>(4));
    using const_matrix = dt::backends::cpu::strided_matrix<double const>;
    using matrix = dt::backends::cpu::strided_matrix<double>;
    dt::backend_gemm_batched(Bk{}, 1, 2, 2, 2, const_matrix{a.data(), 4, 2, 1}, const_matrix{b.data(), 4, 2, 1},
                             matrix{c.data(), 4, 2, 1});
    CHECK(c.host() == std::vector<double>{19, 22, 43, 50});
    dt::backend_gemm_batched(Bk{}, 1, 2, 2, 2, const_matrix{a.data(), 4, 1, 2}, const_matrix{b.data(), 4, 2, 1},
                             matrix{c.data(), 4, 2, 1});
    CHECK(c.host() == std::vector<double>{26, 30, 38, 44});
  }
}

}  // namespace conformance
