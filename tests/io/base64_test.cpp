// SPDX-License-Identifier: Apache-2.0
#include "core/io/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace vn::io {
namespace {

TEST(Base64, EncodesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\x00\x93", 4)), "//4Akw==");
}

TEST(Base64, DecodesRfc4648Vectors) {
  for (const char* plain : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    Result<std::string> decoded = base64_decode(base64_encode(plain));
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64, RoundTripsEveryByteValueAndLength) {
  std::string bytes;
  for (int i = 0; i < 600; ++i) {
    bytes += static_cast<char>((i * 37 + 11) & 0xff);
    Result<std::string> decoded = base64_decode(base64_encode(bytes));
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    ASSERT_EQ(*decoded, bytes);
  }
}

TEST(Base64, SkipsWhitespace) {
  Result<std::string> decoded = base64_decode(" Zm9v\nYmFy\r\n\tZg=\n=\n");
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(*decoded, "foobarf");
}

TEST(Base64, RejectsInvalidCharacters) {
  Result<std::string> r = base64_decode("Zm9v!mFy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("'!' at offset 4"), std::string::npos) << r.status().message();
  EXPECT_FALSE(base64_decode("Zm9v-_==").ok());  // the URL-safe alphabet is not accepted
  EXPECT_FALSE(base64_decode(std::string("Zm9\x00", 4)).ok());
  Result<std::string> high = base64_decode("Zm9\xc3\xa9");
  ASSERT_FALSE(high.ok());
  EXPECT_NE(high.status().message().find("byte 0xc3"), std::string::npos) << high.status().message();
}

TEST(Base64, RejectsBadPaddingAndLength) {
  for (const char* bad : {"Zg", "Zm8", "Zg=", "Z===", "====", "=Zg=", "Zg==Zg==", "Zg=a", "Zm9vY", "Zm9v=", "Zg==="}) {
    Result<std::string> r = base64_decode(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kIoError) << bad;
    }
  }
}

}  // namespace
}  // namespace vn::io
