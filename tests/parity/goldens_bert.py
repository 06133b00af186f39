#!/usr/bin/env python3
"""Goldens of the BERT family (tests/parity/bert_parity_test.cpp) from
Hugging Face `transformers` itself.

A tiny random `BertModel` (hidden 32, 2 layers, 4 heads, intermediate 37,
the vocabulary of data/tokenizers/bert, whose `tokenizer.json` is copied
beside it: run goldens_tokenizers.py first) is written by `save_pretrained`
(its `config.json` and `model.safetensors`: with the tokenizer, the files a
user's checkpoint folder holds; examples/sentence_embeddings runs on it).  Its
parameters are drawn here from numpy's seeded generator, wider than
transformers' initializer (N(0, 0.02) makes every attention weight nearly
uniform), so that every parameter matters.  In eval mode, on a right-padded
batch (`attention_mask` rows of ones then zeros) with token types:

- `input_ids.npy`, `token_type_ids.npy`, `attention_mask.npy` (int64);
- float32: `f32_last_hidden_state.npy`, `f32_pooler_output.npy`;
- float64 (the same weights, `model.double()`): `f64_last_hidden_state.npy`,
  `f64_pooler_output.npy`, the seeds of the loss sum(h * R_h) + sum(p * R_p)
  `f64_R_h.npy`, `f64_R_p.npy`, and the gradient of every parameter under
  its own key in `f64_gradients.safetensors`;
- masks of any pattern (left padding, a hole, none) on other ids:
  `masked_input_ids.npy`, `masked_attention_mask.npy`,
  `f32_masked_last_hidden_state.npy`, `f64_masked_last_hidden_state.npy`.

Run with a Python that has torch, transformers and safetensors (a venv from
PyPI): `python tests/parity/goldens_bert.py`.  It writes
tests/parity/data/models/bert/.
"""
import json
import os
import pathlib
import shutil
import sys

import numpy as np
import torch
import transformers
from safetensors.numpy import save_file

OUT = pathlib.Path(__file__).resolve().parent / "data" / "models" / "bert"


def main():
    torch.set_num_threads(1)
    tokenizer = OUT.parent.parent / "tokenizers" / "bert" / "tokenizer.json"
    vocab_size = len(json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"])
    config = transformers.BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=37, max_position_embeddings=64, type_vocab_size=2)
    model = transformers.BertModel(config)
    rng = np.random.RandomState(20261207)
    with torch.no_grad():
        for key, p in sorted(model.state_dict().items()):
            if "LayerNorm.weight" in key:
                values = 1.0 + 0.2 * rng.standard_normal(p.shape)
            else:
                values = 0.3 * rng.standard_normal(p.shape)
            p.copy_(torch.from_numpy(values.astype(np.float32)))
    model.eval()

    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    model.save_pretrained(OUT)
    shutil.copy(tokenizer, OUT / "tokenizer.json")

    batch, tokens = 3, 9
    lengths = [9, 6, 2]
    input_ids = rng.randint(1, config.vocab_size, size=(batch, tokens)).astype(np.int64)
    attention_mask = np.zeros((batch, tokens), dtype=np.int64)
    token_type_ids = np.zeros((batch, tokens), dtype=np.int64)
    for b, n in enumerate(lengths):
        attention_mask[b, :n] = 1
        token_type_ids[b, n // 2:n] = 1
        input_ids[b, n:] = config.pad_token_id
    np.save(OUT / "input_ids.npy", input_ids)
    np.save(OUT / "token_type_ids.npy", token_type_ids)
    np.save(OUT / "attention_mask.npy", attention_mask)
    inputs = dict(input_ids=torch.from_numpy(input_ids), attention_mask=torch.from_numpy(attention_mask),
                  token_type_ids=torch.from_numpy(token_type_ids))

    with torch.no_grad():
        out = model(**inputs)
    np.save(OUT / "f32_last_hidden_state.npy", out.last_hidden_state.numpy())
    np.save(OUT / "f32_pooler_output.npy", out.pooler_output.numpy())

    model64 = model.double()
    out = model64(**inputs)
    r_h = rng.standard_normal(tuple(out.last_hidden_state.shape))
    r_p = rng.standard_normal(tuple(out.pooler_output.shape))
    loss = (out.last_hidden_state * torch.from_numpy(r_h)).sum() + (out.pooler_output * torch.from_numpy(r_p)).sum()
    loss.backward()
    np.save(OUT / "f64_last_hidden_state.npy", out.last_hidden_state.detach().numpy())
    np.save(OUT / "f64_pooler_output.npy", out.pooler_output.detach().numpy())
    np.save(OUT / "f64_R_h.npy", r_h)
    np.save(OUT / "f64_R_p.npy", r_p)
    grads = {key: p.grad.numpy().copy() for key, p in model64.named_parameters()}
    missing = [key for key, p in model64.named_parameters() if p.grad is None]
    if missing:
        sys.exit("no gradient for " + ", ".join(missing))
    save_file(grads, str(OUT / "f64_gradients.safetensors"))

    # Masks of any pattern: left padding, a hole, every token.
    masked = np.array([[0, 0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 1, 0, 1, 1, 1], [1] * tokens], dtype=np.int64)
    masked_ids = rng.randint(1, config.vocab_size, size=(batch, tokens)).astype(np.int64)
    np.save(OUT / "masked_attention_mask.npy", masked)
    np.save(OUT / "masked_input_ids.npy", masked_ids)
    masked_inputs = dict(input_ids=torch.from_numpy(masked_ids), attention_mask=torch.from_numpy(masked))
    with torch.no_grad():
        np.save(OUT / "f64_masked_last_hidden_state.npy", model64(**masked_inputs).last_hidden_state.numpy())
        np.save(OUT / "f32_masked_last_hidden_state.npy", model64.float()(**masked_inputs).last_hidden_state.numpy())

    manifest = {
        "torch": torch.__version__, "transformers": transformers.__version__, "numpy": np.__version__,
        "model": "BertModel", "lengths": lengths, "loss": "sum(last_hidden_state * R_h) + sum(pooler_output * R_p)",
        "files": sorted(f.name for f in OUT.iterdir()),
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print("wrote", OUT, "with", len(grads), "gradients")


if __name__ == "__main__":
    main()
