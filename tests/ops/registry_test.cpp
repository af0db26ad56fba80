// SPDX-License-Identifier: Apache-2.0
// The reference registry against ONNX's own version table (core/ir/onnx_schemas_*.inc, generated
// from ONNX 1.23): every registration is a version ONNX defines, an op's versions are registered
// without gaps from its first registered one, and a node is run only by a kernel of exactly the
// version in force at its opset; any other version is refused with a reason naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/onnx_schema.h"
#include "core/ops/op_registry.h"

namespace vn::ops {
namespace {

/// Registered versions by (domain, op type): the default domain ("") and ai.onnx.preview.
std::map<std::pair<std::string, std::string>, std::vector<int64_t>> registered_versions() {
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> out;
  for (const KernelDef& def : reference_registry().all()) {
    EXPECT_TRUE(def.domain == "" || def.domain == "ai.onnx.preview") << def.domain << ":" << def.op_type;
    EXPECT_NE(def.fn, nullptr) << def.op_type;
    out[{def.domain, def.op_type}].push_back(def.since_version);
  }
  return out;
}

std::vector<int64_t> onnx_versions(const std::string& domain, const std::string& op) {
  std::vector<int64_t> out;
  for (const OnnxSchema& s : onnx_schema_versions(domain, op)) out.push_back(s.since_version);
  return out;
}

TEST(Registry, EveryRegistrationIsAnOnnxVersionOfItsOp) {
  for (const auto& [key, versions] : registered_versions()) {
    const auto& [domain, op] = key;
    const std::vector<int64_t> onnx = onnx_versions(domain, op);
    ASSERT_FALSE(onnx.empty()) << op << " is not an ONNX op";
    for (int64_t v : versions) {
      EXPECT_TRUE(std::count(onnx.begin(), onnx.end(), v)) << op << "-" << v << " is not a version ONNX defines";
    }
  }
}

TEST(Registry, VersionsAreRegisteredWithoutGaps) {
  // A kernel skipping a version in the middle would leave models of that opset refused while older
  // and newer ones run; only the newest versions may be missing (not implemented yet).
  for (const auto& [key, versions] : registered_versions()) {
    const auto& [domain, op] = key;
    const std::vector<int64_t> onnx = onnx_versions(domain, op);
    const auto first = std::find(onnx.begin(), onnx.end(), versions.front());
    ASSERT_NE(first, onnx.end()) << op;
    const std::vector<int64_t> expected(first, first + static_cast<std::ptrdiff_t>(versions.size()));
    EXPECT_EQ(versions, expected) << op;
  }
}

TEST(Registry, ANodeRunsOnlyOnTheKernelOfItsVersion) {
  const OpRegistry& r = reference_registry();
  // ReduceMean took its axes as an input at 18: opset 17 and 18 resolve to different kernels.
  ASSERT_NE(r.find("", "ReduceMean", 17), nullptr);
  EXPECT_EQ(r.find("", "ReduceMean", 17)->since_version, 13);
  EXPECT_EQ(r.find("ai.onnx", "ReduceMean", 18)->since_version, 18);
  EXPECT_EQ(r.lookup("", "ReduceMean", 22).version, 18);
  // Every registered version is found at its own opset and at the opset just before the next.
  for (const auto& [key, versions] : registered_versions()) {
    const auto& [domain, op] = key;
    for (int64_t v : versions) {
      const KernelLookup found = r.lookup(domain, op, v);
      ASSERT_NE(found.def, nullptr) << op << "-" << v << ": " << found.reason;
      EXPECT_EQ(found.def->since_version, v) << op;
    }
    const std::vector<int64_t> onnx = onnx_versions(domain, op);
    if (onnx.front() > 1) {
      EXPECT_EQ(r.find(domain, op, onnx.front() - 1), nullptr) << op;
    }
  }
}

TEST(Registry, AVersionNotImplementedIsRefusedWithTheVersionsThatAre) {
  const OpRegistry& r = reference_registry();
  // Upsample-10 is the deprecated version (Resize replaced it); the kernels implement 7 and 9.
  const KernelLookup upsample = r.lookup("", "Upsample", 10);
  EXPECT_EQ(upsample.def, nullptr);
  EXPECT_EQ(upsample.version, 10);
  EXPECT_EQ(upsample.reason,
            "Upsample-10 (the version in force at opset 10) is not implemented; implemented: Upsample-7, Upsample-9");
  const KernelLookup decoder = r.lookup("", "ImageDecoder", 23);
  EXPECT_EQ(decoder.def, nullptr);
  EXPECT_EQ(decoder.reason, "ImageDecoder-20 (opset 23) is not implemented");
  EXPECT_EQ(r.lookup("", "NoSuchOp", 17).reason, "unknown op NoSuchOp in domain ai.onnx");
  EXPECT_EQ(r.lookup("", "Gelu", 19).reason, "Gelu does not exist at opset 19 (ONNX defines it from opset 20)");
  EXPECT_EQ(r.lookup("", "Relu", 29).reason,
            "opset 29 of domain ai.onnx is newer than the 28 Vernier knows (ONNX 1.23.1); Relu may have changed there");
  EXPECT_EQ(r.lookup("", "Relu", -1).reason, "the model imports no opset for domain 'ai.onnx'");
  EXPECT_EQ(r.lookup("com.example", "Relu", 1).reason, "unknown op Relu in domain com.example");
  EXPECT_FALSE(r.knows("", "NoSuchOp"));
}

}  // namespace
}  // namespace vn::ops
