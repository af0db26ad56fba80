// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace vn::io {

/// Standard base64 (RFC 4648 alphabet "A-Za-z0-9+/", '=' padding, no line breaks), as Python's
/// base64.b64encode writes it.
std::string base64_encode(std::string_view bytes);

/// Decodes standard base64. Whitespace (space, tab, CR, LF, VT, FF) anywhere is skipped. Anything else
/// outside the alphabet, a length (without whitespace) that is not a multiple of 4, or '=' anywhere but
/// the last one or two positions is a kIoError naming the offending character and its offset.
/// The unused low bits of the last group are not checked, as Python's decoder does not check them.
Result<std::string> base64_decode(std::string_view text);

}  // namespace vn::io
