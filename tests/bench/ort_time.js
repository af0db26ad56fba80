#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Times ONNX Runtime (onnxruntime-node) on one model for bench_vs_ort.py.
//
//     node ort_time.js ORT_MODULE_DIR MODEL INPUTS_JSON THREADS WARM_UP RUNS
//
// INPUTS_JSON lists {name, dtype (float32|int64), shape, file (raw little-endian, next to it)}.
// One session, intra-op threads THREADS, inter-op 1, sequential execution, all graph
// optimizations; WARM_UP untimed runs, then RUNS timed ones. Prints {"ms": [...]} on stdout.
'use strict';

const fs = require('fs');
const path = require('path');

async function main() {
  const [moduleDir, model, inputsJson, threads, warmUp, runs] = process.argv.slice(2);
  const ort = require(path.resolve(moduleDir, 'onnxruntime-node'));
  const types = { float32: ['float32', Float32Array], int64: ['int64', BigInt64Array] };
  const feeds = {};
  for (const input of JSON.parse(fs.readFileSync(inputsJson, 'utf8'))) {
    const [type, ArrayType] = types[input.dtype];
    const bytes = fs.readFileSync(path.join(path.dirname(inputsJson), input.file));
    const data = new ArrayType(bytes.length / ArrayType.BYTES_PER_ELEMENT);
    new Uint8Array(data.buffer).set(bytes);
    feeds[input.name] = new ort.Tensor(type, data, input.shape);
  }
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  for (let i = 0; i < Number(warmUp); ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < Number(runs); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  process.stdout.write(JSON.stringify({ ms }) + '\n');
}

main().catch(e => { process.stderr.write(`ort_time: ${e.message}\n`); process.exit(1); });
