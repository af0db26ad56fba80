// SPDX-License-Identifier: Apache-2.0
// The built-in engine as an engine under test.
#include <memory>

#include "core/engine/engine_backend.h"
#include "core/engine/tactic_registry.h"
#include "core/engine/tactic_replay.h"
#include "core/eut/engine_under_test.h"

namespace vn::eut {
namespace {

class BuiltinBuild final : public Build {
 public:
  explicit BuiltinBuild(engine::EngineOptions options) : backend_(std::move(options)) {}

  engine::EngineBackend& engine() { return backend_; }
  Backend& backend() override { return backend_; }

  std::vector<BuiltLayer> layers() const override {
    std::vector<BuiltLayer> out;
    if (!backend_.plan()) return out;
    for (const engine::PlanLayer& l : backend_.plan()->layers) {
      out.push_back({l.name, std::string(engine::layer_kind_name(l.kind)),
                     std::string(engine::precision_name(l.precision)),
                     std::string(engine::tactic_info(l.tactic).name)});
    }
    return out;
  }

  std::shared_ptr<const engine::Plan> plan() const override {
    return backend_.plan() ? std::make_shared<const engine::Plan>(*backend_.plan()) : nullptr;
  }

  std::optional<engine::TacticReplay> tactic_replay() const override {
    if (!backend_.plan()) return std::nullopt;
    return engine::tactic_replay_from_plan(*backend_.plan());
  }

 private:
  engine::EngineBackend backend_;
};

class BuiltinEngine final : public EngineUnderTest {
 public:
  std::string name() const override { return "engine"; }
  Result<std::string> describe() override { return std::string("Vernier's built-in engine"); }

  Result<Capabilities> capabilities() override {
    Capabilities c;
    c.builds_vary = true;
    c.intermediate_tensors = true;
    c.layers_alone = true;
    c.lowers_precision = true;
    c.per_layer_precision = true;
    c.tactic_replays = true;
    c.artifacts = true;
    return c;
  }

  Result<std::unique_ptr<Build>> build(const Model& model, const engine::BuildOptions& build,
                                       const PrepareOptions& prepare) override {
    engine::EngineOptions options;
    options.build = build;
    auto built = std::make_unique<BuiltinBuild>(std::move(options));
    VN_RETURN_IF_ERROR(built->engine().prepare(model, prepare));
    return std::unique_ptr<Build>(std::move(built));
  }

  std::vector<std::string> command_line() const override { return {}; }
};

}  // namespace

nlohmann::ordered_json capabilities_json(const Capabilities& c) {
  return {{"builds_vary", c.builds_vary},
          {"intermediate_tensors", c.intermediate_tensors},
          {"layers_alone", c.layers_alone},
          {"lowers_precision", c.lowers_precision},
          {"per_layer_precision", c.per_layer_precision},
          {"tactic_replays", c.tactic_replays},
          {"artifacts", c.artifacts}};
}

std::string capabilities_summary(const Capabilities& c) {
  std::string held;
  // Named: items() refers to the json, which a temporary in the range-for would not outlive.
  const nlohmann::json flags = capabilities_json(c);
  for (const auto& [key, value] : flags.items()) {
    if (value.get<bool>()) held += (held.empty() ? "" : ", ") + key;
  }
  return held.empty() ? "none" : held;
}

std::shared_ptr<EngineUnderTest> builtin_engine() { return std::make_shared<BuiltinEngine>(); }

}  // namespace vn::eut
