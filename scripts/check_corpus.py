#!/usr/bin/env python3
"""Check the English-French corpus used by the translation example.

Usage:
    python3 scripts/check_corpus.py [path]

The default path is examples/data/fra-eng/fra.txt (relative to the repository
root, or to the current directory if that is where the file is).

The file has the format of the fra.txt that "Dive into Deep Learning" (d2l)
uses in its machine-translation chapter: one pair per line, the English
sentence, a tab, the French sentence, UTF-8.  Lines that start with '#' are
comments and empty lines are ignored; every other line is a pair line.

The readers hold out every 10th pair as a test split that is never trained
on: the pair with 0-based index i (counting pair lines only) is held out when
i % 10 == 9; all other pairs are the training part.

Words are counted after d2l's preprocessing (a copy of `preprocess_nmt`):
lower-case, U+202F and U+00A0 replaced by a space, a space inserted before
',', '.', '!' and '?' when the preceding character is not a space, then
split on single spaces (d2l's `tokenize_nmt`).

Checks (each failure prints a message; the exit status is 1 if any fails):
  * the file is valid UTF-8; every pair line has exactly one tab and both
    sides are non-empty after stripping;
  * no line occurs twice, and there are at least 1600 distinct pairs;
  * every English sentence has 1 to 6 words (split on whitespace);
  * the four sentences d2l translates at the end of its chapter
    ("Go." -> "Va !", "I lost." -> "J'ai perdu.", "He's calm." ->
    "Il est calme.", "I'm home." -> "Je suis chez moi.") are present at
    training positions, and each of their English and French words occurs at
    least 5 times in the training part;
  * at least 97% of the word tokens of the held-out pairs (both sides) occur
    at least 2 times in the training part (same side);
  * no held-out English sentence is also the English sentence of a training
    pair.
The split checks (the last three) are made for the whole file and again for
the first 600 pairs alone, since the readers' default num_examples is 600
(d2l's setting) and they then split those 600 the same way.

It prints a summary for both: pair counts, train/held-out counts, the
vocabulary sizes of the training part with min_freq 2 (plus d2l's 4 reserved
tokens <unk>, <pad>, <bos>, <eos>) and the held-out coverage.
"""

import collections
import os
import sys

DEFAULT_PATH = os.path.join("examples", "data", "fra-eng", "fra.txt")

MIN_PAIRS = 1600
MIN_TEST_WORD_FREQ = 5
MIN_COVERAGE = 0.97
MAX_ENGLISH_WORDS = 6
PREFIX = 600  # the readers' default num_examples

# The sentences d2l translates with its trained models (French written as in
# fra.txt, with U+202F before '!').
BOOK_PAIRS = [
    ("Go.", "Va\u202f!"),
    ("I lost.", "J'ai perdu."),
    ("He's calm.", "Il est calme."),
    ("I'm home.", "Je suis chez moi."),
]


def preprocess_nmt(text):
    """d2l's preprocess_nmt, copied."""

    def no_space(char, prev_char):
        return char in set(",.!?") and prev_char != " "

    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    out = [
        " " + char if i > 0 and no_space(char, text[i - 1]) else char
        for i, char in enumerate(text)
    ]
    return "".join(out)


def tokens(sentence):
    return preprocess_nmt(sentence).split(" ")


def check_split(pairs, label, prefix=False):
    """Split pairs by i % 10 == 9, check them, print a summary; return errors."""
    errors = []
    where = f" ({label})" if prefix else ""
    train = [p for i, p in enumerate(pairs) if i % 10 != 9]
    held = [p for i, p in enumerate(pairs) if i % 10 == 9]

    src_count = collections.Counter(t for _, en, _ in train for t in tokens(en))
    tgt_count = collections.Counter(t for _, _, fr in train for t in tokens(fr))

    # The book's four sentences: present at training positions, words frequent.
    train_set = {(en, fr) for _, en, fr in train}
    held_set = {(en, fr) for _, en, fr in held}
    for en, fr in BOOK_PAIRS:
        if (en, fr) in held_set:
            errors.append(f"book pair {en!r} -> {fr!r} is at a held-out position{where}")
        elif (en, fr) not in train_set:
            errors.append(f"book pair {en!r} -> {fr!r} is missing{where}")
        for side, sentence, count in (("English", en, src_count), ("French", fr, tgt_count)):
            for t in tokens(sentence):
                if count[t] < MIN_TEST_WORD_FREQ:
                    errors.append(
                        f"{side} word {t!r} of book pair {en!r} occurs {count[t]} times in training{where} "
                        f"(want at least {MIN_TEST_WORD_FREQ})")

    # Held-out coverage.
    total = covered = 0
    uncovered = collections.Counter()
    for _, en, fr in held:
        for sentence, count in ((en, src_count), (fr, tgt_count)):
            for t in tokens(sentence):
                total += 1
                if count[t] >= 2:
                    covered += 1
                else:
                    uncovered[t] += 1
    coverage = covered / total if total else 0.0
    if coverage < MIN_COVERAGE:
        worst = ", ".join(f"{t!r}" for t, _ in uncovered.most_common(10))
        errors.append(f"held-out coverage{where} {coverage:.2%} < {MIN_COVERAGE:.0%} (uncovered: {worst})")

    # Held-out English sentences must be unseen in training.
    train_en = {en for _, en, _ in train}
    for lineno, en, _ in held:
        if en in train_en:
            errors.append(f"line {lineno}: held-out English sentence {en!r} is also a training sentence{where}")

    src_vocab = sum(1 for c in src_count.values() if c >= 2) + 4
    tgt_vocab = sum(1 for c in tgt_count.values() if c >= 2) + 4
    print(f"{label}:")
    print(f"  pairs: {len(pairs)} (train {len(train)}, held out {len(held)})")
    print(f"  distinct English sentences: {len({en for _, en, _ in pairs})}")
    print(f"  vocabulary (training, min_freq 2, with 4 reserved tokens): English {src_vocab}, French {tgt_vocab}")
    print(f"  held-out coverage: {covered}/{total} tokens = {coverage:.2%}")
    return errors


def resolve(path):
    if os.path.exists(path):
        return path
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidate = os.path.join(root, path)
    return candidate if os.path.exists(candidate) else path


def main(argv):
    path = resolve(argv[1] if len(argv) > 1 else DEFAULT_PATH)
    errors = []

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        print(f"error: cannot read {path}: {e}")
        return 1
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"error: {path} is not valid UTF-8: {e}")
        return 1

    pairs = []  # (line number, english, french)
    seen_lines = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if line.count("\t") != 1:
            errors.append(f"line {lineno}: expected exactly one tab, found {line.count(chr(9))}")
            continue
        en, fr = line.split("\t")
        if not en.strip() or not fr.strip():
            errors.append(f"line {lineno}: empty side")
            continue
        if line in seen_lines:
            errors.append(f"line {lineno}: duplicate of line {seen_lines[line]}: {line!r}")
            continue
        seen_lines[line] = lineno
        n_words = len(en.split())
        if not 1 <= n_words <= MAX_ENGLISH_WORDS:
            errors.append(f"line {lineno}: English has {n_words} words (want 1 to {MAX_ENGLISH_WORDS}): {en!r}")
        pairs.append((lineno, en, fr))

    if len(pairs) < MIN_PAIRS:
        errors.append(f"only {len(pairs)} distinct pairs (want at least {MIN_PAIRS})")

    print(f"file: {path}")
    errors += check_split(pairs, "whole file")
    errors += check_split(pairs[:PREFIX], f"first {PREFIX} pairs", prefix=True)
    if errors:
        for e in errors:
            print(f"FAIL: {e}")
        print(f"{len(errors)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
