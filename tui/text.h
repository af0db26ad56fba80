// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vn::tui {

/// Decodes the UTF-8 sequence starting at s[i], returns its code point and advances `i` past it.
/// Invalid or truncated sequences decode as U+FFFD one byte at a time, so hostile text never
/// stalls a loop. Precondition: i < s.size().
char32_t next_code_point(std::string_view s, size_t& i);

/// Terminal columns taken by one code point: 2 for East Asian Wide and Fullwidth characters,
/// 0 for combining marks, zero-width characters and C0/C1 controls, 1 otherwise. Fixed tables
/// rather than wcwidth(), whose answer depends on the process locale.
int code_point_width(char32_t cp);

/// Display width of a UTF-8 string in terminal columns (CJK and other wide characters count 2,
/// combining marks 0). Invalid bytes count 1 each.
int display_width(std::string_view utf8);

/// The UTF-8 encoding of one code point (U+FFFD for values that are not scalar values).
std::string to_utf8(char32_t cp);

/// The UTF-8 encoding of a string of code points.
std::string to_utf8(std::u32string_view text);

/// The code points of a UTF-8 string (invalid bytes become U+FFFD).
std::u32string to_u32(std::string_view utf8);

/// `text` cut to at most `width` columns. When it had to be cut and `ellipsis` is not empty, the
/// result ends with `ellipsis` and still fits in `width`. A width of 0 or less gives "".
std::string truncate_to_width(std::string_view text, int width, std::string_view ellipsis = {});

/// Horizontal alignment inside a fixed number of columns.
enum class Align { kLeft, kRight, kCenter };

/// `text` truncated (with `ellipsis`) or padded with spaces to exactly `width` columns.
std::string fit_to_width(std::string_view text, int width, Align align = Align::kLeft, std::string_view ellipsis = {});

/// Splits one line of text into lines of at most `width` columns, breaking after spaces when a
/// word fits on the next line and inside words only when it does not. Newlines start new lines.
/// Empty text gives one empty line; a width of 0 or less gives no lines.
std::vector<std::string> wrap_text(std::string_view text, int width);

/// Byte offset of the first occurrence of `needle` in `haystack`, or npos. With `ignore_case`
/// ASCII letters compare case-insensitively (other characters exactly). An empty needle matches at 0.
size_t find_text(std::string_view haystack, std::string_view needle, bool ignore_case);

/// "Smart case" as in vim and less: a query with no upper-case ASCII letter matches ignoring case.
bool smart_case_ignores_case(std::string_view query);

}  // namespace vn::tui
