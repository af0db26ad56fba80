// SPDX-License-Identifier: Apache-2.0
// Quick start, adding an op: write the kernel in the family file of its ONNX category
// (core/ops/<category>/<family>.cpp), register it in that file's register_<family>_ops at every
// since-version whose semantics it implements, and add a test in tests/ops/.
#include "core/ops/op_registry.h"

namespace vn::ops {

void register_all_ops(OpRegistry& registry) { (void)registry; }

}  // namespace vn::ops
