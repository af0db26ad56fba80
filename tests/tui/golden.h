// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "tui/canvas.h"

namespace vn::tui::testing {

/// The canvas as a golden screen: its text, a separator line, then its roles (Canvas::dump_roles).
std::string screen_text(const Canvas& canvas);

/// Compares `actual` with tests/tui/golden/<name>.txt. With VN_UPDATE_GOLDEN=1 in the environment
/// the file is (re)written instead, and the comparison passes.
void expect_golden(std::string_view name, std::string_view actual);

/// A canvas of `width` × `height` filled with '@' so that tests can see which cells a widget wrote.
Canvas sentinel_canvas(int width, int height, const Glyphs& glyphs = unicode_glyphs());

/// True when every cell of `canvas` outside `area` still holds the sentinel '@' in the default role.
bool untouched_outside(const Canvas& canvas, const Rect& area);

}  // namespace vn::tui::testing
