// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/browser.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <fmt/format.h>

#include "tui/app.h"
#include "tui/cli/commands.h"
#include "tui/cli/ui_options.h"
#include "tui/curses_terminal.h"
#include "tui/i18n.h"
#include "views/screens/graph_view.h"
#include "views/screens/help_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/log_view.h"
#include "views/screens/screens.h"
#include "views/screens/tensor_view.h"

namespace vn::cli {
namespace {

std::pair<std::string_view, std::string_view> split_word(std::string_view s) {
  const size_t space = s.find(' ');
  if (space == std::string_view::npos) return {s, {}};
  std::string_view rest = s.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return {s.substr(0, space), rest};
}

// The `:` commands of the browser, added to `app`.
void add_commands(tui::App& app, views::SessionFeed& feed, views::LogView& log, BrowseSource& source) {
  app.add_command(
      {"goto", "NODE", "Select a node by its name or index",
       [&app, &feed](std::string_view name) -> tui::CommandResult {
         const auto done = feed.result();
         if (!done) return {tui::kHandled, std::string(tui::tr("no session yet")), true};
         const Graph& g = done->model.graph;
         for (size_t i = 0; i < g.nodes.size(); ++i) {
           if (node_label(g, static_cast<int64_t>(i)) == name || std::to_string(i) == name) {
             feed.select(static_cast<int64_t>(i));
             app.show_view(std::string_view("graph"));
             return {tui::kHandled | tui::kRedraw, tui::trf("at {}", name)};
           }
         }
         return {tui::kHandled, tui::trf("no node named '{}'", name), true};
       },
       [&feed] {
         std::vector<std::string> names;
         if (const auto done = feed.result()) {
           const Graph& g = done->model.graph;
           for (size_t i = 0; i < g.nodes.size(); ++i) names.push_back(node_label(g, static_cast<int64_t>(i)));
         }
         return names;
       }});
  app.add_command(
      {"set", "atol|rtol X", "Compare again with another tolerance",
       [&feed, &source](std::string_view args) -> tui::CommandResult {
         const auto [key, value] = split_word(args);
         char* end = nullptr;
         const std::string v(value);
         const double x = std::strtod(v.c_str(), &end);
         if ((key != "atol" && key != "rtol") || v.empty() || *end != '\0' || !(x >= 0)) {
           return {tui::kHandled, std::string(tui::tr("usage: set atol|rtol VALUE (a number >= 0)")), true};
         }
         if (!source.rerun) return {tui::kHandled, source.no_rerun, true};
         if (!feed.result()) return {tui::kHandled, std::string(tui::tr("wait for the comparison to finish")), true};
         (key == "atol" ? source.config.atol : source.config.rtol)[""] = x;
         feed.restart(views::LayerwiseJob::start(
             [rerun = source.rerun, config = source.config](session::JobContext& ctx) { return rerun(config, ctx); }));
         return {tui::kHandled | tui::kRedraw, tui::trf("{} = {}; comparing again", key, v)};
       },
       [] { return std::vector<std::string>{"atol", "rtol"}; }});
  app.add_command({"export", "FILE", "Write the layer table (TSV)", [&feed, &log](std::string_view file) -> tui::CommandResult {
                     const auto done = feed.result();
                     if (!done) return {tui::kHandled, std::string(tui::tr("no session yet")), true};
                     const std::string path = file.empty() ? "vernier_layers.tsv" : std::string(file);
                     if (Status s = session::export_layer_table(*done, path); !s.ok()) return {tui::kHandled, s.message(), true};
                     log.add(tui::trf("Exported the layer table to {}", path));
                     return {tui::kHandled | tui::kRedraw, tui::trf("wrote {}", path)};
                   }});
}

}  // namespace

BrowseSource live_source(Model model, TensorMap feeds, session::LayerwiseSessionOptions options) {
  // The runner the first job builds, for the comparisons after it (which start only once it ended).
  auto runner = std::make_shared<std::shared_ptr<session::LayerwiseRunner>>();
  BrowseSource source;
  source.config = options.config;
  source.job = [runner, model = std::move(model), feeds = std::move(feeds),
                options](session::JobContext& ctx) mutable -> Result<session::LayerwiseSession> {
    ctx.progress(0, "building the engine");
    ctx.log(fmt::format("Model {}: {} node(s)", model.graph.name, model.graph.nodes.size()));
    VN_ASSIGN_OR_RETURN(std::unique_ptr<session::LayerwiseRunner> built,
                        session::LayerwiseRunner::build(std::move(model), std::move(feeds), options));
    *runner = std::move(built);
    return (*runner)->run(options.config, ctx);
  };
  source.rerun = [runner](const CompareConfig& config, session::JobContext& ctx) -> Result<session::LayerwiseSession> {
    if (!*runner) return make_error(StatusCode::kInternal, "no comparison ran yet");
    return (*runner)->run(config, ctx);
  };
  return source;
}

bool on_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0 && term != nullptr && *term != '\0' &&
         std::string_view(term) != "dumb";
}

std::optional<int> browse(BrowseSource source, std::string& error) {
  std::unique_ptr<tui::CursesTerminal> terminal = tui::CursesTerminal::open({}, error);
  if (!terminal) return std::nullopt;
  auto feed = source.done ? std::make_shared<views::SessionFeed>(source.done)
                          : std::make_shared<views::SessionFeed>(views::LayerwiseJob::start(source.job));
  {
    tui::App app(*terminal, app_options([&feed] {
                   return feed->running() ? std::string(tui::tr("Quitting stops the comparison")) : std::string();
                 }));
    app.set_screen_catalog(views::screen_ids());
    app.add_view(std::make_unique<views::GraphView>(feed));
    app.add_view(std::make_unique<views::LayersView>(feed));
    app.add_view(std::make_unique<views::TensorView>(feed));
    auto& log = static_cast<views::LogView&>(app.add_view(std::make_unique<views::LogView>(feed)));
    if (!source.origin.empty()) log.add(source.origin);
    app.add_view(std::make_unique<views::HelpView>([&app] { return app.help_document(); }));
    add_commands(app, *feed, log, source);
    app.run();
  }
  const int signal = terminal->caught_signal();
  terminal->close();
  if (signal != 0) std::raise(signal);
  return kExitOk;
}

}  // namespace vn::cli
