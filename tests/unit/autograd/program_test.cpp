// Tests of autograd/program.hpp used directly, without an operation above
// them: the node of a view (make_view_node), which every view records.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include <dimtensor/autograd/program.hpp>
#include <dimtensor/dimtensor.hpp>

namespace dt = dimtensor;
namespace ag = dimtensor::autograd;

namespace {
DIMTENSOR_DIM(Row);
DIMTENSOR_DIM(Col);

// Extents or strides padded to the program's rank: leading @p fill.
ag::padded_extents padded(std::vector<dt::index_t> const& tail, dt::index_t fill) {
  ag::padded_extents out{};
  for (auto& e : out) e = fill;
  for (std::size_t i = 0; i < tail.size(); ++i) out[dt::kernel::max_rank - tail.size() + i] = tail[i];
  return out;
}
}  // namespace

TEST_CASE("make_view_node writes the view's gradient where the view reads its source", "[autograd][program]") {
  dt::tensor<double, Row, Col> x{{1, 2, 3}, {4, 5, 6}};
  x.requires_grad_();
  // The gradient of a [Col=2] view of x's second column (elements 1 and 4).
  std::vector<double> g{10, 20};
  ag::tensor_state out;
  out.grad_data = g.data();

  SECTION("into an empty gradient: zeros where the view does not read") {
    auto const node = ag::make_view_node<dt::cpu, double>("test view", x.grad_state(), x.size(), padded({2}, 1),
                                                          padded({3}, 0), 1);
    REQUIRE(node->inputs.size() == 1);
    CHECK(node->inputs.front() == x.grad_state());
    CHECK(node->name() == "test view");
    node->backward(out);
    auto const gx = x.grad();
    CHECK(gx(Row(0), Col(0)) == 0);
    CHECK(gx(Row(0), Col(1)) == 10);
    CHECK(gx(Row(1), Col(1)) == 20);
    CHECK(gx(Row(1), Col(2)) == 0);
  }
  SECTION("added to an existing gradient; a view in the source's order hands the gradient as it is") {
    std::vector<double> whole{1, 1, 1, 1, 1, 1};
    ag::tensor_state all;
    all.grad_data = whole.data();
    // The whole of x, in its own order: the in-order path.
    ag::make_view_node<dt::cpu, double>("whole", x.grad_state(), x.size(), padded({2, 3}, 1), padded({3, 1}, 0), 0)
        ->backward(all);
    ag::make_view_node<dt::cpu, double>("column", x.grad_state(), x.size(), padded({2}, 1), padded({3}, 0), 1)
        ->backward(out);
    auto const gx = x.grad();
    CHECK(gx(Row(0), Col(0)) == 1);
    CHECK(gx(Row(0), Col(1)) == 11);
    CHECK(gx(Row(1), Col(1)) == 21);
    CHECK(gx(Row(1), Col(2)) == 1);
  }
}
