#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Vernier's engine runner for ONNX Runtime through onnxruntime-node (protocol version 1; see the
// README's "Engine runners"):
//
//     vernier run model.onnx --ref --engine-runner ort [--runner-option KEY=VALUE ...]
//
// One JSON request per line on stdin, one JSON reply per line on stdout; stderr is the log.
// Tensors are exchanged as .npy files, read and written here (no other npm package).
// Options (--runner-option):
//   providers         comma-separated execution providers (default: cpu)
//   opt_level         disabled|basic|extended|all graph optimizations (default: all)
//   intra_op_threads  threads of one operator (default: the load's build.threads; 0: ORT's choice)
// onnxruntime-node is found through NODE_PATH (Vernier sets it to where scripts/install-deps.sh
// installs it) or in <repo>/.deps/node/node_modules next to this file's folder.
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');
const util = require('util');

// stdout carries the protocol only: anything printed goes to the log.
for (const method of ['log', 'info', 'debug', 'warn']) {
  console[method] = (...args) => process.stderr.write(util.format(...args) + '\n');
}

function loadOrt() {
  const fallback = path.join(__dirname, '..', '..', '.deps', 'node', 'node_modules', 'onnxruntime-node');
  try {
    return require('onnxruntime-node');
  } catch (first) {
    try {
      return require(fallback);
    } catch (second) {
      process.stderr.write(`ort_runner: cannot load onnxruntime-node (${first.message.split('\n')[0]}); ` +
                           'run scripts/install-deps.sh, which installs it into .deps/node\n');
      process.exit(1);
    }
  }
}
const ort = loadOrt();

// ---- .npy files: little-endian, C order ----

const DTYPES = {
  float32: ['f', 4, Float32Array], float64: ['f', 8, Float64Array], float16: ['f', 2, Uint16Array],
  int8: ['i', 1, Int8Array], uint8: ['u', 1, Uint8Array], int16: ['i', 2, Int16Array],
  uint16: ['u', 2, Uint16Array], int32: ['i', 4, Int32Array], int64: ['i', 8, BigInt64Array],
  uint32: ['u', 4, Uint32Array], uint64: ['u', 8, BigUint64Array], bool: ['b', 1, Uint8Array],
};

function dtypeOfDescr(descr, file) {
  const m = /^([<|=>]?)([a-z])(\d+)$/.exec(descr);
  if (m) {
    const [, order, kind, size] = m;
    const bytes = Number(size);
    if (order === '>' && bytes > 1) throw new Error(`${file}: big-endian data ('${descr}') is not supported`);
    for (const [name, [k, s]] of Object.entries(DTYPES)) {
      if (k === kind && s === bytes) return name;
    }
  }
  throw new Error(`${file}: unsupported .npy dtype '${descr}'`);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const [headerLen, start] = major === 1 ? [buf.readUInt16LE(8), 10] : [buf.readUInt32LE(8), 12];
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', start, start + headerLen);
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeText) throw new Error(`${file}: malformed .npy header`);
  const dtype = dtypeOfDescr(descr[1], file);
  const shape = shapeText[1].split(',').map(s => s.trim().replace(/L$/, '')).filter(s => s !== '').map(Number);
  if (shape.some(d => !Number.isInteger(d) || d < 0)) throw new Error(`${file}: malformed shape (${shapeText[1]})`);
  const numel = shape.reduce((a, b) => a * b, 1);
  if (fortran[1] === 'True' && shape.filter(d => d > 1).length > 1) {
    throw new Error(`${file}: Fortran-ordered arrays are not supported`);
  }
  const [, size, ArrayType] = DTYPES[dtype];
  const dataStart = start + headerLen;
  if (buf.length - dataStart !== numel * size) {
    throw new Error(`${file}: ${buf.length - dataStart} data bytes for shape (${shape}) of ${dtype}`);
  }
  // A copy into a fresh buffer: typed arrays need their element alignment.
  const data = new ArrayType(numel);
  new Uint8Array(data.buffer).set(buf.subarray(dataStart));
  return { dtype, shape, data };
}

function writeNpy(file, dtype, shape, data) {
  const [kind, size] = DTYPES[dtype];
  const descr = (size === 1 ? '|' : '<') + kind + size;
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const v1 = header.length + 11 <= 65535;
  const prefixLen = v1 ? 10 : 12;
  header += ' '.repeat((64 - ((prefixLen + header.length + 1) % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(prefixLen);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = v1 ? 1 : 2;
  if (v1) prefix.writeUInt16LE(header.length, 8); else prefix.writeUInt32LE(header.length, 8);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), bytes]));
}

// ---- the runner ----

const PROVIDERS = { cpuexecutionprovider: 'cpu', cudaexecutionprovider: 'cuda', tensorrtexecutionprovider: 'tensorrt' };
const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'];
let session = null;

function describe(metadata, names) {
  return names.map((name, i) => {
    const m = metadata[i];
    if (!m || !m.isTensor) throw new Error(`'${name}' is not a tensor`);
    // ORT reports an unknown shape and a scalar's alike ([]): said unknown, which checks less.
    const shape = m.shape.length === 0 ? null
      : m.shape.map(d => (typeof d === 'number' ? (d >= 0 ? d : null) : (d === '' ? null : d)));
    return { name, dtype: m.type, shape };
  });
}

async function load(req) {
  const build = req.build || {};
  for (const flag of ['fp16', 'bf16', 'tf32', 'int8']) {
    if (build[flag]) throw new Error(`ONNX Runtime runs the model as given and cannot build it in ${flag}`);
  }
  if (build.layer_precisions && Object.keys(build.layer_precisions).length > 0) {
    throw new Error('ONNX Runtime cannot set layer precisions');
  }
  const options = req.options || {};
  for (const key of Object.keys(options)) {
    if (!['providers', 'opt_level', 'intra_op_threads'].includes(key)) {
      throw new Error(`unknown option '${key}' (the ort runner takes providers, opt_level, intra_op_threads)`);
    }
  }
  const providers = (options.providers || 'cpu').split(',').map(p => p.trim()).filter(p => p)
    .map(p => PROVIDERS[p.toLowerCase()] || p);
  const optLevel = options.opt_level || 'all';
  if (!OPT_LEVELS.includes(optLevel)) throw new Error(`opt_level '${optLevel}' is not one of ${OPT_LEVELS.join('|')}`);
  const threadsText = options.intra_op_threads !== undefined ? options.intra_op_threads : String(build.threads || 0);
  const threads = Number(threadsText);
  if (!Number.isInteger(threads) || threads < 0) throw new Error(`intra_op_threads '${threadsText}' is not a count`);
  if (session) {
    await session.release();
    session = null;
  }
  const sessionOptions = { executionProviders: providers, graphOptimizationLevel: optLevel };
  if (threads > 0) sessionOptions.intraOpNumThreads = threads;
  session = await ort.InferenceSession.create(req.model, sessionOptions);
  // ORT does not expose the graph it fused and placed, so build.layers stays empty; the session's
  // input and output names are what it built.
  return {
    inputs: describe(session.inputMetadata, session.inputNames),
    outputs: describe(session.outputMetadata, session.outputNames),
    build: { layers: [], artifacts: [], inputs: session.inputNames, outputs: session.outputNames },
  };
}

async function run(req) {
  if (!session) throw new Error('no model loaded');
  if (!req.outputs_dir) throw new Error('the run request lacks outputs_dir');
  const feeds = {};
  for (const input of req.inputs || []) {
    if (input.dtype && input.dtype !== 'bfloat16') throw new Error(`input '${input.name}': unknown dtype '${input.dtype}'`);
    if (input.dtype === 'bfloat16') throw new Error(`input '${input.name}': onnxruntime-node has no bfloat16 tensors`);
    const { dtype, shape, data } = readNpy(input.path);
    feeds[input.name] = new ort.Tensor(dtype, data, shape);
  }
  const results = await session.run(feeds);
  const outputs = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (!DTYPES[t.type]) throw new Error(`output '${name}' is ${t.type}, which .npy exchange cannot carry`);
    const file = path.join(req.outputs_dir, `out_${i}.npy`);
    writeNpy(file, t.type, t.dims, t.data);
    outputs.push({ name, path: file });
  });
  for (const t of Object.values(results)) t.dispose();
  return { outputs };
}

function reply(obj) {
  const line = Buffer.from(JSON.stringify(obj) + '\n');
  for (let off = 0; off < line.length;) {
    try {
      off += fs.writeSync(1, line, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

async function handle(req) {
  switch (req.op) {
    case 'hello':
      if (req.protocol !== 1) throw new Error(`protocol ${req.protocol} requested; this runner speaks 1`);
      return {
        protocol: 1, runner: 'ort', version: ort.env.versions.node || 'unknown',
        capabilities: { intermediate_tensors: true, builds_vary: false, lowers_precision: false },
      };
    case 'load': return load(req);
    case 'run': return run(req);
    case 'exit': return {};
    default: throw new Error(`unknown op '${req.op}'`);
  }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let req;
    try {
      req = JSON.parse(line);
    } catch (e) {
      reply({ id: null, ok: false, error: `request is not JSON: ${e.message}` });
      continue;
    }
    try {
      const body = await handle(req);
      reply({ id: req.id, ok: true, ...body });
    } catch (e) {
      reply({ id: req.id, ok: false, error: String(e && e.message ? e.message : e).split('\n').join(' | ') });
    }
    if (req.op === 'exit') break;
  }
  if (session) await session.release();
  process.exit(0);
}

main().catch(e => {
  process.stderr.write(`ort_runner: ${e.stack || e}\n`);
  process.exit(1);
});
