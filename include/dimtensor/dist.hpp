#pragma once
/// @file
/// @brief Training on more than one process: communicators, the collectives
/// on tensors, data-parallel gradients, and the thread world
/// (docs/distributed.md).  MPI's world is `dimtensor/dist/mpi.hpp`, in the
/// target dimtensor::dist.

#include <dimtensor/dist/collectives.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/data_parallel.hpp>
#include <dimtensor/dist/sampler.hpp>
#include <dimtensor/dist/threads.hpp>
