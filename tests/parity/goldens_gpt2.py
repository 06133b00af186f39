#!/usr/bin/env python3
"""Goldens of the GPT-2 family (tests/parity/gpt2_parity_test.cpp) from
Hugging Face `transformers` itself.

A tiny random `GPT2LMHeadModel` (n_embd 32, 2 layers, 4 heads, n_inner 37,
vocabulary 99, 32 positions, `gelu_new`) is written by `save_pretrained`
(`config.json` and `model.safetensors`: the `Conv1D` weights stored [in,
out], `c_attn` holding the query, key and value projections side by side,
`lm_head.weight` tied to `transformer.wte.weight`).  Its parameters are
drawn from numpy's seeded generator, wider than transformers' initializer.
In eval mode, on a right-padded batch (`attention_mask` rows of ones then
zeros):

- `input_ids.npy`, `attention_mask.npy` (int64);
- float32: `f32_last_hidden_state.npy` (after `ln_f`), `f32_logits.npy`;
- float64 (the same weights, `model.double()`): `f64_last_hidden_state.npy`,
  `f64_logits.npy`, the loss's seed `f64_R.npy` (loss sum(logits * R)) and
  the gradient of every parameter under its own key in
  `f64_gradients.safetensors`;
- greedy decoding: `prompt.npy` (two prompts of 4 tokens, no padding) and
  `greedy.npy`, `generate(do_sample=False, max_new_tokens=12)`'s ids, in
  float32.

Run with a Python that has torch, transformers and safetensors (a venv from
PyPI): `python tests/parity/goldens_gpt2.py`.  It writes
tests/parity/data/models/gpt2/.
"""
import json
import pathlib
import shutil
import sys

import numpy as np
import torch
import transformers
from safetensors.numpy import save_file

OUT = pathlib.Path(__file__).resolve().parent / "data" / "models" / "gpt2"


def main():
    torch.set_num_threads(1)
    config = transformers.GPT2Config(vocab_size=99, n_positions=32, n_embd=32, n_layer=2, n_head=4, n_inner=37,
                                     bos_token_id=None, eos_token_id=None, pad_token_id=None)
    model = transformers.GPT2LMHeadModel(config)
    rng = np.random.RandomState(20261208)
    with torch.no_grad():
        for key, p in sorted(model.named_parameters()):
            if key.endswith((".ln_1.weight", ".ln_2.weight", "ln_f.weight")):
                values = 1.0 + 0.2 * rng.standard_normal(p.shape)
            else:
                values = 0.3 * rng.standard_normal(p.shape)
            p.copy_(torch.from_numpy(values.astype(np.float32)))
    model.eval()

    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    model.save_pretrained(OUT)

    batch, tokens = 3, 9
    lengths = [9, 6, 2]
    input_ids = rng.randint(0, config.vocab_size, size=(batch, tokens)).astype(np.int64)
    attention_mask = np.zeros((batch, tokens), dtype=np.int64)
    for b, n in enumerate(lengths):
        attention_mask[b, :n] = 1
    np.save(OUT / "input_ids.npy", input_ids)
    np.save(OUT / "attention_mask.npy", attention_mask)
    inputs = dict(input_ids=torch.from_numpy(input_ids), attention_mask=torch.from_numpy(attention_mask))

    with torch.no_grad():
        out = model(**inputs, output_hidden_states=True)
    np.save(OUT / "f32_last_hidden_state.npy", out.hidden_states[-1].numpy())
    np.save(OUT / "f32_logits.npy", out.logits.numpy())

    prompt = rng.randint(0, config.vocab_size, size=(2, 4)).astype(np.int64)
    with torch.no_grad():
        greedy = model.generate(torch.from_numpy(prompt), attention_mask=torch.ones(2, 4, dtype=torch.int64),
                                do_sample=False, max_new_tokens=12, pad_token_id=0)
    np.save(OUT / "prompt.npy", prompt)
    np.save(OUT / "greedy.npy", greedy.numpy())

    model64 = model.double()
    out = model64(**inputs, output_hidden_states=True)
    r = rng.standard_normal(tuple(out.logits.shape))
    (out.logits * torch.from_numpy(r)).sum().backward()
    np.save(OUT / "f64_last_hidden_state.npy", out.hidden_states[-1].detach().numpy())
    np.save(OUT / "f64_logits.npy", out.logits.detach().numpy())
    np.save(OUT / "f64_R.npy", r)
    params = list(model64.named_parameters())
    missing = [key for key, p in params if p.grad is None]
    if missing:
        sys.exit("no gradient for " + ", ".join(missing))
    save_file({key: p.grad.numpy().copy() for key, p in params}, str(OUT / "f64_gradients.safetensors"))

    manifest = {
        "torch": torch.__version__, "transformers": transformers.__version__, "numpy": np.__version__,
        "model": "GPT2LMHeadModel", "lengths": lengths, "loss": "sum(logits * R)",
        "parameters": [key for key, _ in params],
        "files": sorted(f.name for f in OUT.iterdir()),
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print("wrote", OUT, "with", len(params), "gradients")


if __name__ == "__main__":
    main()
