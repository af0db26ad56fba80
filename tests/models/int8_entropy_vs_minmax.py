#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""int8 entropy calibration beats min-max on a ResNet-18 whose calibration images hold outliers.

Usage: /usr/bin/python3 int8_entropy_vs_minmax.py VERNIER MODEL_DIR
MODEL_DIR holds model.onnx and input.npz (for the input's name and shape). Eight calibration images
of normalized values (standard normal) carry one outlier in 10^4 values, of magnitude 20 to 60 (a
saturated sensor, a specular highlight); `vernier run --int8` calibrates on them with each method
and runs eight held-out images, whose logits are compared with the reference's. Min-max spends the
input's int8 range on the outliers (a step of about 0.47 for values of about 1) and every range
downstream grows with them; entropy clips them. Entropy's relative logit error, mean |engine - ref|
/ mean |ref|, must be at most 3/4 of min-max's. Prints both errors and both input thresholds;
exits 1 when entropy does not win.

The held-out images are clean: in a network with random weights a few outlier pixels dominate the
logits (clipping them at the input moves the float32 logits of this model by more than the spread
between images), which a trained classifier does not do, so held-out outliers would measure how
much the network amplifies them rather than how well int8 keeps the images it classifies.
"""
import base64
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

OUTLIER_RATE = 1e-4
IMAGES = 8


def encode(array):
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode(), "polygraphy_class": "ndarray"}


def decode(obj):
    return np.load(io.BytesIO(base64.b64decode(obj["array"])), allow_pickle=False)


def images(shape, seed, outliers):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(IMAGES):
        x = rng.standard_normal(shape).astype(np.float32)
        if outliers:
            hit = rng.random(shape) < OUTLIER_RATE
            x[hit] = rng.choice([-1.0, 1.0], hit.sum()) * rng.uniform(20.0, 60.0, hit.sum())
        out.append(x)
    return out


def save_feeds(path, name, arrays):
    with open(path, "w") as f:
        json.dump([{name: encode(a)} for a in arrays], f)


def logits(path):
    """The first output of every iteration of a --save-outputs file (one runner), stacked."""
    with open(path) as f:
        runs = json.load(f)["lst"]
    assert len(runs) == 1, f"{path}: {len(runs)} runners"
    return np.stack([decode(next(iter(it["outputs"].values()))["values"]) for it in runs[0][1]]).astype(np.float64)


def run(cmd):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: exit code {done.returncode}: {' '.join(cmd)}\n{done.stdout[-2000:]}")


def main():
    vernier, model_dir = sys.argv[1], sys.argv[2]
    model = os.path.join(model_dir, "model.onnx")
    with np.load(os.path.join(model_dir, "input.npz")) as given:
        (name, example), = given.items()
    with tempfile.TemporaryDirectory() as tmp:
        calibration, held_out = os.path.join(tmp, "calibration.json"), os.path.join(tmp, "held_out.json")
        calibration_images = images(example.shape, 1, outliers=True)
        save_feeds(calibration, name, calibration_images)
        save_feeds(held_out, name, images(example.shape, 2, outliers=False))
        largest = max(float(np.abs(x).max()) for x in calibration_images)
        assert largest >= 20, "the calibration images must hold outliers"

        common = ["--threads", "2", "--load-inputs", held_out]
        run([vernier, "run", model, "--ref", "--save-outputs", os.path.join(tmp, "ref.json")] + common)
        ref = logits(os.path.join(tmp, "ref.json"))
        error, input_amax = {}, {}
        for method in ("minmax", "entropy"):
            out, cache = os.path.join(tmp, f"{method}.json"), os.path.join(tmp, f"{method}.cache")
            run([vernier, "run", model, "--engine", "--int8", "--deterministic", "--calibration-data", calibration,
                 "--calibration-method", method, "--calibration-cache", cache, "--save-outputs", out] + common)
            error[method] = float(np.abs(logits(out) - ref).mean() / np.abs(ref).mean())
            with open(cache) as f:
                input_amax[method] = json.load(f)["scales"][name] * 127

    ratio = error["entropy"] / error["minmax"]
    print(f"relative logit error on {IMAGES} held-out images: minmax {error['minmax']:.4f}, "
          f"entropy {error['entropy']:.4f} ({ratio:.2f}x); input thresholds: minmax {input_amax['minmax']:.2f}, "
          f"entropy {input_amax['entropy']:.2f} (largest calibration value {largest:.2f})")
    ok = True
    if not input_amax["minmax"] >= 0.99 * largest:
        print("FAIL: min-max's input threshold is not the largest calibration value")
        ok = False
    if not input_amax["entropy"] < 10:
        print("FAIL: entropy did not clip the input's outliers")
        ok = False
    if not ratio <= 0.75:
        print("FAIL: entropy's error is not at most 3/4 of min-max's")
        ok = False
    print("PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
