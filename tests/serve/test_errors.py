"""Bad input and overload: every refusal is a 4xx or 5xx with a JSON
error naming the field, and the server keeps serving; a full queue is
503, a passed deadline 504, a body over the cap 413; SIGTERM finishes
what is in flight and exits 0."""

import json
import os
import socket
import subprocess
import threading
import time

import serve_fixture as fx
from serve_fixture import check


def refused(s, status, body, part, headers=None, model="first"):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    st, hdr, resp = s.client.raw("POST", "/v2/models/%s/infer" % model, raw, headers or {})
    check(st == status, "expected %d for %r, got %d %r" % (status, raw[:120], st, resp[:300]))
    check(hdr.get("content-type", "").startswith("application/json"), "error without JSON: %r" % hdr)
    err = json.loads(resp)["error"]
    check(part in err, "error %r does not name %r" % (err, part))
    return err


X = {"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}


def bad_requests(s):
    refused(s, 400, b'{"inputs": [', "not valid JSON")
    refused(s, 400, b'[1, 2]', "expected a JSON object")
    refused(s, 400, b'\xff\xfe', "not valid JSON")
    refused(s, 404, {"inputs": [X]}, "no model named 'absent'", model="absent")
    refused(s, 400, {"inputs": []}, "missing input 'x'")
    refused(s, 400, {"inputs": [dict(X, name="y")]}, "no input 'y'")
    refused(s, 400, {"inputs": [X, X]}, "given twice")
    refused(s, 400, {"inputs": [dict(X, datatype="INT64")]}, "datatype: expected FP32, found INT64")
    refused(s, 400, {"inputs": [dict(X, datatype="BYTES")]}, "found BYTES")
    refused(s, 400, {"inputs": [dict(X, shape=[1, 5], data=[1] * 5)]}, "shape: expected [batch (1 to 8), 4], found [1, 5]")
    refused(s, 400, {"inputs": [dict(X, shape=[9, 4], data=[1] * 36)]}, "found [9, 4] (dim 0)")
    refused(s, 400, {"inputs": [dict(X, shape=[4])]}, "expected rank 2")
    refused(s, 400, {"inputs": [dict(X, shape=[1, -4])]}, "shape[1]")
    refused(s, 400, {"inputs": [dict(X, data=[1, 2, 3])]}, "needs 4 values, found 3")
    # far more numbers than any input takes: refused while reading, before
    # a tree of them is built
    refused(s, 400, b'{"inputs": [{"name": "x", "data": [' + b",".join([b"1"] * 100000) + b"]}]}",
            "more JSON values than the model's inputs take at their largest")
    refused(s, 400, {"inputs": [dict(X, data=[1, 2, "3", 4])]}, "expected a number, found a string")
    refused(s, 400, b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 1e999]}]}',
            "1e999 is outside FP32's range")
    refused(s, 400, {"inputs": [{"name": "x", "shape": [1, 4], "data": [1, 2, 3, 4]}]}, 'missing "datatype"')
    refused(s, 400, {"inputs": [dict(X)], "outputs": [{"name": "z"}]}, "no output 'z'")
    refused(s, 400, {"inputs": [dict(X)], "parameters": {"timeout": -1}}, "parameters.timeout")
    # The binary extension: sizes that do not add up.
    head = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4],
                                   "parameters": {"binary_data_size": 16}}]}).encode()
    refused(s, 400, head + bytes(8), "runs past the end of the body",
            {"Inference-Header-Content-Length": str(len(head))})
    refused(s, 400, head + bytes(20), "4 bytes of binary data after the JSON that no input claims",
            {"Inference-Header-Content-Length": str(len(head))})
    refused(s, 400, head + bytes(16), "Inference-Header-Content-Length is 100000",
            {"Inference-Header-Content-Length": "100000"})
    refused(s, 400, head + bytes(16), "Inference-Header-Content-Length: expected a whole number",
            {"Inference-Header-Content-Length": "-3"})
    refused(s, 400, head + bytes(16), "binary tensor data needs an Inference-Header-Content-Length header")
    # Wrong methods and paths.
    st, _, resp = s.client.raw("GET", "/v2/models/first/infer")
    check(st == 405 and "expected POST" in json.loads(resp)["error"], "GET infer: %d" % st)
    st, _, resp = s.client.raw("GET", "/v3/whatever")
    check(st == 404 and "no such path" in json.loads(resp)["error"], "unknown path: %d" % st)
    # A body declared over --max-body-mb: refused at its headers, before
    # a byte of it is sent, and the connection closed.
    with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:
        c.sendall(b"POST /v2/models/first/infer HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % (2 << 20))
        head = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            head += chunk
    check(head.startswith(b"HTTP/1.1 413") and b"larger than the server's limit of 1048576 bytes" in head,
          "a body over the cap: %r" % head[:300])
    st, _ = s.client.live()
    check(st == 200, "not live after the refusals")
    r = s.client.infer("first", [X])
    check(r.status == 200, "a good request after the bad ones: %s" % r.error)
    m = s.client.metrics()
    check(fx.metric(m, "berth_requests_total", "first") >= 25, "refusals not counted")


def overload(d):
    """One worker that waits half a second for company (max_batch 8), a
    queue of two: a third request is 503 at once; a request whose
    deadline is shorter than the wait is 504."""
    config = fx.first_config(d, name="slow", serve="max_batch = 8\nmax_delay_us = 500000\nmax_queue = 2\n")
    s = fx.Server("--max-body-mb", "1", config)
    answers = []

    def send():
        answers.append(fx.OipClient("127.0.0.1", s.port).infer("slow", [X]))

    waiting = [threading.Thread(target=send) for _ in range(2)]
    for t in waiting:
        t.start()
    deadline = time.time() + 10
    while fx.metric(s.client.metrics(), "berth_queue_depth", "slow") < 2 and time.time() < deadline:
        time.sleep(0.005)
    r = s.client.infer("slow", [X])
    check(r.status == 503 and "the queue is full (2 requests waiting" in r.error, "full queue: %d %s" % (r.status, r.error))
    for t in waiting:
        t.join()
    check([a.status for a in answers] == [200, 200], "queued requests: %r" % [a.error for a in answers])
    r = s.client.infer("slow", [X], parameters={"timeout": 1000})
    check(r.status == 504 and "deadline passed" in r.error, "deadline: %d %s" % (r.status, r.error))
    # One request whose deadline passes and one that can wait, merged
    # into the same run: each gets its own answer, once.
    pair = {}

    def send_pair(key, params):
        pair[key] = fx.OipClient("127.0.0.1", s.port).infer("slow", [X], parameters=params)
    short = threading.Thread(target=send_pair, args=("short", {"timeout": 1000}))
    short.start()
    while fx.metric(s.client.metrics(), "berth_queue_depth", "slow") < 1 and time.time() < deadline + 10:
        time.sleep(0.005)
    send_pair("long", None)
    short.join()
    check(pair["short"].status == 504 and pair["long"].status == 200,
          "a run holding an expired request: %d %s / %d %s" % (pair["short"].status, pair["short"].error,
                                                               pair["long"].status, pair["long"].error))
    m = s.client.metrics()
    check('berth_request_failures_total{model="slow",code="503"} 1' in m, "503 not counted")
    check('berth_request_failures_total{model="slow",code="504"} 2' in m, "504 not counted")

    # SIGTERM while a request waits in the queue: it is answered, then
    # the server exits 0 and no longer accepts connections.
    inflight = []
    t = threading.Thread(target=lambda: inflight.append(fx.OipClient("127.0.0.1", s.port).infer("slow", [X])))
    t.start()
    while fx.metric(s.client.metrics(), "berth_queue_depth", "slow") < 1 and time.time() < deadline + 10:
        time.sleep(0.005)
    rc, err = s.stop()
    t.join()
    check(rc == 0, "exit status %d after SIGTERM: %s" % (rc, err))
    check(inflight and inflight[0].status == 200, "in-flight request: %r" % (inflight and inflight[0].error))
    try:
        fx.OipClient("127.0.0.1", s.port, timeout=2).live()
        fx.fail("still accepting connections after exit")
    except OSError:
        pass
    return s


def startup_errors(d):
    """What stops berth serve before it listens: one line naming the
    file, line and key, exit 1; bad usage, exit 2."""
    def serve(*args):
        return subprocess.run([fx.BERTH, "serve", "--port", "0"] + list(args), capture_output=True, text=True,
                              timeout=60)
    bad = os.path.join(d, "bad.ini")
    with open(bad, "w") as f:
        f.write("[model]\ngraph = first.webnn\nweights = first.safetensors\n[serve]\nmax_batch = 0\n")
    r = serve(bad)
    check(r.returncode == 1 and "bad.ini:5: [serve] max_batch: expected a positive whole number" in r.stderr,
          "bad [serve]: %d %s" % (r.returncode, r.stderr))
    named = os.path.join(d, "pair.ini")
    with open(named, "w") as f:
        f.write("[model.a]\ngraph = g.webnn\nweights = w.safetensors\nbatch = 1\n")
    r = serve(named)
    check(r.returncode == 1 and "pair.ini:4: [model.a]: unknown key 'batch'" in r.stderr,
          "a bad [model.NAME]: %d %s" % (r.returncode, r.stderr))
    first = fx.first_config(d)
    r = serve(first, first)
    check(r.returncode == 2 and "two models named 'first'" in r.stderr, "same name twice: %s" % r.stderr)
    # Server-wide [serve] keys: configs that give one must agree; a flag
    # wins; settings that cannot work together stop it.
    a = fx.first_config(d, name="a", serve="drain_s = 5\n")
    b = fx.first_config(d, name="b", serve="drain_s = 9\n")
    r = serve(a, b)
    check(r.returncode == 1 and "[serve] drain_s is 5 in" in r.stderr and "b.ini" in r.stderr,
          "disagreeing drain_s: %d %s" % (r.returncode, r.stderr))
    r = serve("--max-inflight-mb", "16", first)
    check(r.returncode == 2 and "max_inflight_mb (16) is less than --max-body-mb (64)" in r.stderr,
          "budget under the cap: %d %s" % (r.returncode, r.stderr))
    r = serve("--http-threads", "0", first)
    check(r.returncode == 2 and "--http-threads: expected a positive whole number, found '0'" in r.stderr,
          "--http-threads 0: %d %s" % (r.returncode, r.stderr))
    r = serve("--port")
    check(r.returncode == 2, "--port without a value: %d" % r.returncode)
    r = serve(os.path.join(d, "absent.ini"))
    check(r.returncode == 1 and "absent.ini" in r.stderr, "a missing config: %s" % r.stderr)


def main():
    d = fx.model_dir()
    startup_errors(d)
    s = fx.Server("--max-body-mb", "1", fx.first_config(d))
    bad_requests(s)
    rc, err = s.stop()
    check(rc == 0, "exit status %d: %s" % (rc, err))
    overload(d)
    print("errors: bad requests refused by field, 413, 503, 504, SIGTERM drain: ok")


if __name__ == "__main__":
    main()
