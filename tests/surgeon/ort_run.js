#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs an ONNX model on ONNX Runtime (npm's onnxruntime-node, CPU) for the tests of
// `vernier convert --to-onnx`:
//
//     node ort_run.js MODEL OUT_DIR NAME=FILE.npy ...
//
// Feeds each graph input NAME from a .npy file (float32, float16, int64, int32, int8, uint8, bool;
// C order) and writes every graph output to OUT_DIR/<output>.npy in the dtype ONNX Runtime returns.
// onnxruntime-node is looked up in $VERNIER_NODE_MODULES, else in <repo>/.deps/node/node_modules
// (where scripts/install-deps.sh puts it). Exit codes: 0 done, 2 bad usage or data, 3 no
// onnxruntime-node.
'use strict';

const fs = require('fs');
const path = require('path');

const DTYPES = {
  '<f4': ['float32', Float32Array],
  '<f2': ['float16', Uint16Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
  '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array],
  '|b1': ['bool', Uint8Array],
};

function fail(code, message) {
  process.stderr.write(`ort_run.js: ${message}\n`);
  process.exit(code);
}

function loadOrt() {
  const modules = process.env.VERNIER_NODE_MODULES || path.join(__dirname, '..', '..', '.deps', 'node', 'node_modules');
  try {
    return require(path.join(modules, 'onnxruntime-node'));
  } catch (e) {
    fail(3, `onnxruntime-node is not installed in ${modules} (${e.code || e.message}): run scripts/install-deps.sh`);
  }
}

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') fail(2, `${file}: not a .npy file`);
  const major = bytes[6];
  const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) fail(2, `${file}: unsupported .npy header ${header}`);
  const type = DTYPES[descr[1]];
  if (!type) fail(2, `${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const data = bytes.subarray(start + headerLen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return { type: type[0], dims, data: new type[1](copy.buffer) };
}

function writeNpy(file, tensor) {
  const entry = Object.entries(DTYPES).find(([, t]) => t[0] === tensor.type);
  if (!entry) fail(2, `output of type ${tensor.type} cannot be written`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main(argv) {
  if (argv.length < 2) fail(2, 'usage: node ort_run.js MODEL OUT_DIR NAME=FILE.npy ...');
  const ort = loadOrt();
  const [model, outDir, ...pairs] = argv;
  const feeds = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) fail(2, `expected NAME=FILE.npy, got '${pair}'`);
    const npy = readNpy(pair.slice(eq + 1));
    feeds[pair.slice(0, eq)] = new ort.Tensor(npy.type, npy.data, npy.dims);
  }
  const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  // Output names become file names: anything but letters, digits, '.', '-' and '_' is '_'.
  for (const name of session.outputNames) {
    writeNpy(path.join(outDir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.npy`), results[name]);
  }
  process.stdout.write(`ort_run.js: ${model}: ${session.outputNames.length} output(s) written to ${outDir}\n`);
}

main(process.argv.slice(2)).catch((e) => fail(1, `ONNX Runtime failed: ${e.message || e}`));
