#pragma once
/// @file
/// @brief `dist::nccl_communicator`: NCCL's collectives on `dimtensor::cuda`'s
/// tensors, with another communicator (MPI's world, or threads) for the
/// rest.  In the target dimtensor_dist_nccl, built with nvcc where the CUDA
/// toolkit has NCCL (cmake/DimtensorCuda.cmake); this header includes
/// neither CUDA nor NCCL.

#include <dimtensor/dist/communicator.hpp>

namespace dimtensor::dist {

/// @brief A communicator over the ranks of @p control whose `all_reduce`
/// and `broadcast` of tensors in device memory run on NCCL, one rank per
/// GPU: rank 0 makes NCCL's unique id and @p control broadcasts it (the
/// only thing it carries for NCCL), then every rank joins on @p device
/// (the current one for -1).  What takes host memory (the shape checks,
/// all_gather and reduce_scatter, which stage through the host, tensors of
/// host backends) goes over @p control.  NCCL refuses two ranks on one GPU:
/// a machine with one GPU runs one rank.  `device_error` naming the call
/// and NCCL's words when NCCL or CUDA fail.  Collective over @p control.
communicator nccl_communicator(communicator const& control, int device = -1);

}  // namespace dimtensor::dist
