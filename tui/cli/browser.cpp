// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/browser.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <fmt/format.h>

#include "tui/app.h"
#include "tui/cli/commands.h"
#include "tui/curses_terminal.h"
#include "views/screens/graph_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/text_views.h"

namespace vn::cli {
namespace {

std::pair<std::string_view, std::string_view> split_word(std::string_view s) {
  const size_t space = s.find(' ');
  if (space == std::string_view::npos) return {s, {}};
  std::string_view rest = s.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return {s.substr(0, space), rest};
}

std::unique_ptr<views::LayerwiseJob> start_comparison(Model model, TensorMap feeds,
                                                      session::LayerwiseSessionOptions options) {
  return views::LayerwiseJob::start(
      [model = std::move(model), feeds = std::move(feeds), options](session::JobContext& ctx) mutable {
        return session::run_layerwise_session(std::move(model), feeds, options, ctx);
      });
}

// The same session compared again from its kept tensors under a new tolerance: no backend runs.
std::unique_ptr<views::LayerwiseJob> recompare(std::shared_ptr<const session::LayerwiseSession> done,
                                               CompareConfig config) {
  return views::LayerwiseJob::start(
      [done = std::move(done), config](session::JobContext& ctx) -> Result<session::LayerwiseSession> {
        return session::recompare_layerwise_session(*done, config, ctx);
      });
}

}  // namespace

bool on_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0 && term != nullptr && *term != '\0' &&
         std::string_view(term) != "dumb";
}

std::optional<int> browse_layerwise(Model model, TensorMap feeds, session::LayerwiseSessionOptions options,
                                    std::string& error) {
  std::unique_ptr<tui::CursesTerminal> terminal = tui::CursesTerminal::open({}, error);
  if (!terminal) return std::nullopt;
  CompareConfig config = options.config;
  auto feed = std::make_shared<views::SessionFeed>(start_comparison(std::move(model), std::move(feeds), options));

  tui::App app(*terminal);
  app.add_view(std::make_unique<views::GraphView>(feed));
  app.add_view(std::make_unique<views::LayersView>(feed));
  auto& log = static_cast<views::LogView&>(app.add_view(std::make_unique<views::LogView>(feed)));
  app.add_view(std::make_unique<views::HelpView>(app.bindings()));

  app.set_command_handler([&](std::string_view line) -> tui::CommandResult {
    const auto [word, rest] = split_word(line);
    const auto done = feed->result();
    if (word == "goto") {
      if (!done) return {tui::kHandled, "no session yet", true};
      const Graph& g = done->model.graph;
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (node_label(g, static_cast<int64_t>(i)) == rest || std::to_string(i) == rest) {
          feed->select(static_cast<int64_t>(i));
          app.show_view(std::string_view("graph"));
          return {tui::kHandled | tui::kRedraw, "at " + std::string(rest)};
        }
      }
      return {tui::kHandled, "no node named '" + std::string(rest) + "'", true};
    }
    if (word == "set") {
      const auto [key, value] = split_word(rest);
      char* end = nullptr;
      const std::string v(value);
      const double x = std::strtod(v.c_str(), &end);
      if ((key != "atol" && key != "rtol") || v.empty() || *end != '\0' || !(x >= 0)) {
        return {tui::kHandled, "usage: set atol|rtol VALUE (a number >= 0)", true};
      }
      if (!done) return {tui::kHandled, "wait for the comparison to finish", true};
      (key == "atol" ? config.atol : config.rtol)[""] = x;
      feed->restart(recompare(done, config));
      return {tui::kHandled | tui::kRedraw, fmt::format("{} = {}; comparing again", key, v)};
    }
    if (word == "export") {
      if (!done) return {tui::kHandled, "no session yet", true};
      const std::string path = rest.empty() ? "vernier_layers.tsv" : std::string(rest);
      if (Status s = session::export_layer_table(*done, path); !s.ok()) return {tui::kHandled, s.message(), true};
      log.add("Exported the layer table to " + path);
      return {tui::kHandled | tui::kRedraw, "wrote " + path};
    }
    return {tui::kIgnored, {}, false};
  });
  app.run();
  const int signal = terminal->caught_signal();
  terminal->close();
  if (signal != 0) std::raise(signal);
  return kExitOk;
}

}  // namespace vn::cli
