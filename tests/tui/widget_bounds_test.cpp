// SPDX-License-Identifier: Apache-2.0
// Every widget, at every size from nothing to 80×24 and at odd positions, writes only inside
// the rectangle it is given.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "golden.h"
#include "tui/widgets/bars.h"
#include "tui/widgets/heatmap.h"
#include "tui/widgets/line_editor.h"
#include "tui/widgets/progress.h"
#include "tui/widgets/prompt.h"
#include "tui/widgets/status_line.h"
#include "tui/widgets/tab_bar.h"
#include "tui/widgets/table.h"
#include "tui/widgets/text_pane.h"

namespace vn::tui {
namespace {

using DrawFn = std::function<void(Canvas&, Rect)>;

struct NamedWidget {
  std::string name;
  DrawFn draw;
};

std::vector<NamedWidget> all_widgets() {
  static const Bindings bindings;
  std::vector<NamedWidget> widgets;
  widgets.push_back({"table", [](Canvas& c, Rect r) {
                       Table t({{"名前", 0}, {"value", 8, Align::kRight}, {"state", 6, Align::kCenter}});
                       std::vector<TableRow> rows;
                       for (int i = 0; i < 40; ++i) {
                         rows.push_back({{"層" + std::to_string(i) + " conv", std::to_string(i * 1.5), "ok"}});
                       }
                       t.set_rows(std::move(rows));
                       t.set_filter("1", FilterMode::kHighlight);
                       t.resize(r);
                       t.handle(Action::kEnd);
                       t.draw(c);
                     }});
  widgets.push_back({"text_pane", [](Canvas& c, Rect r) {
                       TextPane p;
                       p.set_lines({{"精度 accuracy debugging with a long line that wraps around"}, {"second"}});
                       p.resize(r);
                       p.set_search("acc");
                       p.draw(c);
                     }});
  widgets.push_back({"bars", [](Canvas& c, Rect r) {
                       BarChart b;
                       b.set_bars({{"精度", 3, "3"}, {"b", NAN, "nan"}, {"c", 1, "1"}});
                       b.draw(c, r);
                     }});
  widgets.push_back({"sparkline", [](Canvas& c, Rect r) {
                       Sparkline s;
                       s.set_values({1, 5, 2, NAN, 8, 3});
                       s.draw(c, r);
                     }});
  widgets.push_back({"histogram", [](Canvas& c, Rect r) {
                       std::vector<double> v;
                       for (int i = 0; i < 50; ++i) v.push_back(i * i);
                       v.push_back(NAN);
                       v.push_back(INFINITY);
                       Histogram::from_values(v, 12).draw(c, r);
                     }});
  widgets.push_back({"heatmap", [](Canvas& c, Rect r) {
                       Heatmap h;
                       std::vector<double> v(7 * 9);
                       for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 11);
                       v[5] = NAN;
                       h.set_values(7, 9, std::move(v));
                       h.draw(c, r);
                     }});
  widgets.push_back({"progress", [](Canvas& c, Rect r) {
                       ProgressBar p;
                       p.set(0.6, "精度 reduce", "ETA 3s");
                       p.draw(c, r);
                     }});
  widgets.push_back({"prompt", [](Canvas& c, Rect r) {
                       Prompt p("Is 精度 still failing?", {Prompt::choice(bindings, Action::kGood, "good"),
                                                           Prompt::choice(bindings, Action::kBad, "bad")});
                       p.draw(c, r);
                     }});
  widgets.push_back({"status_line", [](Canvas& c, Rect r) {
                       StatusLine s;
                       s.set_left("精度 left");
                       s.set_right("right");
                       s.draw(c, r);
                     }});
  widgets.push_back({"tab_bar", [](Canvas& c, Rect r) {
                       TabBar t;
                       t.set_tabs({"流程图", "Graph", "Layers", "Reduce"});
                       t.set_active(3);
                       t.draw(c, r);
                     }});
  widgets.push_back({"line_editor", [](Canvas& c, Rect r) {
                       LineEditor e;
                       e.set_text("bind 精度 quit");
                       e.draw(c, r, ":");
                     }});
  return widgets;
}

TEST(WidgetBounds, NothingIsWrittenOutsideTheRect) {
  const std::vector<std::pair<int, int>> sizes = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {2, 1}, {1, 3},
                                                  {3, 2}, {7, 3}, {20, 8}, {33, 11}, {80, 24}};
  for (const NamedWidget& widget : all_widgets()) {
    for (const Glyphs* glyphs : {&unicode_glyphs(), &ascii_glyphs()}) {
      for (const auto& [w, h] : sizes) {
        for (const auto& [x, y] : std::vector<std::pair<int, int>>{{0, 0}, {3, 2}}) {
          Canvas canvas = testing::sentinel_canvas(90, 30, *glyphs);
          const Rect area{x, y, w, h};
          widget.draw(canvas, area);
          EXPECT_TRUE(testing::untouched_outside(canvas, area))
              << widget.name << " at " << w << "x" << h << "+" << x << "+" << y << (glyphs->ascii ? " ascii" : "")
              << "\n"
              << canvas.dump();
        }
      }
    }
  }
}

TEST(WidgetBounds, AsciiGlyphsLeaveNoNonAsciiDecorations) {
  // In ASCII mode only the data (here CJK sample text) may be non-ASCII, never the decorations.
  for (const NamedWidget& widget : all_widgets()) {
    Canvas canvas(80, 24);
    canvas.set_glyphs(ascii_glyphs());
    widget.draw(canvas, canvas.bounds());
    for (int y = 0; y < 24; ++y) {
      for (int x = 0; x < 80; ++x) {
        const std::string& glyph = canvas.at(x, y).glyph;
        if (glyph.empty() || static_cast<unsigned char>(glyph[0]) < 0x80) continue;
        const std::u32string cps = to_u32(glyph);
        EXPECT_TRUE(cps[0] >= 0x3000) << widget.name << " drew '" << glyph << "' at " << x << "," << y;
      }
    }
  }
}

}  // namespace
}  // namespace vn::tui
