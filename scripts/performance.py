#!/usr/bin/env python3
"""Runs the attention suite and the whole-model benchmarks and writes docs/performance.md.

    python3 scripts/performance.py --bench build/release/benchmarks/bench_suite_bench \\
        --model-bench build/release/benchmarks/bench_model_bench \\
        --model-bench-native build/native/benchmarks/bench_model_bench \\
        --python /path/to/venv/bin/python --profile

runs bench_suite_bench (dimtensor, and libtorch 1.13 when it was built with
it) and benchmarks/peers/torch2_bench.py (PyTorch 2 from PyPI, run by the
given interpreter) on the same inputs, at each thread count, measures the
peak memory of each case in a process of its own, and writes the tables, a
plot (docs/performance_sweep.svg) and the machine, versions and threads to
docs/performance.md.  Only the standard library is needed here; the
interpreter given with --python needs torch and numpy (and transformers for
--hf-bench, bench_hf_models_bench: BERT and GPT-2 from checkpoints that
benchmarks/peers/torch2_hf.py has transformers write first).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(ROOT, "benchmarks", "peers", "torch2_bench.py")
MODEL_PEER = os.path.join(ROOT, "benchmarks", "peers", "torch2_models.py")
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def machine_env():
    """The variables scripts/env.sh sets for this machine (OPENBLAS_CORETYPE among them)."""
    out = subprocess.run(["bash", "-c", "source '%s' >/dev/null 2>&1; env -0" % os.path.join(ROOT, "scripts", "env.sh")],
                         check=True, capture_output=True, text=True).stdout
    env = dict(item.split("=", 1) for item in out.split("\0") if "=" in item)
    return {k: v for k, v in env.items() if k.startswith(("OPENBLAS", "OMP", "GOTO", "MKL"))}
SWEEP = [128, 256, 512, 1024, 2048, 4096, 8192]


def run(cmd, env=None):
    full = dict(os.environ)
    full.update(env or {})
    out = subprocess.run(cmd, env=full, check=True, capture_output=True, text=True)
    return out.stdout


def bench_times(bench, threads, min_time, inputs):
    env = {"DIMTENSOR_BENCH_THREADS": str(threads), "DIMTENSOR_BENCH_INPUTS": inputs}
    out = os.path.join(inputs, "bench-%d.json" % threads)
    run([bench, "--benchmark_out=" + out, "--benchmark_out_format=json", "--benchmark_min_time=%g" % min_time], env)
    with open(out) as f:
        data = json.load(f)
    cases = {}
    for b in data["benchmarks"]:
        name = b["name"].replace("/real_time", "")
        unit = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b.get("time_unit", "ms")]
        cases[name] = {"ms": b["real_time"] * unit, "gflops": b.get("useful_gflops")}  # the counter is in GFLOP/s
    return data["context"], cases


def bench_memory(bench, case):
    out = run([bench], {"DIMTENSOR_BENCH_THREADS": "1", "DIMTENSOR_BENCH_MEMORY": case})
    for line in out.splitlines():
        if line.startswith("peak_extra_mib"):
            return float(line.split()[1])
    return None


def peer_times(python, threads, min_time, inputs, allocator="default"):
    env = {"LD_PRELOAD": JEMALLOC} if allocator == "jemalloc" else {}
    return json.loads(run([python, PEER, "--inputs", inputs, "--threads", str(threads), "--min-time", str(min_time)],
                          env))


def peer_memory(python, inputs, case):
    out = run([python, PEER, "--inputs", inputs, "--threads", "1", "--memory", case])
    return json.loads(out)["peak_extra_mib"]


def fmt_ms(x):
    if x is None:
        return "—"
    return "%.3g" % x if x < 10 else "%.1f" % x


def ratio(peer, mine):
    if peer is None or mine is None:
        return "—"
    return "%.2fx" % (peer / mine)


def svg_plot(path, sweep):
    """Time and extra memory against length, log-log, two panels."""
    import math
    w, h, pad = 420, 300, 50
    series_t = [("dimtensor", "#1f77b4", [sweep[L]["dimtensor_ms"] for L in SWEEP]),
                ("PyTorch 2 SDPA", "#d62728", [sweep[L]["torch_ms"] for L in SWEEP])]
    series_m = [("dimtensor", "#1f77b4", [sweep[L]["dimtensor_mib"] for L in SWEEP]),
                ("PyTorch 2 SDPA", "#d62728", [sweep[L]["torch_mib"] for L in SWEEP])]
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
             'font-size="11">' % (2 * w, h), '<rect width="100%" height="100%" fill="white"/>']

    def panel(x0, title, ylabel, series):
        values = [v for _, _, vs in series for v in vs if v and v > 0]
        lo, hi = math.log10(min(values)), math.log10(max(values))
        if hi - lo < 1e-9:
            hi = lo + 1
        lx0, lx1 = math.log2(SWEEP[0]), math.log2(SWEEP[-1])

        def px(L):
            return x0 + pad + (math.log2(L) - lx0) / (lx1 - lx0) * (w - 2 * pad)

        def py(v):
            return h - pad - (math.log10(v) - lo) / (hi - lo) * (h - 2 * pad)
        parts.append('<text x="%d" y="18" text-anchor="middle" font-size="13">%s</text>' % (x0 + w / 2, title))
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (x0 + pad, h - pad, x0 + w - pad, h - pad))
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (x0 + pad, pad, x0 + pad, h - pad))
        for L in SWEEP:
            parts.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (px(L), h - pad + 14, L))
        for e in range(int(math.floor(lo)), int(math.ceil(hi)) + 1):
            if lo - 1e-9 <= e <= hi + 1e-9:
                parts.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (x0 + pad - 4, py(10 ** e) + 4, 10 ** e))
                parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' %
                             (x0 + pad, py(10 ** e), x0 + w - pad, py(10 ** e)))
        parts.append('<text x="%d" y="%d" text-anchor="middle">length L (Q = K = L)</text>' % (x0 + w / 2, h - 12))
        parts.append('<text x="%d" y="%d" text-anchor="middle" transform="rotate(-90 %d %d)">%s</text>' %
                     (x0 + 14, h / 2, x0 + 14, h / 2, ylabel))
        for i, (name, color, vs) in enumerate(series):
            pts = " ".join("%.1f,%.1f" % (px(L), py(v)) for L, v in zip(SWEEP, vs) if v and v > 0)
            parts.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (pts, color))
            parts.append('<text x="%d" y="%d" fill="%s">%s</text>' % (x0 + pad + 8, pad + 4 + 14 * i, color, name))

    panel(0, "forward time, B2 d64, 1 thread", "milliseconds", series_t)
    panel(w, "extra peak memory", "MiB", series_m)
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def model_bench_times(bench, threads, min_time, inputs, which, extra_env=None):
    env = {"DIMTENSOR_BENCH_THREADS": str(threads), "DIMTENSOR_BENCH_MODELS": which}
    env.update(extra_env or {})
    if inputs:
        env["DIMTENSOR_BENCH_INPUTS"] = inputs
    out = os.path.join(tempfile.mkdtemp(prefix="dimtensor-models-"), "bench.json")
    run([bench, "--benchmark_out=" + out, "--benchmark_out_format=json", "--benchmark_min_time=%g" % min_time], env)
    with open(out) as f:
        data = json.load(f)
    cases = {}
    for b in data["benchmarks"]:
        unit = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b.get("time_unit", "ms")]
        cases[b["name"].replace("/real_time", "")] = b["real_time"] * unit
    return data["context"], cases


def model_peer_times(python, threads, min_time, inputs, allocator):
    """The peer's times; torch.compile with the default allocator only."""
    env = {"LD_PRELOAD": JEMALLOC} if allocator == "jemalloc" else {}
    return json.loads(run([python, MODEL_PEER, "--inputs", inputs, "--threads", str(threads),
                           "--min-time", str(min_time)] + ([] if allocator == "default" else ["--no-compile"]), env))


def short_symbol(symbol):
    """A C++ symbol without its template arguments, function arguments and
    leading namespaces: what a table can show."""
    import re
    s = symbol.replace("(anonymous namespace)::", "")
    s = re.sub(r"\{lambda\([^)]*\)#\d+\}", "{lambda}", s)
    while True:
        t = re.sub(r"<[^<>]*>", "", s)
        if t == s:
            break
        s = t
    s = s.split("(")[0]
    parts = s.split("::")
    return "::".join(parts[-3:])[:80]


def perf_top(cmd, env, count=8):
    """The top entries (self time) of `perf report` for cmd, as (percent, symbol)."""
    data = tempfile.mktemp(prefix="dimtensor-perf-")
    run(["perf", "record", "-q", "-o", data, "--"] + cmd, env)
    report = run(["perf", "report", "-i", data, "--no-children", "--stdio", "--percent-limit", "1"], env)
    os.unlink(data)
    top = []
    for line in report.splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#") or not parts[0].endswith("%"):
            continue
        symbol = line.split("] ", 1)[1].strip() if "] " in line else parts[-1]
        top.append((parts[0], "%s (%s)" % (short_symbol(symbol), parts[2])))
        if len(top) == count:
            break
    return top


def checks_and_errors(w, checks, peers):
    """The peer's checks (each value's largest difference, or what it found) and the errors any of its runs
    reported, as the paragraphs under a section's table."""
    w("Checks: " + "; ".join("%s: %s" % (k, ", ".join("%s %s" % (a, ("%.1e" % b) if isinstance(b, float) else b)
                                                  for a, b in v.items()))
                             for k, v in checks.items()) + ".")
    errors = sorted(set(e for p in peers.values() for e in p["errors"]))
    if errors:
        w("")
        w("Reported by the peer: " + "; ".join(errors) + ".")
    w("")


TRANSLATION_PEER = os.path.join(ROOT, "benchmarks", "peers", "torch2_translation.py")


def translation_section(args, threads, w):
    """Runs the translation cases (training epochs, greedy decoding) and writes their section."""
    inputs = tempfile.mkdtemp(prefix="dimtensor-translation-")
    mine, native, peers = {}, {}, {}
    for t in threads:
        print("threads %d: dimtensor translation (default build)" % t, file=sys.stderr)
        mine[t] = model_bench_times(args.translation_bench, t, args.min_time,
                                    inputs if t == threads[0] else None, "all")[1]
        if args.translation_bench_native:
            print("threads %d: dimtensor translation (-march=native)" % t, file=sys.stderr)
            native[t] = model_bench_times(args.translation_bench_native, t, args.min_time, None, "all")[1]
        for allocator in ("default", "jemalloc"):
            print("threads %d: PyTorch 2 translation (%s allocator)" % (t, allocator), file=sys.stderr)
            env = {"LD_PRELOAD": JEMALLOC} if allocator == "jemalloc" else {}
            peers[(t, allocator)] = json.loads(run([args.python, TRANSLATION_PEER, "--inputs", inputs, "--threads",
                                                    str(t), "--min-time", str(args.min_time)]
                                                   + ([] if allocator == "default" else ["--no-compile"]), env))
    w("## Whole models: translation, training and greedy decoding")
    w("")
    w("bench_translation_bench against benchmarks/peers/torch2_translation.py: d2l's two translation models (Bahdanau: "
      "embed 32, hidden 32, 2 GRU layers, additive attention; Transformer: hidden 32, 2 blocks, 4 heads, FFN 64), the "
      "first 600 pairs of fra-eng less the held-out tenth, batches of 64, 10 steps.  One training epoch as d2l's "
      "`train_seq2seq` (teacher forcing, MaskedSoftmaxCELoss summed, backward, gradients clipped to 1, Adam lr 0.005, "
      "dropout 0.1), the same batches in the same order; greedy decoding of \"i'm home .\" (`predict_seq2seq`), "
      "the time per sentence of 10 decoder steps on both sides, so the ratio is also the ratio per token.  The peer "
      "loads dimtensor's first weights by their keys and checks the eval-mode loss and a gradient on the first batch "
      "(1e-4) and the decoded tokens (the Transformer: the first token and the number of steps; from the second step "
      "on d2l's decoder adds position 0's encoding to every step it decodes, dimtensor the step's own).  "
      "PyTorch 2: d2l's code eager (default allocator and jemalloc) and with the model `torch.compile`'d.")
    w("")
    w("| case | threads | dimtensor ms | native ms | PyTorch 2 eager ms | ratio | jemalloc ms | ratio | "
      "torch.compile ms | ratio |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    pairs = {}
    for case, label in (("train_bahdanau", "Bahdanau, one epoch"), ("train_transformer", "Transformer, one epoch"),
                        ("decode_bahdanau", "Bahdanau, greedy decoding (10 steps)"),
                        ("decode_transformer", "Transformer, greedy decoding (10 steps)")):
        for t in threads:
            m = mine[t].get("dimtensor/" + case)
            n = native.get(t, {}).get("dimtensor/" + case)
            row = "| %s | %d | %s | %s |" % (label, t, fmt_ms(m), fmt_ms(n))
            for allocator in ("default", "jemalloc"):
                p = peers[(t, allocator)]["cases"].get("d2l_" + case, {}).get("ms")
                row += " %s | %s |" % (fmt_ms(p), ratio(p, m))
                pairs.setdefault(case, []).append(("%dT %s" % (t, allocator), p / m if p and m else None))
            p = peers[(t, "default")]["cases"].get("compiled_" + case, {}).get("ms")
            row += " %s | %s |" % (fmt_ms(p), ratio(p, m))
            if p:
                pairs.setdefault(case, []).append(("%dT compiled" % t, p / m if m else None))
            w(row)
    w("")
    checks_and_errors(w, peers[(threads[0], "default")]["checks"], peers)
    return pairs


HF_PEER = os.path.join(ROOT, "benchmarks", "peers", "torch2_hf.py")


def hf_section(args, threads, w):
    """Runs the transformers models' cases (BERT, GPT-2 decoding) and writes their section; returns the targets'
    pairs."""
    models = tempfile.mkdtemp(prefix="dimtensor-hf-models-")
    inputs = tempfile.mkdtemp(prefix="dimtensor-hf-")
    print("transformers models: writing them", file=sys.stderr)
    run([args.python, HF_PEER, "--make", models])
    mine, native, peers = {}, {}, {}
    for t in threads:
        env = {"DIMTENSOR_BENCH_HF": models}
        print("threads %d: dimtensor transformers models (default build)" % t, file=sys.stderr)
        mine[t] = model_bench_times(args.hf_bench, t, args.min_time, inputs if t == threads[0] else None, "all",
                                    env)[1]
        if args.hf_bench_native:
            print("threads %d: dimtensor transformers models (-march=native)" % t, file=sys.stderr)
            native[t] = model_bench_times(args.hf_bench_native, t, args.min_time, None, "all", env)[1]
        for allocator in ("default", "jemalloc"):
            print("threads %d: transformers (%s allocator)" % (t, allocator), file=sys.stderr)
            peers[(t, allocator)] = json.loads(run(
                [args.python, HF_PEER, "--models", models, "--inputs", inputs, "--threads", str(t), "--min-time",
                 str(args.min_time)], {"LD_PRELOAD": JEMALLOC} if allocator == "jemalloc" else {}))
    shutil.rmtree(models)
    info = peers[(threads[0], "default")]
    w("## Whole models from transformers: BERT and GPT-2")
    w("")
    w("bench_hf_models_bench against benchmarks/peers/torch2_hf.py (transformers %s): `models::bert` and "
      "`models::gpt2` against `BertModel` and `GPT2LMHeadModel`, both loaded from the same checkpoints, which "
      "transformers wrote (`save_pretrained` of its own initialization; `torch2_hf.py --make`).  BERT at bert-base "
      "size (vocabulary 30,522, hidden 768, 12 layers, 12 heads, intermediate 3072, GELU, dropout 0), batch 32 × 128 "
      "with an `attention_mask` of lengths drawn in [65, 128]; forward in eval mode without recording, forward + "
      "backward of sum(last_hidden_state * G).  GPT-2 at gpt2 size (vocabulary 50,257, 768 hidden, 12 layers): "
      "greedy decoding of 32 new tokens after a prompt of 32, batch 1, with the cache of keys and values on both "
      "sides (`generate(do_sample=False)`); the time per token is the call's over 32.  transformers runs its "
      "default attention (`sdpa`).  Before timing, the peer checks the last hidden state, the loss and the "
      "gradients of the first and the last layer's `intermediate.dense.weight` (1e-4 of their scale; GELU has no "
      "jump, so no float64 reference is needed) and that both decode the same 32 tokens." % info["transformers"])
    w("")
    w("| model | threads | dimtensor ms | native ms | transformers ms | ratio | jemalloc ms | ratio |")
    w("|---|---|---|---|---|---|---|---|")
    pairs = {}
    for case, label, per in (("bert_base_fwd", "BERT forward", 1), ("bert_base_fwdbwd", "BERT forward + backward", 1),
                             ("gpt2_greedy", "GPT-2 greedy decoding, per token", 32)):
        for t in threads:
            m = mine[t].get("dimtensor/" + case)
            n = native.get(t, {}).get("dimtensor/" + case)
            m, n = (x / per if x else None for x in (m, n))
            row = "| %s | %d | %s | %s |" % (label, t, fmt_ms(m), fmt_ms(n))
            for allocator in ("default", "jemalloc"):
                p = peers[(t, allocator)]["cases"].get(case, {}).get("ms")
                p = p / per if p else None
                row += " %s | %s |" % (fmt_ms(p), ratio(p, m))
                pairs.setdefault(case, []).append(("%dT %s" % (t, allocator), p / m if p and m else None))
            w(row)
    w("")
    checks_and_errors(w, info["checks"], peers)
    return pairs


MODEL_CASES = (("encoder_small", "small encoder (hidden 64, 2 blocks)"),
               ("encoder_base", "bert-base-sized encoder (768, 12 blocks, 12 heads, FFN 3072)"))


def profile_section(args, inputs, which, cases, w):
    """perf's top entries for each whole-model case, dimtensor's and PyTorch's (d2l's code)."""
    w("## Where the time goes (perf, 1 thread)")
    w("")
    w("`perf record` of one process per case (dimtensor's default build; PyTorch 2's d2l code, default "
      "allocator), self time, entries of at least 1%%; the process's setup (drawing the inputs, loading the "
      "weights, PyTorch's check against dimtensor's results) is in the figures, and the case runs for at least "
      "%g s." % args.min_time)
    w("")
    for model, label in MODEL_CASES:
        for kind, pass_label in (("fwd", "forward"), ("fwdbwd", "forward + backward")):
            if "dimtensor/%s_%s" % (model, kind) not in cases:
                continue
            env = {"DIMTENSOR_BENCH_THREADS": "1", "DIMTENSOR_BENCH_MODELS": which}
            # Google Benchmark's names end in /real_time: the filter must match that
            ours = perf_top([args.model_bench, "--benchmark_filter=dimtensor/%s_%s/" % (model, kind),
                             "--benchmark_min_time=%g" % args.min_time], env)
            theirs = perf_top([args.python, MODEL_PEER, "--inputs", inputs, "--threads", "1", "--min-time",
                               str(args.min_time), "--no-compile", "--only", "d2l_%s_%s" % (model, kind)], {})
            w("**%s, %s.**" % (label, pass_label))
            w("")
            w("| dimtensor | % | PyTorch 2 | % |")
            w("|---|---|---|---|")
            for i in range(max(len(ours), len(theirs))):
                a = ours[i] if i < len(ours) else ("", "")
                b = theirs[i] if i < len(theirs) else ("", "")
                w("| %s | %s | %s | %s |" % (a[1].replace("|", "\\|"), a[0], b[1].replace("|", "\\|"), b[0]))
            w("")


def models_section(args, threads, w):
    """Runs the whole-model cases and writes their section; returns the targets' pairs."""
    inputs = tempfile.mkdtemp(prefix="dimtensor-models-")
    which = args.models
    mine, native, peers = {}, {}, {}
    for t in threads:
        print("threads %d: dimtensor models (default build)" % t, file=sys.stderr)
        context, mine[t] = model_bench_times(args.model_bench, t, args.min_time,
                                             inputs if t == threads[0] else None, which)
        if args.model_bench_native:
            print("threads %d: dimtensor models (-march=native)" % t, file=sys.stderr)
            native[t] = model_bench_times(args.model_bench_native, t, args.min_time, None, which)[1]
        for allocator in ("default", "jemalloc"):
            print("threads %d: PyTorch 2 models (%s allocator)" % (t, allocator), file=sys.stderr)
            peers[(t, allocator)] = model_peer_times(args.python, t, args.min_time, inputs, allocator)
    info = peers[(threads[0], "default")]
    w("## Whole models: d2l's Transformer encoder")
    w("")
    w("bench_model_bench against benchmarks/peers/torch2_models.py: d2l's `TransformerEncoder` (vocabulary 1,000, "
      "dropout 0), batch 32 × 128 tokens with valid lengths drawn in [65, 128], dimtensor's weights loaded into "
      "PyTorch by their keys.  Forward: eval mode without recording; forward + backward: every parameter's gradient "
      "of sum(out * G).  Before timing, the peer checks its output, loss and the gradients of every block's "
      "`ffn.dense1.weight` against dimtensor's (1e-4 of their scale; largest differences below).  Where float "
      "rounding alone moves a gradient by more than that (bert-base: through ReLU, whose derivative jumps at 0, "
      "both libraries' float gradients are about 1e-3 from float64's in norm while their outputs agree with it to "
      "2e-6), both float gradients are compared with PyTorch's in float64, the blocks' gradients together: "
      "dimtensor's error in norm, |g - g64| / |g64| (`_vs_f64_norm`), may be at most 1.5 times PyTorch's; the "
      "worst element's (`_vs_f64_max`) and the largest ratio of one block's errors (`_worst_block`) are "
      "reported.  Peers: "
      "d2l's code in PyTorch 2 eager; `nn.TransformerEncoder` (post-norm, ReLU, the lengths as "
      "`src_key_padding_mask`, the same weights, zero attention biases; its fast path runs the forward) around "
      "d2l's embedding; `torch.compile` of d2l's code.  dimtensor: the build a user gets (no `-march`; the runtime's "
      "kernels for this CPU's instruction set, %s), and `-march=native` beside it.  PyTorch 2 with its default "
      "allocator and with jemalloc (`LD_PRELOAD=%s`): ratio = PyTorch's time / dimtensor's default build's." %
      (context.get("dimtensor_cpu_isa", "?"), JEMALLOC))
    w("")
    w("BLAS: dimtensor %s; PyTorch 2 %s (%s), ATen's CPU kernels %s." %
      (context.get("blas", "?"), info.get("blas", "?"), info.get("blas_kernel") or "no description",
       info.get("cpu_capability", "?")))
    w("")
    w("| model | pass | threads | dimtensor ms | native ms | d2l eager ms | ratio | jemalloc ms | ratio | "
      "nn.TransformerEncoder ms | ratio | jemalloc ms | ratio | torch.compile ms | ratio |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    pairs = {}
    for model, label in MODEL_CASES:
        for kind, pass_label in (("fwd", "forward"), ("fwdbwd", "forward + backward")):
            for t in threads:
                m = mine[t].get("dimtensor/%s_%s" % (model, kind))
                if m is None:
                    continue
                n = native.get(t, {}).get("dimtensor/%s_%s" % (model, kind))
                row = "| %s | %s | %d | %s | %s |" % (label, pass_label, t, fmt_ms(m), fmt_ms(n))
                for peer in ("d2l", "nn", "compiled"):
                    for allocator in (("default", "jemalloc") if peer != "compiled" else ("default",)):
                        p = peers[(t, allocator)]["cases"].get("%s_%s_%s" % (peer, model, kind), {}).get("ms")
                        row += " %s | %s |" % (fmt_ms(p), ratio(p, m))
                        pairs.setdefault((model, kind, peer), []).append(("%dT %s" % (t, allocator),
                                                                           p / m if p and m else None))
                w(row)
    w("")
    w("Checks (largest difference over the value's scale): " + "; ".join(
        "%s: %s" % (k, ", ".join("%s %.1e" % (a, b) for a, b in v.items()))
        for k, v in info["checks"].items() if k.startswith("encoder")) + ".")
    errors = sorted(set(e for p in peers.values() for e in p["errors"]))
    if errors:
        w("")
        w("Reported by the peer: " + "; ".join(errors) + ".")
    w("")
    w("## Activations written by the user, forward and backward")
    w("")
    w("GELU as users write it, `x * 0.5 * (erf(x / √2) + 1)`, and swish, `x * sigmoid(x)`, over [4096, 3072] floats "
      "(a bert-base FFN's hidden layer for 32 × 128 tokens), forward and the backward from a given gradient, against "
      "the same functions built in (`dt::gelu`, `dt::silu`; `F.gelu`, `F.silu`).  dimtensor differentiates the "
      "composite as one program, block by block in one pass (autograd/program.hpp); PyTorch 2 eager op by op.")
    w("")
    w("| activation | threads | dimtensor composite ms | dimtensor built-in ms | composite / built-in | PyTorch 2 "
      "composite ms | ratio | PyTorch 2 built-in ms | ratio (built-in) |")
    w("|---|---|---|---|---|---|---|---|---|")
    for comp, builtin, label in (("gelu_composite", "gelu_builtin", "GELU"), ("swish_composite", "silu_builtin",
                                                                              "swish / SiLU")):
        for t in threads:
            mc = mine[t].get("dimtensor/%s_fwdbwd" % comp)
            mb = mine[t].get("dimtensor/%s_fwdbwd" % builtin)
            pc = peers[(t, "default")]["cases"].get("%s_fwdbwd" % comp, {}).get("ms")
            pb = peers[(t, "default")]["cases"].get("%s_fwdbwd" % builtin, {}).get("ms")
            w("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                label, t, fmt_ms(mc), fmt_ms(mb), "%.2f" % (mc / mb) if mc and mb else "—", fmt_ms(pc),
                ratio(pc, mc), fmt_ms(pb), ratio(pb, mb)))
            pairs.setdefault(("activation", comp, "own"), []).append(("%s %dT" % (label, t),
                                                                       mb / mc if mc and mb else None))
    w("")
    if args.profile:
        profile_section(args, inputs, which, set(mine[threads[0]]), w)
    return pairs, info


def old_new_section(args, threads, w):
    """The attention suite's dimtensor cases, the old build (--bench-old) against this one, in one run: per
    thread count, each binary twice in alternating order, the faster of its two times per case."""
    times = {}
    for t in threads:
        for rep in range(2):
            order = (("new", args.bench), ("old", args.bench_old))
            for which, bench in (order if rep == 0 else order[::-1]):
                print("threads %d: old against new, %s (%d of 2)" % (t, which, rep + 1), file=sys.stderr)
                out = os.path.join(tempfile.mkdtemp(prefix="dimtensor-old-new-"), "bench.json")
                run([bench, "--benchmark_filter=^dimtensor/", "--benchmark_out=" + out,
                     "--benchmark_out_format=json", "--benchmark_min_time=%g" % args.min_time],
                    {"DIMTENSOR_BENCH_THREADS": str(t)})
                with open(out) as f:
                    data = json.load(f)
                for b in data["benchmarks"]:
                    name = b["name"].replace("/real_time", "").replace("dimtensor/", "")
                    unit = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b.get("time_unit", "ms")]
                    key = (name, t, which)
                    times[key] = min(times.get(key, float("inf")), b["real_time"] * unit)
    w("## The attention suite against the build before the whole-model work")
    w("")
    w("bench_suite_bench's dimtensor cases built from %s (`--bench-old`, the same flags) against this commit's, in "
      "one run: at each thread count each binary ran twice, in alternating order, and each keeps the faster of its "
      "two times.  Ratio = old time / new time (below 1: the new build is slower)." % args.bench_old_label)
    w("")
    w("| case | threads | old ms | new ms | ratio |")
    w("|---|---|---|---|---|")
    pairs = []
    names = sorted({k[0] for k in times}, key=lambda n: [k[0] for k in times].index(n))
    for name in names:
        for t in threads:
            old, new = times.get((name, t, "old")), times.get((name, t, "new"))
            if old is None or new is None:
                continue
            w("| %s | %d | %s | %s | %s |" % (name, t, fmt_ms(old), fmt_ms(new), ratio(old, new)))
            pairs.append(("%s %dT" % (name, t), old / new))
    w("")
    return pairs


def machine():
    model = platform.processor() or "unknown"
    try:
        for line in run(["lscpu"]).splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return model, os.cpu_count()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True, help="bench_suite_bench")
    parser.add_argument("--python", required=True, help="an interpreter with torch 2 and numpy")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--min-time", type=float, default=2.0, help="seconds per case and library")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    parser.add_argument("--model-bench", help="bench_model_bench of the default build")
    parser.add_argument("--model-bench-native", help="bench_model_bench built with -march=native")
    parser.add_argument("--models", default="all", help="all, or small (leaves out the bert-base-sized encoder)")
    parser.add_argument("--profile", action="store_true", help="perf profiles of the whole-model cases")
    parser.add_argument("--translation-bench", help="bench_translation_bench of the default build")
    parser.add_argument("--translation-bench-native", help="bench_translation_bench built with -march=native")
    parser.add_argument("--hf-bench", help="bench_hf_models_bench of the default build (transformers' BERT and GPT-2)")
    parser.add_argument("--hf-bench-native", help="bench_hf_models_bench built with -march=native")
    parser.add_argument("--bench-old", help="bench_suite_bench built from an earlier commit, timed against --bench")
    parser.add_argument("--bench-old-label", default="an earlier commit", help="what --bench-old was built from")
    args = parser.parse_args()
    os.environ.update(machine_env())
    threads = [int(t) for t in args.threads.split(",")]
    inputs = tempfile.mkdtemp(prefix="dimtensor-suite-")

    results = {}
    context = None
    for t in threads:
        print("threads %d: dimtensor and libtorch" % t, file=sys.stderr)
        context, mine = bench_times(args.bench, t, args.min_time, inputs)
        print("threads %d: PyTorch 2" % t, file=sys.stderr)
        theirs = peer_times(args.python, t, args.min_time, inputs)
        results[t] = (mine, theirs)
    jemalloc = {}
    if os.path.exists(JEMALLOC):
        for t in threads:
            print("threads %d: PyTorch 2 with jemalloc" % t, file=sys.stderr)
            jemalloc[t] = peer_times(args.python, t, args.min_time, inputs, "jemalloc")

    print("peak memory", file=sys.stderr)
    memory = {}
    for case, peer_case in (("dot_fwd_1d", "sdpa_fwd_1d"), ("dot_fwd_2d", "sdpa_fwd_2d"),
                            ("masked_softmax", "masked_softmax"), ("mha_fwd", "mha_fwd"),
                            ("mha_fwd_d2l", "mha_d2l_fwd"), ("additive_fwd", "additive_fwd")):
        memory[case] = (bench_memory(args.bench, case), peer_memory(args.python, inputs, peer_case),
                        peer_memory(args.python, inputs, peer_case.replace("sdpa", "d2l")))
    has_libtorch = any(k.startswith("libtorch/") for k in results[threads[0]][0])
    libtorch_additive_mib = bench_memory(args.bench, "libtorch_additive_fwd") if has_libtorch else None
    sweep = {}
    for L in SWEEP:
        name = "sweep/%d" % L
        sweep[L] = {"dimtensor_ms": results[1][0].get("dimtensor/" + name, {}).get("ms"),
                    "torch_ms": results[1][1]["cases"].get(name, {}).get("ms"),
                    "dimtensor_mib": bench_memory(args.bench, name),
                    "torch_mib": peer_memory(args.python, inputs, name)}

    torch_info = results[threads[0]][1]
    model, cpus = machine()
    compiler = run(["c++", "--version"]).splitlines()[0]
    commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    lines = []
    w = lines.append
    w("# Performance: attention against PyTorch 2 and libtorch")
    w("")
    w("Generated by `scripts/performance.py` (do not edit by hand) on %s from commit %s:" %
      (datetime.date.today().isoformat(), commit))
    w("")
    w("    python3 scripts/performance.py " +
      " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT + os.sep) else a for a in sys.argv[1:]))
    w("")
    w("- Machine: %s, %d cores; threads as each table says (`DIMTENSOR_BENCH_THREADS` for dimtensor, "
      "`torch.set_num_threads` / `torch::set_num_threads` for the peers)." % (model, cpus))
    w("- dimtensor: %s, `-O3`, %s build (runtime kernels: %s), BLAS %s (`DIMTENSOR_BLAS` at configure time; "
      "`OPENBLAS_CORETYPE`=%s from scripts/env.sh), one BLAS thread per OpenMP thread." %
      (compiler, context.get("dimtensor_build", "?"), context.get("dimtensor_cpu_isa", "?"), context.get("blas", "?"),
       os.environ.get("OPENBLAS_CORETYPE", "unset")))
    w("- PyTorch 2: %s from PyPI, BLAS %s, CPU kernels %s (`torch.backends.cpu.get_cpu_capability()`)." %
      (torch_info["torch"], torch_info["blas"], torch_info["cpu_capability"]))
    if has_libtorch:
        w("- libtorch 1.13 (Debian's libtorch-dev): d2l's code in C++ (benchmarks/d2l_libtorch.hpp), BLAS: the "
          "same OpenBLAS.")
    else:
        w("- libtorch 1.13: not in this run (the benchmark was built without it).")
    w("- Times: dimtensor and libtorch, Google Benchmark's time per call over at least %g s; PyTorch 2, the median "
      "of repeated calls over at least %g s.  Ratio = the peer's time / dimtensor's (above 1: dimtensor is "
      "faster).  Nothing else ran on the machine." % (args.min_time, args.min_time))
    w("- Inputs: bench_suite_bench draws them and writes them as .npy; the PyTorch 2 script reads the same files and "
      "checks its outputs against dimtensor's (1e-4) before timing.  Valid lengths are drawn in [1, 512].")
    w("")
    w("## Masked scaled dot-product attention, B16 · Q512 · K512 · d64")
    w("")
    w("PyTorch 2 fused: `scaled_dot_product_attention` with the lengths as a boolean mask; d2l: "
      "`DotProductAttention` (bmm, masked_softmax, bmm) as the book writes it.  Forward in eval mode without "
      "recording; forward + backward: the gradients of q, k and v of sum(out * G).  GFLOP/s counts the products "
      "over valid keys (4·d per query row and valid key, ×3.5 with the backward); the SGEMM rate is OpenBLAS's "
      "on 1024³ at the same threads, measured in the same run.")
    w("")
    header = "| case | threads | dimtensor ms | PyTorch 2 fused ms | ratio | PyTorch 2 d2l ms | ratio |"
    sep = "|---|---|---|---|---|---|---|"
    if has_libtorch:
        header += " libtorch 1.13 d2l ms | ratio |"
        sep += "---|---|"
    header += " dimtensor GFLOP/s | of SGEMM |"
    sep += "---|---|"
    w(header)
    w(sep)
    for case, label in (("dot_fwd_1d", "forward, 1-D lengths"), ("dot_fwd_2d", "forward, 2-D lengths"),
                        ("dot_fwdbwd_1d", "forward + backward, 1-D"), ("dot_fwdbwd_2d", "forward + backward, 2-D")):
        for t in threads:
            mine, theirs = results[t]
            m = mine.get("dimtensor/" + case, {})
            sdpa = theirs["cases"].get(case.replace("dot", "sdpa"), {}).get("ms")
            d2l = theirs["cases"].get(case.replace("dot", "d2l"), {}).get("ms")
            sgemm = mine.get("blas/sgemm", {}).get("gflops")
            row = "| %s | %d | %s | %s | %s | %s | %s |" % (label, t, fmt_ms(m.get("ms")), fmt_ms(sdpa),
                                                              ratio(sdpa, m.get("ms")), fmt_ms(d2l),
                                                              ratio(d2l, m.get("ms")))
            if has_libtorch:
                lt = mine.get("libtorch/" + case, {}).get("ms")
                row += " %s | %s |" % (fmt_ms(lt), ratio(lt, m.get("ms")))
            g = m.get("gflops")
            row += " %s | %s |" % ("%.1f" % g if g else "—",
                                   "%.0f%% of %.0f" % (100 * g / sgemm, sgemm) if g and sgemm else "—")
            w(row)
    w("")
    w("Extra peak memory of one forward call (resident set added at the peak, a fresh process each, 1 thread):")
    w("")
    w("| case | dimtensor MiB | PyTorch 2 fused MiB | PyTorch 2 d2l MiB |")
    w("|---|---|---|---|")
    for case, label in (("dot_fwd_1d", "forward, 1-D lengths"), ("dot_fwd_2d", "forward, 2-D lengths")):
        a, b, c = memory[case]
        w("| %s | %.1f | %.1f | %.1f |" % (label, a, b, c))
    w("")
    w("## Masked softmax, [64, 512, 512], 1-D lengths")
    w("")
    w("dimtensor's `masked_softmax<KVPairs>` against d2l's `masked_softmax` in PyTorch 2 (which writes -1e6 into its "
      "input, so each call is given a copy; the copy is in its time)%s." %
      (" and in libtorch 1.13" if has_libtorch else ""))
    w("")
    w("| threads | dimtensor ms | PyTorch 2 d2l ms | ratio |%s" % (" libtorch 1.13 ms | ratio |" if has_libtorch else ""))
    w("|---|---|---|---|%s" % ("---|---|" if has_libtorch else ""))
    for t in threads:
        mine, theirs = results[t]
        m = mine.get("dimtensor/masked_softmax", {}).get("ms")
        p = theirs["cases"].get("masked_softmax", {}).get("ms")
        row = "| %d | %s | %s | %s |" % (t, fmt_ms(m), fmt_ms(p), ratio(p, m))
        if has_libtorch:
            lt = mine.get("libtorch/masked_softmax", {}).get("ms")
            row += " %s | %s |" % (fmt_ms(lt), ratio(lt, m))
        w(row)
    a, b, c = memory["masked_softmax"]
    w("")
    w("Extra peak memory: dimtensor %.1f MiB, PyTorch 2 %.1f MiB (with its copy)." % (a, b))
    w("")
    w("## Multi-head attention, B16 · L512 · 8 heads × 64 (hidden 512), 1-D lengths")
    w("")
    w("dimtensor's `nn::multi_head_attention` in its named form (heads a dim of their own) and in d2l's form "
      "(`forward_d2l`: transpose_qkv), eval mode; PyTorch 2's `nn.MultiheadAttention(512, 8, bias=False, "
      "batch_first=True)` with `need_weights=False` and the lengths as `key_padding_mask`, the same projections "
      "around `scaled_dot_product_attention`, and d2l's `MultiHeadAttention`; all with dimtensor's weights (the "
      "outputs are checked equal, 1e-4).  Forward + backward: every weight's and both inputs' gradients of "
      "sum(out * G).")
    w("")
    w("| case | threads | dimtensor named ms | dimtensor d2l form ms | nn.MultiheadAttention ms | ratio (named, d2l form) "
      "| SDPA-based ms | ratio (named) | PyTorch 2 d2l ms | ratio (named) |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    for case, label in (("fwd", "forward"), ("fwdbwd", "forward + backward")):
        for t in threads:
            mine, theirs = results[t]
            named = mine.get("dimtensor/mha_" + case, {}).get("ms")
            d2lf = mine.get("dimtensor/mha_%s_d2l" % case, {}).get("ms")
            module = theirs["cases"].get("mha_" + case, {}).get("ms")
            sdpa = theirs["cases"].get("mha_sdpa_" + case, {}).get("ms")
            d2l = theirs["cases"].get("mha_d2l_" + case, {}).get("ms")
            w("| %s | %d | %s | %s | %s | %s, %s | %s | %s | %s | %s |" % (
                label, t, fmt_ms(named), fmt_ms(d2lf), fmt_ms(module), ratio(module, named), ratio(module, d2lf),
                fmt_ms(sdpa), ratio(sdpa, named), fmt_ms(d2l), ratio(d2l, named)))
    w("")
    w("Extra peak memory of one forward call: dimtensor named %.1f MiB, d2l form %.1f MiB; nn.MultiheadAttention "
      "%.1f MiB; PyTorch 2 d2l %.1f MiB." % (memory["mha_fwd"][0], memory["mha_fwd_d2l"][0], memory["mha_fwd"][1],
                                            memory["mha_fwd_d2l"][1]))
    w("")
    w("## Additive attention, B16 · Q256 · K256, features 64, hidden 128, 1-D lengths")
    w("")
    w("dimtensor's `nn::additive_attention` (fused scores on the CPU: no [Batch, Queries, KV, Hidden] features) "
      "against d2l's `AdditiveAttention` (which forms them: 512 MiB) in PyTorch 2%s, dimtensor's weights, eval "
      "mode." % (" and in libtorch 1.13" if has_libtorch else ""))
    w("")
    w("| case | threads | dimtensor ms | PyTorch 2 d2l ms | ratio |%s" %
      (" libtorch 1.13 d2l ms | ratio |" if has_libtorch else ""))
    w("|---|---|---|---|---|%s" % ("---|---|" if has_libtorch else ""))
    for case, label in (("additive_fwd", "forward"), ("additive_fwdbwd", "forward + backward")):
        for t in threads:
            mine, theirs = results[t]
            m = mine.get("dimtensor/" + case, {}).get("ms")
            p2 = theirs["cases"].get(case, {}).get("ms")
            row = "| %s | %d | %s | %s | %s |" % (label, t, fmt_ms(m), fmt_ms(p2), ratio(p2, m))
            if has_libtorch:
                lt = mine.get("libtorch/" + case, {}).get("ms")
                row += " %s | %s |" % (fmt_ms(lt), ratio(lt, m))
            w(row)
    w("")
    w("Extra peak memory of one forward call: dimtensor %.1f MiB; PyTorch 2 d2l %.1f MiB%s." % (
        memory["additive_fwd"][0], memory["additive_fwd"][1],
        "; libtorch 1.13 d2l %.1f MiB" % libtorch_additive_mib if libtorch_additive_mib is not None else ""))
    w("")
    w("## Nadaraya–Watson and the book's toy sizes (per-call overhead), µs")
    w("")
    w("Nadaraya–Watson: d2l's `NWKernelRegression.forward` (a learned width w), 50 test points, keys and values tiled "
      "[50, n_train] as d2l tiles them.  Toy sizes: the book's own calls (`masked_softmax(torch.rand(2, 2, 4), "
      "torch.tensor([2, 3]))`, `AdditiveAttention` on queries (2, 1, 20) and keys (2, 10, 2), "
      "`DotProductAttention` on queries (2, 1, 2), `MultiHeadAttention(100, 5)` on (2, 4, 100) and (2, 6, 100)), "
      "forward in eval mode.  PyTorch 2 runs d2l's code.")
    w("")
    w("| case | threads | dimtensor µs | PyTorch 2 µs | ratio |")
    w("|---|---|---|---|---|")
    for case, label in (("nw_50", "Nadaraya–Watson, 50 training points"),
                        ("nw_4096", "Nadaraya–Watson, 4,096 training points"),
                        ("toy_masked_softmax", "masked_softmax (2, 2, 4)"), ("toy_additive", "AdditiveAttention toy"),
                        ("toy_dot", "DotProductAttention toy"), ("toy_mha", "MultiHeadAttention(100, 5) toy")):
        for t in threads:
            mine, theirs = results[t]
            m = mine.get("dimtensor/" + case, {}).get("ms")
            p2 = theirs["cases"].get(case, {}).get("ms")
            w("| %s | %d | %s | %s | %s |" % (label, t, fmt_ms(m * 1e3 if m else None),
                                              fmt_ms(p2 * 1e3 if p2 else None), ratio(p2, m)))
    w("")
    for t in threads:
        mine, theirs = results[t]
        xwt = mine.get("blas/toy_projections_xwt", {}).get("ms")
        wt = mine.get("blas/toy_projections_wt", {}).get("ms")
        mha = mine.get("dimtensor/toy_mha", {}).get("ms")
        p2 = theirs["cases"].get("toy_mha", {}).get("ms")
        if not (xwt and wt and mha and p2):
            continue
        w("Where the toy multi-head attention's time goes, %d thread%s: its four 100×100 projections (8, 12, 12 and "
          "8 rows) alone, as OpenBLAS calls, take %s µs as x·Wᵀ on the [Out, In] weight that PyTorch and "
          "`nn::linear` keep (%.0f%% of dimtensor's %s µs), and %s µs on Wᵀ stored [In, Out].  Ten times PyTorch "
          "2's %s µs leaves %s µs for the whole call." % (
              t, "" if t == 1 else "s", fmt_ms(xwt * 1e3), 100 * xwt / mha, fmt_ms(mha * 1e3), fmt_ms(wt * 1e3),
              fmt_ms(p2 * 1e3), fmt_ms(p2 * 1e3 / 10)))
        w("")
    fused_cases = (("dot_fwd_1d", "sdpa_fwd_1d"), ("dot_fwd_2d", "sdpa_fwd_2d"), ("dot_fwdbwd_1d", "sdpa_fwdbwd_1d"),
                   ("dot_fwdbwd_2d", "sdpa_fwdbwd_2d"), ("masked_softmax", "masked_softmax"), ("mha_fwd", "mha_fwd"),
                   ("mha_fwdbwd", "mha_fwdbwd"))
    if jemalloc:
        w("## PyTorch 2's fused path with a caching allocator")
        w("")
        w("The same PyTorch 2 script again with jemalloc (`LD_PRELOAD=%s`), which keeps freed pages as many "
          "PyTorch deployments do; dimtensor's times are those above (its default build)." % JEMALLOC)
        w("")
        w("| case | threads | dimtensor ms | PyTorch 2 ms | ratio | PyTorch 2 + jemalloc ms | ratio |")
        w("|---|---|---|---|---|---|---|")
        for case, peer_case in fused_cases:
            for t in threads:
                m = results[t][0].get("dimtensor/" + case, {}).get("ms")
                p = results[t][1]["cases"].get(peer_case, {}).get("ms")
                j = jemalloc[t]["cases"].get(peer_case, {}).get("ms")
                w("| %s | %d | %s | %s | %s | %s | %s |" % (case, t, fmt_ms(m), fmt_ms(p), ratio(p, m), fmt_ms(j),
                                                           ratio(j, m)))
        w("")
    w("## Length sweep: dot-product attention without lengths, B2, Q = K = L, d64, forward, 1 thread")
    w("")
    w("![time and memory against length](performance_sweep.svg)")
    w("")
    w("| L | dimtensor ms | PyTorch 2 SDPA ms | ratio | dimtensor GFLOP/s | dimtensor extra MiB | PyTorch 2 extra MiB |")
    w("|---|---|---|---|---|---|---|")
    for L in SWEEP:
        s = sweep[L]
        g = results[1][0].get("dimtensor/sweep/%d" % L, {}).get("gflops")
        w("| %d | %s | %s | %s | %s | %.1f | %.1f |" % (L, fmt_ms(s["dimtensor_ms"]), fmt_ms(s["torch_ms"]),
                                                      ratio(s["torch_ms"], s["dimtensor_ms"]),
                                                      "%.1f" % g if g else "—", s["dimtensor_mib"], s["torch_mib"]))
    w("")
    w("The [Queries, KV] matrix of L = 8192 alone would be %d MiB per batch entry; neither library forms it." %
      (8192 * 8192 * 4 // (1 << 20)))
    w("")
    model_pairs = None
    if args.model_bench:
        model_pairs, _ = models_section(args, threads, w)
    translation_pairs = translation_section(args, threads, w) if args.translation_bench else None
    hf_pairs = hf_section(args, threads, w) if args.hf_bench else None
    old_new_pairs = old_new_section(args, threads, w) if args.bench_old else None
    w("## Targets")
    w("")
    w("Each target of the attention and whole-model issues, from the figures above (holds / missed, and by how "
      "much).")
    w("")
    w("| target | figures | holds |")
    w("|---|---|---|")

    def target(name, pairs, need):
        """pairs: (label, value) with value a ratio (or fraction); need: the least value that holds."""
        values = [(label, v) for label, v in pairs if v is not None]
        if not values:
            return
        worst = min(v for _, v in values)
        text = ", ".join("%s %.2f" % (label, v) for label, v in values)
        w("| %s | %s | %s |" % (name, text, "yes" if worst >= need else "no (worst %.2f, needs %.2f)" % (worst, need)))

    def r(t, mine_case, peer_case, peer="torch2"):
        mine, theirs = results[t]
        m = mine.get("dimtensor/" + mine_case, {}).get("ms")
        p = (theirs["cases"].get(peer_case, {}).get("ms") if peer == "torch2"
             else mine.get("libtorch/" + peer_case, {}).get("ms"))
        return p / m if p and m else None

    for kind in ("fwd", "fwdbwd"):
        target("dot-product attention %s ≥ 1.0x PyTorch 2 SDPA (1-D, 2-D lengths; per thread count)" %
               ("forward" if kind == "fwd" else "forward + backward"),
               [("%s %dT" % (l, t), r(t, "dot_%s_%s" % (kind, l), "sdpa_%s_%s" % (kind, l)))
                for l in ("1d", "2d") for t in threads], 1.0)
    target("dot-product attention ≥ 60% of the SGEMM rate (useful GFLOP/s)",
           [("%s %dT" % (c, t), (results[t][0].get("dimtensor/" + c, {}).get("gflops") or 0) /
             results[t][0]["blas/sgemm"]["gflops"]) for c in ("dot_fwd_1d", "dot_fwd_2d", "dot_fwdbwd_1d",
                                                            "dot_fwdbwd_2d") for t in threads
            if "blas/sgemm" in results[t][0]], 0.6)
    target("dot-product attention extra memory ≤ 2x SDPA's (SDPA MiB / dimtensor MiB ≥ 0.5)",
           [(c, memory[c][1] / memory[c][0]) for c in ("dot_fwd_1d", "dot_fwd_2d") if memory[c][0]] +
           [("sweep %d" % L, sweep[L]["torch_mib"] / sweep[L]["dimtensor_mib"]) for L in SWEEP
            if sweep[L]["dimtensor_mib"]], 0.5)
    growth = [(("%d→%d" % (a, b)), sweep[a]["dimtensor_mib"] * (b / a) / sweep[b]["dimtensor_mib"])
              for a, b in zip(SWEEP[3:], SWEEP[4:]) if sweep[b]["dimtensor_mib"]]
    target("extra memory linear in length (L doubled: at most doubled; (2·MiB(L)) / MiB(2L) ≥ 1)", growth, 1.0)
    for kind in ("fwd", "fwdbwd"):
        target("multi-head attention %s ≥ 1.0x nn.MultiheadAttention (named, d2l form)" %
               ("forward" if kind == "fwd" else "forward + backward"),
               [("%s %dT" % (form, t), r(t, "mha_%s%s" % (kind, suffix), "mha_" + kind))
                for form, suffix in (("named", ""), ("d2l form", "_d2l")) for t in threads], 1.0)
    if has_libtorch:
        target("additive attention ≥ 10x libtorch 1.13's d2l formulation",
               [("%s %dT" % (k, t), r(t, "additive_" + k, "additive_" + k, "libtorch"))
                for k in ("fwd", "fwdbwd") for t in threads], 10.0)
        if libtorch_additive_mib:
            target("additive attention extra memory ≤ 1/10 of libtorch's (libtorch MiB / dimtensor MiB ≥ 10)",
                   [("forward", libtorch_additive_mib / memory["additive_fwd"][0])], 10.0)
    target("masked softmax ≥ 2x PyTorch 2 (d2l's masked_softmax)",
           [("%dT" % t, r(t, "masked_softmax", "masked_softmax")) for t in threads], 2.0)
    target("the book's toy sizes ≥ 10x PyTorch 2",
           [("%s %dT" % (c.replace("toy_", ""), t), r(t, c, c)) for c in ("toy_masked_softmax", "toy_additive",
                                                                           "toy_dot", "toy_mha") for t in threads],
           10.0)
    target("unmasked dot-product attention at 2,048–8,192 keys ≥ 1.2x PyTorch 2 SDPA (the sweep, 1 thread)",
           [("L %d" % L, sweep[L]["torch_ms"] / sweep[L]["dimtensor_ms"]) for L in SWEEP[4:]
            if sweep[L]["torch_ms"] and sweep[L]["dimtensor_ms"]], 1.2)
    target("every other attention case ≥ 1.5x PyTorch 2's fused path (SDPA, nn.MultiheadAttention; d2l's "
           "masked_softmax, which has none)",
           [("%s %dT" % (c, t), r(t, c, pc)) for c, pc in fused_cases for t in threads] +
           [("%s %dT jemalloc" % (c, t), jemalloc[t]["cases"][pc]["ms"] /
             results[t][0]["dimtensor/" + c]["ms"]) for c, pc in fused_cases for t in jemalloc
            if "dimtensor/" + c in results[t][0] and pc in jemalloc[t]["cases"]], 1.5)
    if old_new_pairs:
        target("nothing in the attention suite slower than before (old time / new time ≥ 0.95, the machine's noise "
               "allowed)", old_new_pairs, 0.95)
    if model_pairs:
        for model, need_fwd, need_bwd in (("encoder_base", 1.0, 1.0), ("encoder_small", 2.0, 1.5)):
            for kind, need in (("fwd", need_fwd), ("fwdbwd", need_bwd)):
                if (model, kind, "d2l") in model_pairs:
                    target("%s %s ≥ %.1fx PyTorch 2 eager (d2l's code; nn.TransformerEncoder beside)" %
                           (model, kind, need), model_pairs[(model, kind, "d2l")] +
                           [("nn " + l, v) for l, v in model_pairs[(model, kind, "nn")]], need)
        if ("encoder_base", "fwd", "compiled") in model_pairs:
            target("encoder_base forward ≥ 1.0x torch.compile", model_pairs[("encoder_base", "fwd", "compiled")], 1.0)
        for comp in ("gelu_composite", "swish_composite"):
            target("a composite activation within 1.5x of the built-in (built-in time / composite time ≥ 0.67)",
                   model_pairs.get(("activation", comp, "own"), []), 1.0 / 1.5)
    if translation_pairs:
        for case, need in (("train_bahdanau", 2.0), ("train_transformer", 2.0), ("decode_bahdanau", 3.0),
                           ("decode_transformer", 3.0)):
            target("%s ≥ %.0fx PyTorch 2 (eager with both allocators, and compiled)" % (case, need),
                   translation_pairs.get(case, []), need)
    if hf_pairs:
        for case, label in (("bert_base_fwd", "BERT (bert-base) forward"),
                            ("bert_base_fwdbwd", "BERT (bert-base) forward + backward")):
            target("%s ≥ 1.0x transformers in PyTorch 2 eager (both allocators)" % label, hf_pairs.get(case, []), 1.0)
        target("GPT-2 greedy decoding ≥ 1.0x transformers' generate, per token (both allocators; a target of this "
               "suite's own, not the issue's)", hf_pairs.get("gpt2_greedy", []), 1.0)
    w("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    svg_plot(os.path.join(os.path.dirname(args.out), "performance_sweep.svg"), sweep)
    print("wrote %s" % args.out, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
