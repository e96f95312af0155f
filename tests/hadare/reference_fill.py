"""HadarE's fill step written plainly, as the specification the vectorised
:func:`optsched.hadare.policy.fill_idle_gpus` is checked against: at each step every
(job, bucket) pair is scored afresh, in Python floats."""

from __future__ import annotations

import math

EPS = 1e-9


def reference_fill(model, eligible, copies, idle, rem, F, price, efficiency=1.0):
    """Give idle GPUs one grant at a time: among the pairs a job may take (a usable type,
    idle GPUs, and either a free node while it has fewer than F copies or its own copy's
    bucket below a whole gang), the largest progress per price (ties within 1e-12
    relative), then the largest rate per price, then the first job, then the first
    bucket. Mutates ``copies`` and ``idle``; returns the GPUs given."""
    d = model.delta
    bn = [int(x) for x in model.bucket_node]
    bt = [int(x) for x in model.bucket_type]
    B = len(bn)
    p = [1.0] * B if price is None else [float(x) for x in price]
    p = [math.inf if math.isnan(x) else max(x, 2.2250738585072014e-308) for x in p]
    rate = {j: [float(model.rates[j, bt[b]]) for b in range(B)] for j in eligible}
    R = {}
    for j in eligible:
        rs = sorted((g * float(model.rates[j, bt[b]]) for b, g in copies.get(j, {}).values()),
                    reverse=True)
        R[j] = sum(rs[:1]) + efficiency * sum(rs[1:])
    given = 0
    while True:
        best = None
        for e, j in enumerate(eligible):
            mine = copies.get(j, {})
            n = len(mine)
            need = max(0.0, float(rem[j]) - R[j] * d)
            f = efficiency if n > 0 else 1.0
            for b in range(B):
                tau = rate[j][b]
                if tau <= 0 or idle[b] <= 0:
                    continue
                cur = mine.get(bn[b])
                if cur is None:
                    if n >= F[j]:
                        continue
                elif cur[0] != b or cur[1] >= model.W[j]:
                    continue
                mp = min(f * tau * d, need) / p[b]
                best = best or []
                best.append((mp, tau / p[b], e, b))
        if not best:
            return given
        top = max(x[0] for x in best)
        tol = 1e-12 * max(1.0, abs(top)) if math.isfinite(top) else 0.0
        cand = [x for x in best if x[0] >= top - tol]
        sec = max(x[1] for x in cand)
        _, _, e, b = min((x for x in cand if x[1] == sec), key=lambda x: (x[2], x[3]))
        j = eligible[e]
        mine = copies.setdefault(j, {})
        h = bn[b]
        f = efficiency if mine else 1.0
        eff = f * rate[j][b]
        need = max(0.0, float(rem[j]) - R[j] * d)
        room = int(model.W[j]) - (mine[h][1] if h in mine else 0)
        g = min(int(idle[b]), room)
        if need > 0:
            g = min(g, max(1, math.ceil(need / (eff * d) - EPS)))
        R[j] += g * eff
        mine[h] = [b, (mine[h][1] if h in mine else 0) + g]
        idle[b] -= g
        given += g
