#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Kill-and-resume: `vernier debug reduce` and `vernier triage --headless` are killed at random
points (SIGKILL, and SIGINT for triage) and resumed (--load-debug-replay, --resume) until they
finish; each chain of runs must reach exactly the result of an uninterrupted run, with no iteration
lost or checked twice.

usage: kill_resume_test.py VERNIER DEMO_MODEL
env:   VN_KILL_SEED=N    the seed of the kill points (printed; default: a fresh one)
       VN_KILL_POINTS=N  how many kill points must pass (default 50)
       VN_KILL_ONLY=TEXT only the scenarios whose name holds TEXT
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE_S = 120  # for one run to finish; far beyond what any takes


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def first_difference(a, b, where=""):
    """Where two JSON-like values first differ, and both values there; None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = first_difference(a.get(key), b.get(key), f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            found = first_difference(a[i] if i < len(a) else None, b[i] if i < len(b) else None, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (where, a, b)


def without_seconds(value):
    """The JSON value without its timings ("seconds" keys), which differ from run to run."""
    if isinstance(value, dict):
        return {k: without_seconds(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [without_seconds(v) for v in value]
    return value


class Run:
    """One process of a chain, its output in a file."""

    def __init__(self, argv, cwd, log):
        self.log = log
        self.started = time.monotonic()
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)

    def wait(self):
        try:
            return self.proc.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail(f"a run took over {DEADLINE_S} s; its output:\n{self.output()}")

    def output(self):
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()


class Reduce:
    """`debug reduce` with the built-in check; resumed from the replay it saves after every check."""

    name = "debug reduce"
    ITERATION = re.compile(r"^\[I\] (?:FAILED|PASSED|UNRESOLVED)\s*\| Iteration (\d+) \((\w+)\)(.*)$", re.M)

    def __init__(self, vernier, model):
        self.base = [vernier, "debug", "reduce", model, "-o", "min.onnx", "--builtin-check", "--deterministic",
                     "--inject-fault", "layer=conv2,kind=scale,factor=1.5", "--mode", "linear",
                     "--save-debug-replay", "replay.json", "--no-progress", "--threads", "1"]

    def argv(self, cwd):
        resume = os.path.exists(os.path.join(cwd, "replay.json"))
        return self.base + (["--load-debug-replay", "replay.json"] if resume else [])

    def recorded(self, cwd):
        path = os.path.join(cwd, "replay.json")
        return load_json(path) if os.path.exists(path) else {}

    def before_run(self, cwd):
        return set(self.recorded(cwd))

    def after_run(self, cwd, run, before, checked):
        """Iterations this run checked must be new, and no run may check one twice."""
        for iteration, phase, rest in self.ITERATION.findall(run.output()):
            key = f"_N{iteration}_{phase}"
            if "| from replay" in rest:
                continue
            if key in before:
                fail(f"{self.name}: iteration {key} was recorded before this run and checked again")
            if key in checked:
                fail(f"{self.name}: iteration {key} checked by two runs")
            checked.add(key)

    def snapshot(self, cwd):
        return f"{len(self.recorded(cwd))} iteration(s) in the replay"

    def result(self, cwd, rc):
        if rc != 0:
            fail(f"{self.name}: exit code {rc}")
        replay = {k: (v["verdict"], v["reason"]) for k, v in self.recorded(cwd).items()}
        return {"minimal model": read_bytes(os.path.join(cwd, "min.onnx")), "iterations": replay}

    def describe(self, result):
        return f"{len(result['iterations'])} iteration(s), a minimal model of {len(result['minimal model'])} bytes"


class Triage:
    """`triage --headless`; resumed with --resume from the session in its work folder."""

    def __init__(self, vernier, model, name, options, interrupts):
        self.name = name
        self.vernier = vernier
        self.base = [vernier, "triage", model, "--headless", "--workdir", "w", "--threads", "1"] + options
        self.interrupts = interrupts  # SIGINT as well as SIGKILL

    def state_file(self, cwd):
        return os.path.join(cwd, "w", "session.json")

    def state(self, cwd):
        return load_json(self.state_file(cwd)) if os.path.exists(self.state_file(cwd)) else None

    def runs(self, cwd):
        """How many runs have worked on the session (0 before its state exists)."""
        state = self.state(cwd)
        return state["runs"] if state else 0

    def argv(self, cwd):
        if self.state(cwd) is None:
            return self.base + ["--force"]
        return [self.vernier, "triage", "--resume", "w"]

    @staticmethod
    def history(state):
        """(node, run) of every answered step and (key, verdict, run) of every reduce iteration."""
        steps = [(s["node"], s["run"]) for s in state["path"]]
        iterations = []
        for s in state["path"]:
            iterations += [(i["key"], i["verdict"], i["run"]) for i in s.get("reduce_iterations", [])]
        if "reduce" in state:
            iterations += [(i["key"], i["verdict"], i["run"]) for i in state["reduce"]["iterations"]]
        return steps, iterations

    def before_run(self, cwd):
        state = self.state(cwd)
        return self.history(state) if state else ([], [])

    def after_run(self, cwd, run, before, checked):
        """What was recorded before this run stays as it was: no step probed, no iteration checked again."""
        state = self.state(cwd)
        if state is None:
            return
        steps, iterations = self.history(state)
        if steps[:len(before[0])] != before[0]:
            fail(f"{self.name}: answered steps changed: {before[0]} became {steps}")
        if iterations[:len(before[1])] != before[1]:
            fail(f"{self.name}: recorded reduce iterations changed: {before[1]} became {iterations}")
        keys = [i[0] for i in iterations]
        if len(keys) != len(set(keys)):
            fail(f"{self.name}: a reduce iteration was checked twice: {keys}")

    def snapshot(self, cwd):
        state = self.state(cwd)
        if state is None:
            return "no session yet"
        steps, iterations = self.history(state)
        return f"{len(steps)} step(s), {len(iterations)} reduce iteration(s) recorded"

    def result(self, cwd, rc):
        if rc != 1:
            fail(f"{self.name}: exit code {rc}, expected 1 (a localized failure)")
        report = load_json(os.path.join(cwd, "w", "report.json"))
        state = self.state(cwd)
        path = [without_seconds(step) for step in report["path"]]
        return {"outcome": report["outcome"], "culprit": report["culprit"], "bundle": report["bundle"], "path": path,
                "bundle model": read_bytes(os.path.join(cwd, "w", "bundle", "model.onnx")),
                "reduce iterations": [i[:2] for i in self.history(state)[1]]}

    def describe(self, result):
        return (f"{result['outcome']}, culprit {result['culprit']}, path "
                f"{' > '.join(s['node'] for s in result['path'])}, "
                f"{len(result['reduce iterations'])} reduce iteration(s)")


def run_chain(scenario, cwd, rng, reference_seconds, counts):
    """Runs `scenario` from scratch in `cwd`, interrupting it at random points, resuming it each
    time, until a run finishes; returns that run's exit code."""
    checked = set()
    for attempt in range(1, 1000):
        before = scenario.before_run(cwd)
        use_sigint = getattr(scenario, "interrupts", False) and rng.random() < 0.25
        delay = rng.uniform(0.0, reference_seconds * 1.1)
        runs_before = scenario.runs(cwd) if use_sigint else 0
        run = Run(scenario.argv(cwd), cwd, os.path.join(cwd, f"log{attempt}.txt"))
        if use_sigint:
            # SIGINT is handled once the walk has started, when this run has counted itself in the state.
            deadline = time.monotonic() + DEADLINE_S
            while scenario.runs(cwd) <= runs_before and run.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
        try:
            rc = run.proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            rc = None
        if rc is None:
            sig = signal.SIGINT if use_sigint else signal.SIGKILL
            run.proc.send_signal(sig)
            rc = run.wait()
            at = time.monotonic() - run.started
            scenario.after_run(cwd, run, before, checked)
            if rc in (0, 1):
                print(f"  ({sig.name} at {at:.2f} s of run {attempt} came after the run's end: not counted)")
                return rc
            if sig == signal.SIGINT and (rc != 130 or "continue it with: vernier triage --resume" not in run.output()):
                fail(f"{scenario.name}: SIGINT gave exit code {rc} without the resume line:\n{run.output()}")
            if sig == signal.SIGKILL and rc != -signal.SIGKILL:
                fail(f"{scenario.name}: SIGKILL gave exit code {rc}:\n{run.output()}")
            counts[sig.name] += 1
            print(f"  kill {sum(counts.values())}: {sig.name} at {at:.2f} s of run {attempt}; "
                  f"then {scenario.snapshot(cwd)}")
            continue
        scenario.after_run(cwd, run, before, checked)
        if rc not in (0, 1):
            fail(f"{scenario.name}: run {attempt} exited with {rc}:\n{run.output()}")
        return rc
    fail("endless chain")


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    vernier, model = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    seed = int(os.environ.get("VN_KILL_SEED", random.SystemRandom().randrange(1 << 30)))
    wanted = int(os.environ.get("VN_KILL_POINTS", "50"))
    print(f"kill points seeded with VN_KILL_SEED={seed}")
    rng = random.Random(seed)
    scenarios = [
        Reduce(vernier, model),
        # Hidden by marking: layer-wise passes, the reduction finds the fused pair.
        Triage(vernier, model, "triage through reduce",
               ["--deterministic", "--inject-fault", "layer=conv2,kind=scale,factor=1.5,when=fused"], True),
        # Found layer-wise and extracted, on real data given by a path relative to the folder the
        # session started in.
        Triage(vernier, model, "triage through extract",
               ["--deterministic", "--inject-fault", "layer=relu1,kind=scale,factor=1.5",
                "--load-inputs", "../real.json"], True),
        # A flaky tactic: repeated builds, their tactic replays sorted, one failing build's replay
        # in the bundle. Every tactic ties (a margin no preemption on a loaded machine can exceed),
        # so the builder seed alone picks and every run builds the same engines.
        Triage(vernier, model, "triage through repeated builds",
               ["--builder-seed", "3", "--builds", "12", "--timing-margin", "1e9", "--inject-fault",
                "tactic=gemm__split_k4,kind=scale,factor=1.5"], True),
    ]
    only = os.environ.get("VN_KILL_ONLY", "")
    scenarios = [s for s in scenarios if only in s.name]
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="vn_kill_resume_")
    try:  # the work folder stays for a failure
        subprocess.run([vernier, "run", model, "--ref", "--seed", "7", "--save-inputs", "real.json"], cwd=work,
                       check=True, stdout=subprocess.DEVNULL)
        references = {}
        for i, scenario in enumerate(scenarios):
            cwd = os.path.join(work, f"reference{i}")
            os.mkdir(cwd)
            run = Run(scenario.argv(cwd), cwd, os.path.join(cwd, "log.txt"))
            rc = run.wait()
            seconds = time.monotonic() - run.started
            references[i] = (scenario.result(cwd, rc), seconds)
            print(f"{scenario.name}: uninterrupted in {seconds:.2f} s: {scenario.describe(references[i][0])}")
        counts = {"SIGKILL": 0, "SIGINT": 0}
        chains = 0
        while sum(counts.values()) < wanted:
            i = chains % len(scenarios)
            scenario = scenarios[i]
            chains += 1
            cwd = os.path.join(work, f"chain{chains}")
            os.mkdir(cwd)
            killed_before = sum(counts.values())
            print(f"chain {chains}: {scenario.name}")
            rc = run_chain(scenario, cwd, rng, references[i][1], counts)
            result = scenario.result(cwd, rc)
            expected = references[i][0]
            for key in expected:
                if result[key] != expected[key]:
                    where, got, wanted = first_difference(result[key], expected[key]) or ("", result[key], expected[key])
                    fail(f"{scenario.name}: after {sum(counts.values()) - killed_before} kill(s) the {key} differs "
                         f"from the uninterrupted run's at {where or 'the top'}:\n  {got!r:.1000}\n  expected "
                         f"{wanted!r:.1000}\n(the chain's folder is kept: {cwd})")
            shutil.rmtree(cwd)
        total = sum(counts.values())
        print(f"PASSED: {total} kill point(s) in a row ({counts['SIGKILL']} SIGKILL, {counts['SIGINT']} SIGINT) over "
              f"{chains} chain(s) in {time.monotonic() - started:.1f} s; VN_KILL_SEED={seed}")
    except SystemExit:
        print(f"(work folder kept: {work})")
        raise
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
