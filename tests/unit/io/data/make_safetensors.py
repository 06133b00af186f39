#!/usr/bin/python3
"""Writes golden.safetensors for tests/unit/io/safetensors_test.cpp.

Debian 12 has no `safetensors` Python package, so the file is written by hand
with the format's definition: an 8-byte little-endian header length N, N bytes
of JSON (padded with spaces to a multiple of 8), then the raw little-endian
data. The tensors are made with torch, and their values are ones the C++ test
recomputes (arange-based, or listed literally there). The data section is laid
out in reverse key order and the JSON keys are in neither order, so that the
reader must sort by offsets as the format's reference implementation does.

Run from anywhere: /usr/bin/python3 tests/unit/io/data/make_safetensors.py
"""
import json
import math
import os
import struct

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

tensors = {
    "embed.weight": (torch.arange(24, dtype=torch.float32) - 8) / 4,
    "layer.0.bias": (torch.arange(5, dtype=torch.float64) - 2) * 0.375,
    "counts": torch.arange(6, dtype=torch.int64) * 1_000_000_000_000 - 3,
    "ids": torch.tensor([7, -1, 2147483647], dtype=torch.int32),
    "mask": torch.tensor([[True, False], [False, True]]),
    "scalar": torch.tensor(3.5, dtype=torch.float32),
    "half": torch.tensor([1.0, -2.5, 65504.0, 2.0**-24, math.inf, math.nan, -0.0, 1023 * 2.0**-24],
                         dtype=torch.float16),
    "bf16": torch.tensor([1.0, -2.5, 3.3895313892515355e38, 2.0**-133, -math.inf, math.nan],
                         dtype=torch.bfloat16),
    "empty": torch.zeros(0, 3, dtype=torch.float32),
    "bytes": torch.tensor([0, 1, 254, 255], dtype=torch.uint8),
    "rank4": torch.arange(6, dtype=torch.float32),
}
tensors["embed.weight"] = tensors["embed.weight"].reshape(4, 6)
tensors["counts"] = tensors["counts"].reshape(2, 3)
tensors["rank4"] = tensors["rank4"].reshape(1, 2, 1, 3)

DTYPES = {
    torch.float32: "F32", torch.float64: "F64", torch.int64: "I64", torch.int32: "I32",
    torch.bool: "BOOL", torch.float16: "F16", torch.bfloat16: "BF16", torch.uint8: "U8",
}


def raw(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16
        t = t.view(torch.int16)
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


data = b""
offsets = {}
for name in sorted(tensors, reverse=True):
    b = raw(tensors[name])
    offsets[name] = (len(data), len(data) + len(b))
    data += b

header = {"__metadata__": {"format": "pt", "note": "snowman \u2603 and \U0001F600"}}
for name in ["mask", "embed.weight", "scalar", "half", "bytes", "layer.0.bias", "empty", "bf16", "counts", "ids",
             "rank4"]:
    t = tensors[name]
    header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": list(offsets[name])}
assert set(header) == set(tensors) | {"__metadata__"}

text = json.dumps(header).encode("utf-8")  # ensure_ascii: the emoji becomes a \ud83d\ude00 surrogate pair
text += b" " * ((8 - len(text) % 8) % 8)
with open(os.path.join(HERE, "golden.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    f.write(data)
