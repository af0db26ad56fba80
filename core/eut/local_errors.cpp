// SPDX-License-Identifier: Apache-2.0
#include "core/eut/local_errors.h"

#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/engine/calibration.h"
#include "core/ops/op_registry.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/isolate.h"

namespace vn::eut {
namespace {

// The dtype and shape of every tensor of `model` on `feeds`, from one streamed reference run that
// keeps none of the tensors: what isolating needs where the model declares no type.
Result<std::unordered_map<std::string, ValueInfo>> tensor_types(const Model& model, const TensorMap& feeds,
                                                                 const IsolatedLocalErrors& options) {
  ref::ReferenceBackend reference;
  PrepareOptions prep;
  prep.mark_all = true;
  prep.num_threads = options.threads;
  VN_RETURN_IF_ERROR(reference.prepare(model, prep));
  std::unordered_map<std::string, ValueInfo> types;
  RunOptions run;
  run.stream = true;
  run.cancel = options.cancel;
  run.observer = [&](int64_t, const Node&, const TensorMap& outputs) {
    for (auto& [name, info] : surgeon::value_types_of(outputs)) types.emplace(name, std::move(info));
    return true;
  };
  VN_ASSIGN_OR_RETURN(TensorMap rest, reference.run(feeds, run));
  for (auto& [name, info] : surgeon::value_types_of(rest)) types.emplace(name, std::move(info));
  return types;
}

}  // namespace

Status add_isolated_local_errors(LayerwiseComparison& result, const Model& model, const TensorMap& feeds,
                                 EngineUnderTest& engine, const IsolatedLocalErrors& options) {
  // Layers by the node they report (graph_layers: one per node), and their outputs' positions.
  std::unordered_map<int64_t, size_t> layer_of;
  surgeon::IsolateOptions isolate;
  for (size_t j = 0; j < result.layers.size(); ++j) {
    LayerComparison& l = result.layers[j];
    l.local.clear();
    l.local_skipped.clear();
    if (l.layer.node < 0) continue;
    layer_of.emplace(l.layer.node, j);
    isolate.nodes.push_back(l.layer.node);
  }
  VN_ASSIGN_OR_RETURN(isolate.known, tensor_types(model, feeds, options));
  VN_ASSIGN_OR_RETURN(std::vector<surgeon::IsolatedModel> chunks,
                      surgeon::isolate_in_chunks(model, isolate, options.chunk_bytes));
  // int8 isolated layers quantize their tensors with the whole model's scales, under the names the
  // isolated models give them: calibrating an isolated model on its own would find other scales.
  std::optional<engine::ScaleTable> scales;
  if (engine::mask_has(options.build.allowed, engine::PrecisionId::kInt8)) {
    VN_ASSIGN_OR_RETURN(engine::ObtainedScales obtained,
                        engine::obtain_int8_scales(model, options.build.int8, options.build.input_shapes,
                                                   ops::reference_registry(), options.threads));
    scales = std::move(obtained.scales);
  }
  for (const surgeon::IsolatedModel& chunk : chunks) {
    engine::BuildOptions build = options.build;
    if (scales) {
      engine::ScaleTable renamed;
      for (const auto* list : {&chunk.feeds, &chunk.outputs}) {
        for (const surgeon::IsolatedValue& v : *list) {
          if (auto it = scales->find(v.original); it != scales->end()) renamed[v.name] = it->second;
        }
      }
      build.int8.scales = std::move(renamed);
    }
    // The reference's values of what the chunk reads and writes.
    PrepareOptions ref_prep;
    ref_prep.replace_outputs = true;
    ref_prep.num_threads = options.threads;
    std::unordered_set<std::string> wanted;
    for (const auto* list : {&chunk.feeds, &chunk.outputs}) {
      for (const surgeon::IsolatedValue& v : *list) {
        if (wanted.insert(v.original).second) ref_prep.outputs.push_back(v.original);
      }
    }
    ref::ReferenceBackend reference;
    VN_RETURN_IF_ERROR(reference.prepare(model, ref_prep));
    RunOptions run;
    run.cancel = options.cancel;
    VN_ASSIGN_OR_RETURN(TensorMap values, reference.run(feeds, run));
    VN_ASSIGN_OR_RETURN(TensorMap chunk_feeds, surgeon::isolated_feeds(chunk, values));

    const auto skip_all = [&](const std::string& why) {
      for (const surgeon::IsolatedNode& n : chunk.nodes) {
        if (auto it = layer_of.find(n.node); it != layer_of.end()) result.layers[it->second].local_skipped = why;
      }
    };
    PrepareOptions prep;
    prep.num_threads = options.threads;
    Result<std::unique_ptr<Build>> built = engine.build(chunk.model, build, prep);
    if (!built.ok()) {
      if (built.status().code() == StatusCode::kCancelled) return built.status();
      skip_all(fmt::format("the engine cannot build the isolated layers: {}", built.status().message()));
      continue;
    }
    RunOptions test_run;
    test_run.cancel = options.cancel;
    Result<TensorMap> local = (*built)->backend().run(chunk_feeds, test_run);
    if (!local.ok()) {
      if (local.status().code() == StatusCode::kCancelled) return local.status();
      skip_all(fmt::format("the engine cannot run the isolated layers: {}", local.status().message()));
      continue;
    }
    for (const surgeon::IsolatedNode& n : chunk.nodes) {
      const auto it = layer_of.find(n.node);
      if (it == layer_of.end()) continue;
      LayerComparison& l = result.layers[it->second];
      TensorMap test, ref;
      for (const surgeon::IsolatedValue& out : n.outputs) {
        const Tensor* t = local->find(out.name);
        const Tensor* r = values.find(out.original);
        if (!t || !r) continue;
        test.set(out.original, *t);
        ref.set(out.original, *r);
      }
      // In the layer's output order, as the streamed local errors are.
      ResultsComparison cmp = compare_results(test, ref, options.compare);
      for (const std::string& name : l.layer.outputs) {
        for (TensorComparison& tc : cmp.tensors) {
          if (tc.name == name) l.local.push_back(std::move(tc));
        }
      }
      if (l.local.empty()) l.local_skipped = "the engine returned none of its isolated outputs";
    }
  }
  result.local_errors = true;
  rank_culprits(result);
  return Status::OK();
}

}  // namespace vn::eut
