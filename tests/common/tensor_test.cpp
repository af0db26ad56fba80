// SPDX-License-Identifier: Apache-2.0
#include "core/ir/tensor.h"
#include "core/ir/tensor_map.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>
#include <Eigen/Core>

namespace vn {
namespace {

TEST(DType, NamesAndCodesRoundTrip) {
  for (size_t i = 0; i < kDTypeCount; ++i) {
    const auto dt = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_name(dtype_name(dt)), dt);
    EXPECT_EQ(dtype_from_onnx(dtype_to_onnx(dt)), dt);
    if (!dtype_numpy_descr(dt).empty()) {
      EXPECT_EQ(dtype_from_numpy_descr(dtype_numpy_descr(dt)), dt);
    }
  }
  EXPECT_EQ(dtype_from_onnx(1), DType::kFloat32);
  EXPECT_EQ(dtype_from_onnx(16), DType::kBFloat16);
  EXPECT_FALSE(dtype_from_onnx(14).has_value());  // complex128
  EXPECT_EQ(dtype_from_name("fp16"), DType::kFloat16);
  EXPECT_FALSE(dtype_from_numpy_descr(">f4").has_value());
  EXPECT_EQ(dtype_from_numpy_descr("|b1"), DType::kBool);
}

TEST(Tensor, AllocatesZeroedAlignedStorage) {
  Tensor t(DType::kFloat32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  for (float v : t.values<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Tensor, MidSizeTensorsAreMappedOnlyWhileAScopeAsksForIt) {
  const auto mapped = [](int64_t floats) { return Tensor(DType::kFloat32, {floats}).mapped(); };
  constexpr int64_t k32KiB = 8 << 10, k256KiB = 64 << 10, k2MiB = 512 << 10;
  EXPECT_FALSE(mapped(k256KiB));
  EXPECT_TRUE(mapped(k2MiB));
  {
    const MapSmallTensors outer;
    EXPECT_TRUE(mapped(k256KiB));
    EXPECT_FALSE(mapped(k32KiB));
    {
      const MapSmallTensors inner;
      EXPECT_TRUE(mapped(k256KiB));
    }
    EXPECT_TRUE(mapped(k256KiB));
    // A mapped buffer given back and taken again for the same size comes back zeroed.
    Tensor a(DType::kFloat32, {k256KiB});
    for (float& v : a.mutable_values<float>()) v = 7.0f;
    a = Tensor();
    Tensor b(DType::kFloat32, {k256KiB});
    EXPECT_TRUE(b.mapped());
    for (float v : b.values<float>()) ASSERT_EQ(v, 0.0f);
  }
  EXPECT_FALSE(mapped(k256KiB));
  EXPECT_FALSE(Tensor().mapped());
}

TEST(Tensor, CopiesShareAndClonesDoNot) {
  Tensor a = Tensor::from_vector<float>({3}, {1, 2, 3});
  Tensor b = a;
  Tensor c = a.clone();
  a.mutable_data<float>()[0] = 9;
  EXPECT_EQ(b.data<float>()[0], 9);
  EXPECT_EQ(c.data<float>()[0], 1);
  EXPECT_FALSE(a.same_as(c));
  EXPECT_TRUE(a.same_as(b));
}

TEST(Tensor, ReshapedSharesStorage) {
  Tensor a = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  Tensor r = a.reshaped({4});
  EXPECT_EQ(r.shape(), Shape({4}));
  EXPECT_EQ(r.data<int64_t>(), a.data<int64_t>());
}

TEST(Tensor, ViewsAreReadOnlyAndKeepTheirOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1.5f, 2.5f});
  Tensor v = Tensor::view(DType::kFloat32, {2}, owner, owner->data());
  owner.reset();
  EXPECT_FALSE(v.writable());
  EXPECT_EQ(v.values<float>()[1], 2.5f);
  EXPECT_TRUE(v.clone().writable());
}

TEST(Tensor, RefusesHostileShapesWithoutAllocating) {
  Result<Tensor> huge = Tensor::create(DType::kFloat32, {1000000, 1000000});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kShapeMismatch);
  Result<Tensor> overflow = Tensor::create(DType::kInt64, {std::numeric_limits<int64_t>::max(), 4});
  EXPECT_FALSE(overflow.ok());
  Result<Tensor> negative = Tensor::create(DType::kFloat32, {-1, 3});
  EXPECT_FALSE(negative.ok());
  Result<Tensor> empty = Tensor::create(DType::kFloat32, {0, std::numeric_limits<int64_t>::max()});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numel(), 0);
}

TEST(Tensor, StringTensorsHoldStrings) {
  Tensor s(DType::kString, {2});
  s.mutable_data<std::string>()[1] = "hello";
  Tensor c = s.clone();
  EXPECT_EQ(c.values<std::string>()[1], "hello");
  EXPECT_TRUE(c.same_as(s));
}

TEST(Tensor, CastFollowsNumpy) {
  Tensor f = Tensor::from_vector<float>({5}, {-1.7f, 0.0f, 2.9f, std::nanf(""), 1e20f});
  Result<Tensor> i = tensor_cast(f, DType::kInt32);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->values<int32_t>()[0], -1);
  EXPECT_EQ(i->values<int32_t>()[2], 2);
  EXPECT_EQ(i->values<int32_t>()[3], 0);
  EXPECT_EQ(i->values<int32_t>()[4], std::numeric_limits<int32_t>::max());
  Result<Tensor> b = tensor_cast(f, DType::kBool);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->values<bool>()[0]);
  EXPECT_FALSE(b->values<bool>()[1]);
  Result<Tensor> h = tensor_cast(Tensor::from_vector<float>({2}, {65520.0f, 3.14159265f}), DType::kFloat16);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(std::isinf(static_cast<float>(h->values<Eigen::half>()[0])));
  EXPECT_EQ(static_cast<float>(h->values<Eigen::half>()[1]), 3.140625f);
  EXPECT_FALSE(tensor_cast(Tensor(DType::kString, {1}), DType::kFloat32).ok());
}

TEST(Tensor, ShapeStringsFollowNumpy) {
  EXPECT_EQ(shape_to_string({}), "()");
  EXPECT_EQ(shape_to_string({4}), "(4,)");
  EXPECT_EQ(shape_to_string({1, 3, 4, 4}), "(1, 3, 4, 4)");
}

TEST(Tensor, IntegerReads) {
  Result<std::vector<int64_t>> v = tensor_to_int64s(Tensor::from_vector<int32_t>({3}, {1, -1, 0}));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int64_t>{1, -1, 0}));
  EXPECT_FALSE(tensor_to_int64s(Tensor::scalar<float>(1.0f)).ok());
}

}  // namespace
}  // namespace vn

namespace vn {
namespace {

TEST(TensorMap, KeepsInsertionOrderAndReplacesInPlace) {
  TensorMap m{{"a", Tensor::scalar<float>(1)}, {"b", Tensor::scalar<float>(2)}};
  m.set("c", Tensor::scalar<float>(3));
  m.set("a", Tensor::scalar<float>(4));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].name, "a");
  EXPECT_EQ(m.find("a")->values<float>()[0], 4.0f);
  m.erase("a");
  EXPECT_EQ(m[0].name, "b");
  EXPECT_EQ(m.find("c")->values<float>()[0], 3.0f);
  EXPECT_EQ(m.find("a"), nullptr);
  m.erase("missing");
  EXPECT_EQ(m.size(), 2u);
}

}  // namespace
}  // namespace vn

namespace vn {
namespace {

TEST(Tensor, LargeBuffersAreZeroedAndAligned) {
  Tensor big(DType::kFloat32, {1 << 19});  // 2 MiB: above the direct-mapping threshold
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.raw()) % 64, 0u);
  for (float v : big.values<float>()) ASSERT_EQ(v, 0.0f);
  big.mutable_data<float>()[(1 << 19) - 1] = 3.0f;
  EXPECT_EQ(big.clone().values<float>()[(1 << 19) - 1], 3.0f);
}

TEST(Tensor, AFreedBufferIsReusedForItsSizeAndComesBackZeroed) {
  // 1 MiB: a mapped size. Filled, freed, and the next tensor of that size gets the same buffer
  // back (kept for reuse), zeroed; a tensor of another size does not get it.
  const void* first = nullptr;
  {
    Tensor t(DType::kFloat32, {1 << 18});
    first = t.raw();
    for (float& v : t.mutable_values<float>()) v = 7.0f;
  }
  Tensor other(DType::kFloat32, {(1 << 18) + 16});
  EXPECT_NE(other.raw(), first);
  Tensor again(DType::kFloat32, {1 << 18});
  EXPECT_EQ(again.raw(), first);
  for (float v : again.values<float>()) ASSERT_EQ(v, 0.0f);
  for (float v : other.values<float>()) ASSERT_EQ(v, 0.0f);
}

TEST(Tensor, ALargeFreedBufferOutlivesTheChurnOfOtherSizes) {
  // A transformer frees its 51 MiB attention scores and then several 9 MiB activations before it
  // needs the scores' size again: the large buffer is still kept then (it comes back as it was
  // left, not zeroed, which a fresh mapping always is).
  constexpr int64_t kLarge = 10 << 20, kOther = 2 << 20;  // floats: 40 and 8 MiB
  {
    Result<Tensor> large = Tensor::create_for_overwrite(DType::kFloat32, {kLarge});
    ASSERT_TRUE(large.ok());
    large->mutable_data<float>()[0] = 7.0f;
    large->mutable_data<float>()[kLarge - 1] = 9.0f;
  }
  for (int i = 0; i < 3; ++i) {
    Tensor other(DType::kFloat32, {kOther + 16 * i});
    other.mutable_data<float>()[0] = 1.0f;
  }
  Result<Tensor> again = Tensor::create_for_overwrite(DType::kFloat32, {kLarge});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->mapped());
  EXPECT_EQ(again->data<float>()[0], 7.0f);
  EXPECT_EQ(again->data<float>()[kLarge - 1], 9.0f);
}

TEST(Tensor, AFreedBufferServesTheNextTensorOfAboutItsSize) {
  // DenseNet's concatenations grow a little at every layer: a tensor takes the smallest kept
  // buffer of its size up to 1.5 times it, and only the part it uses is zeroed.
  constexpr int64_t kMiB = int64_t{1} << 18;  // floats
  const auto kept = [](int64_t floats, float marker) {
    Result<Tensor> t = Tensor::create_for_overwrite(DType::kFloat32, {floats});
    ASSERT_TRUE(t.ok());
    std::fill_n(t->mutable_data<float>(), floats, marker);
  };
  kept(3 * kMiB, 3.0f);
  kept(4 * kMiB, 4.0f);
  // Both fit 2.9 MiB; the smaller one serves it.
  Result<Tensor> a = Tensor::create_for_overwrite(DType::kFloat32, {3 * kMiB - kMiB / 10});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->mapped());
  EXPECT_EQ(a->data<float>()[0], 3.0f);
  // 2.5 MiB: the 4 MiB buffer is too large for it; a zeroed tensor of 2.7 MiB gets it.
  Result<Tensor> b = Tensor::create_for_overwrite(DType::kFloat32, {5 * kMiB / 2});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data<float>()[0], 0.0f);
  const int64_t c_floats = 27 * kMiB / 10 / 16 * 16;  // whole 64-byte lines
  {
    Tensor c(DType::kFloat32, {c_floats});
    for (float v : c.values<float>()) ASSERT_EQ(v, 0.0f);
  }
  // Given back, the 4 MiB buffer holds c's zeros and, past them, the 4.0 it was left with.
  const int64_t e_floats = 39 * kMiB / 10;
  Result<Tensor> e = Tensor::create_for_overwrite(DType::kFloat32, {e_floats});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->data<float>()[c_floats - 1], 0.0f);
  EXPECT_EQ(e->data<float>()[c_floats], 4.0f);
  EXPECT_EQ(e->data<float>()[e_floats - 1], 4.0f);
  // So does the 3 MiB one, which serves a tensor of 2.1 MiB and no smaller.
  a = Tensor();
  Result<Tensor> f = Tensor::create_for_overwrite(DType::kFloat32, {19 * kMiB / 10});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data<float>()[0], 0.0f);
  Result<Tensor> d = Tensor::create_for_overwrite(DType::kFloat32, {21 * kMiB / 10});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->data<float>()[21 * kMiB / 10 - 1], 3.0f);
}

}  // namespace
}  // namespace vn
