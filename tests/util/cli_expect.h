// SPDX-License-Identifier: Apache-2.0
// What the command-line tests expect of every bad-input failure.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/util/process.h"

namespace vn::test {

/// Exit code 2 and exactly one line on stderr, "vernier: error: ...", mentioning `must_mention`.
inline void expect_bad_input(const ProcessResult& r, const std::string& must_mention) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith("vernier: error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(must_mention));
}

}  // namespace vn::test
