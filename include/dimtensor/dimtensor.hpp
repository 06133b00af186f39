#pragma once
/// @file
/// @brief Everything: `#include <dimtensor/dimtensor.hpp>`.

#include <dimtensor/config.hpp>
#include <dimtensor/version.hpp>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/expression.hpp>
#include <dimtensor/core/math.hpp>
#include <dimtensor/core/tensor.hpp>

#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>
