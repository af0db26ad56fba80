#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A runner for the protocol tests, built on assets/runners/vernier_runner.py: its "engine" runs
the model's elementwise nodes and MatMuls with numpy. FAKE_MODE picks one misbehaviour (see
MODES); with FAKE_ONCE=PATH it misbehaves only while PATH does not exist, and creates it when it
does, so that the runner Vernier restarts afterwards behaves. FAKE_ONLY_ISOLATED=1 misbehaves in
runs of isolated-layers models alone (their outputs are named "*__local"), so that the layer-wise
run before them and the checks after them go well; FAKE_ONLY_INPUT=NAME only with models that have
a graph input NAME (an extracted part of a model). FAKE_SCALE_NODE=NAME makes the engine
inaccurate without misbehaving: the node of that name (in any model it loads) has its output scaled
by 1.5. FAKE_BUILDS_VARY=1 says its builds vary, so that triage rebuilds through it. FAKE_LOG=PATH
appends one line per process start, so that tests count processes."""
import os
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "assets", "runners"))
import vernier_runner  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

OPS = {
    "Relu": lambda a: np.maximum(a, 0),
    "Sigmoid": lambda a: (1 / (1 + np.exp(-a))).astype(a.dtype),
    "Tanh": np.tanh,
    "Identity": lambda a: a,
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "MatMul": np.matmul,
}
MODE = os.environ.get("FAKE_MODE", "ok")


def misbehave(phase, graph=None):
    """Whether the mode's misbehaviour is due in `phase` (load or run) now, for `graph`."""
    if not MODE.endswith("_" + phase):
        return False
    only_input = os.environ.get("FAKE_ONLY_INPUT")
    if only_input and (graph is None or not any(i.name == only_input for i in graph.input)):
        return False
    if os.environ.get("FAKE_ONLY_ISOLATED") and (
            graph is None or not any(o.name.endswith("__local") for o in graph.output)):
        return False
    once = os.environ.get("FAKE_ONCE")
    if once:
        if os.path.exists(once):
            return False
        open(once, "w").close()
    print("fake: misbehaving with %s" % MODE, file=sys.stderr, flush=True)
    return True


def dtype_name(elem_type):
    if elem_type == onnx.TensorProto.BFLOAT16:
        return "bfloat16"
    return np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE.get(elem_type, np.float32)).name


def describe(value):
    t = value.type.tensor_type
    shape = None
    if t.HasField("shape"):
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
    return {"name": value.name, "dtype": dtype_name(t.elem_type) if t.elem_type else "float32", "shape": shape}


class FakeEngine:
    name = "fake"
    version = "0.1"

    def __init__(self):
        self.capabilities = {"intermediate_tensors": MODE != "no_intermediate", "artifacts": True,
                             "builds_vary": os.environ.get("FAKE_BUILDS_VARY") == "1"}
        self.graph = None

    def load(self, model, workdir, build, options):
        if MODE != "hide_output_load" and misbehave("load"):
            if MODE == "crash_load":
                os.kill(os.getpid(), signal.SIGSEGV)
            if MODE == "hang_load":
                time.sleep(600)
        if options.get("fail") == "load":
            raise ValueError("fake: cannot build this model")
        self.graph = onnx.load(model).graph
        self.build = build
        initializers = {i.name for i in self.graph.initializer}
        artifact = os.path.join(workdir, "fake.plan")
        with open(artifact, "w") as f:
            f.write("plan\n")
        outputs = [describe(v) for v in self.graph.output]
        if misbehave("load") and MODE == "hide_output_load":
            outputs = outputs[:-1]
        return {"inputs": [describe(v) for v in self.graph.input if v.name not in initializers],
                "outputs": outputs,
                "build": {"layers": [{"name": n.name, "type": n.op_type, "precision": "fp32", "tactic": "numpy"}
                                     for n in self.graph.node], "artifacts": [artifact]}}

    def run(self, feeds):
        values = {i.name: numpy_helper.to_array(i) for i in self.graph.initializer}
        values.update(feeds)
        for node in self.graph.node:
            args = [values[name] for name in node.input]
            if any(isinstance(a, vernier_runner.Bits) for a in args):
                if node.op_type != "Identity":
                    raise ValueError("fake: bfloat16 only goes through Identity")
                values[node.output[0]] = args[0]
            else:
                values[node.output[0]] = OPS[node.op_type](*args)
            if node.name and node.name == os.environ.get("FAKE_SCALE_NODE"):
                values[node.output[0]] = (values[node.output[0]] * 1.5).astype(values[node.output[0]].dtype)
        outputs = [(v.name, values[v.name]) for v in self.graph.output]
        if misbehave("run", self.graph):
            stream = vernier_runner.reply_stream()
            if MODE == "crash_run":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif MODE == "exit_run":
                print("fake: engine exploded, giving up", file=sys.stderr, flush=True)
                os._exit(3)
            elif MODE == "hang_run":
                time.sleep(600)
            elif MODE == "error_run":
                raise RuntimeError("fake: no kernel for this layer")
            elif MODE == "garbage_run":
                stream.write("this is not json\n")
            elif MODE == "flood_stdout_run":
                stream.write("x" * (20 << 20))
                stream.flush()
                time.sleep(600)
            elif MODE == "bad_id_run":
                stream.write('{"id": 424242, "ok": true, "outputs": []}\n')
            elif MODE == "missing_tensor_run":
                outputs = outputs[:-1]
            elif MODE == "wrong_dtype_run":
                outputs[0] = (outputs[0][0], outputs[0][1].astype(np.float64))
            elif MODE == "wrong_shape_run":
                outputs[0] = (outputs[0][0], outputs[0][1].reshape(-1))
            elif MODE in ("outside_path_run", "symlink_run"):
                redirect_outputs()
            stream.flush()
        if MODE == "flood_stderr_run":
            sys.stderr.write(("fake: log line " + "y" * 100 + "\n") * 400000)
            sys.stderr.write("fake: last words of the flood\n")
            sys.stderr.flush()
        return outputs


def redirect_outputs():
    """Writes this run's files outside the exchange folder (directly, or through a symbolic link in it)."""
    write = vernier_runner._write_output
    elsewhere = tempfile.mkdtemp(prefix="vernier-fake-outside-")

    def outside(directory, index, name, value):
        entry = write(elsewhere, index, name, value)
        if MODE == "symlink_run":
            link = os.path.join(directory, "link_%d.npy" % index)
            os.symlink(entry["path"], link)
            entry["path"] = link
        return entry

    vernier_runner._write_output = outside


if __name__ == "__main__":
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write("start %d\n" % os.getpid())
    if MODE == "protocol2":
        vernier_runner.PROTOCOL = 2
    print("fake: ready (mode %s)" % MODE, file=sys.stderr, flush=True)
    vernier_runner.serve(FakeEngine())
