// The peer pipeline on pages: one JSON object per page on stdout, with
// @gutenye/ocr-node's lines (text, mean confidence, box) and its time.
//   node peer_pages.mjs PAGE...
import Ocr from '@gutenye/ocr-node'

const ocr = await Ocr.create()
for (const path of process.argv.slice(2)) {
  const t0 = performance.now()
  const lines = await ocr.detect(path)
  console.log(JSON.stringify({ file: path, ms: performance.now() - t0, lines }))
}
