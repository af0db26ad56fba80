#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`vernier convert --to-onnx` checked on the real engine: ONNX Runtime (npm's onnxruntime-node).

Usage: /usr/bin/python3 ort_convert_check.py VERNIER MODEL_DIR WORK_DIR [FP16_LIMIT INT8_LIMIT]

MODEL_DIR holds model.onnx and input.npz (a `models` fixture: tests/models/export_torchvision.py).
The float32 model's outputs on input.npz come from `vernier run --ref`; the model converted with
`--fp16`, and with `--int8` calibrated on 16 images (uniform in [0, 1) like the fixture's input,
numpy seed 2026, written as a Polygraphy feed list), with and without `--reduce-range`, runs on
ONNX Runtime through ort_run.js. Each output's relative mean error, mean |ort - ref| / mean |ref|,
must stay within the limit (defaults 0.01 for float16, 0.05 for int8). On x86 without VNNI, ONNX
Runtime's int8 kernels sum pairs of products in 16 bits with saturation, which full-range weights
overflow: there the plain `--int8` model is held to the limit as ONNX defines it (`vernier run
--ref` on it) and its ONNX Runtime error is printed, while the `--reduce-range` one is held to the
limit on ONNX Runtime everywhere. Prints the errors; exits 1 when one is over its limit, 2 on a
setup problem (onnxruntime-node missing: run scripts/install-deps.sh).
"""
import base64
import io
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CALIBRATION_IMAGES = 16
CALIBRATION_SEED = 2026


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        raise SystemExit(f"FAILED ({proc.returncode}): {' '.join(cmd)}")
    return proc.stdout


def feed_list(arrays):
    """A Polygraphy feed-list JSON of one-input feeds."""
    def encode(a):
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        return {"array": base64.b64encode(buf.getvalue()).decode(), "polygraphy_class": "ndarray"}
    return [{name: encode(a) for name, a in feed.items()} for feed in arrays]


def ort_outputs(model, out_dir, inputs):
    os.makedirs(out_dir, exist_ok=True)
    args = []
    for name, array in inputs.items():
        path = os.path.join(out_dir, f"in_{len(args)}.npy")
        np.save(path, array)
        args.append(f"{name}={path}")
    try:
        proc = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), model, out_dir] + args,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except FileNotFoundError:
        print("node is not installed: run scripts/install-deps.sh")
        raise SystemExit(2)
    if proc.returncode == 3:
        sys.stdout.write(proc.stdout)
        raise SystemExit(2)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        raise SystemExit(f"FAILED: ONNX Runtime could not run {model}")
    return out_dir


def npy_name(tensor):
    """The file holding an output's values in an out_dir (ort_run.js's naming, which vernier_outputs
    follows): its name with characters other than letters, digits and ._- replaced by _, plus .npy."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in tensor) + ".npy"


def relative_errors(reference, out_dir):
    errors = {}
    for name, ref in reference.items():
        got = np.load(os.path.join(out_dir, npy_name(name)))
        ref = ref.astype(np.float64)
        errors[name] = float(np.abs(got.astype(np.float64) - ref).mean() / np.abs(ref).mean())
    return errors


def has_vnni():
    """Whether this x86 CPU has VNNI (AVX-512 VNNI or AVX-VNNI); non-x86 machines count as having it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            info = f.read()
    except OSError:
        return True
    flags = set()
    for line in info.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
    return not flags or "avx512_vnni" in flags or "avx_vnni" in flags or "avx2" not in flags


def vernier_outputs(vernier, model, inputs_npz, out_dir):
    """The converted model's outputs as ONNX defines them: Vernier's reference, one .npy per output."""
    os.makedirs(out_dir, exist_ok=True)
    saved = os.path.join(out_dir, "ref.npz")
    run([vernier, "run", model, "--ref", "--load-inputs", inputs_npz, "--save-outputs", saved])
    for name, a in np.load(saved).items():
        np.save(os.path.join(out_dir, npy_name(name)), a)
    return out_dir


def main():
    if len(sys.argv) not in (4, 6):
        sys.stderr.write(__doc__)
        return 2
    vernier, model_dir, work = sys.argv[1:4]
    limits = {"fp16": 0.01, "int8": 0.05}
    if len(sys.argv) == 6:
        limits = {"fp16": float(sys.argv[4]), "int8": float(sys.argv[5])}
    os.makedirs(work, exist_ok=True)
    model = os.path.join(model_dir, "model.onnx")
    inputs_npz = os.path.join(model_dir, "input.npz")
    inputs = dict(np.load(inputs_npz))

    ref_path = os.path.join(work, "ref.npz")
    run([vernier, "run", model, "--ref", "--load-inputs", inputs_npz, "--save-outputs", ref_path])
    reference = dict(np.load(ref_path))

    rng = np.random.default_rng(CALIBRATION_SEED)
    calibration = [{name: rng.random(a.shape, dtype=np.float32) for name, a in inputs.items()}
                   for _ in range(CALIBRATION_IMAGES)]
    calib_path = os.path.join(work, "calibration.json")
    with open(calib_path, "w", encoding="utf-8") as f:
        json.dump(feed_list(calibration), f)

    # (name, limit kind, flags, whether ONNX Runtime's error is held to the limit here)
    vnni = has_vnni()
    conversions = [
        ("fp16", "fp16", ["--fp16"], True),
        ("int8", "int8", ["--int8", "--calibration-data", calib_path], vnni),
        ("int8_reduce_range", "int8", ["--int8", "--reduce-range", "--calibration-data", calib_path], True),
    ]
    failed = False
    for kind, limit_kind, flags, held in conversions:
        limit = limits[limit_kind]
        converted = os.path.join(work, f"model_{kind}.onnx")
        cmd = [vernier, "convert", model, "--to-onnx", converted] + flags
        print(f"$ {' '.join(cmd)}")
        print(run(cmd).rstrip())
        out_dir = ort_outputs(converted, os.path.join(work, f"ort_{kind}"), inputs)
        if not held:
            for name, err in relative_errors(reference, out_dir).items():
                print(f"{kind} on ONNX Runtime: {name}: mean |error| / mean |reference| = {err:.3g} (not held to "
                      f"{limit}: x86 without VNNI saturates full-range int8 weights; --reduce-range is for that)")
            out_dir = vernier_outputs(vernier, converted, inputs_npz, os.path.join(work, f"vernier_{kind}"))
        where = "ONNX Runtime" if held else "Vernier's reference"
        for name, err in relative_errors(reference, out_dir).items():
            verdict = "ok" if err <= limit else "OVER THE LIMIT"
            print(f"{kind} on {where}: {name}: mean |error| / mean |reference| = {err:.3g} (limit {limit}) {verdict}")
            failed = failed or err > limit
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
