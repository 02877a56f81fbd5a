// Run an ONNX model with onnxruntime-node on .npy inputs and write each
// output as PREFIX.K.npy (K in the model's output order), for the zoo's
// expected values.
//   node zoo_peer.js MODEL.onnx PREFIX NAME=INPUT.npy...
// Prints one line per output: "output K NAME DTYPE [DIMS]".
'use strict';
const ort = require('onnxruntime-node');
const { readNpy, writeNpy } = require('../common/npy.js');

const DESCR = { float32: '<f4', float64: '<f8', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1' };
const TYPES = { '<f4': 'float32', '<f8': 'float64', '<i8': 'int64', '<i4': 'int32', '|u1': 'uint8', '|i1': 'int8',
                '|b1': 'bool' };

async function main() {
  const [model, prefix, ...pairs] = process.argv.slice(2);
  if (!model || !prefix) throw new Error('usage: node zoo_peer.js MODEL.onnx PREFIX NAME=INPUT.npy...');
  const feeds = {};
  for (const p of pairs) {
    const at = p.lastIndexOf('=');
    const a = readNpy(p.slice(at + 1));
    feeds[p.slice(0, at)] = new ort.Tensor(TYPES[a.descr], a.data, a.shape);
  }
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  const res = await session.run(feeds);
  session.outputNames.forEach((name, k) => {
    const t = res[name];
    if (!DESCR[t.type]) throw new Error(`output ${name}: type ${t.type} has no .npy form here`);
    writeNpy(`${prefix}.${k}.npy`, DESCR[t.type], t.dims, t.type === 'bool' ? Uint8Array.from(t.data, Number) : t.data);
    console.log(`output ${k} ${name} ${t.type} [${t.dims.join(', ')}] (onnxruntime-node ${ort.env.versions.node})`);
  });
}

main().catch((e) => {
  console.error(`zoo_peer: ${e.message}`);
  process.exit(1);
});
