// SPDX-License-Identifier: Apache-2.0
#include "core/io/base64.h"

#include <array>
#include <cstdint>
#include <new>

namespace vn::io {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr int8_t kInvalid = -1;
constexpr int8_t kWhitespace = -2;
constexpr int8_t kPad = -3;

constexpr std::array<int8_t, 256> make_decode_table() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = kInvalid;
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  for (char c : {' ', '\t', '\n', '\r', '\v', '\f'}) table[static_cast<uint8_t>(c)] = kWhitespace;
  table[static_cast<uint8_t>('=')] = kPad;
  return table;
}

constexpr std::array<int8_t, 256> kDecode = make_decode_table();

std::string describe_char(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

Result<std::string> base64_decode_impl(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t group = 0;  // accumulated 6-bit values of the current 4-character group
  int in_group = 0;    // characters of the current group seen so far
  int padding = 0;     // '=' characters seen (only legal at the very end)
  size_t symbols = 0;  // non-whitespace characters seen
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const auto c = static_cast<unsigned char>(text[pos]);
    const int8_t v = kDecode[c];
    if (v == kWhitespace) continue;
    if (v == kInvalid) {
      return make_error(StatusCode::kIoError, "invalid base64: unexpected {} at offset {}", describe_char(c), pos);
    }
    ++symbols;
    if (v == kPad) {
      // Padding may only fill the last one or two places of a group that holds at least two symbols.
      if (in_group < 2) return make_error(StatusCode::kIoError, "invalid base64: misplaced '=' at offset {}", pos);
      ++padding;
      ++in_group;
    } else {
      if (padding > 0) {
        return make_error(StatusCode::kIoError, "invalid base64: data after '=' padding at offset {}", pos);
      }
      group = (group << 6) | static_cast<uint32_t>(v);
      ++in_group;
    }
    if (in_group == 4) {
      group <<= 6 * padding;
      out += static_cast<char>((group >> 16) & 0xff);
      if (padding < 2) out += static_cast<char>((group >> 8) & 0xff);
      if (padding < 1) out += static_cast<char>(group & 0xff);
      group = 0;
      in_group = 0;
      if (padding > 0) padding = 3;  // any further symbol is now an error, even another '='
    }
  }
  if (padding == 3) padding = 0;
  if (in_group != 0 || padding != 0) {
    return make_error(StatusCode::kIoError, "invalid base64: length {} is not a multiple of 4 (truncated or unpadded)",
                      symbols);
  }
  return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest == 1) {
    const uint32_t v = uint32_t{in[i]} << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  try {
    return base64_decode_impl(text);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kIoError, "out of memory decoding {} bytes of base64", text.size());
  }
}

}  // namespace vn::io
