#pragma once
/// @file
/// @brief Training: the optimizers (`optim::sgd`, `optim::adam`), gradient
/// clipping (`optim::clip_grad_norm`) and a training loop's progress
/// (`optim::progress`).

#include <dimtensor/optim/adam.hpp>
#include <dimtensor/optim/clip.hpp>
#include <dimtensor/optim/parameter_list.hpp>
#include <dimtensor/optim/progress.hpp>
#include <dimtensor/optim/sgd.hpp>
