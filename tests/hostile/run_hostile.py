#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the hostile-input battery that gen_hostile.py wrote (issue 9).

Usage: run_hostile.py VERNIER MANIFEST [FORMAT...]

For every case of the given formats (all when none are given), runs `vernier -q <args>` in a scratch
folder and requires:
- no signal (a crash, an abort, a sanitizer's report ends in one) and the expected exit code;
- for exit code 2: stderr holds exactly one line starting "vernier: error: " apart from "[W]"
  warnings (a model newer than libonnx is announced as not checked before it is refused);
- for exit code 0 (edge cases the spec allows): no error line.
Prints one line per failing case and exits 1 when any failed.
"""

import json
import os
import subprocess
import sys
import tempfile

vernier, manifest_path, formats = os.path.abspath(sys.argv[1]), sys.argv[2], set(sys.argv[3:])
manifest = json.load(open(manifest_path))
cases = [c for c in manifest["cases"] if not formats or c["format"] in formats]
failures = []
with tempfile.TemporaryDirectory(prefix="vernier-hostile-") as scratch:
    for index, case in enumerate(cases):
        # A folder per case: a command that writes (debug reduce) must not see an earlier case's files.
        cwd = os.path.join(scratch, str(index))
        os.mkdir(cwd)
        args = [a.replace("{file}", case["file"]).replace("{model}", manifest["model"]) for a in case["args"]]
        try:
            proc = subprocess.run([vernier, "-q"] + args, cwd=cwd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        except subprocess.TimeoutExpired:
            failures.append(f"{case['name']}: timed out after 120 s")
            continue
        stderr = proc.stderr.decode("utf-8", "replace")
        lines = [line for line in stderr.split("\n") if line and not line.startswith("[W] ")]
        problem = None
        if proc.returncode < 0:
            problem = f"killed by signal {-proc.returncode}"
        elif proc.returncode != case["expect"]:
            problem = f"exit code {proc.returncode}, expected {case['expect']}"
        elif case["expect"] == 2 and (len(lines) != 1 or not lines[0].startswith("vernier: error: ")):
            problem = f"expected one 'vernier: error:' line on stderr, got {len(lines)} line(s)"
        elif case["expect"] == 0 and any(line.startswith("vernier: error") for line in lines):
            problem = "an error line on success"
        if problem:
            tail = " | ".join(lines[-3:])[:400]
            failures.append(f"{case['name']}: {problem}: {tail}")
print(f"{len(cases) - len(failures)} of {len(cases)} hostile cases behaved")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
