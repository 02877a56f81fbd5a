// The peer pipeline on pages: one JSON object per page on stdout, with
// @gutenye/ocr-node's lines (text, mean confidence, box) and its time;
// with --repeat N each page is read N more times and every read's time
// is in runs_ms (the bench's page rows).
//   node peer_pages.mjs [--repeat N] PAGE...
import Ocr from '@gutenye/ocr-node'

let args = process.argv.slice(2)
let repeat = 0
if (args[0] === '--repeat') {
  repeat = Number(args[1])
  args = args.slice(2)
}
const ocr = await Ocr.create()
for (const path of args) {
  const runs = []
  let lines
  for (let r = 0; r <= repeat; r++) {
    const t0 = performance.now()
    lines = await ocr.detect(path)
    runs.push(performance.now() - t0)
  }
  console.log(JSON.stringify({ file: path, ms: runs[runs.length - 1], runs_ms: runs, lines }))
}
