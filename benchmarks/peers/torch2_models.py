"""The PyTorch 2 side of the whole-model benchmarks (bench_model_bench;
scripts/performance.py runs both).

Reads what bench_model_bench wrote (DIMTENSOR_BENCH_INPUTS): each encoder's
weights, tokens, valid lengths and weighting G, and dimtensor's output, loss
and one gradient; the activations' input, gradient and dimtensor's results.
Each case first checks that PyTorch computes the same (the output, the loss
and the gradients of every block's ffn.dense1.weight within 1e-4 of their
scale; where float rounding alone moves a gradient by more than that,
dimtensor's float gradients may differ from PyTorch's float64 ones, in norm
over the blocks together, by at most 1.5 times PyTorch's float ones), then
times:

  d2l_<enc>_fwd / _fwdbwd      d2l's TransformerEncoder (d2l/torch.py, as
                               tests/parity/goldens_transformer.py copies it),
                               dimtensor's weights by their keys; forward
                               under no_grad, forward + backward of sum(out * G)
  nn_<enc>_fwd / _fwdbwd       nn.TransformerEncoder (post-norm, ReLU, the
                               lengths as src_key_padding_mask) with the same
                               weights around d2l's embedding and positional
                               encoding (its fast path runs the forward)
  compiled_<enc>_fwd / _fwdbwd torch.compile of d2l's encoder, when it compiles
  gelu_composite_fwdbwd        x * 0.5 * (1 + torch.erf(x / sqrt(2))), backward
  gelu_builtin_fwdbwd          F.gelu
  swish_composite_fwdbwd       x * torch.sigmoid(x)
  silu_builtin_fwdbwd          F.silu
  (<enc>: encoder_small, encoder_base)

Prints one JSON object: versions, threads, per case the median time in
milliseconds, and what each check found.  Needs torch (PyPI) and numpy; it
is never run by the tests.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

from peer_common import goldens, load_params, median_ms


def mkl_line():
    """MKL's own description of itself (MKL_VERBOSE's first line), from a child process."""
    import subprocess
    env = dict(os.environ, MKL_VERBOSE="1")
    out = subprocess.run([sys.executable, "-c", "import torch; torch.mm(torch.ones(64, 64), torch.ones(64, 64))"],
                         env=env, capture_output=True, text=True).stdout
    lines = [l for l in out.splitlines() if l.startswith("MKL_VERBOSE") and "SGEMM" not in l]
    return lines[0][len("MKL_VERBOSE "):] if lines else None


def d2l_encoder_class():
    """d2l's TransformerEncoder, from the parity goldens' verbatim copy."""
    g = goldens()
    import goldens_transformer
    encoder, _, _ = goldens_transformer.d2l_classes(g)
    return encoder


def scale_of(t):
    return max(1.0, float(t.abs().max()))


def nn_encoder(d2l, hidden, ffn, heads, layers):
    """nn.TransformerEncoder with d2l's weights (zero attention biases: d2l's have none)."""
    layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=True)
    with torch.no_grad():
        for blk, lay in zip(d2l.blks, enc.layers):
            a = blk.attention
            lay.self_attn.in_proj_weight.copy_(torch.cat([a.W_q.weight, a.W_k.weight, a.W_v.weight]))
            lay.self_attn.in_proj_bias.zero_()
            lay.self_attn.out_proj.weight.copy_(a.W_o.weight)
            lay.self_attn.out_proj.bias.zero_()
            lay.linear1.load_state_dict(blk.ffn.dense1.state_dict())
            lay.linear2.load_state_dict(blk.ffn.dense2.state_dict())
            lay.norm1.load_state_dict(blk.addnorm1.ln.state_dict())
            lay.norm2.load_state_dict(blk.addnorm2.ln.state_dict())

    def forward(X, pad):
        x = d2l.pos_encoding(d2l.embedding(X) * math.sqrt(hidden))
        return enc(x, src_key_padding_mask=pad)
    return enc, forward


def encoder_cases(Encoder, folder, name, config, args, result):
    hidden, ffn, heads, layers = config
    d = os.path.join(args.inputs, name)
    X = torch.from_numpy(np.load(os.path.join(d, "X.npy")))
    lens = torch.from_numpy(np.load(os.path.join(d, "lens.npy")))
    G = torch.from_numpy(np.load(os.path.join(d, "G.npy")))
    out_dt = torch.from_numpy(np.load(os.path.join(d, "out.npy")))
    loss_dt = float(np.load(os.path.join(d, "loss.npy")))
    net = Encoder(1000, hidden, hidden, hidden, hidden, [hidden], hidden, ffn, heads, layers, 0.0)
    net.load_state_dict(load_params(os.path.join(d, "params")), strict=True)
    valid = torch.arange(X.shape[1])[None, :] < lens[:, None]

    def fwd(model):
        def run():
            model.eval()
            with torch.no_grad():
                return model(X, lens)
        return run

    def fwdbwd(model, params):
        def run():
            model.train()
            for p in params:
                p.grad = None
            loss = (model(X, lens) * G).sum()
            loss.backward()
            return loss
        return run

    checks = {}
    limits = {}  # the largest difference each check allows; 1e-4 unless named
    out = fwd(net)()
    checks["d2l_out"] = float((out - out_dt).abs().max()) / scale_of(out_dt)
    loss = fwdbwd(net, list(net.parameters()))()
    checks["d2l_loss"] = abs(float(loss) - loss_dt) / max(1.0, abs(loss_dt))
    # Every block's ffn.dense1.weight: PyTorch's float gradients and dimtensor's.
    grads = [(getattr(net.blks, "block%d" % i).ffn.dense1.weight.grad,
              torch.from_numpy(np.load(os.path.join(d, "grad_dense1_%d.npy" % i)))) for i in range(layers)]
    checks["d2l_grads"] = max(float((t - g).abs().max()) / scale_of(g) for t, g in grads)
    if checks["d2l_grads"] > 1e-4 and args.only:
        # A profile's run (--only): the timing runs made the float64
        # comparison below, which would be most of this process's profile.
        limits["d2l_grads"] = math.inf
    elif checks["d2l_grads"] > 1e-4:
        # In a deep stack float rounding alone moves the gradients by more
        # than 1e-4: at bert-base size both libraries' float gradients are
        # about 1e-3 from the float64 ones in norm, 300-500 times their
        # outputs' error, while the outputs agree with float64 to 2e-6.
        # The gradients pass back through ReLU, whose derivative jumps at 0:
        # where the forward's rounding moves an input across 0, a whole term
        # changes (with GELU in ReLU's place, PyTorch's float gradients of the
        # same model are within 3e-6 of float64's).  Then the check is against float64, over every
        # block's gradient together: dimtensor's float gradients may be off
        # by no more than 1.5 times what PyTorch's are, in norm
        # (|g - g64| / |g64| over the blocks' gradients stacked).  One
        # block's ratio is reported beside it, not checked: PyTorch's own
        # error in one block moves by a third between thread counts.
        exact = Encoder(1000, hidden, hidden, hidden, hidden, [hidden], hidden, ffn, heads, layers, 0.0)
        exact.load_state_dict(load_params(os.path.join(d, "params")), strict=True)
        exact = exact.double()
        exact.train()
        (exact(X, lens) * G.double()).sum().backward()
        g64 = [getattr(exact.blks, "block%d" % i).ffn.dense1.weight.grad for i in range(layers)]
        del exact
        n64 = math.sqrt(sum(float(g.norm()) ** 2 for g in g64))
        s64 = max(scale_of(g) for g in g64)
        for key, which in (("torch_grads", 0), ("d2l_grads", 1)):
            diffs = [pair[which].double() - g for pair, g in zip(grads, g64)]
            checks[key + "_vs_f64_norm"] = math.sqrt(sum(float(e.norm()) ** 2 for e in diffs)) / n64
            checks[key + "_vs_f64_max"] = max(float(e.abs().max()) for e in diffs) / s64
            limits[key + "_vs_f64_max"] = math.inf  # reported, not checked
        limits["torch_grads_vs_f64_norm"] = math.inf
        limits["d2l_grads_vs_f64_norm"] = max(1e-4, 1.5 * checks["torch_grads_vs_f64_norm"])
        ratios = [float((g_dt.double() - g).norm()) / float((g_t.double() - g).norm())
                  for (g_t, g_dt), g in zip(grads, g64)]
        checks["d2l_grads_vs_f64_worst_block"] = max(ratios)
        limits["d2l_grads_vs_f64_worst_block"] = math.inf  # reported, not checked
        del checks["d2l_grads"]

    enc, nn_forward = nn_encoder(net, hidden, ffn, heads, layers)
    pad = ~valid

    def nn_fwd():
        enc.eval()
        with torch.no_grad():
            return nn_forward(X, pad)

    nn_params = list(enc.parameters()) + list(net.embedding.parameters())

    def nn_fwdbwd():
        enc.train()
        for p in nn_params:
            p.grad = None
        loss = (nn_forward(X, pad) * G).sum()
        loss.backward()
        return loss

    o = nn_fwd()
    if o.is_nested:
        o = o.to_padded_tensor(0.0)
    checks["nn_out_valid"] = float(((o - out_dt).abs() * valid[:, :, None]).max()) / scale_of(out_dt)
    checks["nn_loss"] = abs(float(nn_fwdbwd()) - loss_dt) / max(1.0, abs(loss_dt))

    bad = [k for k, v in checks.items() if not v <= limits.get(k, 1e-4)]
    result["checks"][name] = checks
    if bad:
        result["errors"].append("%s: PyTorch and dimtensor differ (%s)" % (name, ", ".join(bad)))
        return
    runs = args.min_runs if name == "encoder_small" else 1
    cases = [("d2l_%s_fwd" % name, fwd(net)),
             ("d2l_%s_fwdbwd" % name, fwdbwd(net, list(net.parameters()))),
             ("nn_%s_fwd" % name, nn_fwd),
             ("nn_%s_fwdbwd" % name, nn_fwdbwd)]
    if args.compile:
        try:
            compiled = torch.compile(net)
            c_out = fwd(compiled)()
            if float((c_out - out_dt).abs().max()) / scale_of(out_dt) > 1e-4:
                raise RuntimeError("the compiled encoder's output differs")
            cases.append(("compiled_%s_fwd" % name, fwd(compiled)))
            cases.append(("compiled_%s_fwdbwd" % name, fwdbwd(compiled, list(net.parameters()))))
        except Exception as e:  # noqa: BLE001 - the reason goes into the report
            result["errors"].append("torch.compile of %s: %s" % (name, str(e).splitlines()[0][:200]))
    for case, fn in cases:
        if args.only and case != args.only:
            continue
        ms, n = median_ms(fn, args.min_time, runs)
        result["cases"][case] = {"ms": ms, "runs": n}


def activation_cases(args, result):
    d = args.inputs
    x0 = torch.from_numpy(np.load(os.path.join(d, "activation", "x.npy")))
    g = torch.from_numpy(np.load(os.path.join(d, "activation", "g.npy")))
    fns = {
        "gelu_composite": lambda x: x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))),
        "gelu_builtin": F.gelu,
        "swish_composite": lambda x: x * torch.sigmoid(x),
        "silu_builtin": F.silu,
    }
    x = x0.clone().requires_grad_()
    for name, f in fns.items():
        def run(f=f):
            x.grad = None
            y = f(x)
            y.backward(g)
            return y
        y = run()
        y_dt = torch.from_numpy(np.load(os.path.join(d, name, "y.npy")))
        dx_dt = torch.from_numpy(np.load(os.path.join(d, name, "dx.npy")))
        err = max(float((y.detach() - y_dt).abs().max()), float((x.grad - dx_dt).abs().max()))
        result["checks"][name] = {"max_abs": err}
        if not err <= 1e-4:
            result["errors"].append("%s: PyTorch and dimtensor differ by %g" % (name, err))
            continue
        if args.only and name + "_fwdbwd" != args.only:
            continue
        ms, n = median_ms(run, args.min_time, args.min_runs)
        result["cases"][name + "_fwdbwd"] = {"ms": ms, "runs": n}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, help="the directory bench_model_bench wrote")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per case")
    parser.add_argument("--min-runs", type=int, default=5, help="timed runs per case, at least (1 for bert-base)")
    parser.add_argument("--no-compile", dest="compile", action="store_false", help="leave out torch.compile")
    parser.add_argument("--only", help="time this case alone (for a profile; the float64 comparison is left to the timing runs)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.ones(8).sum()  # the CPU capability is fixed here, before anything else is imported
    Encoder = d2l_encoder_class()
    result = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "blas": next((p.split("=")[1] for p in torch.__config__.show().replace(",", "\n").split() if p.startswith("BLAS_INFO=")), "?"),
        "blas_kernel": mkl_line(),
        "cases": {},
        "checks": {},
        "errors": [],
    }
    configs = {"encoder_small": (64, 256, 4, 2), "encoder_base": (768, 3072, 12, 12)}
    for name, config in configs.items():
        if os.path.isdir(os.path.join(args.inputs, name)) and (not args.only or name in args.only):
            encoder_cases(Encoder, args.inputs, name, config, args, result)
    if not args.only or "encoder" not in args.only:
        activation_cases(args, result)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
