#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/print.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

// Expected strings come from PyTorch 1.13's own formatter
// (torch._tensor_str._tensor_str on the same values) with dimtensor's
// suffixes appended by torch._tensor_str._add_suffixes.

namespace print_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

template <class T, class... Named>
auto filled(T (*f)(dt::index_t), Named... named) {
  auto t = dt::empty<T>(named...);
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = f(i);
  return t;
}

float const nan_f = std::numeric_limits<float>::quiet_NaN();
float const inf_f = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("to_string prints floats as PyTorch does, with the dims appended", "[io][print]") {
  SECTION("a masked softmax output") {
    dt::tensor<float, Batch, Queries, KVPairs> w{{{0.4324f, 0.5676f, 0.0f, 0.0f}, {0.2216f, 0.3351f, 0.4433f, 0.0f}},
                                                 {{0.5f, 0.5f, 0.0f, 0.0f}, {0.3333f, 0.3333f, 0.3334f, 0.0f}}};
    CHECK(dt::to_string(w) ==
          "tensor([[[0.4324, 0.5676, 0.0000, 0.0000],\n"
          "         [0.2216, 0.3351, 0.4433, 0.0000]],\n"
          "\n"
          "        [[0.5000, 0.5000, 0.0000, 0.0000],\n"
          "         [0.3333, 0.3333, 0.3334, 0.0000]]],\n"
          "       dims=[Batch=2, Queries=2, KVPairs=4])");
  }
  SECTION("integral values") {
    CHECK(dt::to_string(dt::tensor<float, Batch, Queries>{{1, 2}, {3, 4}}) ==
          "tensor([[1., 2.],\n"
          "        [3., 4.]], dims=[Batch=2, Queries=2])");
    CHECK(dt::to_string(dt::zeros<float>(Batch(2), Queries(3))) ==
          "tensor([[0., 0., 0.],\n"
          "        [0., 0., 0.]], dims=[Batch=2, Queries=3])");
    CHECK(dt::to_string(dt::tensor<float, Batch>{-0.0f, 1.0f}) == "tensor([-0., 1.], dims=[Batch=2])");
  }
  SECTION("rank 0") {
    dt::tensor<float> s(std::array<dt::index_t, 0>{});
    s.fill(3.5f);
    CHECK(dt::to_string(s) == "tensor(3.5000, dims=[])");
    dt::tensor<double> d(std::array<dt::index_t, 0>{});
    d.fill(-2.0);
    CHECK(dt::to_string(d) == "tensor(-2., dims=[], dtype=float64)");
  }
  SECTION("scientific notation when the range needs it") {
    CHECK(dt::to_string(dt::tensor<float, Batch>{1e-5f, 1.0f, 0.5f}) ==
          "tensor([1.0000e-05, 1.0000e+00, 5.0000e-01], dims=[Batch=3])");
    CHECK(dt::to_string(dt::tensor<float, Batch>{1e9f, 1.0f}) == "tensor([1.0000e+09, 1.0000e+00], dims=[Batch=2])");
    CHECK(dt::to_string(dt::tensor<float, Batch, Queries>{{123456.0f, 0.5f}, {-2.25f, 0.0f}}) ==
          "tensor([[ 1.2346e+05,  5.0000e-01],\n"
          "        [-2.2500e+00,  0.0000e+00]], dims=[Batch=2, Queries=2])");
    CHECK(dt::to_string(dt::tensor<float, Batch>{1.0f, 2000.0f}) == "tensor([1.0000e+00, 2.0000e+03], dims=[Batch=2])");
    CHECK(dt::to_string(dt::tensor<float, Batch>{-1.5e-7f, 3.0f}) ==
          "tensor([-1.5000e-07,  3.0000e+00], dims=[Batch=2])");
  }
  SECTION("nan and inf") {
    CHECK(dt::to_string(dt::tensor<float, Batch>{nan_f, inf_f, -inf_f, 1.5f}) ==
          "tensor([   nan,    inf,   -inf, 1.5000], dims=[Batch=4])");
    // A NaN with its sign bit set prints as Python prints it, without a sign.
    CHECK(dt::to_string(dt::tensor<float, Batch>{-nan_f, inf_f, -inf_f, 1.5f}) ==
          "tensor([   nan,    inf,   -inf, 1.5000], dims=[Batch=4])");
    CHECK(dt::to_string(dt::tensor<float, Batch>{nan_f, 2.0f, -inf_f}) == "tensor([nan, 2., -inf], dims=[Batch=3])");
  }
  SECTION("float64 says its dtype") {
    CHECK(dt::to_string(dt::tensor<double, Batch, Queries>{{0.1, 0.25}}) ==
          "tensor([[0.1000, 0.2500]], dims=[Batch=1, Queries=2], dtype=float64)");
  }
}

TEST_CASE("to_string prints integers and bools plainly, right-aligned", "[io][print]") {
  CHECK(dt::to_string(dt::tensor<std::int64_t, Batch>{3, -12, 0, 100000}) ==
        "tensor([     3,    -12,      0, 100000], dims=[Batch=4])");
  CHECK(dt::to_string(dt::tensor<std::int32_t, Batch, Queries>{{7, -1}, {22, 5}}) ==
        "tensor([[ 7, -1],\n"
        "        [22,  5]], dims=[Batch=2, Queries=2], dtype=int32)");
  CHECK(dt::to_string(dt::tensor<bool, Batch>{true, false, true}) == "tensor([ True, False,  True], dims=[Batch=3])");
  CHECK(dt::to_string(dt::tensor<bool, Batch>{true, true}) == "tensor([True, True], dims=[Batch=2])");
}

TEST_CASE("to_string wraps long rows and long suffixes at 80 columns", "[io][print]") {
  CHECK(dt::to_string(filled<float>([](dt::index_t i) { return static_cast<float>(i) * 0.5f - 3.25f; }, KVPairs(30))) ==
        "tensor([-3.2500, -2.7500, -2.2500, -1.7500, -1.2500, -0.7500, -0.2500,  0.2500,\n"
        "         0.7500,  1.2500,  1.7500,  2.2500,  2.7500,  3.2500,  3.7500,  4.2500,\n"
        "         4.7500,  5.2500,  5.7500,  6.2500,  6.7500,  7.2500,  7.7500,  8.2500,\n"
        "         8.7500,  9.2500,  9.7500, 10.2500, 10.7500, 11.2500],\n"
        "       dims=[KVPairs=30])");
  CHECK(dt::to_string(filled<std::int64_t>([](dt::index_t i) { return i * 1000 - 7; }, KVPairs(40))) ==
        "tensor([   -7,   993,  1993,  2993,  3993,  4993,  5993,  6993,  7993,  8993,\n"
        "         9993, 10993, 11993, 12993, 13993, 14993, 15993, 16993, 17993, 18993,\n"
        "        19993, 20993, 21993, 22993, 23993, 24993, 25993, 26993, 27993, 28993,\n"
        "        29993, 30993, 31993, 32993, 33993, 34993, 35993, 36993, 37993, 38993],\n"
        "       dims=[KVPairs=40])");
  CHECK(dt::to_string(filled<float>([](dt::index_t i) { return static_cast<float>(i) / 3.0f; }, Batch(2), Queries(8))) ==
        "tensor([[0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333],\n"
        "        [2.6667, 3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000]],\n"
        "       dims=[Batch=2, Queries=8])");
}

TEST_CASE("to_string separates blocks of rank 3 and more by blank lines", "[io][print]") {
  CHECK(dt::to_string(filled<float>([](dt::index_t i) { return static_cast<float>(i) - 3.5f; }, Batch(2), Heads(1),
                                    Queries(2), KVPairs(2))) ==
        "tensor([[[[-3.5000, -2.5000],\n"
        "          [-1.5000, -0.5000]]],\n"
        "\n"
        "\n"
        "        [[[ 0.5000,  1.5000],\n"
        "          [ 2.5000,  3.5000]]]], dims=[Batch=2, Heads=1, Queries=2, KVPairs=2])");
}

TEST_CASE("to_string summarizes tensors of more than 1000 elements", "[io][print]") {
  CHECK(dt::to_string(filled<std::int64_t>([](dt::index_t i) { return i; }, KVPairs(1001))) ==
        "tensor([   0,    1,    2,  ...,  998,  999, 1000], dims=[KVPairs=1001])");
  CHECK(dt::to_string(filled<std::int64_t>([](dt::index_t i) { return i; }, KVPairs(1000))).find("...") ==
        std::string::npos);
  // The formatter sizes itself on the shown elements only (the hidden 1e9 would force scientific notation).
  auto big = filled<float>([](dt::index_t i) { return static_cast<float>(i) / 8; }, Batch(2), KVPairs(1000));
  CHECK(dt::to_string(big) ==
        "tensor([[0.0000e+00, 1.2500e-01, 2.5000e-01,  ..., 1.2462e+02, 1.2475e+02,\n"
        "         1.2488e+02],\n"
        "        [1.2500e+02, 1.2512e+02, 1.2525e+02,  ..., 2.4962e+02, 2.4975e+02,\n"
        "         2.4988e+02]], dims=[Batch=2, KVPairs=1000])");
  auto hidden = filled<float>([](dt::index_t i) { return i == 500 ? 1e9f : 1.0f; }, KVPairs(1001));
  CHECK(dt::to_string(hidden) == "tensor([1., 1., 1.,  ..., 1., 1., 1.], dims=[KVPairs=1001])");

  auto cube = filled<float>([](dt::index_t i) { return static_cast<float>(i) - 17; }, Batch(10), Queries(20), KVPairs(30));
  std::string const want =
      "tensor([[[ -17.,  -16.,  -15.,  ...,   10.,   11.,   12.],\n"
      "         [  13.,   14.,   15.,  ...,   40.,   41.,   42.],\n"
      "         [  43.,   44.,   45.,  ...,   70.,   71.,   72.],\n"
      "         ...,\n"
      "         [ 493.,  494.,  495.,  ...,  520.,  521.,  522.],\n"
      "         [ 523.,  524.,  525.,  ...,  550.,  551.,  552.],\n"
      "         [ 553.,  554.,  555.,  ...,  580.,  581.,  582.]],\n"
      "\n"
      "        [[ 583.,  584.,  585.,  ...,  610.,  611.,  612.],\n"
      "         [ 613.,  614.,  615.,  ...,  640.,  641.,  642.],\n"
      "         [ 643.,  644.,  645.,  ...,  670.,  671.,  672.],\n"
      "         ...,\n"
      "         [1093., 1094., 1095.,  ..., 1120., 1121., 1122.],\n"
      "         [1123., 1124., 1125.,  ..., 1150., 1151., 1152.],\n"
      "         [1153., 1154., 1155.,  ..., 1180., 1181., 1182.]],\n"
      "\n"
      "        [[1183., 1184., 1185.,  ..., 1210., 1211., 1212.],\n"
      "         [1213., 1214., 1215.,  ..., 1240., 1241., 1242.],\n"
      "         [1243., 1244., 1245.,  ..., 1270., 1271., 1272.],\n"
      "         ...,\n"
      "         [1693., 1694., 1695.,  ..., 1720., 1721., 1722.],\n"
      "         [1723., 1724., 1725.,  ..., 1750., 1751., 1752.],\n"
      "         [1753., 1754., 1755.,  ..., 1780., 1781., 1782.]],\n"
      "\n"
      "        ...,\n"
      "\n"
      "        [[4183., 4184., 4185.,  ..., 4210., 4211., 4212.],\n"
      "         [4213., 4214., 4215.,  ..., 4240., 4241., 4242.],\n"
      "         [4243., 4244., 4245.,  ..., 4270., 4271., 4272.],\n"
      "         ...,\n"
      "         [4693., 4694., 4695.,  ..., 4720., 4721., 4722.],\n"
      "         [4723., 4724., 4725.,  ..., 4750., 4751., 4752.],\n"
      "         [4753., 4754., 4755.,  ..., 4780., 4781., 4782.]],\n"
      "\n"
      "        [[4783., 4784., 4785.,  ..., 4810., 4811., 4812.],\n"
      "         [4813., 4814., 4815.,  ..., 4840., 4841., 4842.],\n"
      "         [4843., 4844., 4845.,  ..., 4870., 4871., 4872.],\n"
      "         ...,\n"
      "         [5293., 5294., 5295.,  ..., 5320., 5321., 5322.],\n"
      "         [5323., 5324., 5325.,  ..., 5350., 5351., 5352.],\n"
      "         [5353., 5354., 5355.,  ..., 5380., 5381., 5382.]],\n"
      "\n"
      "        [[5383., 5384., 5385.,  ..., 5410., 5411., 5412.],\n"
      "         [5413., 5414., 5415.,  ..., 5440., 5441., 5442.],\n"
      "         [5443., 5444., 5445.,  ..., 5470., 5471., 5472.],\n"
      "         ...,\n"
      "         [5893., 5894., 5895.,  ..., 5920., 5921., 5922.],\n"
      "         [5923., 5924., 5925.,  ..., 5950., 5951., 5952.],\n"
      "         [5953., 5954., 5955.,  ..., 5980., 5981., 5982.]]],\n"
      "       dims=[Batch=10, Queries=20, KVPairs=30])";
  CHECK(dt::to_string(cube) == want);
}

TEST_CASE("to_string of empty tensors, static dims, expressions and views", "[io][print]") {
  CHECK(dt::to_string(dt::zeros<float>(Batch(0), Queries(3))) == "tensor([], dims=[Batch=0, Queries=3])");
  CHECK(dt::to_string(dt::zeros<std::int64_t>(Batch(0))) == "tensor([], dims=[Batch=0], dtype=int64)");
  CHECK(dt::to_string(dt::ones<float>(Batch(1), Hidden::fixed<3>{})) == "tensor([[1., 1., 1.]], dims=[Batch=1, Hidden=3])");

  dt::tensor<float, Batch, Queries> x{{1, 2, 3}, {4, 5, 6}};
  CHECK(dt::to_string(x * 0.5f) ==
        "tensor([[0.5000, 1.0000, 1.5000],\n"
        "        [2.0000, 2.5000, 3.0000]], dims=[Batch=2, Queries=3])");
  CHECK(dt::to_string(x > 2.5f) ==
        "tensor([[False, False,  True],\n"
        "        [ True,  True,  True]], dims=[Batch=2, Queries=3])");
  dt::tensor<float, Queries, Batch> xt(x.storage(), x.data(), {3, 2}, {1, 3});
  CHECK(dt::to_string(xt) ==
        "tensor([[1., 4.],\n"
        "        [2., 5.],\n"
        "        [3., 6.]], dims=[Queries=3, Batch=2])");
}

TEST_CASE("operator<< prints what to_string returns; print_options change the layout", "[io][print]") {
  dt::tensor<float, Batch> x{0.123456f, 2.5f};
  std::ostringstream os;
  os << x << '|' << (x + 1.0f);
  CHECK(os.str() == "tensor([0.1235, 2.5000], dims=[Batch=2])|tensor([1.1235, 3.5000], dims=[Batch=2])");

  dt::print_options opts;
  opts.precision = 2;
  CHECK(dt::to_string(x, opts) == "tensor([0.12, 2.50], dims=[Batch=2])");
  opts.threshold = 1;
  opts.edgeitems = 0;  // (PyTorch 1.13 prints every element here, a slicing quirk: x[-0:] is all of x)
  CHECK(dt::to_string(dt::tensor<float, Batch>{1, 2, 3}, opts) == "tensor([...], dims=[Batch=3])");
  opts.edgeitems = 1;
  CHECK(dt::to_string(dt::tensor<float, Batch>{1, 2, 3}, opts) == "tensor([1.,  ..., 3.], dims=[Batch=3])");
}

}  // namespace print_test
