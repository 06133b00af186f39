"""The PyTorch 2 side of the attention suite (scripts/performance.py runs it).

Reads the inputs bench_sdpa_bench wrote (DIMTENSOR_BENCH_INPUTS), checks that
PyTorch computes the same outputs as dimtensor did, and times the same cases
with PyTorch's own fused path and with d2l's code:

  sdpa_fwd_1d / _2d        torch.nn.functional.scaled_dot_product_attention,
                           the valid lengths as a boolean mask
  sdpa_fwdbwd_1d / _2d     the same, then backward of sum(out * G)
  d2l_fwd_1d / _2d         d2l's DotProductAttention (bmm, masked_softmax, bmm)
  d2l_fwdbwd_1d / _2d      the same, then backward
  masked_softmax           d2l's masked_softmax of the [64, 512, 512] scores
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
    return cases, (q, k, v, masks, lens)


def sweep_case(length):
    gen = torch.Generator().manual_seed(length)
    q, k, v = (torch.randn(2, length, 64, generator=gen) for _ in range(3))

    def run():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v)
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, help="the directory bench_sdpa_bench wrote")
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
