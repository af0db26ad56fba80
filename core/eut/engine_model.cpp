// SPDX-License-Identifier: Apache-2.0
#include "core/eut/engine_model.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "core/surgeon/graph_edit.h"
#include "core/surgeon/surgeon.h"

namespace vn::eut {
namespace {

// A build of a part of the user's model: the part (which the inner build points into) and the
// inner build.
class PartBuild final : public Build {
 public:
  PartBuild(std::unique_ptr<Model> part, std::unique_ptr<Build> inner)
      : part_(std::move(part)), inner_(std::move(inner)) {}

  Backend& backend() override { return inner_->backend(); }
  std::vector<BuiltLayer> layers() const override { return inner_->layers(); }
  std::shared_ptr<const engine::Plan> plan() const override { return inner_->plan(); }
  std::optional<engine::TacticReplay> tactic_replay() const override { return inner_->tactic_replay(); }
  std::vector<std::filesystem::path> artifacts() const override { return inner_->artifacts(); }
  // What the engine ran: the inner engine's own conversion of the part when it made one, else the
  // part, so that a bundle holds it as engine_model.onnx.
  const Model* converted_model() const override {
    const Model* inner = inner_->converted_model();
    return inner ? inner : part_.get();
  }

 private:
  std::unique_ptr<Model> part_;
  std::unique_ptr<Build> inner_;
};

class EngineModelEngine final : public EngineUnderTest {
 public:
  EngineModelEngine(std::shared_ptr<EngineUnderTest> inner, std::shared_ptr<const Model> converted, std::string path)
      : inner_(std::move(inner)),
        converted_(std::move(converted)),
        path_(std::move(path)),
        types_(surgeon::declared_types(converted_->graph)) {}

  std::string name() const override { return inner_->name(); }

  Result<std::string> describe() override {
    VN_ASSIGN_OR_RETURN(std::string inner, inner_->describe());
    return fmt::format("{} running {}", inner, path_);
  }

  Result<Capabilities> capabilities() override {
    VN_ASSIGN_OR_RETURN(Capabilities c, inner_->capabilities());
    c.layers_alone = false;
    return c;
  }

  Result<std::unique_ptr<Build>> build(const Model& model, const engine::BuildOptions& build,
                                       const PrepareOptions& prepare) override {
    VN_ASSIGN_OR_RETURN(Model part, part_of(model));
    auto owned = std::make_unique<Model>(std::move(part));
    PrepareOptions prep = prepare;
    // Tensors the user's model lacks (Vernier's own names) cannot be asked of it.
    std::erase_if(prep.outputs, [&](const std::string& name) { return types_.count(name) == 0; });
    // An engine that lowers precision itself gets the flags, as TensorRT gets --fp16 with a
    // float16 ONNX file. One that runs the file it is given would get the user's model converted
    // again, which is another model: it runs it as it is, and the flags only set the tolerance
    // preset, where the caller applies it.
    VN_ASSIGN_OR_RETURN(const Capabilities caps, inner_->capabilities());
    engine::BuildOptions flags = build;
    if (!caps.lowers_precision) {
      flags.allowed = engine::kFp32;
      flags.layer_precisions.clear();
      flags.constraints = engine::PrecisionConstraints::kNone;
    }
    VN_ASSIGN_OR_RETURN(std::unique_ptr<Build> inner, inner_->build(*owned, flags, prep));
    return std::unique_ptr<Build>(std::make_unique<PartBuild>(std::move(owned), std::move(inner)));
  }

  // The bundle writes the part as engine_model.onnx and adds --engine-model itself.
  std::vector<std::string> command_line() const override { return inner_->command_line(); }

 private:
  // The part of the user's model between the graph inputs and outputs of `model`, its inputs
  // declared as `model` declares them.
  Result<Model> part_of(const Model& model) const {
    std::vector<surgeon::BoundaryTensor> inputs, outputs;
    std::vector<const ValueInfo*> declared;  // per input: as `model` declares it
    for (const ValueInfo* v : model.graph.runtime_inputs()) {
      VN_ASSIGN_OR_RETURN(const ValueInfo* held, held_type(*v));
      inputs.push_back({v->name, v->shape ? v->shape : held->shape, held->dtype});
      declared.push_back(v);
    }
    for (const ValueInfo& v : model.graph.outputs) {
      VN_ASSIGN_OR_RETURN(const ValueInfo* held, held_type(v));
      outputs.push_back({v.name, std::nullopt, held->dtype});
    }
    VN_ASSIGN_OR_RETURN(surgeon::Rewrite rewrite, surgeon::extract(*converted_, inputs, outputs, nullptr));
    Model part = std::move(rewrite.model);
    // A boundary input the user's model holds in another type than the part declares: the graph
    // input keeps the declared type and a Cast gives its readers the type they were made for.
    surgeon::NameAllocator names(part);
    std::vector<Node> casts;
    for (size_t i = 0; i < declared.size(); ++i) {
      ValueInfo& input = *std::find_if(part.graph.inputs.begin(), part.graph.inputs.end(),
                                       [&](const ValueInfo& v) { return v.name == declared[i]->name; });
      if (!declared[i]->dtype || input.dtype == declared[i]->dtype) continue;
      const std::string cast = names.take(input.name + "__engine_model");
      for (Node& n : part.graph.nodes) std::replace(n.inputs.begin(), n.inputs.end(), input.name, cast);
      Node node;
      node.name = cast;
      node.op_type = "Cast";
      node.inputs = {input.name};
      node.outputs = {cast};
      Attribute to;
      to.name = "to";
      to.type = AttrType::kInt;
      to.i = dtype_to_onnx(*input.dtype);
      node.attributes.push_back(std::move(to));
      casts.push_back(std::move(node));
      input.dtype = declared[i]->dtype;
    }
    part.graph.nodes.insert(part.graph.nodes.begin(), casts.begin(), casts.end());
    return part;
  }

  // The tensor of the user's model named as `v`, with a known type.
  Result<const ValueInfo*> held_type(const ValueInfo& v) const {
    const auto it = types_.find(v.name);
    VN_RETURN_IF_NOT(it != types_.end(), StatusCode::kInvalidArgument,
                     "--engine-model: {} has no tensor '{}' (the engine model pairs with the model by tensor names; "
                     "a model Vernier rewrote, such as an isolated-layers model, has names of its own)",
                     path_, v.name);
    VN_RETURN_IF_NOT(it->second.dtype.has_value(), StatusCode::kInvalidArgument,
                     "--engine-model: the type of '{}' in {} is unknown (its shape inference could not tell it)",
                     v.name, path_);
    return &it->second;
  }

  std::shared_ptr<EngineUnderTest> inner_;
  std::shared_ptr<const Model> converted_;
  std::string path_;
  std::unordered_map<std::string, ValueInfo> types_;
};

}  // namespace

std::shared_ptr<EngineUnderTest> engine_model_engine(std::shared_ptr<EngineUnderTest> inner,
                                                     std::shared_ptr<const Model> converted, std::string path) {
  return std::make_shared<EngineModelEngine>(std::move(inner), std::move(converted), std::move(path));
}

}  // namespace vn::eut
