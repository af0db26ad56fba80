// SPDX-License-Identifier: Apache-2.0
// The vernier command line run in process through libvernier_cli's run_cli (no child process):
// arguments parsed, the subcommand's core session run, its transcript and exit code as the
// program's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "core/ir/onnx_export.h"
#include "tests/debug/fixtures.h"
#include "tests/util/process.h"
#include "tui/cli/commands.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDemo = vn::test::demo_model();

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the command line in `dir` (where its default files go), capturing what it prints.
CliRun run_in(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  CliRun run;
  run.exit_code = cli::run_cli(args);
  run.out = testing::internal::GetCapturedStdout();
  run.err = testing::internal::GetCapturedStderr();
  std::filesystem::current_path(before);
  return run;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The named subcommands of `app` (CLI11 keeps option groups as unnamed ones).
std::vector<const CLI::App*> named_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
}

// Every subcommand path (`run`, `debug reduce`, ...) under `app`, with its subcommand.
void subcommand_paths(const CLI::App& app, std::vector<std::string> prefix,
                      std::vector<std::pair<std::vector<std::string>, const CLI::App*>>& out) {
  for (const CLI::App* sub : named_subcommands(app)) {
    std::vector<std::string> path = prefix;
    path.push_back(sub->get_name());
    out.emplace_back(path, sub);
    subcommand_paths(*sub, path, out);
  }
}

// The subcommand list (tui/cli/subcommands.inc) enumerated with every verb it adds: each has its
// help text and a README example (`vernier debug reduce`); each that does work (a verb, or a
// subcommand without verbs) has a test under tests/ that runs it ("debug", "reduce" as
// consecutive arguments); each top-level one is in the CLI contract (../shared/CLI.md) where that
// file is at hand.
TEST(SubcommandList, EverySubcommandHasItsHelpReadmeExampleAndTest) {
  CLI::App app;
  cli::Action action;
  cli::add_subcommands(app, action);
  std::vector<std::pair<std::vector<std::string>, const CLI::App*>> paths;
  subcommand_paths(app, {}, paths);
  ASSERT_GE(paths.size(), 8u);

  const std::filesystem::path source(VN_SOURCE_DIR);
  const std::string readme = read_text(source / "README.md");
  const std::filesystem::path contract = source.parent_path() / "shared" / "CLI.md";
  const std::string cli_md = std::filesystem::exists(contract) ? read_text(contract) : "";
  std::vector<std::string> tests;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source / "tests")) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".cpp" || ext == ".py" || ext == ".sh") tests.push_back(read_text(entry.path()));
  }
  for (const auto& [path, cmd] : paths) {
    std::string words = path[0], quoted = "[\"']" + path[0] + "[\"']";
    for (size_t i = 1; i < path.size(); ++i) {
      words += " " + path[i];
      quoted += ",\\s*[\"']" + path[i] + "[\"']";
    }
    EXPECT_FALSE(cmd->get_description().empty()) << "vernier " << words << " has no help text";
    EXPECT_THAT(readme, HasSubstr("vernier " + words)) << "the README has no example of vernier " << words;
    if (path.size() == 1 && !cli_md.empty()) {
      EXPECT_THAT(cli_md, HasSubstr("vernier " + words)) << "CLI.md does not list vernier " << words;
    }
    if (named_subcommands(*cmd).empty()) {
      const std::regex runs(quoted);
      EXPECT_TRUE(std::any_of(tests.begin(), tests.end(), [&](const std::string& t) { return std::regex_search(t, runs); }))
          << "no test runs vernier " << words;
    }
  }
}

// The README's map ("Where things live"): every file or folder it names in backquotes exists, so
// that the map cannot drift from the tree. Names with a placeholder (`<family>`) are patterns.
TEST(ReadmeMap, EveryPathItNamesExists) {
  const std::filesystem::path source(VN_SOURCE_DIR);
  const std::string readme = read_text(source / "README.md");
  const size_t begin = readme.find("\n## Where things live\n");
  ASSERT_NE(begin, std::string::npos) << "the README has no \"Where things live\" section";
  const size_t end = readme.find("\n## ", begin + 1);
  const std::string map = readme.substr(begin, end - begin);
  size_t checked = 0;
  for (size_t at = map.find('`'); at != std::string::npos; at = map.find('`', at + 1)) {
    const size_t close = map.find('`', at + 1);
    ASSERT_NE(close, std::string::npos);
    const std::string name = map.substr(at + 1, close - at - 1);
    at = close;
    if (name.find('/') == std::string::npos || name.find_first_of("< :") != std::string::npos) continue;
    EXPECT_TRUE(std::filesystem::exists(source / name)) << "the README's map names " << name << ", which does not exist";
    ++checked;
  }
  EXPECT_GE(checked, 30u) << "the map names fewer paths than it did";
}

TEST(CliInProcess, DebugReduceWithTheBuiltinCheckNamesTheFaultyNode) {
  test::TempDir dir;
  const CliRun r =
      run_in(dir.path(), {"debug", "reduce", kDemo, "-o", "min.onnx", "--mode", "ddmin", "--builtin-check",
                          "--deterministic", "--no-progress", "--inject-fault", "layer=conv2,kind=scale,factor=1.5"});
  ASSERT_EQ(r.exit_code, cli::kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] Built-in check: engine vs reference, atol=1e-05 rtol=1e-05\n"));
  EXPECT_THAT(r.out, HasSubstr("node(s) kept: 1 node(s): conv2 (Conv) | inputs: pool1 | outputs: conv2\n"));
  EXPECT_THAT(r.out, HasSubstr("[I] Saved the minimal failing model to min.onnx\n"));
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(std::filesystem::exists(dir / "min.onnx"));
  EXPECT_TRUE(std::filesystem::exists(dir / "vernier_debug_replay.json"));
}

TEST(CliInProcess, DebugPrecisionPrintsTheLayerAndTheCommandThatApplyIt) {
  test::TempDir dir;
  ASSERT_TRUE(save_model(test::fp16_overflow_model(), dir / "overflow.onnx").ok());
  const CliRun r = run_in(dir.path(), {"debug", "precision", "overflow.onnx", "--fp16", "--deterministic"});
  ASSERT_EQ(r.exit_code, cli::kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] Tolerance preset for an engine with fp16 layers: atol=0.01, rtol=0.01"));
  EXPECT_THAT(r.out, HasSubstr("these 1 layer(s) must run in fp32 (removing any other still passes): mm_big\n"));
  EXPECT_THAT(r.out, HasSubstr("    vernier run overflow.onnx --ref --engine --fp16 --deterministic --atol 0.01 --rtol "
                               "0.01 --layer-precisions mm_big:fp32 --precision-constraints obey\n"));
}

TEST(CliInProcess, UsageErrorsAreOneLineAndExitTwo) {
  test::TempDir dir;
  auto expect_error = [&](const std::vector<std::string>& args, const std::string& text) {
    const CliRun r = run_in(dir.path(), args);
    EXPECT_EQ(r.exit_code, cli::kExitBadInput) << r.out << r.err;
    EXPECT_THAT(r.err, StartsWith("vernier: error: "));
    EXPECT_THAT(r.err, HasSubstr(text));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  expect_error({"debug", "reduce", kDemo, "-o", "m.onnx", "--mode", "quick", "--builtin-check"}, "--mode 'quick'");
  expect_error({"debug", "build", kDemo, "--until", "sometimes"}, "--until 'sometimes'");
  // `--check` belongs to the debug tools and triage only; each run builds its command tree anew.
  expect_error({"run", kDemo, "--ref", "--check", "true"}, "--check is not an option of 'run'");
  expect_error({"debug", "repeat", "--until", "1", "--check", "/no/such/program"}, "/no/such/program");
  expect_error({"no-such-command"}, "A subcommand is required");
}

TEST(CliInProcess, DebugRepeatRunsItsCheck) {
  test::TempDir dir;
  const CliRun r = run_in(dir.path(), {"debug", "repeat", "--until", "2", "--check", "true"});
  EXPECT_EQ(r.exit_code, cli::kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] RUNNING | Iteration 1 | Approximately 1 iteration(s) remaining\n"));
  EXPECT_THAT(r.out, HasSubstr("[I] Finished 2 iteration(s) | Passed: 2/2 | Pass Rate: 100%\n"));
}

}  // namespace
}  // namespace vn
