"""The PyTorch 2 side of the attention suite (scripts/performance.py runs it).

Reads the inputs bench_suite_bench wrote (DIMTENSOR_BENCH_INPUTS), checks that
PyTorch computes the same outputs as dimtensor did, and times the same cases
with PyTorch's own fused path and with d2l's code:

  sdpa_fwd_1d / _2d        torch.nn.functional.scaled_dot_product_attention,
                           the valid lengths as a boolean mask
  sdpa_fwdbwd_1d / _2d     the same, then backward of sum(out * G)
  d2l_fwd_1d / _2d         d2l's DotProductAttention (bmm, masked_softmax, bmm)
  d2l_fwdbwd_1d / _2d      the same, then backward
  masked_softmax           d2l's masked_softmax of the [64, 512, 512] scores
  mha_fwd / mha_fwdbwd     nn.MultiheadAttention(512, 8, bias=False, batch_first=True),
                           need_weights=False, the lengths as key_padding_mask,
                           dimtensor's weights (in_proj = [W_q; W_k; W_v], out_proj = W_o)
  mha_sdpa_fwd / _fwdbwd   the same projections around scaled_dot_product_attention
  mha_d2l_fwd / _fwdbwd    d2l's MultiHeadAttention (transpose_qkv, DotProductAttention)
  additive_fwd / _fwdbwd   d2l's AdditiveAttention with dimtensor's weights
  nw_50 / nw_4096          d2l's NWKernelRegression.forward, 50 test points
  toy_*                    the book's toy calls (masked_softmax, AdditiveAttention,
                           DotProductAttention, MultiHeadAttention(100, 5))
  sweep/L                  SDPA without a mask, B2, Q = K = L, d64

Prints one JSON object: versions, threads, and per case the median time in
milliseconds.  With --memory CASE it runs CASE once and prints the resident
memory it added at its peak instead (as the C++ side measures it).

Needs torch (PyPI) and numpy; it is never run by the tests.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load(inputs, name):
    return torch.from_numpy(np.load(os.path.join(inputs, name + ".npy")))


def bool_mask(lens, queries, kv):
    """[B, Q, K] (2-D lengths) or [B, 1, K] (1-D) mask: True where a key counts."""
    keys = torch.arange(kv)
    if lens.dim() == 1:
        return keys[None, None, :] < lens[:, None, None]
    return keys[None, None, :] < lens[:, :, None]


# d2l's code (d2l/torch.py), as users write it.
def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return F.softmax(X.reshape(shape), dim=-1)


def d2l_attention(queries, keys, values, valid_lens):
    d = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    return torch.bmm(masked_softmax(scores, valid_lens), values)


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


def d2l_mha(X, Y, valid_lens, w_q, w_k, w_v, w_o, heads):
    queries = transpose_qkv(F.linear(X, w_q), heads)
    keys = transpose_qkv(F.linear(Y, w_k), heads)
    values = transpose_qkv(F.linear(Y, w_v), heads)
    valid_lens = torch.repeat_interleave(valid_lens, repeats=heads, dim=0)
    output = d2l_attention(queries, keys, values, valid_lens)
    return F.linear(transpose_output(output, heads), w_o)


def sdpa_mha(X, Y, mask, w_q, w_k, w_v, w_o, heads):
    B, L, H = X.shape
    split = lambda t: t.reshape(B, t.shape[1], heads, H // heads).transpose(1, 2)
    q, k, v = split(F.linear(X, w_q)), split(F.linear(Y, w_k)), split(F.linear(Y, w_v))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, :, :])
    return F.linear(out.transpose(1, 2).reshape(B, L, H), w_o)


def d2l_additive(queries, keys, values, valid_lens, w_q, w_k, w_v):
    queries, keys = F.linear(queries, w_q), F.linear(keys, w_k)
    features = queries.unsqueeze(2) + keys.unsqueeze(1)
    features = torch.tanh(features)
    scores = F.linear(features, w_v).squeeze(-1)
    return torch.bmm(masked_softmax(scores, valid_lens), values)


def d2l_nw(queries, keys, values, w):
    queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
    attention_weights = F.softmax(-((queries - keys) * w) ** 2 / 2, dim=1)
    return torch.bmm(attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)


def median_ms(fn, min_time):
    fn()  # warm up
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < min_time and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, len(times)


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return -1


def make_cases(inputs):
    q, k, v, g = (load(inputs, n) for n in ("q", "k", "v", "g"))
    lens = {"1d": load(inputs, "lens1"), "2d": load(inputs, "lens2")}
    masks = {key: bool_mask(l, q.shape[1], k.shape[1]) for key, l in lens.items()}
    scores = load(inputs, "scores")
    scores_lens = load(inputs, "scores_lens")
    cases = {}

    def no_grad(fn):
        def run():
            with torch.no_grad():
                return fn()
        return run

    def backward(fn):
        qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))

        def run():
            for t in (qr, kr, vr):
                t.grad = None
            (fn(qr, kr, vr) * g).sum().backward()
        return run

    for key in ("1d", "2d"):
        m, l = masks[key], lens[key]
        cases["sdpa_fwd_" + key] = no_grad(lambda m=m: F.scaled_dot_product_attention(q, k, v, attn_mask=m))
        cases["sdpa_fwdbwd_" + key] = backward(
            lambda a, b, c, m=m: F.scaled_dot_product_attention(a, b, c, attn_mask=m))
        cases["d2l_fwd_" + key] = no_grad(lambda l=l: d2l_attention(q, k, v, l))
        cases["d2l_fwdbwd_" + key] = backward(lambda a, b, c, l=l: d2l_attention(a, b, c, l))
    cases["masked_softmax"] = no_grad(lambda: masked_softmax(scores.clone(), scores_lens))

    # Multi-head attention, dimtensor's weights.
    X, Y, G = (load(inputs, "mha_" + n) for n in ("x", "y", "g"))
    mlens = load(inputs, "mha_lens")
    W = {n: load(inputs, "mha_w_" + n) for n in ("q", "k", "v", "o")}
    heads = 8
    mha = torch.nn.MultiheadAttention(X.shape[-1], heads, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([W["q"], W["k"], W["v"]]))
        mha.out_proj.weight.copy_(W["o"])
    mha.eval()
    padding = ~(torch.arange(Y.shape[1])[None, :] < mlens[:, None])
    mmask = bool_mask(mlens, X.shape[1], Y.shape[1]).expand(X.shape[0], X.shape[1], Y.shape[1])
    Wr = {n: w.clone().requires_grad_() for n, w in W.items()}

    def mha_step(fn):
        Xr, Yr = X.clone().requires_grad_(), Y.clone().requires_grad_()

        def run():
            for t in [Xr, Yr] + list(Wr.values()) + list(mha.parameters()):
                t.grad = None
            (fn(Xr, Yr) * G).sum().backward()
        return run
    mha_module = lambda a, b: mha(a, b, b, key_padding_mask=padding, need_weights=False)[0]
    cases["mha_fwd"] = no_grad(lambda: mha_module(X, Y))
    cases["mha_fwdbwd"] = mha_step(mha_module)
    cases["mha_sdpa_fwd"] = no_grad(lambda: sdpa_mha(X, Y, mmask, W["q"], W["k"], W["v"], W["o"], heads))
    cases["mha_sdpa_fwdbwd"] = mha_step(lambda a, b: sdpa_mha(a, b, mmask, Wr["q"], Wr["k"], Wr["v"], Wr["o"], heads))
    cases["mha_d2l_fwd"] = no_grad(lambda: d2l_mha(X, Y, mlens, W["q"], W["k"], W["v"], W["o"], heads))
    cases["mha_d2l_fwdbwd"] = mha_step(lambda a, b: d2l_mha(a, b, mlens, Wr["q"], Wr["k"], Wr["v"], Wr["o"], heads))

    # Additive attention, dimtensor's weights.
    aq, ak, av, ag = (load(inputs, "add_" + n) for n in ("q", "k", "v", "g"))
    alens = load(inputs, "add_lens")
    AW = {n: load(inputs, "add_w_" + n) for n in ("q", "k", "v")}
    AWr = {n: w.clone().requires_grad_() for n, w in AW.items()}
    cases["additive_fwd"] = no_grad(lambda: d2l_additive(aq, ak, av, alens, AW["q"], AW["k"], AW["v"]))
    aqr, akr, avr = (t.clone().requires_grad_() for t in (aq, ak, av))

    def additive_step():
        for t in [aqr, akr, avr] + list(AWr.values()):
            t.grad = None
        (d2l_additive(aqr, akr, avr, alens, AWr["q"], AWr["k"], AWr["v"]) * ag).sum().backward()
    cases["additive_fwdbwd"] = additive_step

    # Nadaraya-Watson.
    for n in (50, 4096):
        xt, keys, values = (load(inputs, "nw_%d_%s" % (n, m)) for m in ("x_test", "keys", "values"))
        w = torch.tensor([1.3])
        cases["nw_%d" % n] = no_grad(lambda xt=xt, keys=keys, values=values, w=w: d2l_nw(xt, keys, values, w))

    # The book's toy calls (random weights of the book's shapes).
    gen = torch.Generator().manual_seed(0)
    toy_scores = torch.rand(2, 2, 4, generator=gen)
    toy_lens = torch.tensor([2, 3])
    cases["toy_masked_softmax"] = no_grad(lambda: masked_softmax(toy_scores.clone(), toy_lens))
    tq, tk = torch.normal(0, 1, (2, 1, 20), generator=gen), torch.ones((2, 10, 2))
    tv = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    tl = torch.tensor([2, 6])
    tw = (torch.randn(8, 20, generator=gen), torch.randn(8, 2, generator=gen), torch.randn(1, 8, generator=gen))
    cases["toy_additive"] = no_grad(lambda: d2l_additive(tq, tk, tv, tl, *tw))
    tdq = torch.normal(0, 1, (2, 1, 2), generator=gen)
    cases["toy_dot"] = no_grad(lambda: d2l_attention(tdq, tk, tv, tl))
    mx, my = torch.ones((2, 4, 100)), torch.ones((2, 6, 100))
    mw = [torch.randn(100, 100, generator=gen) * 0.1 for _ in range(4)]
    cases["toy_mha"] = no_grad(lambda: d2l_mha(mx, my, torch.tensor([3, 2]), *mw, 5))
    return cases, (q, k, v, masks, lens)


def sweep_case(length):
    gen = torch.Generator().manual_seed(length)
    q, k, v = (torch.randn(2, length, 64, generator=gen) for _ in range(3))

    def run():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v)
    return run


def mha_check(inputs):
    X, Y = load(inputs, "mha_x"), load(inputs, "mha_y")
    mlens = load(inputs, "mha_lens")
    W = {n: load(inputs, "mha_w_" + n) for n in ("q", "k", "v", "o")}
    return d2l_mha(X, Y, mlens, W["q"], W["k"], W["v"], W["o"], 8)


def additive_check(inputs):
    aq, ak, av = (load(inputs, "add_" + n) for n in ("q", "k", "v"))
    return d2l_additive(aq, ak, av, load(inputs, "add_lens"), *(load(inputs, "add_w_" + n) for n in ("q", "k", "v")))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, help="the directory bench_suite_bench wrote")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per case")
    parser.add_argument("--memory", help="measure the peak memory of one case instead")
    parser.add_argument("--sweep", default="128,256,512,1024,2048,4096,8192")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    if args.memory:
        if args.memory.startswith("sweep/"):
            run = sweep_case(int(args.memory.split("/")[1]))
        else:
            cases, _ = make_cases(args.inputs)
            run = cases[args.memory]
        before = status_kb("VmRSS:")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        run()
        peak = status_kb("VmHWM:")
        print(json.dumps({"case": args.memory, "peak_extra_mib": (peak - before) / 1024.0}))
        return 0

    cases, (q, k, v, masks, lens) = make_cases(args.inputs)
    # The same outputs as dimtensor's (d2l's masking; no row of length 0 here).
    for key in ("1d", "2d"):
        theirs = load(args.inputs, "out_" + key)
        with torch.no_grad():
            fused = F.scaled_dot_product_attention(q, k, v, attn_mask=masks[key])
            d2l = d2l_attention(q, k, v, lens[key])
        for name, out in (("sdpa", fused), ("d2l", d2l)):
            worst = (out - theirs).abs().max().item()
            if worst > 1e-4:
                print("torch2_bench: %s_%s differs from dimtensor's output by %g" % (name, key, worst), file=sys.stderr)
                return 1

    # The modules against dimtensor's outputs on the same weights.
    with torch.no_grad():
        checks = [("mha", mha_check(args.inputs), load(args.inputs, "mha_out")),
                  ("additive", additive_check(args.inputs), load(args.inputs, "add_out"))]
        for n in (50, 4096):
            checks.append(("nw_%d" % n, d2l_nw(*(load(args.inputs, "nw_%d_%s" % (n, m))
                                                  for m in ("x_test", "keys", "values")), torch.tensor([1.3])),
                           load(args.inputs, "nw_%d_out" % n)))
    checks.append(("nn.MultiheadAttention", cases["mha_fwd"](), load(args.inputs, "mha_out")))
    checks.append(("mha via SDPA", cases["mha_sdpa_fwd"](), load(args.inputs, "mha_out")))
    for name, out, theirs in checks:
        worst = (out - theirs).abs().max().item()
        if worst > 1e-4:
            print("torch2_bench: %s differs from dimtensor's output by %g" % (name, worst), file=sys.stderr)
            return 1

    result = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas": "MKL" if torch.backends.mkl.is_available() else "other",
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cases": {},
    }
    for name, fn in cases.items():
        ms, runs = median_ms(fn, args.min_time)
        result["cases"][name] = {"ms": ms, "runs": runs}
    for length in (int(x) for x in args.sweep.split(",")):
        ms, runs = median_ms(sweep_case(length), args.min_time)
        result["cases"]["sweep/%d" % length] = {"ms": ms, "runs": runs}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
