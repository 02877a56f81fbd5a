// NumPy .npy files (format 1.0 to 3.0, little-endian, C order) for the
// node scripts that hand tensors to and from onnxruntime-node.
'use strict';
const fs = require('fs');

const ARRAYS = { '<f4': Float32Array, '<f8': Float64Array, '<i8': BigInt64Array, '<i4': Int32Array,
                 '|u1': Uint8Array, '|i1': Int8Array, '|b1': Uint8Array };

// { descr, shape, data }: data a typed array over the file's bytes.
function readNpy(path) {
  const b = fs.readFileSync(path);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = b.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = (header.match(/'descr': '([^']*)'/) || [])[1];
  if (!ARRAYS[descr] || !header.includes("'fortran_order': False"))
    throw new Error(`${path}: expected a little-endian C-order array of ${Object.keys(ARRAYS)}, header ${header.trim()}`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim())
    .filter((s) => s !== '').map(Number);
  const count = shape.reduce((a, d) => a * d, 1);
  const A = ARRAYS[descr];
  if (b.length - start !== count * A.BYTES_PER_ELEMENT)
    throw new Error(`${path}: ${b.length - start} data bytes, expected ${count * A.BYTES_PER_ELEMENT} for [${shape}]`);
  const copy = new Uint8Array(b.subarray(start)); // aligned for the typed array
  return { descr, shape, data: new A(copy.buffer, 0, count) };
}

// Writes `data` (a typed array) with `descr` and `shape` as format 1.0.
function writeNpy(path, descr, shape, data) {
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

module.exports = { readNpy, writeNpy };
