// The onnxruntime-node side of `make bench`: a long-lived process that
// berth-bench drives over stdin/stdout, one line per request and one
// per answer, so berth and onnxruntime runs can alternate pair by pair.
//
//   node ort_peer.js MODEL.onnx THREADS SPEC.json          (pairs)
//   node ort_peer.js MODEL.onnx THREADS SPEC.json --load BUCKET
//
// SPEC.json: {"inputs": [{"name", "dtype": "int64"|"int32"|"float32",
// "dims": [3, "batch", ...], "value": V (optional: every element V)}]},
// symbolic dims named as in the buckets.
// Requests: "bucket batch=8 seq=128" (make inputs, run once cold: "ok NS"),
// "run" ("t NS"), "dump PATH" (first output as raw float32: "ok COUNT"),
// "quit". Any failure answers "error ..." and the process goes on.
// --load: load, run the bucket once and exit (bench.py times the process).
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

const [modelPath, threadsText, specPath, flag, loadBucket] = process.argv.slice(2);
const threads = Number(threadsText);
const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));

function dimsFor(input, bucket) {
  const vals = {};
  for (const part of bucket.trim().split(/\s+/)) {
    const [k, v] = part.split('=');
    vals[k] = Number(v);
  }
  return input.dims.map((d) => {
    if (typeof d === 'number') return d;
    if (!(d in vals)) throw new Error(`input ${input.name}: bucket '${bucket}' gives no value for '${d}'`);
    return vals[d];
  });
}

// The fill rule of bench/bench.h, value for value.
function makeTensor(input, dims) {
  const count = dims.reduce((a, d) => a * d, 1);
  if ('value' in input) { // an input the conversion froze: its one value
    if (input.dtype === 'int64') return new ort.Tensor('int64', new BigInt64Array(count).fill(BigInt(input.value)), dims);
    if (input.dtype === 'int32') return new ort.Tensor('int32', new Int32Array(count).fill(input.value), dims);
    return new ort.Tensor('float32', new Float32Array(count).fill(input.value), dims);
  }
  const last = dims.length ? dims[dims.length - 1] : 1;
  const mask = input.name.includes('mask');
  const intAt = (i) => {
    const row = Math.floor(i / last), col = i % last;
    return mask ? (col < last - (row % 4) * Math.floor(last / 8) ? 1 : 0) : (i * 7919 + 13) % 1000;
  };
  if (input.dtype === 'float32') {
    const a = new Float32Array(count);
    for (let i = 0; i < count; i++) a[i] = ((i * 37) % 255) / 127.5 - 1;
    return new ort.Tensor('float32', a, dims);
  }
  if (input.dtype === 'int64') {
    const a = new BigInt64Array(count);
    for (let i = 0; i < count; i++) a[i] = BigInt(intAt(i));
    return new ort.Tensor('int64', a, dims);
  }
  if (input.dtype === 'int32') {
    const a = new Int32Array(count);
    for (let i = 0; i < count; i++) a[i] = intAt(i);
    return new ort.Tensor('int32', a, dims);
  }
  throw new Error(`input ${input.name}: dtype ${input.dtype} is not one the bench fills`);
}

function feedsFor(bucket) {
  const feeds = {};
  for (const input of spec.inputs) feeds[input.name] = makeTensor(input, dimsFor(input, bucket));
  return feeds;
}

async function timedRun(session, feeds) {
  const t0 = process.hrtime.bigint();
  const out = await session.run(feeds);
  return [process.hrtime.bigint() - t0, out];
}

async function main() {
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // onnxruntime's default (workers spin between runs), unless the run is
    // told otherwise: docs/bench.md, "Reading the figures"
    extra: { session: { intra_op: { allow_spinning: process.env.BENCH_ORT_SPINNING === '0' ? '0' : '1' } } },
  });
  const version = require('onnxruntime-node/package.json').version;
  if (flag === '--load') {
    await session.run(feedsFor(loadBucket));
    const ns = Number(process.hrtime.bigint() - t0);
    // VmHWM: the peak of this process image (ru_maxrss would carry the
    // parent's peak across exec)
    const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    console.log(JSON.stringify({ first_output_ns: ns, peak_rss_kb: hwm ? Number(hwm[1]) : -1 }));
    return;
  }
  console.log(`onnxruntime-node ${version} (intra-op threads ${threads}), loaded in ` +
              `${Number(process.hrtime.bigint() - t0)} ns`);
  let feeds = null, last = null;
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const [cmd, ...rest] = line.trim().split(' ');
    try {
      if (cmd === 'quit') break;
      if (cmd === 'bucket') {
        feeds = feedsFor(rest.join(' '));
        const [ns, out] = await timedRun(session, feeds);
        last = out;
        console.log(`ok ${ns}`);
      } else if (cmd === 'run') {
        if (!feeds) throw new Error('run before bucket');
        const [ns, out] = await timedRun(session, feeds);
        last = out;
        console.log(`t ${ns}`);
      } else if (cmd === 'dump') {
        if (!last) throw new Error('dump before any run');
        const t = last[session.outputNames[0]];
        if (t.type !== 'float32') throw new Error(`first output is ${t.type}, not float32`);
        fs.writeFileSync(rest.join(' '), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        console.log(`ok ${t.data.length}`);
      } else {
        throw new Error(`unknown request '${line}'`);
      }
    } catch (e) {
      console.log(`error ${String(e.message).replace(/\n/g, ' ')}`);
    }
  }
  rl.close();
}

main().catch((e) => {
  console.log(`error ort_peer: ${String(e.message).replace(/\n/g, ' ')}`);
  process.exit(1);
});
