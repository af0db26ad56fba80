// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <vector>

#include "core/common/status.h"
#include "core/ir/tensor_map.h"

namespace vn::io {

/// One ONNX test data set: the folder and its tensors, named as in their protos.
struct TestDataSet {
  std::filesystem::path dir;
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> outputs;
};

/// Loads ONNX test data (the layout of ONNX's backend tests: model.onnx + test_data_set_N/input_K.pb,
/// output_K.pb). `path` is either a folder holding test_data_set_N/ subfolders (all loaded, sorted by
/// N numerically: test_data_set_10 after test_data_set_2) or one data set folder itself. In a data set,
/// input_K.pb and output_K.pb are sorted by K numerically; other files are ignored.
/// Errors: kIoError when `path` is missing or not a folder, when two files share a number
/// (input_1.pb and input_01.pb), or a .pb file cannot be read (the message names the file);
/// kNotFound when there are neither data set folders nor input/output files, or a data set holds
/// no input_K.pb or output_K.pb at all.
Result<std::vector<TestDataSet>> load_test_folder(const std::filesystem::path& path);

/// Writes one data set into `dir` (created with its parents if needed): inputs[K] as input_K.pb and
/// outputs[K] as output_K.pb, each a TensorProto named after the NamedTensor, written atomically.
/// Numbered input/output files left from an earlier, larger data set in `dir` are removed, so that
/// loading the folder returns exactly these tensors. kIoError naming the file on failure;
/// kInvalidArgument for an undefined tensor.
Status save_test_data_set(const std::filesystem::path& dir, const std::vector<NamedTensor>& inputs,
                          const std::vector<NamedTensor>& outputs);

}  // namespace vn::io
