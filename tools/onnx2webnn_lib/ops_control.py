"""Control flow, converted to one static graph: If keeps the branch a
known condition takes, or computes both and picks with `where`; Loop with
a number of steps known when converting and Scan over a static sequence
are unrolled, their body once per step. Bodies read their enclosing
scopes' values by name, carry their own initializers, and nest."""
import copy

import numpy as np

from . import infer
from .core import Unsupported, attrs_of, defined, registry, subgraphs, tensor_value

OPS, op = registry()


# Unrolling stops here: a loop this long is better left to a model
# exported with the loop's work vectorized.
MAX_STEPS = 4096


def _renamed(graph, mapping):
    """A copy of `graph` with the names in `mapping` replaced, in nested
    bodies too (they read their enclosing scope's values by name)."""
    g = copy.deepcopy(graph)

    def fix(gr):
        for t in gr.initializer:
            t.name = mapping.get(t.name, t.name)
        for vi in list(gr.input) + list(gr.output) + list(gr.value_info):
            vi.name = mapping.get(vi.name, vi.name)
        for n in gr.node:
            n.input[:] = [mapping.get(x, x) for x in n.input]
            n.output[:] = [mapping.get(x, x) for x in n.output]
            for sub in subgraphs(n):
                fix(sub)
    fix(g)
    return g


def enter(cv, graph, fresh=False):
    """A body ready to convert in the enclosing converter: its names kept
    when they are unique in the model (the exporters' usual case), else
    renamed for this entry, as always for a loop body, whose names repeat
    on every step; its initializers become known values."""
    local = set(defined(graph))
    clash = local if fresh else {n for n in local if cv.defined[n] > 1}
    if clash:
        cv.entries += 1
        mapping = {n: "%s@%d" % (n, cv.entries) for n in clash}
        for old, new in mapping.items():
            if old in cv.info and cv.defined[old] == 1:
                cv.info[new] = cv.info[old]
        graph = _renamed(graph, mapping)
    for t in graph.initializer:
        cv.consts[t.name] = tensor_value(t)
    for vi in list(graph.value_info) + list(graph.output):
        et, dims = cv._type_of(vi.type)
        if vi.name not in cv.info and (et is not None or dims is not None):
            cv.info[vi.name] = (et, dims)
    return graph


def _inline(cv, graph, hint):
    """Converts a body graph's nodes in the enclosing converter."""
    for node in graph.node:
        try:
            cv.convert_node(node)
        except Unsupported as e:
            raise Unsupported("%s: node '%s' (%s): %s" % (hint, node.name or node.output[0], node.op_type, e))


def _bind(cv, name, src):
    """Body value `name` takes the enclosing value `src`: its constant when
    the converter knows it (so shape arithmetic in the body folds), else
    its identifier; its type either way."""
    if src in cv.consts:
        cv.consts[name] = cv.consts[src]
    else:
        cv.ident[name] = cv.v(src)
    if src in cv.info or src in cv.consts:
        cv.info[name] = (cv.elem_type(src), cv.dims(src))


def _result(cv, src, node, i):
    """Output i of `node` is the body's value `src`."""
    dst = node.output[i]
    if not dst:
        return
    infer.check(cv, dst, cv.dims(src))
    cv.info[dst] = (cv.elem_type(src), cv.dims(src))
    if src in cv.consts:
        cv.consts[dst] = cv.consts[src]
    else:
        cv.emit("identity", [cv.v(src)], outs=cv.out(node, i))


@op("If")
def if_(cv, node):
    """A condition the converter knows (a constant, a frozen input, a test
    of a static shape) keeps the branch taken and nothing of the other.
    A condition computed from data runs both branches and picks with
    `where`: the executor plans one static graph per bucket and has no
    conditional region, so both branches cost their work, and their
    outputs must have the same shape."""
    a = attrs_of(node)
    cond = cv.known(node.input[0])
    if cond is not None:
        taken = enter(cv, a["then_branch"] if bool(np.asarray(cond).reshape(-1)[0]) else a["else_branch"])
        _inline(cv, taken, "the taken branch")
        for i, res in enumerate(taken.output):
            _result(cv, res.name, node, i)
        return
    then_g, else_g = enter(cv, a["then_branch"]), enter(cv, a["else_branch"])
    _inline(cv, then_g, "then_branch")
    _inline(cv, else_g, "else_branch")
    for i, (t, e) in enumerate(zip(then_g.output, else_g.output)):
        dt, de = cv.dims(t.name), cv.dims(e.name)
        if dt is None or de is None or dt != de or None in dt:
            raise Unsupported("output '%s': the branches give shapes %s and %s; with a condition computed on the "
                              "device the output's shape must not depend on it" % (node.output[i], dt, de))
        infer.check(cv, node.output[i], dt)
        cv.info[node.output[i]] = (cv.elem_type(t.name), dt)
        cv.emit("where", [cv.v(node.input[0]), cv.v(t.name), cv.v(e.name)], outs=cv.out(node, i))


def _named(cv, ident, et, dims):
    """An emitted value given a name the converter's tables know, so a
    body can be bound to it like to any model value."""
    name = "%s#" % ident
    cv.ident[name] = ident
    cv.info[name] = (et, dims)
    return name


def _run_body(cv, body, bound, hint):
    """One step of a loop body, its names fresh for the step: `bound`
    maps the body's inputs to enclosing values (names). Returns the
    step's body and the names of its outputs."""
    step = enter(cv, body, fresh=True)
    for vi, src in zip(step.input, bound):
        _bind(cv, vi.name, src)
    _inline(cv, step, hint)
    return step, [o.name for o in step.output]


@op("Loop")
def loop(cv, node):
    """Unrolled when the converter knows how many steps run: a constant
    trip count, or a condition that folds at every step (a counter
    compared with a constant). Each step's body is converted with its
    iteration number known. Scan outputs are stacked on a new axis 0."""
    a = attrs_of(node)
    body = a["body"]
    trips = cv.known(node.input[0]) if cv.has(node, 0) else None
    cond = cv.known(node.input[1]) if cv.has(node, 1) else np.array(True)
    if cv.has(node, 0) and trips is None:
        raise Unsupported("the trip count '%s' is computed from data; only a loop whose number of steps is known "
                          "when converting is unrolled" % node.input[0])
    if cond is None:
        raise Unsupported("the first condition '%s' is computed from data; only a loop whose number of steps is "
                          "known when converting is unrolled" % node.input[1])
    limit = int(np.asarray(trips).reshape(-1)[0]) if trips is not None else None
    n_carried = len(node.input) - 2
    n_scan = len(body.output) - 1 - n_carried
    state = list(node.input[2:])
    scans = [[] for _ in range(n_scan)]
    step, go = 0, bool(np.asarray(cond).reshape(-1)[0])
    o = node.output[0] if node.output else node.name
    while go and (limit is None or step < limit):
        if step >= MAX_STEPS:
            raise Unsupported("more than %d steps; unrolling stops there" % MAX_STEPS)
        it = "%s_iter%d" % (o, step)
        cv.consts[it] = np.array(step, dtype=np.int64)
        cn = "%s_cond%d" % (o, step)
        cv.consts[cn] = np.array(True)
        _, outs = _run_body(cv, body, [it, cn] + state, "step %d of the body" % step)
        state = outs[1:1 + n_carried]
        for k in range(n_scan):
            scans[k].append(outs[1 + n_carried + k])
        step += 1
        nxt = cv.known(outs[0])
        if nxt is None:
            if limit is not None and step >= limit:
                break
            raise Unsupported("the condition '%s' of step %d is computed from data; only a loop whose number of "
                              "steps is known when converting is unrolled" % (body.output[0].name, step - 1))
        go = bool(np.asarray(nxt).reshape(-1)[0])
    for i in range(n_carried):
        _result(cv, state[i], node, i)
    for k in range(n_scan):
        i = n_carried + k
        if not scans[k]:
            raise Unsupported("scan output '%s' of a loop that runs no step: its shape is unknown" % node.output[i])
        if all(v in cv.consts for v in scans[k]):
            cv.consts[node.output[i]] = np.stack([cv.consts[v] for v in scans[k]])
            continue
        parts = [cv.emit("unsqueeze", [cv.v(v)], {"axes": [0]}, hint="%s_scan%d" % (o, k)) for v in scans[k]]
        d = cv.dims(scans[k][0])
        d = None if d is None else [len(parts)] + d
        infer.check(cv, node.output[i], d)
        cv.info[node.output[i]] = (cv.elem_type(scans[k][0]), d)
        if len(parts) == 1:
            cv.emit("identity", parts, outs=cv.out(node, i))
        else:
            cv.emit("concat", [parts], {"axis": 0}, outs=cv.out(node, i))


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
    dims, types = [None] * (n_state + n_scan_out), [None] * (n_state + n_scan_out)
    for b in range(batch):
        def pick(name, axis, index, tag):
            d = cv.static_dims(name, "Scan")
            starts, sizes = [0] * len(d), list(d)
            starts[axis], sizes[axis] = index, 1
            x = cv.emit("slice", [cv.v(name)], {"starts": starts, "sizes": sizes}, hint="%s_%s" % (o, tag))
            x = cv.emit("squeeze", [x], {"axes": [axis]}, hint="%s_%s_nd" % (o, tag))
            return _named(cv, x, cv.elem_type(name), d[:axis] + d[axis + 1:])
        state = [pick(n, 0, b, "b%d_s%d" % (b, i)) if batched else n for i, n in enumerate(ins[:n_state])]
        outs = [[] for _ in range(n_scan_out)]
        for t in range(steps):
            bound = list(state)
            for j, name in enumerate(ins[n_state:]):
                d = scan_dims[j]
                axis = lead + in_axes[j] % (len(d) - lead)
                x = cv.v(name)
                if batched:
                    x = cv.v(pick(name, 0, b, "b%d_x%d" % (b, j)))
                    axis -= 1
                    d = d[1:]
                starts, sizes = [0] * len(d), list(d)
                starts[axis], sizes[axis] = steps - 1 - t if in_rev[j] else t, 1
                x = cv.emit("slice", [x], {"starts": starts, "sizes": sizes}, hint="%s_b%d_t%d_in%d" % (o, b, t, j))
                x = cv.emit("squeeze", [x], {"axes": [axis]}, hint="%s_b%d_t%d_in%d_nd" % (o, b, t, j))
                bound.append(_named(cv, x, cv.elem_type(name), d[:axis] + d[axis + 1:]))
            _, got = _run_body(cv, body, bound, "step %d of the body" % t)
            state = got[:n_state]
            for k in range(n_scan_out):
                outs[k].append(got[n_state + k])
        for i in range(n_state):
            results[i].append(cv.v(state[i]))
            dims[i], types[i] = cv.dims(state[i]), cv.elem_type(state[i])
        for k in range(n_scan_out):
            seqk = outs[k][::-1] if out_rev[k] else outs[k]
            d = cv.dims(seqk[0])
            r = len(d or [])
            axis = out_axes[k] % (r + 1)
            dims[n_state + k] = None if d is None else d[:axis] + [steps] + d[axis:]
            types[n_state + k] = cv.elem_type(seqk[0])
            parts = [cv.emit("unsqueeze", [cv.v(v)], {"axes": [axis]}, hint="%s_out%d_t" % (o, k)) for v in seqk]
            results[n_state + k].append(parts[0] if len(parts) == 1 else
                                        cv.emit("concat", [parts], {"axis": axis}, hint="%s_out%d" % (o, k)))
    for i, per_batch in enumerate(results):
        d = None if dims[i] is None else ([batch] if batched else []) + dims[i]
        infer.check(cv, node.output[i], d)
        cv.info[node.output[i]] = (types[i], d)
        if batched:
            parts = [cv.emit("unsqueeze", [v], {"axes": [0]}, hint="%s_r%d_b" % (o, i)) for v in per_batch]
            cv.emit("concat", [parts], {"axis": 0}, outs=cv.out(node, i))
        else:
            cv.emit("identity", [per_batch[0]], outs=cv.out(node, i))
