#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs one scenario of the zoo headless and checks what triage found against the scenario's own
"expect": the path through the flowchart (node ids and answers in report.json), the outcome and the
culprit; for a localized failure, the bug-report bundle, whose reproduce.sh must still fail.

usage: scenario_test.py VERNIER SCENARIO.json [--demo]
With --demo the run goes through `vernier demo --headless` instead of `vernier triage --scenario`.
"""
import json
import os
import subprocess
import sys
import tempfile


def fail(message, log=""):
    print(f"FAIL: {message}")
    if log:
        print(log[-4000:])
    sys.exit(1)


def main():
    vernier, scenario_file = sys.argv[1], sys.argv[2]
    demo = "--demo" in sys.argv[3:]
    with open(scenario_file) as f:
        expect = json.load(f)["expect"]
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "w")
        if demo:
            argv = [vernier, "demo", "--headless", "--workdir", work]
        else:
            # One thread: the models are tiny, and ctest may run several scenarios at once on 2 cores.
            argv = [vernier, "triage", "--scenario", scenario_file, "--headless", "--workdir", work, "--threads", "1"]
        # No VERNIER in the environment: triage hands its own path to a scenario's check.
        env = {k: v for k, v in os.environ.items() if k != "VERNIER"}
        run = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
        log = run.stdout + run.stderr
        failing = expect["outcome"] in ("localized", "not_localized")
        want_code = 0 if demo else (1 if failing else 0)
        if run.returncode != want_code:
            fail(f"exit code {run.returncode}, expected {want_code}", log)
        with open(os.path.join(work, "report.json")) as f:
            report = json.load(f)
        path = [step["node"] + (":" + step["answer"] if "answer" in step else "") for step in report["path"]]
        print("path:", " > ".join(path))
        print("outcome:", report["outcome"], "| culprit:", report["culprit"])
        if path != expect["path"]:
            fail(f"path {path}, expected {expect['path']}", log)
        if report["outcome"] != expect["outcome"]:
            fail(f"outcome {report['outcome']}, expected {expect['outcome']}", log)
        if report["culprit"] != expect.get("culprit", ""):
            fail(f"culprit {report['culprit']!r}, expected {expect.get('culprit', '')!r}", log)
        bundle = os.path.join(work, "bundle")
        if expect["outcome"] == "localized":
            # The built-in engine's bundle holds its plan; an engine runner's, what it told of its
            # build, and the model Vernier converted for it when it lowered the precision.
            with open(scenario_file) as f:
                engine = json.load(f).get("engine", {})
            engine_files = ("engine_model.onnx",) if engine.get("runner") and engine.get("precisions") else ()
            if not engine.get("runner"):
                engine_files = ("plan.json",)
            for name in ("model.onnx", "inputs.json", "report.md", "reproduce.sh") + engine_files:
                if not os.path.isfile(os.path.join(bundle, name)):
                    fail(f"bundle/{name} missing", log)
            # The bundle alone reproduces the failure: reproduce.sh exits 1 while it does, with
            # the vernier that wrote it (no VERNIER, no vernier on PATH) or the one VERNIER names.
            script = os.path.join(bundle, "reproduce.sh")
            for extra in ({"VERNIER": vernier}, {"PATH": "/usr/bin:/bin"}):
                rep = subprocess.run(["sh", script], cwd=tmp, env=dict(env, **extra), capture_output=True, text=True,
                                     timeout=120)
                if rep.returncode != 1:
                    fail(f"reproduce.sh ({extra}) exited {rep.returncode}, expected 1", rep.stdout + rep.stderr)
            # Without a vernier to run it says so and exits 2, never 127 (which reads as "reproduces").
            rep = subprocess.run(["sh", script], cwd=tmp, env=dict(env, VERNIER="/nonexistent/vernier"),
                                 capture_output=True, text=True, timeout=120)
            if rep.returncode != 2 or "set VERNIER=" not in rep.stderr:
                fail(f"reproduce.sh with no vernier exited {rep.returncode}, expected 2", rep.stdout + rep.stderr)
            with open(os.path.join(bundle, "report.md")) as f:
                text = f.read()
                if f"**Culprit:** {expect['culprit']}" not in text:
                    fail("report.md does not name the culprit")
            if report.get("engine", "") == "" or (engine.get("runner") and engine["runner"] not in report["engine"]):
                fail(f"report.json names the engine {report.get('engine')!r}")
        elif os.path.exists(bundle):
            fail("a bundle was written though nothing was localized", log)
    print("PASSED")


if __name__ == "__main__":
    main()
