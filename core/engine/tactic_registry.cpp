// SPDX-License-Identifier: Apache-2.0
#include "core/engine/tactic_registry.h"

#include <array>

#include "core/common/hash.h"

namespace vn::engine {
namespace {

constexpr std::array<std::string_view, 9> kKindNames{"Conv",       "Gemm", "Softmax", "LayerNorm", "Reduce",
                                                     "Activation", "Pool", "Eltwise", "Generic"};

constexpr TacticInfo kTactics[] = {
#define VN_TACTIC(id, kind, name, precisions, description) \
  {TacticId::id, LayerKind::kind, name, precisions, description},
#include "core/engine/tactics.inc"
#undef VN_TACTIC
};

constexpr bool ids_follow_rows() {
  for (size_t i = 0; i < std::size(kTactics); ++i) {
    if (static_cast<size_t>(kTactics[i].id) != i) return false;
  }
  return true;
}
static_assert(ids_follow_rows(), "tactic_info() indexes kTactics by TacticId");
static_assert(static_cast<size_t>(LayerKind::kGeneric) + 1 == kKindNames.size(), "one name per LayerKind");

}  // namespace

std::string_view layer_kind_name(LayerKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::optional<LayerKind> layer_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<LayerKind>(i);
  }
  return std::nullopt;
}

std::span<const TacticInfo> all_tactics() { return kTactics; }

const TacticInfo& tactic_info(TacticId id) { return kTactics[static_cast<size_t>(id)]; }

const TacticInfo* find_tactic(std::string_view name) {
  for (const TacticInfo& t : kTactics) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<const TacticInfo*> tactics_for(LayerKind kind) {
  std::vector<const TacticInfo*> out;
  for (const TacticInfo& t : kTactics) {
    if (t.kind == kind) out.push_back(&t);
  }
  return out;
}

int64_t tactic_replay_id(TacticId id) { return static_cast<int64_t>(fnv1a(tactic_info(id).name)); }

}  // namespace vn::engine
