// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace vn::views {

struct ModelReportOptions {
  bool show_layers = true;   ///< one entry per node with its inputs and outputs
  bool show_attrs = false;   ///< node attributes under each node
  bool show_weights = false; ///< every initializer with its statistics
};

/// The `inspect model` report: model header, graph inputs and outputs, initializer count and
/// size, and per node "Node i | name [Op: Type]" with typed inputs and outputs.
std::string format_model_report(const Model& model, const ModelReportOptions& options);

}  // namespace vn::views
