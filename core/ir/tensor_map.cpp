// SPDX-License-Identifier: Apache-2.0
#include "core/ir/tensor_map.h"

namespace vn {

TensorMap::TensorMap(std::initializer_list<NamedTensor> entries) {
  for (const NamedTensor& e : entries) set(e.name, e.tensor);
}

void TensorMap::set(std::string name, Tensor tensor) {
  if (auto it = index_.find(name); it != index_.end()) {
    entries_[it->second].tensor = std::move(tensor);
    return;
  }
  index_.emplace(name, entries_.size());
  entries_.push_back(NamedTensor{std::move(name), std::move(tensor)});
}

const Tensor* TensorMap::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second].tensor;
}

void TensorMap::erase(std::string_view name) {
  auto it = index_.find(name);
  if (it == index_.end()) return;
  const size_t pos = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (auto& [key, i] : index_) {
    if (i > pos) --i;
  }
}

}  // namespace vn
