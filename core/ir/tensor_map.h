// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/tensor.h"

namespace vn {

/// A named tensor, the unit of feeds and results.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// An ordered name → tensor map. Order is meaningful: feeds follow the graph's inputs and results
/// follow the graph's outputs (or node order for marked tensors), as in Polygraphy's files.
/// Lookups and inserts are O(log n), so layer-wise results with many thousands of tensors and
/// hostile files with millions of members stay cheap; erase is O(n).
class TensorMap {
 public:
  TensorMap() = default;
  TensorMap(std::initializer_list<NamedTensor> entries);

  /// Inserts or replaces (keeping the original position when replacing).
  void set(std::string name, Tensor tensor);
  /// The tensor named `name`, or nullptr.
  const Tensor* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// Removes `name` if present.
  void erase(std::string_view name);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  const NamedTensor& operator[](size_t i) const { return entries_[i]; }

 private:
  std::vector<NamedTensor> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> position in entries_
};

}  // namespace vn
