#!/usr/bin/env python3
"""Goldens of the Marian family (tests/parity/marian_parity_test.cpp) from
Hugging Face `transformers` itself.

A tiny random `MarianMTModel` (d_model 32, 2 encoder and 2 decoder layers,
4 heads, FFN 37, 64 positions, `swish`, embeddings scaled by √d_model as the
opus-mt checkpoints are; the vocabulary of data/tokenizers/marian, whose
files are copied beside it: run goldens_marian_tokenizer.py first) is
written by `save_pretrained` (`config.json`, `model.safetensors`: the shared
embedding under `model.shared.weight`, `final_logits_bias`).  Its parameters are drawn from
numpy's seeded generator.  In eval mode, on right-padded source and target
batches:

- `input_ids.npy`, `attention_mask.npy` (the sources), `decoder_input_ids.npy`
  (the targets, no padding; int64);
- float32: `f32_encoder_last_hidden_state.npy`, `f32_logits.npy`;
- float64 (the same weights): `f64_encoder_last_hidden_state.npy`,
  `f64_logits.npy`;
- greedy decoding of the sources: `greedy.npy`, `generate(do_sample=False,
  num_beams=1, max_new_tokens=10)`'s ids (the decoder's start token first;
  a sequence that ends pads its rest), in float32;
- beam search of the sources: `beam_<i>.npy`, `generate(num_beams=4,
  max_new_tokens=10, length_penalty, early_stopping)`'s ids for each of
  BEAM_CASES, in float32.

Run with a Python that has torch, transformers and safetensors (a venv from
PyPI): `python tests/parity/goldens_marian.py`.  It writes
tests/parity/data/models/marian/.
"""
import json
import pathlib
import shutil

import numpy as np
import torch
import transformers

# The beam search cases (tests/parity/marian_parity_test.cpp has the same
# list): the end token's logit bias raised by the first number (so that
# hypotheses end at different lengths), the length penalty, early stopping.
BEAM_CASES = [(0.0, 1.0, False), (2.0, 1.0, False), (2.0, 2.0, False), (2.0, 0.5, True), (2.0, 1.0, "never"),
              (3.0, 2.0, False), (5.0, 0.5, True)]

OUT = pathlib.Path(__file__).resolve().parent / "data" / "models" / "marian"


def main():
    torch.set_num_threads(1)
    tokenizer = OUT.parent.parent / "tokenizers" / "marian"
    vocab = json.loads((tokenizer / "vocab.json").read_text(encoding="utf-8"))
    config = transformers.MarianConfig(
        vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64,
        activation_function="swish", scale_embedding=True, pad_token_id=vocab["<pad>"], eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"], forced_eos_token_id=None)
    model = transformers.MarianMTModel(config)
    rng = np.random.RandomState(20261209)
    with torch.no_grad():
        for key, p in sorted(model.named_parameters()):
            if "embed_positions" in key:   # the sinusoidal table: not saved, rebuilt on loading
                continue
            if key.endswith("layer_norm.weight"):
                values = 1.0 + 0.2 * rng.standard_normal(p.shape)
            else:
                values = 0.3 * rng.standard_normal(p.shape)
            p.copy_(torch.from_numpy(values.astype(np.float32)))
        model.final_logits_bias.copy_(torch.from_numpy((0.3 * rng.standard_normal(
            tuple(model.final_logits_bias.shape))).astype(np.float32)))
    model.eval()

    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    model.save_pretrained(OUT)
    for name in ("source.spm", "target.spm", "vocab.json"):
        shutil.copy(tokenizer / name, OUT / name)

    batch, src, tgt = 3, 7, 5
    lengths = [7, 4, 2]
    input_ids = rng.randint(1, config.pad_token_id, size=(batch, src)).astype(np.int64)
    attention_mask = np.zeros((batch, src), dtype=np.int64)
    for b, n in enumerate(lengths):
        attention_mask[b, :n] = 1
        input_ids[b, n:] = config.pad_token_id
    decoder_input_ids = rng.randint(1, config.pad_token_id, size=(batch, tgt)).astype(np.int64)
    decoder_input_ids[:, 0] = config.decoder_start_token_id
    np.save(OUT / "input_ids.npy", input_ids)
    np.save(OUT / "attention_mask.npy", attention_mask)
    np.save(OUT / "decoder_input_ids.npy", decoder_input_ids)
    inputs = dict(input_ids=torch.from_numpy(input_ids), attention_mask=torch.from_numpy(attention_mask),
                  decoder_input_ids=torch.from_numpy(decoder_input_ids))

    with torch.no_grad():
        out = model(**inputs)
        np.save(OUT / "f32_encoder_last_hidden_state.npy", out.encoder_last_hidden_state.numpy())
        np.save(OUT / "f32_logits.npy", out.logits.numpy())
        greedy = model.generate(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                                do_sample=False, num_beams=1, max_new_tokens=10, bad_words_ids=None,
                                forced_eos_token_id=None)
        np.save(OUT / "greedy.npy", greedy.numpy())
        out = model.double()(**inputs)
        np.save(OUT / "f64_encoder_last_hidden_state.npy", out.encoder_last_hidden_state.numpy())
        np.save(OUT / "f64_logits.npy", out.logits.numpy())

    reloaded = transformers.MarianMTModel.from_pretrained(OUT).eval()
    with torch.no_grad():
        again = reloaded(**inputs).logits.numpy()
    if np.abs(again - np.load(OUT / "f32_logits.npy")).max() > 1e-5:
        raise SystemExit("the saved model does not give the goldens back")

    # Beam search: BEAM_CASES (end-token bias added to final_logits_bias,
    # length_penalty, early_stopping) with 4 beams and 10 new tokens.
    with torch.no_grad():
        for i, (eos_bias, length_penalty, early_stopping) in enumerate(BEAM_CASES):
            reloaded.final_logits_bias[0, config.eos_token_id] += eos_bias
            beams = reloaded.generate(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                                      do_sample=False, num_beams=4, max_new_tokens=10, length_penalty=length_penalty,
                                      early_stopping=early_stopping, bad_words_ids=None, forced_eos_token_id=None)
            reloaded.final_logits_bias[0, config.eos_token_id] -= eos_bias
            np.save(OUT / f"beam_{i}.npy", beams.numpy())

    manifest = {
        "torch": torch.__version__, "transformers": transformers.__version__, "numpy": np.__version__,
        "model": "MarianMTModel", "lengths": lengths, "beam_cases": BEAM_CASES,
        "files": sorted(f.name for f in OUT.iterdir()),
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print("wrote", OUT, greedy.numpy())


if __name__ == "__main__":
    main()
