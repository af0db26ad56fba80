// SPDX-License-Identifier: Apache-2.0
#include "golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vn::tui::testing {

std::string screen_text(const Canvas& canvas) {
  return canvas.dump() + "-- roles --\n" + canvas.dump_roles();
}

void expect_golden(std::string_view name, std::string_view actual) {
  const std::string path = std::string(VN_SOURCE_DIR) + "/tests/tui/golden/" + std::string(name) + ".txt";
  const char* update = std::getenv("VN_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "missing golden file " << path << " (run with VN_UPDATE_GOLDEN=1 to create it)";
    return;
  }
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual) << "golden " << path << " differs (VN_UPDATE_GOLDEN=1 rewrites it)";
}

Canvas sentinel_canvas(int width, int height, const Glyphs& glyphs) {
  Canvas canvas(width, height);
  canvas.set_glyphs(glyphs);
  canvas.fill(canvas.bounds(), "@");
  return canvas;
}

bool untouched_outside(const Canvas& canvas, const Rect& area) {
  for (int y = 0; y < canvas.height(); ++y) {
    for (int x = 0; x < canvas.width(); ++x) {
      if (area.contains(x, y)) continue;
      const Cell& cell = canvas.at(x, y);
      if (cell.glyph != "@" || cell.role != ColorRole::kDefault) return false;
    }
  }
  return true;
}

}  // namespace vn::tui::testing
