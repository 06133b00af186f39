// d2l, "Attention Pooling: Nadaraya-Watson Kernel Regression": 50 noisy
// samples of f(x) = 2 sin(x) + x^0.8, the prediction at 50 test points as
// attention pooling with a Gaussian kernel, then the parametric pooling
// (NWKernelRegression, nw_kernel_regression.hpp) trained with SGD as the
// book trains it, printing `epoch N, loss L` for each of its 5 epochs.
//
// Run as `example_nadaraya_watson [output folder]` (default: the current
// folder). It exits non-zero when a check fails:
//   - the pooled predictions equal a plain double-precision loop over the
//     kernel formula (independent of the library);
//   - every row of attention weights sums to 1;
//   - the predictions track the truth: their mean absolute error is below
//     0.8 times that of predicting the mean of y_train everywhere, and their
//     correlation with the truth is above 0.8 (both printed);
//   - training: the leave-one-out keys are x_train without the query's own
//     point; the loss of the last epoch is below that of the first, and w
//     grows (the kernel narrows, the book's observation);
//   - the trained predictions equal the kernel formula with the learned w,
//     written out in double, and the trained attention weights are sharper
//     (a larger mean row maximum) than the non-parametric ones.
// The samples come from dimtensor's seeded generator, not PyTorch's, so the
// numbers are not the book's; parity with d2l's code on the same data is
// checked by the parity tests from exported data.
// The tensors live on the default backend (the GPU in
// example_nadaraya_watson_cuda); what the host reads or writes element by
// element goes through copies made with dimtensor::to<dimtensor::cpu> (on
// the CPU, the tensor itself).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/viz.hpp>

#include "nw_kernel_regression.hpp"

namespace dt = dimtensor;

DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);
// The key-value pairs of the parametric model, and where leave_one_out gathers from.
DIMTENSOR_DIM(Pairs);
DIMTENSOR_DIM(Source);
DIMTENSOR_DIM(Epoch);

namespace {

int failures = 0;

void fail(std::string const& what) {
  std::cerr << "nadaraya_watson: " << what << '\n';
  ++failures;
}

// The mean over the queries of each row's largest weight: 1 / n for
// uniform weights, 1 when each query sees a single key.
template <class KV, class Weights>
double mean_row_max(Weights const& weights) {
  return dt::mean(dt::max<KV>(weights)).item();
}

// def f(x): return 2 * torch.sin(x) + x**0.8
auto f(auto const& x) { return 2.0f * dt::sin(x) + dt::pow(x, 0.8f); }

// def plot_kernel_reg(y_hat):
//     d2l.plot(x_test, [y_truth, y_hat], 'x', 'y', legend=['Truth', 'Pred'],
//              xlim=[0, 5], ylim=[-1, 5])
//     d2l.plt.plot(x_train, y_train, 'o', alpha=0.5);
template <class XTrain, class YTrain>
void plot_kernel_reg(dt::tensor<float, Test> const& x_test, dt::tensor<float, Test> const& y_truth,
                     dt::tensor<float, Test> const& y_hat, XTrain const& x_train, YTrain const& y_train,
                     std::filesystem::path const& file) {
  namespace viz = dt::viz;
  viz::series pred = viz::series_of("Pred", x_test, y_hat, viz::series::style::dashed);
  pred.color = "#bf00bf";  // d2l.plot's second format, 'm--': magenta
  viz::plot_options options;
  options.xlabel = "x";
  options.ylabel = "y";
  options.xlim = {0.0, 5.0};
  options.ylim = {-1.0, 5.0};
  viz::plot({viz::series_of("Truth", x_test, y_truth), pred,
             viz::series_of("", x_train, y_train, viz::series::style::markers)},
            file, options);
  std::cout << "wrote " << file.string() << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path const out_dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out_dir);
  dt::manual_seed(0);

  // n_train = 50
  // x_train, _ = torch.sort(torch.rand(n_train) * 5)
  // No sort op: std::sort on the host, whose copy is contiguous, then back to the default backend.
  auto const x_train_host = dt::to<dt::cpu>(dt::rand<float>(Train(50)) * 5.0f);
  std::sort(x_train_host.data(), x_train_host.data() + x_train_host.size());
  dt::tensor<float, Train> const x_train = dt::to<dt::default_backend>(x_train_host);
  // y_train = f(x_train) + torch.normal(0.0, 0.5, (n_train,))
  dt::tensor<float, Train> const y_train = f(x_train) + dt::normal<float>(0.0, 0.5, Train(50));
  // x_test = torch.arange(0, 5, 0.1); y_truth = f(x_test)
  auto const x_test = dt::arange<float, Test>(0, 5, 0.1);
  dt::tensor<float, Test> const y_truth = f(x_test);

  // X_repeat = x_test.repeat_interleave(n_train).reshape((-1, n_train))
  // attention_weights = nn.functional.softmax(-(X_repeat - x_train)**2 / 2, dim=1)
  // y_hat = torch.matmul(attention_weights, y_train)
  dt::tensor<float, Test, Train> const attention_weights = dt::nn::nadaraya_watson_weights<Train>(x_test, x_train);
  dt::tensor<float, Test> const y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train);

  // Host copies for the element access below.
  auto const x_test_host = dt::to<dt::cpu>(x_test);
  auto const y_truth_host = dt::to<dt::cpu>(y_truth);
  auto const y_hat_host = dt::to<dt::cpu>(y_hat);
  auto const y_train_host = dt::to<dt::cpu>(y_train);
  auto const weights_host = dt::to<dt::cpu>(attention_weights);

  std::cout << std::fixed << std::setprecision(4) << "   x_test   y_truth     y_hat\n";
  for (dt::index_t i = 0; i < x_test.size(); i += 7) {
    std::cout << std::setw(9) << x_test_host(Test(i)) << std::setw(10) << y_truth_host(Test(i)) << std::setw(10)
              << y_hat_host(Test(i)) << '\n';
  }
  std::cout << std::defaultfloat;

  // The same pooling, written out in double.
  double largest_diff = 0;
  for (dt::index_t i = 0; i < x_test.size(); ++i) {
    double numerator = 0;
    double denominator = 0;
    double row_sum = 0;
    for (dt::index_t j = 0; j < x_train.size(); ++j) {
      double const d = double(x_test_host(Test(i))) - double(x_train_host(Train(j)));
      double const kernel = std::exp(-d * d / 2);
      numerator += kernel * y_train_host(Train(j));
      denominator += kernel;
      row_sum += weights_host(Test(i), Train(j));
    }
    largest_diff = std::max(largest_diff, std::abs(numerator / denominator - y_hat_host(Test(i))));
    if (std::abs(row_sum - 1) > 1e-5) fail("a row of attention weights sums to " + std::to_string(row_sum));
  }
  std::cout << "largest difference from a double-precision loop: " << largest_diff << '\n';
  if (largest_diff > 1e-5) fail("the pooling differs from the kernel formula by " + std::to_string(largest_diff));

  // Tracking the truth: a Gaussian kernel of width 1 flattens the curve (the
  // book's point: the prediction is too smooth), so the error stays far from
  // 0; but the predictions must clearly beat ignoring x (predicting
  // mean(y_train) everywhere) and rise and fall with the truth. Values not
  // aligned with their keys (y_train reversed) fail both.
  float const y_mean = dt::mean(y_train).item();
  double const mae = dt::mean(dt::abs(y_hat - y_truth)).item();
  double const constant_mae = dt::mean(dt::abs(y_truth - y_mean)).item();
  double const bound = 0.8 * constant_mae;
  std::cout << "mean absolute error of y_hat: " << mae << " (bound: 0.8 x " << constant_mae
            << ", the error of predicting mean(y_train) = " << y_mean << " everywhere)\n";
  if (!(mae < bound)) fail("the predictions do not track the truth: mean absolute error " + std::to_string(mae));
  float const hat_mean = dt::mean(y_hat).item();
  float const truth_mean = dt::mean(y_truth).item();
  double const correlation =
      dt::mean((y_hat - hat_mean) * (y_truth - truth_mean)).item() /
      std::sqrt(dt::mean(dt::square(y_hat - hat_mean)).item() * dt::mean(dt::square(y_truth - truth_mean)).item());
  std::cout << "correlation of y_hat with y_truth: " << correlation << " (bound: 0.8)\n";
  if (!(correlation > 0.8)) fail("the predictions do not follow the truth: correlation " + std::to_string(correlation));

  plot_kernel_reg(x_test, y_truth, y_hat, x_train, y_train, out_dir / "nadaraya_watson_regression.png");

  // d2l.show_heatmaps(attention_weights.unsqueeze(0).unsqueeze(0),
  //                   xlabel='Sorted training inputs', ylabel='Sorted testing inputs')
  dt::viz::heatmap_options options;
  options.xlabel = "Sorted training inputs";
  options.ylabel = "Sorted testing inputs";
  auto const heatmap_file = out_dir / "nadaraya_watson_attention_weights.png";
  dt::viz::show_heatmap(attention_weights, heatmap_file, options);
  std::cout << "wrote " << heatmap_file.string() << '\n';

  // ---- Parametric attention pooling, trained -------------------------------
  // X_tile = x_train.repeat((n_train, 1)); Y_tile likewise
  // keys = X_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
  // values = Y_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
  auto const keys = nw::leave_one_out<Pairs, Source>(x_train);    // [Train, Pairs=49]
  auto const values = nw::leave_one_out<Pairs, Source>(y_train);  // [Train, Pairs=49]
  auto const keys_host = dt::to<dt::cpu>(keys);
  for (dt::index_t i = 0; i < x_train.size(); i += 7) {
    for (dt::index_t j = 0; j < keys.extent<Pairs>(); ++j) {
      if (keys_host(Train(i), Pairs(j)) != x_train_host(Train(j < i ? j : j + 1))) {
        fail("leave-one-out keys are wrong");
      }
    }
  }

  // net = NWKernelRegression(); loss = nn.MSELoss(reduction='none')
  // trainer = torch.optim.SGD(net.parameters(), lr=0.5)
  nw::nw_kernel_regression<Pairs> net(dt::default_generator());
  float const w_initial = net.w.item();
  std::cout << "initial w: " << w_initial << '\n';
  // print(f'epoch {epoch + 1}, loss {float(l.sum()):.6f}')
  std::vector<float> const losses = nw::train(net, x_train, keys, values, y_train, 5, 0.5, [](int epoch, float loss) {
    std::cout << "epoch " << epoch << ", loss " << std::fixed << std::setprecision(6) << loss << std::defaultfloat
              << '\n';
  });
  float const w_trained = net.w.item();
  std::cout << "trained w: " << w_trained << '\n';
  if (!(losses.back() < losses.front())) {
    fail("training did not lower the loss: " + std::to_string(losses.front()) + " -> " + std::to_string(losses.back()));
  }
  if (!(w_trained > w_initial)) fail("w did not grow: " + std::to_string(w_initial) + " -> " + std::to_string(w_trained));

  // keys = x_train.repeat((n_test, 1)); values = y_train.repeat((n_test, 1))
  // y_hat = net(x_test, keys, values).unsqueeze(1).detach()
  auto const rows = dt::zeros<float>(Test(x_test.size()), Pairs(x_train.size()));
  dt::tensor<float, Test, Pairs> const test_keys = rows + dt::rename<Train, Pairs>(x_train);
  dt::tensor<float, Test, Pairs> const test_values = rows + dt::rename<Train, Pairs>(y_train);
  dt::tensor<float, Test> y_hat_trained;
  {
    dt::autograd::no_grad const evaluating;
    y_hat_trained = net(x_test, test_keys, test_values);
  }
  auto const& trained_weights = net.attention_weights<Test>();
  auto const y_hat_trained_host = dt::to<dt::cpu>(y_hat_trained);

  // The same pooling with the learned w, written out in double.
  double trained_diff = 0;
  for (dt::index_t i = 0; i < x_test.size(); ++i) {
    double numerator = 0;
    double denominator = 0;
    for (dt::index_t j = 0; j < x_train.size(); ++j) {
      double const d = (double(x_test_host(Test(i))) - double(x_train_host(Train(j)))) * w_trained;
      double const kernel = std::exp(-d * d / 2);
      numerator += kernel * y_train_host(Train(j));
      denominator += kernel;
    }
    // Rows whose kernels all underflow are 0/0 in double; float's softmax
    // subtracts the maximum first, so only compare where double can.
    if (denominator > 0) {
      trained_diff = std::max(trained_diff, std::abs(numerator / denominator - y_hat_trained_host(Test(i))));
    }
  }
  std::cout << "trained pooling, largest difference from a double-precision loop: " << trained_diff << '\n';
  if (trained_diff > 1e-4) fail("the trained pooling differs from the kernel formula by " + std::to_string(trained_diff));

  double const sharp_before = mean_row_max<Train>(attention_weights);
  double const sharp_after = mean_row_max<Pairs>(trained_weights);
  std::cout << "mean largest attention weight per query: " << sharp_before << " (w = 1), " << sharp_after
            << " (trained w)\n";
  if (!(sharp_after > sharp_before)) fail("the trained attention weights are not sharper");

  // plot_kernel_reg(y_hat)
  plot_kernel_reg(x_test, y_truth, y_hat_trained, x_train, y_train, out_dir / "nadaraya_watson_trained_regression.png");
  // d2l.show_heatmaps(net.attention_weights.unsqueeze(0).unsqueeze(0),
  //                   xlabel='Sorted training inputs', ylabel='Sorted testing inputs')
  auto const trained_heatmap = out_dir / "nadaraya_watson_trained_attention_weights.png";
  dt::viz::show_heatmap(trained_weights, trained_heatmap, options);
  std::cout << "wrote " << trained_heatmap.string() << '\n';
  // animator = d2l.Animator(xlabel='epoch', ylabel='loss', xlim=[1, 5])
  dt::viz::plot_options curve;
  curve.xlabel = "epoch";
  curve.ylabel = "loss";
  curve.xlim = {1.0, 5.0};
  auto const epochs = dt::arange<float, Epoch>(1, 6, 1);
  auto const loss_curve = dt::from_range<float>(losses, Epoch(static_cast<dt::index_t>(losses.size())));
  auto const curve_file = out_dir / "nadaraya_watson_loss.png";
  dt::viz::plot({dt::viz::series_of("", epochs, loss_curve)}, curve_file, curve);
  std::cout << "wrote " << curve_file.string() << '\n';

  if (failures != 0) {
    std::cerr << "nadaraya_watson: " << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "all checks passed\n";
  return 0;
}
