"""The PyTorch 2 side of bench_hf_models_bench (scripts/performance.py runs
both): transformers' BertModel and GPT2LMHeadModel against dimtensor's
models::bert and models::gpt2, loaded from the same checkpoints.

  --make DIR    writes the models (bert/, gpt2/: config.json and
                model.safetensors by save_pretrained, the weights drawn by
                transformers' own initialization from a fixed seed) and
                their inputs (bert/input_ids.npy, attention_mask.npy with
                lengths 65-128 of 128, G.npy; gpt2/prompt.npy, 1 × 32)
  --inputs OUT  reads what the models' folder (--models DIR) and
                bench_hf_models_bench (DIMTENSOR_BENCH_INPUTS=OUT) hold,
                checks that transformers computes the same (the last hidden
                state, the loss sum(last_hidden_state * G) and the
                gradients of the first and the last layer's
                intermediate.dense.weight within 1e-4 of their scale; the
                32 decoded tokens equal), then times:

  bert_base_fwd     BertModel (attn_implementation "sdpa", transformers'
                    default) under no_grad, eval mode
  bert_base_fwdbwd  forward and backward of sum(last_hidden_state * G),
                    dropout 0
  gpt2_greedy       generate(do_sample=False, max_new_tokens=32) with its
                    cache, no end token

Prints one JSON object: versions, threads, per case the median time in
milliseconds, and what each check found.  Needs torch and transformers
(PyPI) and numpy; it is never run by the tests.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

from peer_common import median_ms

BATCH, TOKENS, PROMPT, NEW_TOKENS = 32, 128, 32, 32


def make(folder):
    import transformers
    torch.manual_seed(20261207)
    rng = np.random.RandomState(20261207)
    bert = transformers.BertModel(transformers.BertConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    bert.save_pretrained(os.path.join(folder, "bert"))
    ids = rng.randint(1, bert.config.vocab_size, size=(BATCH, TOKENS)).astype(np.int64)
    lengths = rng.randint(65, TOKENS + 1, size=BATCH)
    mask = (np.arange(TOKENS)[None, :] < lengths[:, None]).astype(np.int64)
    np.save(os.path.join(folder, "bert", "input_ids.npy"), ids)
    np.save(os.path.join(folder, "bert", "attention_mask.npy"), mask)
    np.save(os.path.join(folder, "bert", "G.npy"),
            rng.standard_normal((BATCH, TOKENS, bert.config.hidden_size)).astype(np.float32))
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(bos_token_id=None, eos_token_id=None,
                                                                 pad_token_id=None))
    gpt2.save_pretrained(os.path.join(folder, "gpt2"))
    np.save(os.path.join(folder, "gpt2", "prompt.npy"),
            rng.randint(0, gpt2.config.vocab_size, size=(1, PROMPT)).astype(np.int64))


def scale_of(t):
    return max(1.0, float(t.abs().max()))


def bert_cases(args, result):
    import transformers
    d = os.path.join(args.models, "bert")
    net = transformers.BertModel.from_pretrained(d)
    ids = torch.from_numpy(np.load(os.path.join(d, "input_ids.npy")))
    mask = torch.from_numpy(np.load(os.path.join(d, "attention_mask.npy")))
    G = torch.from_numpy(np.load(os.path.join(d, "G.npy")))
    out_dt = torch.from_numpy(np.load(os.path.join(args.inputs, "bert_last_hidden_state.npy")))
    loss_dt = float(np.load(os.path.join(args.inputs, "bert_loss.npy")))
    params = list(net.parameters())

    def fwd():
        net.eval()
        with torch.no_grad():
            return net(input_ids=ids, attention_mask=mask).last_hidden_state

    def fwdbwd():
        net.train()
        for p in params:
            p.grad = None
        loss = (net(input_ids=ids, attention_mask=mask).last_hidden_state * G).sum()
        loss.backward()
        return loss

    checks = {"out": float((fwd() - out_dt).abs().max()) / scale_of(out_dt)}
    loss = fwdbwd()
    checks["loss"] = abs(float(loss.detach()) - loss_dt) / max(1.0, abs(loss_dt))
    layers = net.encoder.layer
    for key, layer in (("grad_first", layers[0]), ("grad_last", layers[-1])):
        g_dt = torch.from_numpy(np.load(os.path.join(args.inputs, "bert_%s.npy" % key)))
        checks[key] = float((layer.intermediate.dense.weight.grad - g_dt).abs().max()) / scale_of(g_dt)
    result["checks"]["bert_base"] = checks
    bad = [k for k, v in checks.items() if not v <= 1e-4]
    if bad:
        result["errors"].append("bert_base: transformers and dimtensor differ (%s)" % ", ".join(bad))
        return
    for name, run in (("bert_base_fwd", fwd), ("bert_base_fwdbwd", fwdbwd)):
        run()  # one untimed call, as dimtensor's
        ms, n = median_ms(run, args.min_time, 1)
        result["cases"][name] = {"ms": ms, "runs": n}


def gpt2_cases(args, result):
    import transformers
    d = os.path.join(args.models, "gpt2")
    net = transformers.GPT2LMHeadModel.from_pretrained(d)
    net.eval()
    prompt = torch.from_numpy(np.load(os.path.join(d, "prompt.npy")))
    tokens_dt = np.load(os.path.join(args.inputs, "gpt2_tokens.npy"))

    def decode():
        with torch.no_grad():
            return net.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, pad_token_id=0)

    tokens = decode().numpy()
    same = tokens.shape == tokens_dt.shape and bool((tokens == tokens_dt).all())
    first = int(np.argmax((tokens != tokens_dt).any(axis=0))) if tokens.shape == tokens_dt.shape and not same else None
    result["checks"]["gpt2_greedy"] = {"tokens_equal": same, "first_difference": first}
    if not same:
        result["errors"].append("gpt2_greedy: transformers and dimtensor decode different tokens (from step %s)" % first)
        return
    ms, n = median_ms(decode, args.min_time, args.min_runs)
    result["cases"]["gpt2_greedy"] = {"ms": ms, "runs": n}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--make", help="write the models and their inputs into this folder, and stop")
    parser.add_argument("--models", help="the folder --make wrote")
    parser.add_argument("--inputs", help="the folder bench_hf_models_bench wrote its results into")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per case")
    parser.add_argument("--min-runs", type=int, default=5, help="timed runs of the decoding, at least")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.make:
        make(args.make)
        return 0
    if not args.models or not args.inputs:
        parser.error("--models and --inputs are needed (or --make)")
    import transformers
    result = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cases": {},
        "checks": {},
        "errors": [],
    }
    bert_cases(args, result)
    gpt2_cases(args, result)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
