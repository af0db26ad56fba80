// SPDX-License-Identifier: Apache-2.0
#include "core/ir/tensor_map.h"

namespace vn {

void TensorMap::set(std::string name, Tensor tensor) {
  for (NamedTensor& e : entries_) {
    if (e.name == name) {
      e.tensor = std::move(tensor);
      return;
    }
  }
  entries_.push_back(NamedTensor{std::move(name), std::move(tensor)});
}

const Tensor* TensorMap::find(std::string_view name) const {
  for (const NamedTensor& e : entries_) {
    if (e.name == name) return &e.tensor;
  }
  return nullptr;
}

void TensorMap::erase(std::string_view name) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->name == name) {
      entries_.erase(it);
      return;
    }
  }
}

}  // namespace vn
