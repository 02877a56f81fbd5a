"""Hostile and unlucky clients: what `berth serve` must hold against.

  framing   two Content-Length headers, Content-Length with
            Transfer-Encoding, an unknown Transfer-Encoding and a folded
            header line are refused with 400 and the connection closed;
  hygiene   no raw byte of a path echoed, label values escaped in
            /metrics, an FP32 value past FP32's range and an id longer
            than 255 bytes refused by name;
  slow      1,100 connections that never finish their headers (spread
            over loopback addresses, each under the per-IP limit) leave a
            normal client answered, and are cut at header_timeout_s; a
            body slower than min_body_kbps is cut; an address over its
            per-IP limit is turned away;
  memory    16 concurrent 64 MB uploads under max_inflight_mb 256: a
            declared size over the cap is 413 before the body, the ones
            past the budget 503 with Retry-After, and the server's peak
            RSS stays under its resting RSS plus the budget;
  drain     SIGTERM: readiness false, a new request 503, a queued request
            and an upload begun before it answered, exit 0; an upload that
            never ends is cut at drain_s, still exit 0.

Timings are printed, never asserted: a client's wait is bounded only so
that a server that holds it forever fails instead of hanging."""

import json
import resource
import select
import signal
import socket
import sys
import threading
import time

import serve_fixture as fx
from serve_fixture import check

X = {"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}
BODY = json.dumps({"inputs": [X]}).encode()
INFER = b"POST /v2/models/first/infer HTTP/1.1\r\nHost: t\r\n"


def connect(port, source="127.0.0.1", timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def read_response(s, timeout=10):
    """(status, headers, body, closed): one response, and whether the
    server closed the connection after it."""
    s.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return None, {}, b"connection closed before a response: %r" % data[:200], True
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(body) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    closed = False
    try:
        s.settimeout(1)
        closed = s.recv(1) == b""
    except socket.timeout:
        pass
    except OSError:
        closed = True
    return status, headers, body[:n], closed


def wait_readable(s, seconds):
    p = select.poll()
    p.register(s, select.POLLIN)
    return bool(p.poll(int(seconds * 1000)))


def exchange(port, raw):
    s = connect(port)
    try:
        s.sendall(raw)
        return read_response(s)
    finally:
        s.close()


def framing(port):
    n = len(BODY)
    cases = [
        ("two Content-Length", INFER + b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, n) + BODY,
         "Content-Length: given 2 times"),
        ("conflicting Content-Length", INFER + b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % n + BODY,
         "Content-Length: given 2 times"),
        ("Content-Length and chunked", INFER + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
         + b"%x\r\n" % n + BODY + b"\r\n0\r\n\r\n", "Content-Length and Transfer-Encoding both given"),
        ("gzip, chunked", INFER + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + b"%x\r\n" % n + BODY
         + b"\r\n0\r\n\r\n", "Transfer-Encoding: expected 'chunked', found 'gzip, chunked'"),
        ("two Transfer-Encoding", INFER + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
         + b"%x\r\n" % n + BODY + b"\r\n0\r\n\r\n", "Transfer-Encoding: given 2 times"),
        ("folded line", INFER + b"X-Trace: 1\r\n 2\r\nContent-Length: %d\r\n\r\n" % n + BODY,
         "obsolete line folding"),
        ("folded Transfer-Encoding", INFER + b"Transfer-Encoding:\r\n chunked\r\nContent-Length: %d\r\n\r\n" % n
         + BODY, "obsolete line folding"),
        ("folded GET", b"GET /v2/health/live HTTP/1.1\r\nHost: t\r\nX-A: b\r\n\tc d\r\n\r\n", "obsolete line folding"),
    ]
    for name, raw, part in cases:
        st, hdr, body, closed = exchange(port, raw)
        check(st == 400, "%s: expected 400, got %r %r" % (name, st, body[:200]))
        err = json.loads(body)["error"]
        check(part in err, "%s: error %r does not name %r" % (name, err, part))
        check(closed and hdr.get("connection") == "close", "%s: the connection was not closed" % name)
    # The same request stated once is answered, on a connection kept open.
    st, hdr, body, closed = exchange(port, INFER + b"Content-Length: %d\r\n\r\n" % n + BODY)
    check(st == 200 and not closed, "a plain request: %r %r closed=%r" % (st, body[:200], closed))
    st, _, body, _ = exchange(port, INFER + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % n + BODY
                              + b"\r\n0\r\n\r\n")
    check(st == 200, "a chunked request: %r %r" % (st, body[:200]))
    print("framing: %d ambiguous requests refused with 400, connection closed" % len(cases))


def hygiene(s, d):
    port = s.port
    st, _, body, _ = exchange(port, b"GET /v2/\xff\xfe\x01abc HTTP/1.1\r\nHost: t\r\n\r\n")
    check(st == 404, "bad path: %r" % st)
    check(all(b < 0x80 for b in body), "raw bytes echoed: %r" % body)
    err = json.loads(body.decode("ascii"))["error"]
    check("\\xff\\xfe\\x01abc" in err, "path not shown escaped: %r" % err)
    st, _, body, _ = exchange(port, b"GET /v2/models/\xc3\x28x HTTP/1.1\r\nHost: t\r\n\r\n")
    check(st == 404 and all(b < 0x80 for b in body), "bad model name echoed raw: %r" % body)

    def refused(body_obj, part):
        raw = body_obj if isinstance(body_obj, bytes) else json.dumps(body_obj).encode()
        st, _, resp = s.client.raw("POST", "/v2/models/first/infer", raw)
        check(st == 400, "expected 400 for %r, got %d %r" % (raw[:100], st, resp[:200]))
        err = json.loads(resp)["error"]
        check(part in err, "error %r does not name %r" % (err, part))
    refused(b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3.5e38, 4]}]}',
            "3.5e38 is outside FP32's range")
    refused({"id": "a" * 256, "inputs": [X]}, "id: expected at most 255 bytes, found 256")
    st, _, resp = s.client.raw("POST", "/v2/models/first/infer", json.dumps({"id": "b" * 255, "inputs": [X]}).encode())
    check(st == 200 and json.loads(resp)["id"] == "b" * 255, "a 255-byte id: %d" % st)
    print("hygiene: raw path bytes escaped, 3.5e38 and a 256-byte id refused by name")


def metrics_labels(d):
    """A model whose name holds a quote and a backslash: its label values
    are escaped, so the exposition still parses."""
    weird = fx.first_config(d, name='we"ird\\x')
    s = fx.Server(weird)
    try:
        m = s.client.metrics()
        check('berth_requests_total{model="we\\"ird\\\\x"} 0' in m,
              "label not escaped:\n%s" % "\n".join(l for l in m.splitlines() if "ird" in l)[:400])
        for line in m.splitlines():
            if line.startswith("#") or not line:
                continue
            name, _, value = line.rpartition(" ")
            float(value)
            check(name.count('"') % 2 == 0 or '\\"' in name, "unbalanced quotes: %r" % line)
    finally:
        rc, err = s.stop()
        check(rc == 0, "exit %d: %s" % (rc, err))
    print("hygiene: /metrics label values escaped")


def slow_connections(d):
    header_timeout = 3
    s = fx.Server("--header-timeout-s", str(header_timeout), "--max-connections-per-ip", "120",
                  "--max-connections", "2000", "--min-body-kbps", "64", fx.first_config(d))
    try:
        held = []
        for k in range(1100):
            c = connect(s.port, "127.0.0.%d" % (2 + k // 100))
            c.sendall(b"POST /v2/models/first/infer HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            held.append(c)
        t0 = time.time()
        c = fx.OipClient("127.0.0.1", s.port, timeout=10)
        r = c.infer("first", [X])
        waited = time.time() - t0
        check(r.status == 200, "a normal client beside 1,100 slow ones: %r" % r.error)
        print("slow: 1,100 connections holding half a header; a normal client answered in %.3f s" % waited)
        # Trickling keeps none of them alive past header_timeout_s.
        deadline = time.time() + header_timeout + 15
        open_ = set(held)
        poller = select.poll()
        by_fd = {c.fileno(): c for c in held}
        for c in held:
            poller.register(c, select.POLLIN)
        while open_ and time.time() < deadline:
            for c in open_:
                try:
                    c.send(b"x")
                except OSError:
                    pass
            for fd, _ in poller.poll(500):
                c = by_fd[fd]
                poller.unregister(fd)
                open_.discard(c)
        cut_after = time.time() - t0
        check(not open_, "%d slow-header connections still open %.1f s after header_timeout_s" %
              (len(open_), cut_after))
        for c in held:
            c.close()
        m = s.client.metrics()
        cut = [l for l in m.splitlines() if l.startswith('berth_connections_cut_total{reason="header_timeout"}')]
        check(cut and float(cut[0].split()[-1]) >= 1100, "header cuts not counted: %r" % cut)
        print("slow: all 1,100 cut by header_timeout_s %d s (the last %.1f s after the normal answer)" %
              (header_timeout, cut_after))

        # Over the per-IP limit: the 121st connection from one address is
        # closed at once, while another address is served.
        same = [connect(s.port, "127.0.0.200") for _ in range(130)]
        time.sleep(0.5)
        turned = 0
        for c in same:
            c.setblocking(False)
            try:
                if c.recv(1) == b"":
                    turned += 1
            except BlockingIOError:
                pass
            except OSError:
                turned += 1
        check(turned >= 10, "per-IP limit 120: only %d of 130 turned away" % turned)
        check(fx.OipClient("127.0.0.1", s.port, timeout=10).live()[0] == 200, "another address not served")
        for c in same:
            c.close()
        print("slow: %d of 130 connections from one address turned away (limit 120)" % turned)

        # A body slower than min_body_kbps (64 KiB/s) once header_timeout_s
        # has passed is cut.
        c = connect(s.port)
        c.sendall(INFER + b"Content-Length: 1000000\r\n\r\n")
        t0 = time.time()
        closed = False
        while time.time() - t0 < header_timeout + 15:
            try:
                c.send(b" " * 100)
            except OSError:
                closed = True
                break
            if wait_readable(c, 0.25):
                try:
                    data = c.recv(4096)
                except OSError:
                    data = b""
                if data == b"":
                    closed = True
                    break
        c.close()
        check(closed, "a body at 400 B/s was not cut")
        m = s.client.metrics()
        check('berth_connections_cut_total{reason="body_rate"} 1' in m, "body cut not counted")
        print("slow: a 400 B/s body cut %.1f s after its headers" % (time.time() - t0))
    finally:
        rc, err = s.stop()
        check(rc == 0, "exit %d: %s" % (rc, err))


def rss_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def memory(d):
    budget_mb = 256
    s = fx.Server("--max-inflight-mb", str(budget_mb), "--max-body-mb", "64", fx.first_config(d))
    try:
        # Declared over the cap: 413 before a byte of body is sent.
        st, hdr, body, closed = exchange(s.port, INFER + b"Content-Length: %d\r\n\r\n" % ((64 << 20) + 1))
        check(st == 413 and closed and "larger than the server's limit" in json.loads(body)["error"],
              "over the cap: %r %r" % (st, body[:200]))
        resting = rss_kb(s.proc.pid, "VmRSS")
        big = b'{"inputs": [' + b" " * ((64 << 20) - 13) + b"]"
        check(len(big) == 64 << 20, "body size")
        results = [None] * 16
        start = threading.Barrier(16)

        def upload(i):
            c = connect(s.port, timeout=60)
            try:
                c.sendall(INFER + b"Content-Length: %d\r\n\r\n" % len(big))
                start.wait()
                # A refusal comes at the headers: look before sending.
                if not wait_readable(c, 0.5):
                    try:
                        c.sendall(big)
                    except OSError:
                        pass
                results[i] = read_response(c, timeout=60)
            finally:
                c.close()
        threads = [threading.Thread(target=upload, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        peak = resting
        while any(t.is_alive() for t in threads):
            peak = max(peak, rss_kb(s.proc.pid, "VmRSS"))
            time.sleep(0.01)
        for t in threads:
            t.join()
        statuses = sorted(r[0] for r in results)
        taken = statuses.count(400)  # read whole, then refused as JSON
        busy = [r for r in results if r[0] == 503]
        check(taken >= 1 and taken <= budget_mb // 64 and taken + len(busy) == 16,
              "16 uploads of 64 MB under a 256 MB budget: %r" % statuses)
        for r in busy:
            check(r[1].get("retry-after") == "1" and "max_inflight_mb" in json.loads(r[2])["error"],
                  "503 without Retry-After or reason: %r" % (r,))
        grown_mb = (peak - resting) / 1024.0
        check(grown_mb <= budget_mb + 32, "RSS grew %.0f MB under a %d MB budget" % (grown_mb, budget_mb))
        m = s.client.metrics()
        check("berth_inflight_bytes 0" in m, "the budget was not given back")
        print("memory: 16 uploads of 64 MB: %d read, %d refused 503 (Retry-After: 1); RSS %.0f MB at rest, "
              "peak +%.0f MB (budget %d MB)" % (taken, len(busy), resting / 1024.0, grown_mb, budget_mb))
    finally:
        rc, err = s.stop()
        check(rc == 0, "exit %d: %s" % (rc, err))


def drain(d):
    config = fx.first_config(d, name="slow", serve="max_batch = 8\nmax_delay_us = 1500000\n")
    s = fx.Server("--drain-s", "20", config)
    X8 = dict(X)
    answers = []
    queued = threading.Thread(target=lambda: answers.append(
        fx.OipClient("127.0.0.1", s.port, timeout=30).infer("slow", [X8])))
    queued.start()
    deadline = time.time() + 10
    while fx.metric(s.client.metrics(), "berth_queue_depth", "slow") < 1 and time.time() < deadline:
        time.sleep(0.005)
    # An upload begun: headers and half the body.
    body = json.dumps({"inputs": [X]}).encode()
    up = connect(s.port, timeout=30)
    up.sendall(b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body)
               + body[:10])
    time.sleep(0.2)
    s.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    st, _, resp = fx.OipClient("127.0.0.1", s.port, timeout=10).raw("GET", "/v2/health/ready")
    check(st == 503 and json.loads(resp)["ready"] is False, "readiness while draining: %d %r" % (st, resp))
    st, hdr, resp, closed = exchange(s.port, b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: t\r\n"
                                     b"Content-Length: %d\r\n\r\n" % len(body) + body)
    check(st == 503 and hdr.get("retry-after") == "1" and "shutting down" in json.loads(resp)["error"] and closed,
          "a new request while draining: %r %r" % (st, resp))
    up.sendall(body[10:])
    st, hdr, resp, closed = read_response(up, timeout=30)
    up.close()
    check(st == 200 and closed, "the upload begun before SIGTERM: %r %r" % (st, resp[:200]))
    queued.join()
    check(answers and answers[0].status == 200, "the queued request: %r" % (answers and answers[0].error))
    rc = s.proc.wait(timeout=30)
    check(rc == 0, "exit status %d after draining" % rc)
    out = "".join(s.lines)
    check("draining" in out and "drained in" in out, "drain not reported:\n%s" % out)

    # An upload that never ends is cut at drain_s; the exit is still 0.
    s = fx.Server("--drain-s", "2", "--header-timeout-s", "60", "--min-body-kbps", "1", fx.first_config(d))
    up = connect(s.port, timeout=30)
    up.sendall(INFER + b"Content-Length: 100\r\n\r\n{")
    time.sleep(0.2)
    t0 = time.time()
    s.proc.send_signal(signal.SIGTERM)
    rc = s.proc.wait(timeout=30)
    took = time.time() - t0
    up.close()
    check(rc == 0, "exit status %d after drain_s" % rc)
    s._reader.join(timeout=5)
    check("drain_s (2 s) passed with 1 requests in progress" in "".join(s.lines), "cut not reported:\n%s" %
          "".join(s.lines))
    print("drain: ready false, new request 503, queued and half-sent requests answered, exit 0; "
          "a stuck upload cut at drain_s 2 s (exit after %.1f s)" % took)


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    check(resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= 1400, "this test needs 1,400 open files")
    d = fx.model_dir()
    parts = sys.argv[1:] or ["framing", "hygiene", "slow", "memory", "drain"]
    if "framing" in parts or "hygiene" in parts:
        s = fx.Server(fx.first_config(d))
        try:
            if "framing" in parts:
                framing(s.port)
            if "hygiene" in parts:
                hygiene(s, d)
        finally:
            rc, err = s.stop()
            check(rc == 0, "exit %d: %s" % (rc, err))
        if "hygiene" in parts:
            metrics_labels(d)
    if "slow" in parts:
        slow_connections(d)
    if "memory" in parts:
        memory(d)
    if "drain" in parts:
        drain(d)


if __name__ == "__main__":
    main()
