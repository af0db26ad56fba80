// SPDX-License-Identifier: Apache-2.0
// `--engine-model FILE`: the engine under test runs the user's own converted model (a float16 or
// QDQ model made by onnxconverter-common, ORT's quantizer or Vernier) in place of the model the
// reference runs, tensors paired by name. Triage and the debug tools build parts of the model
// (an extracted layer, reduce candidates); each part runs as the same part of the user's model.
#pragma once

#include <memory>
#include <string>

#include "core/eut/engine_under_test.h"
#include "core/ir/graph.h"

namespace vn::eut {

/// `inner` (the built-in engine or a runner's) running `converted`, read from `path`, in place of
/// the models it is asked to build. A build of a model whose graph inputs and outputs are tensors
/// of `converted` (the original model, or a part of it: an extracted layer, a reduce candidate)
/// runs the part of `converted` between those names: its graph inputs keep the names and types the
/// part declares, with a Cast where `converted` holds the tensor in another type (float16 for
/// float32), so the same feeds serve both; tensors asked for that `converted` lacks are not
/// returned (the comparison lists them as missing). An `inner` that lowers precision itself gets
/// the build flags (the built-in engine builds float16 tensors in float16 only with --fp16); one
/// that runs the file it is given gets them without their precisions (allowed, layer precisions,
/// constraints), so the user's model runs as it is and the flags only set the tolerance preset.
/// Its builds never run layers alone (the built-in engine's layers are those of `converted`), so
/// local errors come from an isolated-layers model, whose renamed tensors `converted` lacks: those
/// builds fail naming the tensor. Build errors: kInvalidArgument naming a boundary tensor that
/// `converted` lacks or whose type its shape inference left unknown; extract's; `inner`'s.
std::shared_ptr<EngineUnderTest> engine_model_engine(std::shared_ptr<EngineUnderTest> inner,
                                                     std::shared_ptr<const Model> converted, std::string path);

}  // namespace vn::eut
