// SPDX-License-Identifier: Apache-2.0
// `vernier triage`: walks the accuracy-debugging flowchart, answering each question with its
// probe, and prints the path with the evidence; writes report.json into the work folder. The walk
// is a session kept in the work folder (core/flow/session_file.h) that --resume continues.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "core/flow/flowchart.h"
#include "core/flow/triage_run.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "tui/cli/triage_command.h"
#include "tui/cli/triage_tui.h"

namespace vn::cli {
namespace {

std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> line;
  return line;
}

// Exit code of a triage stopped by Ctrl-C: the shell's for SIGINT.
constexpr int kExitInterrupted = 130;

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) {
  g_interrupted.store(true);
  static const char kLine[] = "\n[I] Ctrl-C: stopping at the next check (Ctrl-C again quits at once)\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kLine, sizeof(kLine) - 1);
}

// From the call to the process's exit, Ctrl-C sets g_interrupted: the walk stops at its next
// check (the session is saved as it goes, so that loses only the check), or, when the walk has
// already ended, the process finishes and exits with its result. A second Ctrl-C has the default
// effect. The handler is not removed when triage returns, because a Ctrl-C between that return
// and the exit would otherwise kill the process before it flushed its output.
void handle_interrupts() {
  g_interrupted.store(false);
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

// Adds the `triage` subcommand with its options to `app`, parsed into `args`.
CLI::App* add_triage_options(CLI::App& app, TriageArgs& args) {
  CLI::App* cmd = app.add_subcommand("triage", "Walk the accuracy-debugging flowchart, measuring every answer");
  cmd->add_option("model", args.model, "ONNX model (default: the scenario's; not with --resume)");
  cmd->add_option("--scenario", args.scenario,
                  "Scenario file (assets/scenarios/*.json): model and options; those given here win");
  cmd->add_flag("--headless", args.headless, "Walk the chart automatically and print the path (the default when not on a terminal)");
  cmd->add_option("--workdir", args.workdir,
                  "Work folder: the session state, report.json, build replays, the bundle (default: a new "
                  "vernier_triage[_N] here)");
  cmd->add_option("--resume", args.resume,
                  "Continue the session in this work folder where it stopped, with the options it started with");
  cmd->add_option("--lang", args.lang, "Language of the chart: en or zh (default: from LANG)");
  add_no_mouse_flag(*cmd);
  cmd->add_flag("--force", args.force, "Start over in a work folder that holds an earlier triage");
  cmd->add_option("--builds", args.builds, "Engine builds of the intermittency probe")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_option("--threads", args.threads, "Threads for the backends (default: all cores)")->check(CLI::Range(0, 1024));
  args.data.add_to(*cmd);
  args.compare.add_to(*cmd);
  args.engine.add_to(*cmd);
  args.runners.add_to(*cmd);
  args.runners.add_engine_model(*cmd);
  args.check.add_to(*cmd);
  accept_check_command(*cmd);
  return cmd;
}

// The options given on the command line of `cmd` ("--fp16", "model", ...), which win over a
// scenario's.
void record_given(const CLI::App& cmd, TriageArgs& args) {
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() == 0) continue;
    for (const std::string& name : option->get_lnames()) args.given.insert("--" + name);
    if (option->get_positional()) args.given.insert(option->get_name(true));
  }
}


// The arguments a session was started with, parsed again, run from the folder it was started in.
Result<TriageArgs> stored_args(const flow::TriageSession& session) {
  const nlohmann::ordered_json& command = session.command();
  const auto tokens = command.find("args");
  const auto cwd = command.find("cwd");
  VN_RETURN_IF_NOT(tokens != command.end() && tokens->is_array() && cwd != command.end() && cwd->is_string(),
                   StatusCode::kIoError, "{}: the session does not record its command line", session.file().string());
  std::vector<std::string> argv{"triage"};
  for (const auto& t : *tokens) {
    VN_RETURN_IF_NOT(t.is_string(), StatusCode::kIoError, "{}: command: an argument is not a string",
                     session.file().string());
    argv.push_back(t.get<std::string>());
  }
  std::reverse(argv.begin(), argv.end());  // CLI11 takes a vector last argument first
  CLI::App parser;
  TriageArgs stored;
  CLI::App* cmd = add_triage_options(parser, stored);
  try {
    parser.parse(argv);
  } catch (const CLI::ParseError& e) {
    return make_error(StatusCode::kInvalidArgument, "{}: the session's command line does not parse: {}",
                      session.file().string(), e.what());
  }
  record_given(*cmd, stored);
  std::error_code ec;
  const std::filesystem::path folder = cwd->get<std::string>();
  if (folder != std::filesystem::current_path(ec)) {
    std::filesystem::current_path(folder, ec);
    VN_RETURN_IF_NOT(!ec, StatusCode::kInvalidArgument, "{}: cannot enter {}, where the session started: {}",
                     session.file().string(), folder.string(), ec.message());
    fmt::print("[I] Working in {}, where the session started\n", folder.string());
  }
  return stored;
}

// The arguments of this command line after the subcommand's name.
std::vector<std::string> triage_arguments() {
  const std::vector<std::string>& line = command_line();
  const auto name = std::find(line.begin(), line.end(), "triage");
  return name == line.end() ? std::vector<std::string>{} : std::vector<std::string>(name + 1, line.end());
}

}  // namespace

int run_triage(TriageArgs given) {
  handle_interrupts();
  TriageArgs args = given;
  std::optional<std::vector<std::string>> check_argv = check_command();
  std::optional<flow::TriageSession> session;
  if (!given.resume.empty()) {
    std::vector<std::string> others;
    for (const std::string& name : given.given) {
      if (name != "--resume" && name != "--headless") others.push_back(name);
    }
    if (!others.empty()) {
      return report_error(make_error(StatusCode::kInvalidArgument,
                                     "--resume continues the session with the options it started with (kept in "
                                     "{}); give no other option than --headless (got {})",
                                     (std::filesystem::path(given.resume) / flow::kSessionFile).string(),
                                     fmt::join(others, ", ")));
    }
    std::error_code ec;
    const std::filesystem::path workdir = std::filesystem::absolute(given.resume, ec);
    Result<flow::TriageSession> opened = flow::TriageSession::open(workdir);
    if (!opened.ok()) return report_error(opened.status());
    session = std::move(*opened);
    Result<TriageArgs> stored = stored_args(*session);
    if (!stored.ok()) return report_error(stored.status());
    args = std::move(*stored);
    // The folder as the first run named it, unless the session has been moved since.
    const std::string recorded = session->command().value("workdir", "");
    args.workdir = !recorded.empty() && std::filesystem::equivalent(recorded, workdir, ec) ? recorded : workdir.string();
    args.headless = args.headless || given.headless;
  }
  if (!args.scenario.empty()) {
    Result<flow::Scenario> scenario = flow::load_scenario(args.scenario);
    if (!scenario.ok()) return report_error(scenario.status());
    apply_scenario(*scenario, args, check_argv);
    fmt::print("[I] Scenario {}: {}\n", scenario->name, scenario->title);
  }
  if (args.model.empty()) {
    return report_error(
        make_error(StatusCode::kInvalidArgument, "give the MODEL to triage, a --scenario, or --resume DIR"));
  }
  const char* lang_env = std::getenv("LANG");
  Result<std::string> lang = flow::choose_language(args.lang, lang_env ? lang_env : "");
  if (!lang.ok()) return report_error(lang.status());
  Result<flow::Flowchart> chart = flow::load_flowchart(assets_dir() / "flowchart" / (*lang + ".json"));
  if (!chart.ok()) return report_error(chart.status());
  Result<std::filesystem::path> chosen = flow::triage_workdir(args.workdir, session.has_value() || args.force);
  if (!chosen.ok()) return report_error(chosen.status());
  const std::filesystem::path workdir = std::move(*chosen);
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  flow::TriageRunConfig run;
  flow::TriageConfig& config = run.triage;
  if (!args.data.load_inputs.empty()) {
    Result<std::vector<TensorMap>> real = args.data.make_feeds(model->graph);
    if (!real.ok()) return report_error(real.status());
    config.real_feeds = std::move(*real);
  }
  DataOptions synthetic = args.data;
  synthetic.load_inputs.clear();
  synthetic.save_inputs.clear();
  Result<std::vector<TensorMap>> feeds = synthetic.make_feeds(model->graph);
  if (!feeds.ok()) return report_error(feeds.status());
  config.synthetic_feeds = std::move(*feeds);
  Result<engine::EngineOptions> engine = args.engine.engine_options(args.data.input_shapes);
  if (!engine.ok()) return report_error(engine.status());
  if (engine->plan) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--load-engine: triage rebuilds the engine as it goes; give the build flags instead"));
  }
  config.build = std::move(engine->build);
  Result<std::shared_ptr<eut::EngineUnderTest>> under_test = args.runners.single_engine();
  if (!under_test.ok()) return report_error(under_test.status());
  config.engine = std::move(*under_test);
  Result<CompareConfig> compare = args.compare.config();
  if (!compare.ok()) return report_error(compare.status());
  config.compare = std::move(*compare);
  config.tolerance_origin = apply_tolerance_preset(loosest_allowed(config.build.allowed), config.compare);
  config.threads = args.threads;
  config.builds = args.builds;
  config.workdir = workdir;
  Result<std::optional<debug::ExternalChecker>> check = args.check.checker(check_argv, workdir);
  if (!check.ok()) return report_error(check.status());
  config.check = std::move(*check);
  // A check (a scenario's especially) runs Vernier itself as $VERNIER: this program unless set.
  if (config.check && !std::getenv("VERNIER")) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) setenv("VERNIER", self.c_str(), 0);
  }
  if (!session) {
    std::error_code ec;
    run.command = {{"cwd", std::filesystem::current_path(ec).string()},
                   {"args", args.command.empty() ? triage_arguments() : args.command},
                   {"workdir", workdir.string()}};
  }
  run.resumed = std::move(session);
  config.model = std::move(*model);

  const flow::Flowchart& flowchart = *chart;
  const Tolerance tolerance = config.compare.tolerance_for("");
  const std::string tolerance_from = debug::origin_text(config.tolerance_origin);
  flow::TriageRunHooks hooks;
  hooks.on_start = [&](const flow::TriageSession& started) {
    fmt::print("[I] Triage of {} ({}), every check at atol={} rtol={} ({}); work folder {}\n", args.model, chart->title,
               format_number(tolerance.atol), format_number(tolerance.rtol), tolerance_from, workdir.string());
    if (started.resumed()) {
      fmt::print("[I] Resuming the session in {} (run {}): {} step(s) answered{}\n", workdir.string(), started.run(),
                 started.path().size(),
                 started.reduce()
                     ? fmt::format(", {} reduce iteration(s) recorded", started.reduce()->iterations.size())
                     : "");
    }
  };
  hooks.observe = [](const flow::TriageStep& step, const flow::FlowNode& node) {
    const std::string cost = node.kind == flow::NodeKind::kEnd
                                 ? ""
                                 : fmt::format("         ({}{:.2f} s, {} engine build(s), {} check(s))\n",
                                               step.resumed ? "earlier run: " : "", step.seconds, step.builds,
                                               step.checks);
    if (node.kind == flow::NodeKind::kQuestion && step.answer) {
      fmt::print("[triage] {} -> {}\n         {}\n{}", node.question, *step.answer ? node.yes.label : node.no.label,
                 step.summary, cost);
    } else if (node.kind == flow::NodeKind::kEnd) {
      fmt::print("[triage] {}\n         {}\n", node.title, node.text);
    } else {
      fmt::print("[triage] {}\n         {}\n{}", node.title, step.summary, cost);
    }
    std::fflush(stdout);
  };
  const bool headless = args.headless;
  hooks.walk = [headless](const flow::Flowchart& walked, flow::TriageConfig triage,
                          const flow::TriageObserver& observe) {
    return walk_triage(walked, std::move(triage), observe, headless, &g_interrupted);
  };
  Result<flow::TriageRunResult> result = flow::run_triage_session(flowchart, std::move(run), hooks);
  if (!result.ok() && result.status().code() == StatusCode::kCancelled) {
    fmt::print("[I] Interrupted. The session is saved in {}; continue it with: vernier triage --resume {}\n",
               workdir.string(), workdir.string());
    return kExitInterrupted;
  }
  if (!result.ok()) return report_error(result.status());
  const flow::TriageRunResult& r = *result;
  fmt::print("[I] Path: {}\n", r.path);
  fmt::print("[I] Outcome: {}{}{}\n", r.result.outcome,
             r.result.culprit.empty() ? "" : " | culprit: " + r.result.culprit,
             r.result.bundle.empty() ? "" : " | bug-report bundle: " + r.result.bundle.string());
  fmt::print("[I] Triage took {:.2f} s: {} engine build(s), {} check(s){}\n", r.seconds, r.builds, r.checks,
             r.resumed ? fmt::format(" over {} run(s) of the session", r.runs) : "");
  fmt::print("[I] Wrote {}\n", r.report.string());
  return r.failing ? kExitFailed : kExitOk;
}

void set_command_line(std::vector<std::string> args) { stored_command_line() = std::move(args); }
const std::vector<std::string>& command_line() { return stored_command_line(); }

void add_triage_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TriageArgs>();
  CLI::App* cmd = add_triage_options(app, *args);
  cmd->callback([args, cmd, &action] {
    record_given(*cmd, *args);
    action = [args] { return run_triage(*args); };
  });
}

}  // namespace vn::cli
