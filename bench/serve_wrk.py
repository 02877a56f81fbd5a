#!/usr/bin/python3
"""serve_wrk.py [--build DIR] [--berth PATH] [--seconds S] [--soak-s S]
                [--clients 1,8,64] [--out FILE]

`berth serve` under a packaged HTTP load tool (Debian's wrk, which
scripts/bootstrap --bench installs), against loopback:

  load   each model driven by 1, 8 and 64 keep-alive connections for S
         seconds (default 10): requests per second, p50 and p99 latency
         as wrk measures them, and any answer that was not 200;
  soak   the first graph at 8 connections for --soak-s seconds (default
         600), the server's VmRSS sampled every 5 s: its value after the
         first 30 s, its largest, and its last.

The models: the first graph (examples/first; the server's own cost
dominates) with a JSON body, and the PP-OCRv4 recognizer at batch 1,
width 320 (from the OCR models' cache, tests/ocr fetches it) with its
input as binary tensor data. wrk sends the same body each time; its Lua
script (written next to the configs) prints its counts as JSON at the
end. Exit status 1 when an answer was not 200, a connection failed, the
server did not exit 0 on SIGTERM, or the soak's RSS grew by more than
max(8 MiB, 10%) after its first 30 s.

Prints a markdown table and the soak line; --out FILE writes them."""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = time.monotonic()

LUA = r'''
wrk.method = "POST"
local f = io.open(os.getenv("BERTH_WRK_BODY"), "rb")
wrk.body = f:read("*a")
f:close()
local h = os.getenv("BERTH_WRK_HEADER_LEN")
if h and h ~= "" then
  wrk.headers["Inference-Header-Content-Length"] = h
  wrk.headers["Content-Type"] = "application/octet-stream"
else
  wrk.headers["Content-Type"] = "application/json"
end
done = function(summary, latency, requests)
  io.write(string.format('BERTH_WRK {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\n', summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max, summary.errors.status, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout))
end
'''


def say(msg):
    print("serve_wrk [%4.0fs]: %s" % (time.monotonic() - T0, msg), file=sys.stderr, flush=True)


# The server and the configs as bench/serve_load.py starts and writes them.
from serve_load import BATCHING_ON, LoadError, Server, write_config  # noqa: E402

# berth's own default: one cpu thread per cpu the process may use.
THREADS = len(os.sched_getaffinity(0))


def wrk(port, model, body_path, header_len, clients, seconds, lua):
    env = dict(os.environ, BERTH_WRK_BODY=body_path, BERTH_WRK_HEADER_LEN=str(header_len or ""))
    cmd = ["wrk", "-t", str(min(clients, 2)), "-c", str(clients), "-d", "%ds" % seconds, "--timeout", "10s",
           "-s", lua, "http://127.0.0.1:%d/v2/models/%s/infer" % (port, model)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    for line in r.stdout.splitlines():
        if line.startswith("BERTH_WRK "):
            out = json.loads(line[len("BERTH_WRK "):])
            bad = {k: out[k] for k in ("status", "connect", "read", "write", "timeout") if out[k]}
            if bad:
                raise LoadError("%s at %d clients: %r\n%s" % (model, clients, bad, r.stdout))
            return out
    raise LoadError("wrk printed no counts (exit %d): %s%s" % (r.returncode, r.stdout, r.stderr))


def models(d, cache):
    """(name, config, body file, Inference-Header-Content-Length or None)."""
    out = []
    ex = os.path.join(ROOT, "examples", "first")
    cfg = write_config(d, "first", os.path.join(ex, "first.webnn"), os.path.join(ex, "first.safetensors"), "rows",
                       "batch=1 | batch=8", THREADS, BATCHING_ON)
    body = os.path.join(d, "first.json")
    with open(body, "w") as f:
        json.dump({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}, f)
    out.append(("first", cfg, body, None))
    rec = os.path.join(cache, "ocr")
    if os.path.exists(os.path.join(rec, "rec.webnn")):
        cfg = write_config(d, "rec", os.path.join(rec, "rec.webnn"), os.path.join(rec, "rec.safetensors"), "lines",
                           "batch=1 width=320 | batch=8 width=320", THREADS, BATCHING_ON)
        n = 3 * 48 * 320
        head = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3, 48, 320],
                                       "parameters": {"binary_data_size": n * 4}}],
                           "parameters": {"binary_data_output": True}}).encode()
        body = os.path.join(d, "rec.bin")
        with open(body, "wb") as f:
            f.write(head + struct.pack("<%df" % n, *[((i * 37) % 255) / 127.5 - 1 for i in range(n)]))
        out.append(("rec", cfg, body, len(head)))
    else:
        say("no OCR models in %s: the recognizer row is left out" % cache)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--berth")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--soak-s", type=int, default=600)
    ap.add_argument("--clients", default="1,8,64")
    ap.add_argument("--out")
    a = ap.parse_args()
    if not shutil.which("wrk"):
        print("serve_wrk: wrk is not installed (scripts/bootstrap --bench)", file=sys.stderr)
        return 1
    berth = a.berth or os.path.join(a.build, "apps", "berth")
    env = dict(os.environ, BERTH_BACKEND_PATH=os.path.join(a.build, "backends"))
    d = tempfile.mkdtemp(prefix="berth-wrk-")
    with open(os.path.join(d, "post.lua"), "w") as f:
        f.write(LUA)
    lua = os.path.join(d, "post.lua")
    lines = ["| model | clients | requests/s | p50 ms | p99 ms | max ms | requests |", "|---|---:|---:|---:|---:|---:|---:|"]
    try:
        for name, cfg, body, hlen in models(d, os.path.join(a.build, "cache")):
            s = Server(berth, cfg, env)
            wrk(s.port, name, body, hlen, 1, 1, lua)  # warm
            for c in [int(x) for x in a.clients.split(",")]:
                say("%s: %d clients for %d s" % (name, c, a.seconds))
                r = wrk(s.port, name, body, hlen, c, a.seconds, lua)
                lines.append("| %s | %d | %.0f | %.2f | %.2f | %.1f | %d |" % (
                    name, c, r["requests"] / (r["duration_us"] / 1e6), r["p50_us"] / 1e3, r["p99_us"] / 1e3,
                    r["max_us"] / 1e3, r["requests"]))
            s.stop()
        soak = ""
        if a.soak_s > 0:
            name, cfg, body, hlen = models(d, os.path.join(a.build, "cache"))[0]
            s = Server(berth, cfg, env)
            say("soak: %s at 8 clients for %d s" % (name, a.soak_s))
            samples = []
            result = {}
            t = threading.Thread(target=lambda: result.update(wrk(s.port, name, body, hlen, 8, a.soak_s, lua)))
            t.start()
            t_start = time.monotonic()
            while t.is_alive():
                samples.append((time.monotonic() - t_start, s.rss_kb()[0]))
                t.join(timeout=5)
            s.stop()
            if not result:
                raise LoadError("the soak's wrk run failed")
            settled = [kb for at, kb in samples if at >= 30] or [samples[-1][1]]
            base, top, last = settled[0], max(settled), settled[-1]
            grown = top - base
            soak = ("soak: %s, 8 clients, %d s, %d requests (%.0f/s, p99 %.2f ms, none failed); VmRSS %.1f MiB "
                    "after 30 s, largest %.1f MiB, last %.1f MiB (%d samples)" % (
                        name, a.soak_s, result["requests"], result["requests"] / (result["duration_us"] / 1e6),
                        result["p99_us"] / 1e3, base / 1024, top / 1024, last / 1024, len(samples)))
            if grown > max(8 * 1024, base // 10):
                raise LoadError("RSS grew %.1f MiB during the soak: %s" % (grown / 1024, soak))
    except LoadError as e:
        print("serve_wrk: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(d, ignore_errors=True)
    text = "\n".join(lines) + ("\n\n" + soak if soak else "") + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write("## berth serve under wrk\n\nWritten by bench/serve_wrk.py; wrk %s against loopback.\n\n%s" % (
                subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0].strip(), text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
