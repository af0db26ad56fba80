// SPDX-License-Identifier: Apache-2.0
// What the end-to-end walks of a triage in a pseudo-terminal share: looking for text on the
// screen and answering the Flowchart's questions.
#pragma once

#include <chrono>
#include <string_view>

#include <gtest/gtest.h>

#include "pty_harness.h"

namespace vn::tui::testing {

/// Where a question waits for its answer: the prompt of the Flowchart screen.
inline constexpr const char* kPrompt = "Your answer?";

/// Whether the screen shows `text` anywhere.
inline bool shows(const PtySession& term, std::string_view text) {
  return term.screen().find(text) != std::string::npos;
}

/// Whether the last row (the status line) shows `text`.
inline bool last_line_has(const PtySession& term, std::string_view text) {
  return term.line(term.rows() - 1).find(text) != std::string::npos;
}

/// Waits for the question whose proposal reads `proposal`, answers with `key`, and waits until
/// that question is gone (so the next wait cannot see the old one). `timeout` bounds each wait:
/// the probe before a question may build and check engines on a loaded machine.
inline void answer(PtySession& term, std::string_view proposal, std::string_view key,
                   std::chrono::milliseconds timeout = std::chrono::seconds(240)) {
  ASSERT_TRUE(term.wait_until([&] { return shows(term, proposal) && shows(term, kPrompt); }, timeout))
      << term.screen();
  term.send(key);
  ASSERT_TRUE(term.wait_until([&] { return !shows(term, proposal); }, timeout)) << term.screen();
}

}  // namespace vn::tui::testing
