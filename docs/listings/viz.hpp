// Harness of docs/viz.md's program `viz`: the values the page draws, made as
// d2l's attention chapter makes them (docs/d2l_mapping.md spells out each step).
#include <algorithm>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
namespace dt = dimtensor;

DIMTENSOR_DIM(Train);  // Nadaraya–Watson's training points
// @main
dt::manual_seed(0);
// Multi-head attention's weights: 2 batch entries, 4 heads, 3 queries over 10 key-value pairs.
dt::tensor<float, Batch, Heads, Queries, KVPairs> const attention_weights =
    dt::softmax<KVPairs>(dt::randn<float>(Batch(2), Heads(4), Queries(3), KVPairs(10)));
// Nadaraya–Watson regression: 50 sorted training points, 50 test points along Points.
auto const f = [](auto const& x) { return 2.0f * dt::sin(x) + dt::pow(x, 0.8f); };
dt::tensor<float, Train> x_train = dt::rand<float>(Train(50)) * 5.0f;
std::sort(x_train.data(), x_train.data() + x_train.size());
dt::tensor<float, Train> const y_train = f(x_train) + dt::normal<float>(0.0, 0.5, Train(50));
auto const test_points = dt::arange<float, Points>(0, 5, 0.1);
dt::tensor<float, Points> const y_truth = f(test_points);
dt::tensor<float, Points> const y_hat = dt::nn::nadaraya_watson<Train>(test_points, x_train, y_train);
// Its attention weights as one [Queries, KVPairs] matrix.
dt::tensor<float, Queries, KVPairs> const weights =
    dt::rename<Points, Queries>(dt::rename<Train, KVPairs>(dt::nn::nadaraya_watson_weights<Train>(test_points, x_train)));
// A training run's losses, one per epoch.
std::vector<double> epochs;
std::vector<double> losses;
for (int epoch = 1; epoch <= 10; ++epoch) {
  epochs.push_back(epoch);
  losses.push_back(2.0 / epoch);
}
