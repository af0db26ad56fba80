#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates ONNX's backend node tests (model.onnx + test_data_set_0/*.pb) with Debian's python3-onnx.

Usage: /usr/bin/python3 generate_node_tests.py OUT_DIR
onnx 1.12's generator still uses numpy aliases that numpy 1.24 removed (np.float, np.int, ...);
they are restored first, as the plain builtins numpy used to alias.
"""
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore", FutureWarning)
for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object), ("str", str),
                       ("complex", complex)):
    if alias not in np.__dict__:
        setattr(np, alias, builtin)

from onnx.backend.test.cmd_tools import main  # noqa: E402  (needs the aliases above)

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "generate-data", "-o", sys.argv[1]]
    main()
