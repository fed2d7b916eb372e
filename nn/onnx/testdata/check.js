// check.js DIR: runs each ONNX model that DIR/manifest.json lists in
// onnxruntime-node and compares its outputs with flipzero's, which the Go
// test (onnx_test.go) wrote beside the models. It prints one JSON line per
// model with the largest differences seen, and exits 1 when an output is
// missing, has the wrong shape, or differs by more than the manifest's
// tolerance; 2 when it cannot run at all.
//
// Install onnxruntime-node here first, without the CUDA libraries its
// install script would otherwise download:
//
//	ONNXRUNTIME_NODE_INSTALL=skip npm ci --prefix nn/onnx/testdata
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function readFloats(file) {
  const b = fs.readFileSync(file);
  // Copy into an ArrayBuffer of its own: a Buffer's offset in its pool
  // need not be a multiple of 4.
  const out = new Float32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(4 * i);
  return out;
}

function maxDiff(got, want, what) {
  if (got.length !== want.length) {
    throw new Error(`${what}: ${got.length} values, want ${want.length}`);
  }
  let d = 0;
  for (let i = 0; i < want.length; i++) {
    const x = Math.abs(got[i] - want[i]);
    if (!(x <= d)) d = x; // NaN propagates and fails the check
  }
  return d;
}

function checkDims(t, want, what) {
  if (t.dims.length !== want.length || t.dims.some((d, i) => d !== want[i])) {
    throw new Error(`${what}: shape [${t.dims}], want [${want}]`);
  }
}

async function check(dir, c) {
  const session = await ort.InferenceSession.create(path.join(dir, c.model));
  const size = c.planes * c.height * c.width;
  const input = readFloats(path.join(dir, c.input));
  const want = {
    policy: readFloats(path.join(dir, c.policy)),
    wdl: readFloats(path.join(dir, c.wdl)),
    value: readFloats(path.join(dir, c.value)),
  };
  const widths = { policy: c.actions, wdl: 3, value: 1 };
  const worst = { policy: 0, wdl: 0, value: 0 };
  // The whole batch, then each position alone: the batch dimension is
  // dynamic, and a position's outputs must not depend on its neighbours.
  const runs = [{ first: 0, count: c.count }];
  for (let i = 0; i < c.count; i++) runs.push({ first: i, count: 1 });
  for (const { first, count } of runs) {
    const x = new ort.Tensor('float32', input.slice(first * size, (first + count) * size), [count, c.planes, c.height, c.width]);
    const out = await session.run({ input: x });
    for (const name of ['policy', 'wdl', 'value']) {
      const what = `${c.game} ${name} (positions ${first}..${first + count - 1})`;
      if (!out[name]) throw new Error(`${what}: the model has no output ${name}`);
      const w = widths[name];
      checkDims(out[name], [count, w], what);
      const d = maxDiff(out[name].data, want[name].subarray(first * w, (first + count) * w), what);
      worst[name] = Math.max(worst[name], d);
    }
  }
  return worst;
}

async function main() {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node check.js DIR');
    process.exit(2);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  let failed = false;
  for (const c of manifest.cases) {
    const worst = await check(dir, c);
    console.log(JSON.stringify({ game: c.game, positions: c.count, ...worst }));
    for (const [name, d] of Object.entries(worst)) {
      if (!(d <= manifest.tolerance)) {
        console.error(`${c.game}: ${name} differs from flipzero's by ${d}, more than ${manifest.tolerance}`);
        failed = true;
      }
    }
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`check.js: ${e.message}`);
  process.exit(1);
});
