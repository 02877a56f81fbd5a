#!/usr/bin/python3
"""serve_load.py [--build DIR] [--berth PATH] [--threads N] [--seconds S]
                 [--buckets B] [--quick] [--out FILE]

`berth serve` under load: the OCR recognizer (PP-OCRv4, width-320
buckets of batch 1, 2, 4 and 8, or --buckets) served twice, with
dynamic batching on (max_batch 8, max_delay_us 2000) and off
(max_batch 1), each driven by 1, 8 and 64 concurrent clients for S
seconds a point (default 5); then
the first graph, batching on, for 100,000 requests with the server's
VmRSS read after the first 1,000 and along the way.

Each client is a thread with one keep-alive connection that sends its
next request as soon as the last one is answered (a closed loop), with
the binary tensor data extension both ways, so the client's own cost
stays small. Latency is measured by the client, from sending to the
last byte of the answer. Requests per run come from the server's
/metrics (berth_batch_requests_sum / _count over the point). Every
answer must be HTTP 200 with the output's expected shape, and each
server must exit 0 on SIGTERM; anything else ends the script with
status 1.

Prints a markdown table and the RSS lines; --out FILE writes them as a
section of markdown (bench/bench.py puts it into the report)."""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from bench import machine  # the same machine facts as the rest of the report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = time.monotonic()


def say(msg):
    print("serve_load [%4.0fs]: %s" % (time.monotonic() - T0, msg), file=sys.stderr, flush=True)


class LoadError(Exception):
    pass


# ---- the machine ---------------------------------------------------------

def vmstat_steal():
    """vmstat's `st` over one second, or None without vmstat: on a shared
    virtual machine the share of time the host gave to someone else."""
    try:
        out = subprocess.run(["vmstat", "1", "2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if len(out) < 4 or "st" not in out[1].split():
        return None
    return int(out[-1].split()[out[1].split().index("st")])


class CpuShare(object):
    """Where the machine's CPU time went over a stretch, in cores busy on
    average: the server, this script's clients, everything else, and
    steal (vmstat's `st`, the host's other guests), all from the counters
    vmstat and top read. The clients share the server's cores, and other
    work on the machine shows here rather than only in noisier figures."""

    HZ = os.sysconf("SC_CLK_TCK")

    def __init__(self, pid):
        self.pid = pid
        self.t0 = self._read()

    def _read(self):
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        server = int(fields[11]) + int(fields[12])  # utime, stime
        me = os.times()
        client = int(round((me.user + me.system) * self.HZ))
        # user nice system idle iowait irq softirq steal
        busy = v[0] + v[1] + v[2] + v[5] + v[6]
        return time.monotonic(), busy, v[7], server, client

    def done(self):
        t1 = self._read()
        wall = (t1[0] - self.t0[0]) * self.HZ
        d = [b - a for a, b in zip(self.t0[1:], t1[1:])]
        busy, steal, server, client = (x / wall for x in d)
        return {"server": server, "client": client, "other": max(0.0, busy - server - client), "steal": steal}


# ---- configs and servers -------------------------------------------------

def write_config(d, name, graph, weights, stage, buckets, threads, serve):
    path = os.path.join(d, name + ".ini")
    with open(path, "w") as f:
        f.write("# written by bench/serve_load.py\n[model]\ngraph = %s\nweights = %s\nstage = %s\n\n"
                "[backend]\nuse = cpu\n\n[backend.cpu]\nthreads = %d\n\n[buckets]\n%s = %s\n\n[serve]\n%s"
                % (graph, weights, stage, threads, stage, buckets, serve))
    return path


# The two ways the recognizer is served differ only in [serve], so the
# plans, threads and inputs are the same on both sides of the comparison.
BATCHING_ON = "max_batch = 8\nmax_delay_us = 2000\n"
BATCHING_OFF = "max_batch = 1\n"


class Server(object):
    """`berth serve --port 0 --quiet CONFIG`, up once it says where it
    listens; its output is read all along so it never blocks on a pipe."""

    def __init__(self, berth, config, env):
        self.name = os.path.basename(config)[:-4]
        self.proc = subprocess.Popen([berth, "serve", "--port", "0", "--quiet", config], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.out, self.err, self.port = [], [], None
        deadline = time.monotonic() + 180  # every bucket is planned before it listens
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.out.append(line)
            m = re.search(r"listening on http://[^ ]*:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise LoadError("berth serve %s did not start:\n%s" % (config, "".join(self.out) + out + err))
        self.readers = [threading.Thread(target=self._drain, args=(s, into), daemon=True)
                        for s, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self.readers:
            t.start()

    @staticmethod
    def _drain(stream, into):
        for line in stream:
            into.append(line)

    def rss_kb(self):
        """(VmRSS, VmHWM) of the server process, in KiB."""
        got = {}
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    got[k] = int(v.split()[0])
        return got["VmRSS"], got["VmHWM"]

    def stop(self):
        """SIGTERM: it must finish what is in flight and exit 0."""
        if self.proc.poll() is not None:
            raise LoadError("berth serve (%s) exited on its own with status %d; it said: %s"
                            % (self.name, self.proc.returncode, "".join(self.err)[-2000:]))
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise LoadError("berth serve (%s) did not exit within 60 s of SIGTERM" % self.name)
        for t in self.readers:
            t.join(timeout=5)
        if rc != 0:
            raise LoadError("berth serve (%s) exited with %d after SIGTERM; it said: %s"
                            % (self.name, rc, "".join(self.err)[-2000:]))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# ---- the client ----------------------------------------------------------

class Conn(object):
    """One keep-alive HTTP/1.1 connection. http.client costs more Python
    per request than the tiny model costs the server, which would make
    the first graph's figures the client's; this sends a request built
    once and reads the answer by its Content-Length, nothing more."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.port = port

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise LoadError("the server closed a keep-alive connection")
        self.buf += chunk

    def exchange(self, request):
        """Sends request (bytes); returns (status, headers, body)."""
        self.sock.sendall(request)
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            self._fill()
        lines = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" not in headers:
            raise LoadError("an answer without Content-Length: %r" % lines)
        n = int(headers["content-length"])
        while len(self.buf) < end + 4 + n:
            self._fill()
        body = bytes(self.buf[end + 4:end + 4 + n])
        del self.buf[:end + 4 + n]
        if headers.get("connection", "").lower() == "close":
            raise LoadError("the server closed a keep-alive connection (Connection: close)")
        return status, headers, body

    def get(self, path):
        return self.exchange(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, self.port)).encode())

    def close(self):
        self.sock.close()


def infer_request(port, model, x, binary):
    """The whole HTTP request for input x as bytes, built once per client."""
    shape = list(x.shape)
    if binary:
        blob = x.astype("<f4").tobytes()
        head = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": shape,
                                       "parameters": {"binary_data_size": len(blob)}}],
                           "parameters": {"binary_data_output": True}}, separators=(",", ":")).encode()
        extra = "Content-Type: application/octet-stream\r\nInference-Header-Content-Length: %d\r\n" % len(head)
        body = head + blob
    else:
        body = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": shape,
                                       "data": x.ravel().tolist()}]}, separators=(",", ":")).encode()
        extra = "Content-Type: application/json\r\n"
    return ("POST /v2/models/%s/infer HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sContent-Length: %d\r\n\r\n"
            % (model, port, extra, len(body))).encode() + body


def check_answer(status, headers, body, out_name, out_shape):
    """None if the answer is a 200 with out_name of shape out_shape (and,
    as binary data, the bytes that shape needs), else what is wrong."""
    if status != 200:
        return "HTTP %d: %s" % (status, body[:300])
    hlen = headers.get("inference-header-content-length")
    head = body[:int(hlen)] if hlen is not None else body
    try:
        j = json.loads(head)
        out = j["outputs"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return "not an inference response: %r" % body[:300]
    if out.get("name") != out_name or out.get("shape") != out_shape:
        return "output %r of shape %r, expected %r of shape %r" % (out.get("name"), out.get("shape"),
                                                                   out_name, out_shape)
    want = 4 * int(np.prod(out_shape))
    if hlen is not None:
        size = (out.get("parameters") or {}).get("binary_data_size")
        if size != want or len(body) - int(hlen) != want:
            return "binary output of %r bytes (%d sent), expected %d" % (size, len(body) - int(hlen), want)
    elif len(out.get("data", [])) != want // 4:
        return "%d output values, expected %d" % (len(out.get("data", [])), want // 4)
    return None


class Client(object):
    def __init__(self, port, request, out_name, out_shape):
        self.conn = Conn(port)
        self.request, self.out_name, self.out_shape = request, out_name, out_shape


def drive(clients, seconds=None, total=None):
    """Every client in its own thread, all released together, each sending
    until `seconds` have passed or `total` requests (shared) are taken.
    Returns (latencies in seconds, wall seconds from release to the last
    answer). The first bad answer stops every client and raises."""
    lat = [[] for _ in clients]
    failures = []
    stop = threading.Event()
    left = [total]
    lock = threading.Lock()
    start = threading.Barrier(len(clients) + 1)
    deadline = [0.0]

    def take():
        if stop.is_set():
            return False
        if total is None:
            return time.perf_counter() < deadline[0]
        with lock:
            if left[0] <= 0:
                return False
            left[0] -= 1
            return True

    def loop(i):
        c, mine = clients[i], lat[i]
        start.wait()
        try:
            while take():
                t = time.perf_counter()
                status, headers, body = c.conn.exchange(c.request)
                mine.append(time.perf_counter() - t)
                bad = check_answer(status, headers, body, c.out_name, c.out_shape)
                if bad:
                    raise LoadError(bad)
        except Exception as e:  # whatever stops a client fails the run
            failures.append("client %d, request %d: %s" % (i, len(mine), e))
            stop.set()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + (seconds or 0)
    start.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if failures:
        raise LoadError("%d client(s) failed; first: %s" % (len(failures), failures[0]))
    return [x for l in lat for x in l], wall


def metrics(port, model):
    """The server's /metrics for one model: {metric name: value} of the
    lines labelled with that model alone, plus failures summed."""
    c = Conn(port)
    try:
        status, _, body = c.get("/metrics")
    finally:
        c.close()
    if status != 200:
        raise LoadError("GET /metrics: HTTP %d" % status)
    got = {"failures": 0.0, "bucket_runs": {}}
    for line in body.decode().splitlines():
        m = re.match(r'^(\w+)\{model="([^"]*)"(?:,(code|bucket)="([^"]*)")?\} (\S+)$', line)
        if not m or m.group(2) != model:
            continue
        if m.group(3) == "code":
            got["failures"] += float(m.group(5))
        elif m.group(3) == "bucket":
            got["bucket_runs"][m.group(4)] = float(m.group(5))
        else:
            got[m.group(1)] = float(m.group(5))
    return got


def filled(m0, m1):
    """Rows asked for / rows run: a run pads its rows up to its bucket's
    batch, so a batch of 5 in a batch-8 bucket computes 3 rows for nothing."""
    padded = 0.0
    for bucket, n in m1["bucket_runs"].items():
        size = re.search(r"batch=(\d+)", bucket)
        padded += (n - m0["bucket_runs"].get(bucket, 0.0)) * (int(size.group(1)) if size else 1)
    rows = m1["berth_batch_rows_sum"] - m0["berth_batch_rows_sum"]
    return 100.0 * rows / padded if padded else float("nan")


# ---- the measurements ----------------------------------------------------

REC_IN = [1, 3, 48, 320]
REC_OUT = [1, 40, 6625]  # [batch, width / 8, classes]
# Every batch up to 8 a power of two: with batch 1 and 8 only, the runs
# of 2 to 7 requests that a few clients make are padded to 8 rows.
REC_BUCKETS = "batch=1 width=320|batch=2 width=320|batch=4 width=320|batch=8 width=320"


def output_name(server):
    """The model's (only) output, as its metadata names it."""
    c = Conn(server.port)
    try:
        status, _, body = c.get("/v2/models/" + server.name)
    finally:
        c.close()
    if status != 200:
        raise LoadError("model metadata of %s: HTTP %d" % (server.name, status))
    return json.loads(body)["outputs"][0]["name"]


def rec_point(server, clients_n, seconds, batching, seed):
    model, out = server.name, output_name(server)
    rng = np.random.default_rng(seed)
    clients = [Client(server.port, infer_request(server.port, model, rng.standard_normal(REC_IN).astype(np.float32),
                                                 True), out, REC_OUT) for _ in range(clients_n)]
    try:
        drive(clients, total=2 * clients_n)  # connections up, server threads and caches warm
        m0, cpu = metrics(server.port, model), CpuShare(server.proc.pid)
        lat, wall = drive(clients, seconds=seconds)
        cpu, m1 = cpu.done(), metrics(server.port, model)
    finally:
        for c in clients:
            c.conn.close()
    runs = m1["berth_batch_requests_count"] - m0["berth_batch_requests_count"]
    merged = m1["berth_batch_requests_sum"] - m0["berth_batch_requests_sum"]
    served = m1["berth_requests_total"] - m0["berth_requests_total"]
    notes = []
    if served != len(lat) or merged != len(lat):
        notes.append("the server counted %d requests (%d in runs), the clients %d" % (served, merged, len(lat)))
    if m1["failures"] != m0["failures"]:
        notes.append("%d failures in /metrics" % (m1["failures"] - m0["failures"]))
    if m1["berth_queue_depth"]:
        notes.append("queue depth %d after the point" % m1["berth_queue_depth"])
    ms = np.array(lat) * 1e3
    return {"model": model, "clients": clients_n, "batching": batching, "requests": len(lat),
            "rps": len(lat) / wall, "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)),
            "max": float(ms.max()), "per_run": merged / runs if runs else float("nan"),
            "fill": filled(m0, m1), "cpu": cpu, "notes": notes}


def rss_run(server, checkpoints, clients_n):
    """Requests to the first graph in a row, the server's VmRSS read at each
    checkpoint (total requests so far). Half the clients send JSON, half
    binary data, so both ways through the server are in the count."""
    model, out = server.name, output_name(server)
    rng = np.random.default_rng(7)
    clients = [Client(server.port, infer_request(server.port, model, rng.standard_normal((1, 4)).astype(np.float32),
                                                 i % 2 == 0), out, [1, 3]) for i in range(clients_n)]
    samples, done, lat, wall, cpu = [], 0, [], 0.0, None
    try:
        for n in checkpoints:
            if done == checkpoints[0]:  # the figures of the long stretch, after the first checkpoint
                m0, cpu = metrics(server.port, model), CpuShare(server.proc.pid)
            got, w = drive(clients, total=n - done)
            done = n
            if done > checkpoints[0]:
                lat += got
                wall += w
            rss, hwm = server.rss_kb()
            samples.append((n, rss, hwm))
            say("rss: %d requests, VmRSS %d KiB, VmHWM %d KiB" % (n, rss, hwm))
    finally:
        for c in clients:
            c.conn.close()
    cpu, m1 = cpu.done(), metrics(server.port, model)
    runs = m1["berth_batch_requests_count"] - m0["berth_batch_requests_count"]
    if m1["berth_requests_total"] != done or m1["failures"]:
        raise LoadError("rss run: the server counted %d requests (%d failed), the clients %d"
                        % (m1["berth_requests_total"], m1["failures"], done))
    ms = np.array(lat) * 1e3
    return {"samples": samples, "clients": clients_n, "rps": len(lat) / wall if wall else 0.0,
            "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)), "max": float(ms.max()),
            "per_run": (m1["berth_batch_requests_sum"] - m0["berth_batch_requests_sum"]) / runs if runs else 0.0,
            "fill": filled(m0, m1), "cpu": cpu}


# ---- the report ----------------------------------------------------------

def markdown(info, steal0, threads, buckets, seconds, points, rss, quick):
    L = ["## Serving under load\n",
         "Written by bench/serve_load.py on %s. Machine: %s, %d cores, %.1f GiB, %s (Linux %s); berth %s; "
         "steal (vmstat `st`) at the start: %s.\n"
         % (info["date"], info["cpu"], info["cores"], info["mem_gib"], info["os"], info["kernel"], info["commit"],
            "%d%%" % steal0 if steal0 is not None else "n/a")]
    if quick:
        L.append("**Quick run**: short points; the figures check the plumbing only.\n")
    L.append("`berth serve` with the PP-OCRv4 recognizer (input [1, 3, 48, 320] per request, buckets `%s`, "
             "`[backend.cpu] threads = %d`, one worker), batching on (`max_batch = 8`, `max_delay_us = 2000`) or off "
             "(`max_batch = 1`). Each client is a thread with one keep-alive connection, sending its next request "
             "as soon as the last is answered, binary tensor data both ways; %s s a point after two warm-up "
             "requests per client. Latency is the client's, from sending to the answer's last byte. Requests per "
             "run: /metrics' `berth_batch_requests_sum / _count` over the point; rows filled: the rows asked for "
             "against the rows of the buckets run (padding computes the rest). CPU: cores busy on average over the "
             "point, by the server, the clients (this script, on the same cores), other processes, and steal "
             "(vmstat's `st`).\n" % (buckets, threads, "%g" % seconds))
    L.append("| clients | batching | requests | req/s | p50 ms | p99 ms | max ms | requests per run | rows filled % "
             "| CPU: server / clients / other / steal |")
    L.append("|" + "---|" * 10)
    for p in points:
        c = p["cpu"]
        L.append("| %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f | %.2f / %.2f / %.2f / %.2f |" % (
            p["clients"], "on" if p["batching"] else "off", p["requests"], p["rps"], p["p50"], p["p99"], p["max"],
            p["per_run"], p["fill"], c["server"], c["client"], c["other"], c["steal"]))
    notes = ["%d clients, batching %s: %s" % (p["clients"], "on" if p["batching"] else "off", n)
             for p in points for n in p["notes"]]
    if notes:
        L.append("\nOdd: " + "; ".join(notes) + ".")
    if rss:
        s = rss["samples"]
        first, last = s[0], s[-1]
        c = rss["cpu"]
        L.append("\n**Memory over a long run.** The first graph (`examples/first`, buckets `batch=1 | batch=4 | "
                 "batch=8`), batching on, %d clients (half JSON, half binary data): the server's VmRSS after %s "
                 "requests **%.1f MiB**, after %s **%.1f MiB**: **%+.2f MiB** (%+.1f bytes a request); VmHWM %.1f MiB. "
                 "Along the way: %s. Over the requests after the first %s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, "
                 "max %.1f ms, %.2f requests per run; CPU server / clients / other / steal %.2f / %.2f / %.2f / %.2f "
                 "cores.\n"
                 % (rss["clients"], "{:,}".format(first[0]), first[1] / 1024.0, "{:,}".format(last[0]),
                    last[1] / 1024.0, (last[1] - first[1]) / 1024.0,
                    (last[1] - first[1]) * 1024.0 / (last[0] - first[0]), last[2] / 1024.0,
                    ", ".join("%s: %.1f MiB" % ("{:,}".format(n), r / 1024.0) for n, r, _ in s),
                    "{:,}".format(first[0]), rss["rps"], rss["p50"], rss["p99"], rss["max"], rss["per_run"],
                    c["server"], c["client"], c["other"], c["steal"]))
    return "\n".join(L) + "\n"


# ---- main ----------------------------------------------------------------

def stale(binary):
    """Sources newer than the binary: the figures would be an older berth's."""
    t = os.path.getmtime(binary)
    for top in ("engine", "include", "backends"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")) and os.path.getmtime(os.path.join(d, f)) > t:
                    return os.path.relpath(os.path.join(d, f), ROOT)
    return None


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--berth", help="the berth binary (default: BUILD/apps/berth)")
    p.add_argument("--threads", type=int, default=2, help="[backend.cpu] threads of the served models (default 2)")
    p.add_argument("--seconds", type=float, help="per point (default 5; --quick: 1)")
    p.add_argument("--buckets", default=REC_BUCKETS, help="the recognizer's buckets (default %(default)s)")
    p.add_argument("--quick", action="store_true", help="short points and 5,000 requests for the RSS run")
    p.add_argument("--out", help="write the table and the RSS lines to this file as markdown")
    a = p.parse_args(argv)
    build = os.path.abspath(a.build)
    berth = os.path.abspath(a.berth or os.path.join(build, "apps", "berth"))
    seconds = a.seconds or (1.0 if a.quick else 5.0)
    if not os.access(berth, os.X_OK):
        raise LoadError("%s not found: build the berth target first" % berth)
    newer = stale(berth)
    if newer:
        say("warning: %s is newer than %s; rebuild for current figures" % (newer, berth))
    ocr = os.path.join(build, "cache", "ocr")
    if not all(os.path.exists(os.path.join(ocr, f)) for f in ("rec.webnn", "rec.safetensors")):
        say("the recognizer is not in %s yet: scripts/ocr-models" % ocr)
        if subprocess.run([os.path.join(ROOT, "scripts", "ocr-models"), "--cache",
                           os.path.join(build, "cache")]).returncode != 0:
            raise LoadError("scripts/ocr-models failed (its messages are above)")
    env = dict(os.environ)
    env.setdefault("BERTH_BACKEND_PATH", os.path.join(build, "backends"))
    info, steal0 = machine(), vmstat_steal()
    say("machine: %s, %d cores; vmstat st %s" % (info["cpu"], info["cores"],
                                                  "%d%%" % steal0 if steal0 is not None else "n/a"))
    tmp = tempfile.mkdtemp(prefix="berth-serve-load-")
    rec = (os.path.join(ocr, "rec.webnn"), os.path.join(ocr, "rec.safetensors"), "lines",
           a.buckets, a.threads)
    first_dir = os.path.join(ROOT, "examples", "first")
    configs = {True: write_config(tmp, "rec_batched", *rec, BATCHING_ON),
               False: write_config(tmp, "rec_single", *rec, BATCHING_OFF)}
    first = write_config(tmp, "first", os.path.join(first_dir, "first.webnn"),
                         os.path.join(first_dir, "first.safetensors"), "rows", "batch=1 | batch=4 | batch=8",
                         a.threads, BATCHING_ON)
    points, rss, server = [], None, None
    try:
        for batching in (True, False):
            server = Server(berth, configs[batching], env)
            for n in (1, 8, 64):
                say("recognizer, batching %s, %d clients, %g s" % ("on" if batching else "off", n, seconds))
                pt = rec_point(server, n, seconds, batching, seed=n)
                say("  %d requests, %.1f req/s, p50 %.1f ms, p99 %.1f ms, %.2f requests per run, rows filled "
                    "%.0f%%, CPU %s" % (pt["requests"], pt["rps"], pt["p50"], pt["p99"], pt["per_run"], pt["fill"],
                                       " / ".join("%s %.2f" % kv for kv in pt["cpu"].items())))
                points.append(pt)
            server.stop()
            if server.err:
                say("the server printed on stderr: %s" % "".join(server.err)[-2000:])
            server = None
        checkpoints = [200, 1000, 2500, 5000] if a.quick else [1000, 10000, 25000, 50000, 75000, 100000]
        say("first graph, batching on: %s requests, VmRSS along the way" % "{:,}".format(checkpoints[-1]))
        server = Server(berth, first, env)
        rss = rss_run(server, checkpoints, 64)
        server.stop()
        if server.err:
            say("the server printed on stderr: %s" % "".join(server.err)[-2000:])
        server = None
    finally:
        if server:
            server.kill()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    text = markdown(info, steal0, a.threads, a.buckets, seconds, points, rss, a.quick)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        say("wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except LoadError as e:
        print("serve_load: %s" % e, file=sys.stderr)
        sys.exit(1)
