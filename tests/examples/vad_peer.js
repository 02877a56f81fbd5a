// The chunk loop of examples/vad (berth-vad) on onnxruntime-node: the
// ONNX model as published, fed the same chunks, sr = 16000 as the int64
// scalar the conversion froze, and each run's hn, cn carried into the
// next run's h, c from zeros. Writes OUT/probs.npy (float32 [chunks]),
// OUT/hn.npy and OUT/cn.npy (the final state), as berth-vad --dump does.
//   node vad_peer.js MODEL.onnx CHUNKS.npy OUT
// CHUNKS.npy: float32 [chunks, samples], the audio berth-vad reads.
'use strict';
const ort = require('onnxruntime-node');
const path = require('path');
const { readNpy, writeNpy } = require('../common/npy.js');

async function main() {
  const [model, chunksPath, out] = process.argv.slice(2);
  if (!out) throw new Error('usage: node vad_peer.js MODEL.onnx CHUNKS.npy OUT');
  const chunks = readNpy(chunksPath);
  if (chunks.descr !== '<f4' || chunks.shape.length !== 2)
    throw new Error(`${chunksPath}: expected float32 [chunks, samples]`);
  const [n, len] = chunks.shape;
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  let h = new ort.Tensor('float32', new Float32Array(2 * 64), [2, 1, 64]);
  let c = new ort.Tensor('float32', new Float32Array(2 * 64), [2, 1, 64]);
  const probs = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const input = new ort.Tensor('float32', chunks.data.slice(k * len, (k + 1) * len), [1, len]);
    const res = await session.run({ input, sr, h, c });
    probs[k] = res.output.data[0];
    h = res.hn;
    c = res.cn;
  }
  writeNpy(path.join(out, 'probs.npy'), '<f4', [n], probs);
  writeNpy(path.join(out, 'hn.npy'), '<f4', h.dims, h.data);
  writeNpy(path.join(out, 'cn.npy'), '<f4', c.dims, c.data);
  console.log(`onnxruntime-node ${ort.env.versions.node}: ${n} chunks of ${len} samples, state carried`);
}

main().catch((e) => {
  console.error(`vad_peer: ${e.message}`);
  process.exit(1);
});
