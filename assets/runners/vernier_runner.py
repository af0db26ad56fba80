# SPDX-License-Identifier: Apache-2.0
"""Vernier's engine runner protocol, version 1 (README "Engine runners"), for runners in Python.

A runner is a long-lived process: Vernier writes one JSON request per line on its stdin and reads
one JSON reply per line on its stdout; stderr is the runner's log. serve(engine) does all of it;
the engine is any object with:

    name, version        strings for the hello reply
    capabilities         a dict of booleans (intermediate_tensors, builds_vary, lowers_precision,
                         per_layer_precision, tactic_replays, artifacts; absent means false)
    load(model, workdir, build, options)
                         builds `model` (an ONNX path) and returns {"inputs": [...], "outputs": [...],
                         "build": {"layers": [...], "artifacts": [...]}} (build optional); each
                         tensor is {"name", "dtype" (numpy's name, or "bfloat16"), "shape" (ints,
                         names or None; None for an unknown rank)}
    run(feeds)           runs the loaded model; feeds maps input names to numpy arrays (a bfloat16
                         input arrives as Bits); returns [(name, array or Bits), ...] holding every
                         output of the loaded model

Any exception becomes an {"ok": false, "error": ...} reply and its traceback goes to stderr.
Once serve() starts, file descriptor 1 and sys.stdout point at stderr, so that print() and native
libraries cannot corrupt the replies.
"""
import json
import os
import sys
import traceback

import numpy as np

PROTOCOL = 1

_replies = None


class Bits:
    """A tensor of a dtype numpy lacks (bfloat16): its raw bits as uint16, with the dtype's name."""

    def __init__(self, array, dtype="bfloat16"):
        self.array = np.ascontiguousarray(array).view(np.uint16)
        self.dtype = dtype


def reply_stream():
    """The stream replies go to (for tests of misbehaving runners; a runner never needs it)."""
    return _replies


def _take_stdout():
    global _replies
    _replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return _replies


def _read_input(entry):
    array = np.load(entry["path"], allow_pickle=False)
    dtype = entry.get("dtype")
    if dtype is None:
        return array
    if dtype != "bfloat16" or array.dtype != np.uint16:
        raise ValueError("input '%s': dtype %s in a .npy of %s" % (entry["name"], dtype, array.dtype))
    return Bits(array, dtype)


def _write_output(directory, index, name, value):
    path = os.path.join(directory, "out_%d.npy" % index)
    entry = {"name": name, "path": path}
    if isinstance(value, Bits):
        np.save(path, value.array, allow_pickle=False)
        entry["dtype"] = value.dtype
    else:
        # C order always: np.save would write a Fortran-ordered array as such.
        np.save(path, np.ascontiguousarray(value), allow_pickle=False)
    return entry


def _handle(engine, request, state):
    op = request.get("op")
    if op == "hello":
        if request.get("protocol") != PROTOCOL:
            raise ValueError("protocol %r requested; this runner speaks %d" % (request.get("protocol"), PROTOCOL))
        return {"protocol": PROTOCOL, "runner": engine.name, "version": engine.version,
                "capabilities": dict(engine.capabilities)}
    if op == "load":
        state["loaded"] = False
        described = engine.load(request["model"], request.get("workdir"), request.get("build") or {},
                                request.get("options") or {})
        state["loaded"] = True
        return described
    if op == "run":
        if not state.get("loaded"):
            raise RuntimeError("no model loaded")
        feeds = {entry["name"]: _read_input(entry) for entry in request.get("inputs", [])}
        outputs = engine.run(feeds)
        return {"outputs": [_write_output(request["outputs_dir"], i, name, value)
                            for i, (name, value) in enumerate(outputs)]}
    if op == "exit":
        return {}
    raise ValueError("unknown op %r" % op)


def serve(engine, stdin=None):
    """Answers requests from `stdin` (default sys.stdin) until an exit request or end of file."""
    replies = _take_stdout()
    stdin = stdin or sys.stdin
    state = {}
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError as e:
            request = {"id": None}
            reply = {"id": None, "ok": False, "error": "request is not a JSON object: %s" % e}
        else:
            try:
                reply = {"id": request.get("id"), "ok": True}
                reply.update(_handle(engine, request, state))
            except Exception as e:  # every failure is a reply: the runner lives on
                traceback.print_exc(file=sys.stderr)
                message = " | ".join(str(e).splitlines()) or type(e).__name__
                reply = {"id": request.get("id"), "ok": False, "error": message}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
        if request.get("op") == "exit":
            break
