#!/usr/bin/env python3
"""Goldens of Marian's tokenizer (tests/parity/marian_tokenizer_test.cpp)
from `sentencepiece` and `transformers`' `MarianTokenizer` themselves.

Two small unigram SentencePiece models (the source's and the target's,
vocabulary 120 each) are trained on data/tokenizers/train.txt; their pieces
and Marian's special tokens (`</s>` 0, `<unk>` 1, `<pad>` last) make the
shared `vocab.json`; `MarianTokenizer` writes the folder (`source.spm`,
`target.spm`, `vocab.json`, as opus-mt's).  For every line of
data/tokenizers/sample.txt, `marian_expected.json` holds the tokens, the
ids (`</s>` appended) and the target side's decoding of the ids, with a
language code prefix (`>>fr<<`) on one line.  Without `sacremoses`
installed, `MarianTokenizer` skips Moses' punctuation normalization, as
the library does.

Run with a Python that has sentencepiece and transformers (a venv from
PyPI): `python tests/parity/goldens_marian_tokenizer.py`.
"""
import io
import json
import pathlib
import shutil

import sentencepiece as spm
import transformers

DATA = pathlib.Path(__file__).resolve().parent / "data" / "tokenizers"


def train(lines, seed_text):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=120,
                                   model_type="unigram", character_coverage=1.0,
                                   num_threads=1, minloglevel=2, input_sentence_size=0,
                                   unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1)
    return model.getvalue()


def main():
    try:
        import sacremoses  # noqa: F401
        raise SystemExit("sacremoses is installed: MarianTokenizer would normalize punctuation; run without it")
    except ImportError:
        pass
    lines = (DATA / "train.txt").read_text(encoding="utf-8").splitlines()
    folder = DATA / "marian"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    (folder / "source.spm").write_bytes(train(lines * 3, "source"))
    (folder / "target.spm").write_bytes(train(list(reversed(lines)) * 3, "target"))
    pieces = []
    for name in ("source.spm", "target.spm"):
        sp = spm.SentencePieceProcessor(model_file=str(folder / name))
        pieces += [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    vocab = {"</s>": 0, "<unk>": 1, ">>fr<<": 2}
    for p in pieces:
        if p not in vocab and p != "<unk>":
            vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tok = transformers.MarianTokenizer(source_spm=str(folder / "source.spm"), target_spm=str(folder / "target.spm"),
                                       vocab=str(folder / "vocab.json"))
    tok.save_pretrained(folder)
    for extra in folder.iterdir():
        if extra.name not in ("source.spm", "target.spm", "vocab.json"):
            extra.unlink()

    sample = (DATA / "sample.txt").read_text(encoding="utf-8").splitlines()
    sample[2] = ">>fr<<" + sample[2]
    cases = []
    for text in sample:
        ids = tok(text)["input_ids"]
        cases.append({"text": text, "tokens": tok.tokenize(text), "ids": ids,
                      "decoded": tok.decode(ids, skip_special_tokens=True)})
    expected = {"sentencepiece": spm.__version__, "transformers": transformers.__version__, "cases": cases}
    (DATA / "marian_expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n",
                                               encoding="utf-8")
    print("wrote", folder, len(vocab), "tokens")


if __name__ == "__main__":
    main()
