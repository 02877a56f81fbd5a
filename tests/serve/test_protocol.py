"""`berth serve` against the Open Inference Protocol: the specification's
own examples (spec_vectors.json) as requests the server must answer or
refuse, and as the shape our responses must have; the health, metadata
and infer routes, JSON and binary; and answers equal to `berth run`'s on
the first graph and the OCR recognizer."""

import json
import os
import struct

import numpy as np

import serve_fixture as fx
from serve_fixture import check

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = {v["id"]: v for v in json.load(open(os.path.join(HERE, "spec_vectors.json")))}


def same_keys(ours, spec, where):
    """Every key of the spec's example is in our body, recursively over
    the first element of lists; the protocol's optional ones excepted."""
    optional = {"parameters", "model_version"}
    if isinstance(spec, dict):
        check(isinstance(ours, dict), "%s: expected an object, found %r" % (where, ours))
        for k, v in spec.items():
            if k in optional and k not in ours:
                continue
            check(k in ours, "%s: the spec's example has '%s', ours does not: %r" % (where, k, ours))
            same_keys(ours[k], v, where + "." + k)
    elif isinstance(spec, list) and spec and isinstance(spec[0], (dict, list)):
        check(isinstance(ours, list) and ours, "%s: expected a non-empty list, found %r" % (where, ours))
        same_keys(ours[0], spec[0], where + "[0]")


def spec_request(c, vector_id, model="mymodel"):
    v = VECTORS[vector_id]
    body = json.dumps(v["body"]).encode()
    return c.raw("POST", "/v2/models/%s/infer" % model, body, {"Content-Type": "application/json"})


def test_spec_vectors(s):
    c = s.client
    # The server's routes answer with the bodies the spec shows.
    st, body = c.live()
    check(st == 200, "live: %d" % st)
    same_keys(body, VECTORS["web-server-live-response"]["body"], "live")
    st, body = c.ready()
    check(st == 200, "ready: %d" % st)
    same_keys(body, VECTORS["web-server-ready-response"]["body"], "ready")
    st, body = c.server_metadata()
    check(st == 200 and body["name"] == "berth" and "binary_tensor_data" in body["extensions"],
          "server metadata: %r" % (body,))
    same_keys(body, VECTORS["web-server-metadata-response"]["body"], "server metadata")
    st, body = c.model_ready("mymodel")
    check(st == 200 and body == {"name": "mymodel", "ready": True}, "model ready: %d %r" % (st, body))

    # Model metadata: the spec's example model, as the spec writes it
    # (input1's BOOL is uint8 in berth; the version list is ours).
    st, meta = c.model_metadata("mymodel")
    want = VECTORS["web-example-model-metadata-response"]["body"]
    check(st == 200, "metadata: %d" % st)
    same_keys(meta, want, "metadata")
    check(meta["inputs"][0] == want["inputs"][0], "input0 metadata: %r" % meta["inputs"][0])
    check(meta["inputs"][1] == {"name": "input1", "datatype": "UINT8", "shape": [3]}, "input1: %r" % meta["inputs"][1])
    check(meta["outputs"] == want["outputs"], "outputs metadata: %r" % meta["outputs"])

    # The spec's inference request: answered, id echoed, output0 as its
    # example response has it (our values, from the model's arithmetic).
    st, hdr, raw = spec_request(c, "web-example-infer-request")
    check(st == 200, "spec infer request: %d %s" % (st, raw[:300]))
    resp = json.loads(raw)
    same_keys(resp, VECTORS["web-example-infer-response"]["body"], "infer response")
    check(resp["id"] == "42" and resp["model_name"] == "mymodel", "id/model_name: %r" % resp)
    out = resp["outputs"][0]
    check(out["name"] == "output0" and out["shape"] == [3, 2] and out["datatype"] == "FP32", "output0: %r" % out)
    check(out["data"] == fx.mymodel_reference([1, 2, 3, 4], [1, 0, 1]), "output0 data: %r" % out["data"])

    # The spec's examples that do not hold together are refused, naming
    # what is wrong, and the server keeps serving.
    st, _, raw = spec_request(c, "oip-infer-request")  # input1: shape [3], one value
    err = json.loads(raw)["error"]
    check(st == 400 and "input1" in err and "needs 3 values, found 1" in err, "short data: %d %s" % (st, err))
    st, _, raw = spec_request(c, "oip-openapi-request-example2")  # no inputs
    err = json.loads(raw)["error"]
    check(st == 400 and 'missing "inputs"' in err, "no inputs: %d %s" % (st, err))
    st, _, raw = spec_request(c, "web-bin-all-outputs-request")  # another model's input
    err = json.loads(raw)["error"]
    check(st == 400 and "no input 'input_tensor'" in err, "unknown input: %d %s" % (st, err))

    # The binary extension's example request: 16 bytes of input0, 3 of
    # input1 after the JSON, output0 back as 24 bytes.
    v = VECTORS["bin-request"]
    header = json.dumps(v["body"]).encode()
    data = struct.pack("<4I", 1, 2, 3, 4) + bytes([1, 0, 1])
    check([p["bytes"] for p in v["binary_parts"]] == [16, 3], "the vector's parts: %r" % v["binary_parts"])
    st, hdr, raw = c.raw("POST", "/v2/models/mymodel/infer", header + data,
                         {"Content-Type": "application/octet-stream",
                          "Inference-Header-Content-Length": str(len(header))})
    check(st == 200, "binary request: %d %s" % (st, raw[:300]))
    n = int(hdr["inference-header-content-length"])
    resp = json.loads(raw[:n])
    same_keys(resp, VECTORS["bin-response"]["body"], "binary response")
    out = resp["outputs"][0]
    check(out["parameters"]["binary_data_size"] == 24 and len(raw) == n + 24, "binary sizes: %r" % out)
    check(list(struct.unpack("<6f", raw[n:])) == fx.mymodel_reference([1, 2, 3, 4], [1, 0, 1]),
          "binary output0: %r" % (raw[n:],))
    # The website's binary example claims 16 bytes for a [2, 2] FP16 input0:
    # refused (input0 is UINT32 here, and its size is wrong either way).
    st, _, raw = c.raw("POST", "/v2/models/mymodel/infer",
                       json.dumps(VECTORS["web-bin-request"]["body"]).encode() + bytes(16 + 3),
                       {"Inference-Header-Content-Length": str(len(json.dumps(VECTORS["web-bin-request"]["body"])))})
    check(st == 400 and "input0" in json.loads(raw)["error"], "website binary example: %d %s" % (st, raw))
    st, body = c.live()
    check(st == 200, "still live after refusals")


def test_first_graph(s, d, config):
    """JSON and binary answers equal `berth run`'s, bit for bit, and the
    metadata says the batch dim is dynamic."""
    c = s.client
    st, meta = c.model_metadata("first")
    check(st == 200 and meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 4]}] and
          meta["outputs"] == [{"name": "y", "datatype": "FP32", "shape": [-1, 3]}], "first metadata: %r" % meta)
    rng = np.random.default_rng(7)
    for rows in (1, 3, 8):
        x = rng.standard_normal((rows, 4)).astype(np.float32)
        want = fx.berth_run(config, {"x": x}, d)["y"]
        for binary in (False, True):
            r = c.infer("first", [{"name": "x", "datatype": "FP32", "shape": [rows, 4], "data": x}],
                        binary=binary, binary_outputs=binary, request_id="r%d" % rows)
            check(r.status == 200, "first rows %d: %s" % (rows, r.error))
            got = r.as_numpy("y")
            check(got.shape == want.shape and np.array_equal(got, want),
                  "first rows %d binary %s: %r vs berth run %r" % (rows, binary, got, want))
            check(r.json.get("id") == "r%d" % rows, "id not echoed: %r" % r.json)
    # Output selection and the request-level binary switch.
    x = np.ones((2, 4), np.float32)
    r = c.infer("first", [{"name": "x", "datatype": "FP32", "shape": [2, 4], "data": x}],
                parameters={"binary_data_output": True})
    check(r.status == 200 and r.json["outputs"][0]["parameters"]["binary_data_size"] == 24, "binary_data_output: %r" % r.json)


def test_recognizer(s, d, config):
    """The OCR recognizer: a text line's class probabilities equal `berth
    run`'s on the same input."""
    c = s.client
    st, meta = c.model_metadata("rec")
    check(st == 200 and meta["inputs"][0]["shape"] == [-1, 3, 48, -1], "rec metadata: %r" % meta)
    rng = np.random.default_rng(3)
    x = rng.random((1, 3, 48, 320), dtype=np.float32) * 2 - 1
    want = list(fx.berth_run(config, {"x": x}, d).values())[0]
    r = c.infer("rec", [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x}],
                binary=True, binary_outputs=True)
    check(r.status == 200, "rec: %s" % r.error)
    got = r.as_numpy(meta["outputs"][0]["name"])
    check(got.shape == want.shape and np.array_equal(got, want), "rec differs from berth run: max %g" %
          (np.abs(got - want).max() if got.shape == want.shape else -1))
    # JSON carries the same floats (printed to 9 significant digits).
    r = c.infer("rec", [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x}])
    check(r.status == 200 and np.array_equal(r.as_numpy(meta["outputs"][0]["name"]), want), "rec JSON differs")


def main():
    d = fx.model_dir()
    first = fx.first_config(d)
    rec = fx.rec_config(d)
    s = fx.Server(fx.mymodel_config(d), first, rec)
    test_spec_vectors(s)
    test_first_graph(s, d, first)
    test_recognizer(s, d, rec)
    rc, err = s.stop()
    check(rc == 0, "exit status %d after SIGTERM: %s" % (rc, err))
    print("protocol: spec vectors, metadata, JSON and binary infer on mymodel, first, rec: ok")


if __name__ == "__main__":
    main()
