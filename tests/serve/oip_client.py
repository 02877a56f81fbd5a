"""Small Open Inference Protocol (KServe v2 REST) client for testing `berth serve`.

Written from the protocol's specification text: the HTTP/REST part of the
Open Inference Protocol ("V2 Inference Protocol") and its Binary Tensor Data
Extension.  Python 3 standard library only; NumPy is used when importable
(numpy arrays are accepted as input data, and InferResult.as_numpy() exists),
but this module imports and works without it.

Typical use:

    c = OipClient("127.0.0.1", 8000)
    c.live()                      # -> (200, {"live": True}) or (200, None)
    r = c.infer("mymodel", [{"name": "input0", "datatype": "FP32",
                             "shape": [2], "data": [1.0, 2.0]}],
                binary=True, binary_outputs=True)
    r.error                       # None on success, else the server's message
    dt, shape, data = r.outputs["output0"]   # data is a flat row-major list
"""

import http.client
import json
import struct
import urllib.parse

try:  # NumPy is optional.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

__all__ = ["OipClient", "InferResult", "Tensor", "OipProtocolError",
           "DATATYPES", "encode_tensor", "decode_tensor"]

# "Tensor Data Types": datatype -> little-endian struct code (size is implied).
# BYTES is variable-sized and deliberately not supported by this client.
DATATYPES = {
    "BOOL": "?", "UINT8": "B", "UINT16": "H", "UINT32": "I", "UINT64": "Q",
    "INT8": "b", "INT16": "h", "INT32": "i", "INT64": "q",
    "FP16": "e", "FP32": "f", "FP64": "d",
}
_HDR_LEN = "Inference-Header-Content-Length"  # Binary Tensor Data Extension


class OipProtocolError(ValueError):
    """The server's reply does not follow the protocol (a server bug)."""


class Tensor(tuple):
    """(datatype, shape, data) with attribute access; data is a flat list."""
    __slots__ = ()

    def __new__(cls, datatype, shape, data):
        return tuple.__new__(cls, (datatype, shape, data))

    datatype = property(lambda self: self[0])
    shape = property(lambda self: self[1])
    data = property(lambda self: self[2])


def _check_datatype(datatype):
    if datatype == "BYTES":
        raise ValueError("BYTES tensors are not supported by this client")
    if datatype not in DATATYPES:
        raise ValueError("unknown datatype %r (see 'Tensor Data Types')" % (datatype,))
    return DATATYPES[datatype]


def _count(shape):
    n = 1
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise ValueError("shape %r: each dimension must be a non-negative integer" % (shape,))
        n *= d
    return n


def _flatten(data):
    """"Tensor Data": elements may be nested (natural form) or flat; row-major."""
    if _np is not None and isinstance(data, _np.ndarray):
        return data.ravel(order="C").tolist()
    if not isinstance(data, (list, tuple)):
        return [data]
    out = []
    for x in data:
        if isinstance(x, (list, tuple)) or (_np is not None and isinstance(x, _np.ndarray)):
            out.extend(_flatten(x))
        else:
            out.append(x)
    return out


def _coerce(datatype, values):
    """Python bool / float / int for each element, per the datatype."""
    code = _check_datatype(datatype)
    if datatype == "BOOL":
        return [bool(v) for v in values]
    if code in "efd":
        return [float(v) for v in values]
    return [int(v) for v in values]


def encode_tensor(datatype, values):
    """Binary Tensor Data Extension: little-endian, row-major, no padding;
    BOOL is one byte, 1 for true and 0 for false.  Raises on values that do
    not fit the datatype (struct range-checks them)."""
    code = _check_datatype(datatype)
    values = _coerce(datatype, values)
    try:
        return struct.pack("<%d%s" % (len(values), code), *values)
    except (struct.error, OverflowError) as e:
        raise ValueError("value out of range for %s: %s" % (datatype, e))


def decode_tensor(datatype, raw):
    """Inverse of encode_tensor: bytes -> flat list of Python values."""
    code = _check_datatype(datatype)
    size = struct.calcsize(code)
    if len(raw) % size:
        raise OipProtocolError("%d bytes is not a whole number of %s elements" % (len(raw), datatype))
    return list(struct.unpack("<%d%s" % (len(raw) // size, code), raw))


class InferResult(object):
    """A parsed reply to an inference request.

    status  -- HTTP status code
    headers -- response headers, lower-cased names
    json    -- the JSON object ("Inference Response JSON Object", or the
               "Inference Response JSON Error Object"), or None if not JSON
    error   -- the "error" string of an error object (or a note when a
               non-200 reply had no JSON error object), else None
    outputs -- {name: Tensor(datatype, shape, flat data list)}, in reply order
    body    -- the raw body bytes
    """

    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body
        self.json, self.error, self.outputs = None, None, {}
        self._parse()

    @property
    def ok(self):
        return self.status == 200 and self.error is None

    def _parse(self):
        """Binary Tensor Data Extension: when Inference-Header-Content-Length
        is present, the JSON object is that many leading bytes and the binary
        tensor data follows, in the order the outputs appear in the JSON."""
        hlen = self.headers.get(_HDR_LEN.lower())
        if hlen is not None:
            try:
                n = int(hlen)
            except ValueError:
                raise OipProtocolError("bad %s: %r" % (_HDR_LEN, hlen))
            if n < 0 or n > len(self.body):
                raise OipProtocolError("%s %d exceeds body length %d" % (_HDR_LEN, n, len(self.body)))
            head, rest = self.body[:n], self.body[n:]
        else:
            head, rest = self.body, b""
        try:
            self.json = json.loads(head.decode("utf-8")) if head else None
        except (UnicodeDecodeError, ValueError):
            self.json = None
        if isinstance(self.json, dict) and "error" in self.json:
            self.error = self.json["error"]  # "Inference Response JSON Error Object"
            return
        if self.status != 200:
            self.error = "HTTP %d without a JSON error object: %r" % (self.status, self.body[:200])
            return
        if not isinstance(self.json, dict) or not isinstance(self.json.get("outputs"), list):
            raise OipProtocolError("200 reply is not an inference response: %r" % (self.body[:200],))
        offset = 0
        for out in self.json["outputs"]:  # "Response Output"
            name, dt, shape = out.get("name"), out.get("datatype"), out.get("shape")
            if not isinstance(name, str) or not isinstance(shape, list):
                raise OipProtocolError("malformed output %r" % (out,))
            n = _count(shape)
            size = (out.get("parameters") or {}).get("binary_data_size")
            if size is not None:
                if size != n * struct.calcsize(_check_datatype(dt)):
                    raise OipProtocolError("output %s: binary_data_size %r does not fit %s %r"
                                           % (name, size, dt, shape))
                if offset + size > len(rest):
                    raise OipProtocolError("output %s: binary data runs past the body" % name)
                data = decode_tensor(dt, rest[offset:offset + size])
                offset += size
            else:
                if "data" not in out:
                    raise OipProtocolError("output %s has neither data nor binary_data_size" % name)
                data = _flatten(out["data"])
            if len(data) != n:
                raise OipProtocolError("output %s: %d elements for shape %r" % (name, len(data), shape))
            self.outputs[name] = Tensor(dt, shape, data)
        if offset != len(rest):
            raise OipProtocolError("%d unclaimed bytes after the binary outputs" % (len(rest) - offset))

    def as_numpy(self, name):
        """The output as a NumPy array of its shape (needs NumPy)."""
        if _np is None:
            raise RuntimeError("numpy is not available")
        dt, shape, data = self.outputs[name]
        return _np.array(data, dtype=_np.dtype("<" + _check_datatype(dt))).reshape(shape)


class OipClient(object):
    """HTTP/REST client for the endpoints of the Open Inference Protocol.

    One HTTP connection per call; model names are percent-encoded in paths.
    """

    def __init__(self, host, port, timeout=60):
        self.host, self.port, self.timeout = host, port, timeout

    # -- transport -----------------------------------------------------
    def raw(self, method, path, body=b"", headers=None):
        """Send one request as given; return (status, headers, body bytes).
        Header names in the result are lower-cased (repeats joined by ', ')."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, path, body=body if body else None, headers=dict(headers or {}))
            resp = conn.getresponse()
            data = resp.read()
            hdrs = {}
            for k, v in resp.getheaders():
                k = k.lower()
                hdrs[k] = hdrs[k] + ", " + v if k in hdrs else v
            return resp.status, hdrs, data
        finally:
            conn.close()

    def _get_json(self, path):
        status, _, body = self.raw("GET", path)
        try:
            return status, json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, ValueError):
            return status, None

    @staticmethod
    def _model_path(name, version=None):
        p = "/v2/models/" + urllib.parse.quote(name, safe="")
        if version is not None:
            p += "/versions/" + urllib.parse.quote(str(version), safe="")
        return p

    # -- Health, Server Metadata, Model Metadata -----------------------
    def live(self):
        """Server Live: GET v2/health/live -> (status, {"live": bool} or None)."""
        return self._get_json("/v2/health/live")

    def ready(self):
        """Server Ready: GET v2/health/ready -> (status, JSON or None)."""
        return self._get_json("/v2/health/ready")

    def server_metadata(self):
        """Server Metadata: GET v2 -> (status, {"name","version","extensions"})."""
        return self._get_json("/v2")

    def model_metadata(self, name, version=None):
        """Model Metadata: GET v2/models/<name>[/versions/<v>]."""
        return self._get_json(self._model_path(name, version))

    def model_ready(self, name, version=None):
        """Model Ready: GET v2/models/<name>[/versions/<v>]/ready."""
        return self._get_json(self._model_path(name, version) + "/ready")

    def metrics(self):
        """GET /metrics (berth's metrics text; not part of the protocol)."""
        status, _, body = self.raw("GET", "/metrics")
        if status != 200:
            raise OipProtocolError("GET /metrics returned HTTP %d" % status)
        return body.decode("utf-8")

    # -- Inference -----------------------------------------------------
    def infer(self, name, inputs, outputs=None, binary=False, binary_outputs=False,
              request_id=None, parameters=None, version=None, _unchecked=False):
        """Inference: POST v2/models/<name>[/versions/<v>]/infer.

        inputs  -- "Request Input" dicts {"name","datatype","shape","data"}; data
                   is a flat (or nested) list, a numpy array, or (binary only)
                   raw bytes.  Optional per-input keys: "parameters" (merged
                   in, overriding computed ones) and "binary" (overrides
                   `binary` for that input).
        outputs -- "Request Output" names or dicts; None asks for all outputs.
        binary  -- send inputs per the Binary Tensor Data Extension.
        binary_outputs -- ask for binary outputs: "binary_data": true on each
                   named output, or request parameter "binary_data_output":
                   true when no outputs are named.
        _unchecked -- skip client-side checks and conversion, so a test can
                   send a request the server must refuse.
        """
        req = {}  # "Inference Request JSON Object"
        if request_id is not None:
            req["id"] = request_id
        params = dict(parameters or {})
        if binary_outputs and not outputs:
            params["binary_data_output"] = True
        if params:
            req["parameters"] = params
        req["inputs"], blobs = [], []
        for spec in inputs:
            tin, blob = self._request_input(spec, binary, _unchecked)
            req["inputs"].append(tin)
            if blob is not None:
                blobs.append(blob)
        if outputs:
            req["outputs"] = []
            for o in outputs:
                o = {"name": o} if isinstance(o, str) else dict(o)
                if binary_outputs:
                    o["parameters"] = dict(o.get("parameters") or {}, binary_data=True)
                req["outputs"].append(o)
        try:
            head = json.dumps(req, separators=(",", ":"), allow_nan=_unchecked).encode("utf-8")
        except ValueError:
            raise ValueError("NaN/Inf cannot be sent as JSON numbers; use binary=True")
        if blobs:
            hdrs = {"Content-Type": "application/octet-stream", _HDR_LEN: str(len(head))}
        else:
            hdrs = {"Content-Type": "application/json"}
        status, rh, body = self.raw("POST", self._model_path(name, version) + "/infer",
                                    head + b"".join(blobs), hdrs)
        return InferResult(status, rh, body)

    @staticmethod
    def _request_input(spec, binary, unchecked):
        """Build one "Request Input"; returns (json object, binary blob or None)."""
        dt, data = spec.get("datatype"), spec.get("data")
        shape = spec.get("shape")
        if shape is None and _np is not None and isinstance(data, _np.ndarray):
            shape = list(data.shape)
        tin = {"name": spec.get("name"), "shape": shape, "datatype": dt}
        use_binary = spec.get("binary", binary)
        blob = None
        if unchecked:
            if use_binary:
                blob = data if isinstance(data, (bytes, bytearray)) else encode_tensor(dt, _flatten(data))
            else:
                tin["data"] = data.tolist() if _np is not None and isinstance(data, _np.ndarray) else data
        else:
            if not isinstance(shape, list):
                raise ValueError("input %s: shape must be a list" % tin["name"])
            n = _count(shape)
            if isinstance(data, (bytes, bytearray)):
                if not use_binary:
                    raise ValueError("input %s: raw bytes need binary=True" % tin["name"])
                blob = bytes(data)
                if len(blob) != n * struct.calcsize(_check_datatype(dt)):
                    raise ValueError("input %s: %d bytes for shape %r %s" % (tin["name"], len(blob), shape, dt))
            else:
                values = _flatten(data)
                if len(values) != n:
                    raise ValueError("input %s: %d elements for shape %r" % (tin["name"], len(values), shape))
                blob = encode_tensor(dt, values)  # range-checks every value
                if not use_binary:
                    tin["data"], blob = _coerce(dt, values), None
        if blob is not None:
            tin["parameters"] = {"binary_data_size": len(blob)}
        if spec.get("parameters"):
            tin["parameters"] = dict(tin.get("parameters") or {}, **spec["parameters"])
        return tin, blob
