"""Control flow whose shapes are static: If computes both branches and
picks with `where` (a constant condition keeps one branch only); Scan
over a static sequence is unrolled, its body once per step."""
import numpy as np

from .core import Unsupported, attrs_of, registry

OPS, op = registry()


def _inline(cv, graph, hint):
    """Converts a body graph's nodes in the enclosing converter; its
    values' names are the body's own (ONNX keeps names unique across a
    model's scopes)."""
    for node in graph.node:
        try:
            cv.convert_node(node)
        except Unsupported as e:
            raise Unsupported("%s: node '%s' (%s): %s" % (hint, node.name or node.output[0], node.op_type, e))


@op("If")
def if_(cv, node):
    a = attrs_of(node)
    then_g, else_g = a["then_branch"], a["else_branch"]
    cond = cv.known(node.input[0])
    if cond is not None:
        taken = then_g if bool(np.asarray(cond).reshape(-1)[0]) else else_g
        _inline(cv, taken, "the taken branch")
        for i, res in enumerate(taken.output):
            cv.emit("identity", [cv.v(res.name)], outs=cv.out(node, i))
        return
    _inline(cv, then_g, "then_branch")
    _inline(cv, else_g, "else_branch")
    for i, (t, e) in enumerate(zip(then_g.output, else_g.output)):
        dt, de = cv.dims(t.name), cv.dims(e.name)
        if dt is None or de is None or dt != de or None in dt:
            raise Unsupported("output '%s': the branches give shapes %s and %s; with a condition computed on the "
                              "device the output's shape must not depend on it" % (node.output[i], dt, de))
        cv.emit("where", [cv.v(node.input[0]), cv.v(t.name), cv.v(e.name)], outs=cv.out(node, i))


def _run_body(cv, body, bound, hint):
    """One step of a loop body: its inputs bound to identifiers, its
    values' names freed from the step before; returns the identifiers of
    its outputs."""
    produced = {o for n in body.node for o in n.output if o}
    for name in produced | set(bound):
        cv.ident.pop(name, None)
        cv.consts.pop(name, None)
    for vi in body.input:
        cv.info[vi.name] = cv._type_of(vi.type)
    cv.ident.update(bound)
    _inline(cv, body, hint)
    return [cv.v(o.name) for o in body.output]


@op("Scan")
def scan(cv, node):
    """Unrolled over the sequence's static length. Opset 8's form has a
    batch dim first on every input and output, the body running per batch
    element: unrolled over the batch too."""
    a = attrs_of(node)
    body, n_scan = a["body"], int(a["num_scan_inputs"])
    o = cv.out(node)
    batched = cv.opset < 9
    ins = list(node.input)
    if batched:
        if ins[0]:
            raise Unsupported("sequence_lens is not supported (every sequence must be whole)")
        ins = ins[1:]
    n_state = len(ins) - n_scan
    n_scan_out = len(body.output) - n_state
    in_axes = [int(v) for v in a.get("scan_input_axes", [0] * n_scan)]
    out_axes = [int(v) for v in a.get("scan_output_axes", [0] * n_scan_out)]
    in_rev = [int(v) for v in a.get("scan_input_directions", a.get("directions", [0] * n_scan))]
    out_rev = [int(v) for v in a.get("scan_output_directions", [0] * n_scan_out)]
    scan_dims = [cv.static_dims(n, "Scan's scan input") for n in ins[n_state:]]
    lead = 1 if batched else 0
    batch = scan_dims[0][0] if batched else 1
    seq = {d[lead + (ax % (len(d) - lead))] for d, ax in zip(scan_dims, in_axes)}
    if len(seq) != 1:
        raise Unsupported("scan inputs of different lengths %s" % sorted(seq))
    steps = seq.pop()
    results = [[] for _ in range(n_state + n_scan_out)]
    for b in range(batch):
        def pick(name, axis, index, tag):
            d = cv.static_dims(name, "Scan")
            starts, sizes = [0] * len(d), list(d)
            starts[axis], sizes[axis] = index, 1
            x = cv.emit("slice", [cv.v(name)], {"starts": starts, "sizes": sizes}, hint="%s_%s" % (o, tag))
            return cv.emit("squeeze", [x], {"axes": [axis]}, hint="%s_%s_nd" % (o, tag))
        state = [pick(n, 0, b, "b%d_s%d" % (b, i)) if batched else cv.v(n) for i, n in enumerate(ins[:n_state])]
        outs = [[] for _ in range(n_scan_out)]
        for t in range(steps):
            bound = {body.input[i].name: s for i, s in enumerate(state)}
            for j, name in enumerate(ins[n_state:]):
                d = scan_dims[j]
                axis = lead + in_axes[j] % (len(d) - lead)
                x = cv.v(name)
                if batched:
                    x = pick(name, 0, b, "b%d_x%d" % (b, j))
                    axis -= 1
                    d = d[1:]
                starts, sizes = [0] * len(d), list(d)
                starts[axis], sizes[axis] = steps - 1 - t if in_rev[j] else t, 1
                x = cv.emit("slice", [x], {"starts": starts, "sizes": sizes}, hint="%s_b%d_t%d_in%d" % (o, b, t, j))
                bound[body.input[n_state + j].name] = cv.emit("squeeze", [x], {"axes": [axis]},
                                                              hint="%s_b%d_t%d_in%d_nd" % (o, b, t, j))
            got = _run_body(cv, body, bound, "step %d of the body" % t)
            state = got[:n_state]
            for k in range(n_scan_out):
                outs[k].append(got[n_state + k])
        for i in range(n_state):
            results[i].append(state[i])
        for k in range(n_scan_out):
            seqk = outs[k][::-1] if out_rev[k] else outs[k]
            r = len(cv.dims(body.output[n_state + k].name) or [])
            axis = out_axes[k] % (r + 1)
            parts = [cv.emit("unsqueeze", [v], {"axes": [axis]}, hint="%s_out%d_t" % (o, k)) for v in seqk]
            results[n_state + k].append(parts[0] if len(parts) == 1 else
                                        cv.emit("concat", [parts], {"axis": axis}, hint="%s_out%d" % (o, k)))
    for i, per_batch in enumerate(results):
        if batched:
            parts = [cv.emit("unsqueeze", [v], {"axes": [0]}, hint="%s_r%d_b" % (o, i)) for v in per_batch]
            cv.emit("concat", [parts], {"axis": 0}, outs=cv.out(node, i))
        else:
            cv.emit("identity", [per_batch[0]], outs=cv.out(node, i))
