// Run an ONNX model with onnxruntime-node on .npy inputs and write each
// output as PREFIX.K.npy (K in the model's output order), for the zoo's
// expected values.
//   node zoo_peer.js MODEL.onnx PREFIX NAME=INPUT.npy...
// Prints one line per output: "output K NAME DTYPE [DIMS]".
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const NPY = { float32: '<f4', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1', float64: '<f8' };
const ARRAYS = { '<f4': Float32Array, '<i8': BigInt64Array, '<i4': Int32Array, '|u1': Uint8Array, '|i1': Int8Array,
                 '<f8': Float64Array };
const TYPES = { '<f4': 'float32', '<i8': 'int64', '<i4': 'int32', '|u1': 'uint8', '|i1': 'int8', '<f8': 'float64' };

function readNpy(path) {
  const b = fs.readFileSync(path);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = b.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = header.match(/'descr': '([^']*)'/)[1];
  if (!ARRAYS[descr] || !header.includes("'fortran_order': False"))
    throw new Error(`${path}: unsupported .npy header ${header.trim()}`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim())
    .filter((s) => s !== '').map(Number);
  const data = b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length);
  return new ort.Tensor(TYPES[descr], new ARRAYS[descr](data), shape);
}

function writeNpy(path, t) {
  const descr = NPY[t.type];
  if (!descr) throw new Error(`${path}: output type ${t.type} has no .npy form here`);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = t.type === 'bool' ? Buffer.from(t.data.map((v) => (v ? 1 : 0))) :
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const [model, prefix, ...pairs] = process.argv.slice(2);
  if (!model || !prefix) throw new Error('usage: node zoo_peer.js MODEL.onnx PREFIX NAME=INPUT.npy...');
  const feeds = {};
  for (const p of pairs) {
    const at = p.lastIndexOf('=');
    feeds[p.slice(0, at)] = readNpy(p.slice(at + 1));
  }
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  const res = await session.run(feeds);
  session.outputNames.forEach((name, k) => {
    const t = res[name];
    writeNpy(`${prefix}.${k}.npy`, t);
    console.log(`output ${k} ${name} ${t.type} [${t.dims.join(', ')}] (onnxruntime-node ${ort.env.versions.node})`);
  });
}

main().catch((e) => {
  console.error(`zoo_peer: ${e.message}`);
  process.exit(1);
});
