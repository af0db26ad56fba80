// SPDX-License-Identifier: Apache-2.0
// The reference backend's plans (reference_backend.cpp builds and runs them; elementwise_chain.cpp
// finds their chains): private to core/ref.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/ops/op_registry.h"
#include "core/ref/elementwise_chain.h"
#include "core/ref/reference_backend.h"

namespace vn::ref {

struct ReferenceBackend::Step {
  int64_t node_index = 0;
  int64_t opset = 0;
  ops::KernelFn fn = nullptr;
  int64_t version = 0;                // the op version the kernel implements
  std::vector<int> inputs;            // slot per node input; -1 for an omitted optional input
  std::vector<int> outputs;           // slot per node output; -1 for an unnamed output
  std::vector<int> release;           // slots whose last reader is this step
  std::vector<int> release_streamed;  // the same when outputs are streamed (RunOptions::stream)
  std::vector<char> dying;            // per input: its slot is released by this step
  std::vector<char> dying_streamed;   // the same when outputs are streamed
  std::vector<size_t> narrow_inputs;  // fp64 mode: input positions the spec pins to float32
  bool widen_outputs = false;         // fp64 mode: float outputs come back as float32
  // A link of a fused elementwise chain (Plan::chains, elementwise_chain.h): its index, or -1.
  // Unobserved, the chain runs at its last link; the others run nothing and release nothing.
  int chain = -1;
  bool chain_head = false, chain_end = false;
  // A Conv whose output is the source of chain `epilogue_chain` (read by nothing else): run
  // unobserved, it may run the chain on its blocks (ChainEpilogue); else -1.
  int epilogue_chain = -1;
};

/// A chain of elementwise steps run as one pass: its operations, its source's and other tensors'
/// slots, and the slots its links before the last release (released by the last, with its own).
struct ReferenceBackend::Chain {
  ElementwiseChain ops;
  int source = -1;
  std::vector<int> others;  // slots of the other tensors (ChainOp::Operand::kOther)
  std::vector<int> release;
  bool source_dies = false;  // the source's slot is released at the chain's end
};

/// A graph ready to run: the main graph or one subgraph. Every name the graph touches has a slot;
/// a frame holds one tensor per slot.
struct ReferenceBackend::Plan {
  const Graph* graph = nullptr;
  std::vector<Step> steps;
  std::vector<std::string> slot_names;
  std::unordered_map<std::string, int> slot_of;
  std::vector<Tensor> constants;  // per slot: the initializer, or undefined
  // Per slot: the initializer whose tensor the slot holds when it is one, or the output of
  // Identity nodes from one; else undefined. An input is a constant of the model (KernelContext)
  // while its value is that tensor (not a feed of the initializer's name, nor a narrowed copy).
  std::vector<Tensor> weights;
  std::vector<int> input_slots;   // main graph: runtime inputs; subgraph: every declared input, in order
  std::vector<int> outer_slots;   // subgraph: names bound from the enclosing scope on entry
  std::vector<int> output_slots;
  std::vector<Chain> chains;
};

}  // namespace vn::ref
