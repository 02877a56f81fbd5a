// Run an ONNX model with onnxruntime-node on an input .npy and compare
// its first output with berth's, element by element, at the conformance
// tolerance (tools/conformance): |got - want| <= 1e-4 + 1e-3 * |want|.
// Also the per-step argmax, which is what CTC decoding reads.
//   node peer_compare.js MODEL.onnx INPUT.npy BERTH_OUTPUT.npy
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');
const { readNpy } = require('../common/npy.js');

const ATOL = 1e-4;
const RTOL = 1e-3;

// A float32 .npy: { shape, data }.
function readF32(path) {
  const a = readNpy(path);
  if (a.descr !== '<f4') throw new Error(`${path}: expected float32 (<f4), found ${a.descr}`);
  return a;
}

async function main() {
  const [model, inPath, outPath] = process.argv.slice(2);
  const x = readF32(inPath);
  const mine = readF32(outPath);
  const session = await ort.InferenceSession.create(model);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  const res = await session.run(feeds);
  const peer = res[session.outputNames[0]];
  const label = `${inPath.split('/').pop()}: onnxruntime-node ${ort.env.versions.node}`;
  if (peer.dims.join(',') !== mine.shape.join(',')) {
    console.error(`${label}: output shapes differ: berth [${mine.shape}], peer [${peer.dims}]`);
    process.exit(1);
  }
  let bad = 0, worst = 0, worstAt = -1;
  for (let i = 0; i < peer.data.length; i++) {
    const want = peer.data[i], got = mine.data[i];
    const err = Math.abs(got - want);
    if (!(err <= ATOL + RTOL * Math.abs(want))) bad++;
    if (!(err <= worst)) { worst = err; worstAt = i; }
  }
  const classes = peer.dims[peer.dims.length - 1];
  let argmaxDiff = 0;
  for (let s = 0; s < peer.data.length / classes; s++) {
    let a = 0, b = 0;
    for (let c = 1; c < classes; c++) {
      if (peer.data[s * classes + c] > peer.data[s * classes + a]) a = c;
      if (mine.data[s * classes + c] > mine.data[s * classes + b]) b = c;
    }
    if (a !== b) argmaxDiff++;
  }
  console.log(`${label}: [${peer.dims}] max |diff| ${worst.toExponential(3)} at ${worstAt}, ` +
              `${bad} outside ${ATOL} + ${RTOL}*|want|, ${argmaxDiff} steps with another argmax`);
  process.exit(bad === 0 && argmaxDiff === 0 ? 0 : 1);
}

main().catch((e) => { console.error(`peer_compare: ${e.message}`); process.exit(1); });
