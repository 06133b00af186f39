// README.zh-CN.md: the values of the rejected listing (the first example's scores).
#include <iostream>

#include <dimtensor/dimtensor.hpp>
namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
// @main
dt::tensor<float, Batch, Queries, KVPairs> scores = dt::rand<float>(Batch(2), Queries(2), KVPairs(4));
