#!/usr/bin/env python3
"""Goldens of the tokenizers (tests/parity/tokenizer_parity_test.cpp) from
Hugging Face `tokenizers` and `transformers` themselves.

Two small tokenizers are trained by `tokenizers` on data/tokenizers/train.txt
and written by `transformers`' `save_pretrained` (their `tokenizer.json`,
the file a user's model folder holds): BERT's WordPiece (`BertTokenizer`:
lowercase, accents stripped, CJK characters split; vocabulary 300) and
GPT-2's byte-level BPE (`GPT2Tokenizer`; vocabulary 400, `<|endoftext|>`
added).  For every line of data/tokenizers/sample.txt (English, French,
Chinese, accents, emoji, words the training never saw, special tokens as
written, odd spacing) and for the whole file, `expected.json` holds each
tokenizer's tokens, its ids with the special tokens, and its decoding.

Run with a Python that has `tokenizers` and `transformers` (a venv from
PyPI): `python tests/parity/goldens_tokenizers.py`.
"""
import json
import pathlib
import shutil

import tokenizers
import transformers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

DATA = pathlib.Path(__file__).resolve().parent / "data" / "tokenizers"


def main():
    train = (DATA / "train.txt").read_text(encoding="utf-8").splitlines()

    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.train_from_iterator(train * 3, trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    bert = transformers.BertTokenizer(vocab=wp.get_vocab())

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(train * 3, trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"]))
    merges = json.loads(bpe.to_str())["model"]["merges"]
    gpt2 = transformers.GPT2Tokenizer(vocab=bpe.get_vocab(), merges=[tuple(m) for m in merges],
                                      unk_token="<|endoftext|>", bos_token="<|endoftext|>",
                                      eos_token="<|endoftext|>")

    sample = (DATA / "sample.txt").read_text(encoding="utf-8")
    texts = sample.splitlines() + [sample]
    expected = {"tokenizers": tokenizers.__version__, "transformers": transformers.__version__, "cases": {}}
    for name, tok in (("bert", bert), ("gpt2", gpt2)):
        folder = DATA / name
        if folder.exists():
            shutil.rmtree(folder)
        tok.save_pretrained(folder)
        for extra in folder.iterdir():
            if extra.name != "tokenizer.json":
                extra.unlink()
        cases = []
        for text in texts:
            ids = tok(text)["input_ids"]
            cases.append({"text": text, "tokens": tok.tokenize(text), "ids": ids,
                          "decoded": tok.decode(ids, skip_special_tokens=True)})
        expected["cases"][name] = cases
    (DATA / "expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("wrote", DATA)


if __name__ == "__main__":
    main()
