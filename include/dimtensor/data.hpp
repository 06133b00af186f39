#pragma once
/// @file
/// @brief Data pipelines: the machine-translation corpus of d2l (data/nmt.hpp:
/// `read_data_nmt`, `preprocess_nmt`, `tokenize_nmt`, `vocab`,
/// `truncate_pad`, `build_array_nmt`, `nmt_dataset`, `load_data_nmt`), in
/// `namespace dimtensor::data`.

#include <dimtensor/data/bleu.hpp>
#include <dimtensor/data/nmt.hpp>
