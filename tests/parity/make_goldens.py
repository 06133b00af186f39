#!/usr/bin/python3
"""Golden data for dimtensor's parity tests against d2l's own PyTorch code.

How to run (from the repository root), with Debian's python and python3-torch:

    /usr/bin/python3 tests/parity/make_goldens.py

on an x86-64 machine with AVX2 (the script pins torch's AVX2 kernels, see
ATEN_CPU_CAPABILITY below; other kernels draw other random numbers).

Writes tests/parity/data/*.npy (float32 unless the name ends in _f64; valid
lengths are int64; C order), one folder data/attention/<case>/ per attention
case (.npy files and the module's state_dict as weights.safetensors; see
make_attention) and tests/parity/data/manifest.json, which lists
every file with its shape, dtype and the expression that produced it, plus the
torch and numpy versions used (read at run time; the committed data was made
with Debian's torch 1.13.0a0 and numpy 1.24.2).

The script is deterministic (every random case is seeded) and idempotent:
running it again rewrites byte-identical files and deletes stale *.npy files
in data/ (and stale files under data/attention/) that it no longer produces. After writing, it loads every file back
with numpy and checks shapes, dtypes and a few known values.
"""
import json
import math
import os
import struct
import sys

# torch's CPU kernels differ in their last bits with the SIMD kernels chosen
# at run time: randn draws other numbers with the vectorized Box-Muller path
# than without it (ATEN_CPU_CAPABILITY=default changes nearly every random
# golden), and arange(0, 5, 0.1) rounds each vector's base to float, so 8 and
# 16 lanes differ.  The committed data used the AVX2 kernels; pin them so that
# an AVX-512 machine regenerates the same bytes (a machine without AVX2 cannot).
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

import numpy as np
import torch
from torch import nn

import goldens_attention_grad
import goldens_training
import goldens_modules
import goldens_seq2seq
import goldens_transformer

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


# ---------------------------------------------------------------------------
# d2l's code, copied verbatim from d2l/torch.py
# (chapter "Attention Scoring Functions", attention-scoring-functions).
# ---------------------------------------------------------------------------
def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X

def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)

# (chapters "Attention Scoring Functions" and "Multi-Head Attention"; in
# MultiHeadAttention d2l writes d2l.DotProductAttention, the class below.)
class AdditiveAttention(nn.Module):
    """Additive attention."""
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # After dimension expansion, shape of `queries`: (`batch_size`, no. of
        # queries, 1, `num_hiddens`) and shape of `keys`: (`batch_size`, 1,
        # no. of key-value pairs, `num_hiddens`). Sum them up with
        # broadcasting
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        # There is only one output of `self.w_v`, so we remove the last
        # one-dimensional entry from the shape. Shape of `scores`:
        # (`batch_size`, no. of queries, no. of key-value pairs)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # Shape of `values`: (`batch_size`, no. of key-value pairs, value
        # dimension)
        return torch.bmm(self.dropout(self.attention_weights), values)

class DotProductAttention(nn.Module):
    """Scaled dot product attention."""
    def __init__(self, dropout, **kwargs):
        super(DotProductAttention, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    # Shape of `queries`: (`batch_size`, no. of queries, `d`)
    # Shape of `keys`: (`batch_size`, no. of key-value pairs, `d`)
    # Shape of `values`: (`batch_size`, no. of key-value pairs, value
    # dimension)
    # Shape of `valid_lens`: (`batch_size`,) or (`batch_size`, no. of queries)
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # Set `transpose_b=True` to swap the last two dimensions of `keys`
        scores = torch.bmm(queries, keys.transpose(1,2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)

def transpose_qkv(X, num_heads):
    """Transposition for parallel computation of multiple attention heads."""
    # Shape of input `X`:
    # (`batch_size`, no. of queries or key-value pairs, `num_hiddens`).
    # Shape of output `X`:
    # (`batch_size`, no. of queries or key-value pairs, `num_heads`,
    # `num_hiddens` / `num_heads`)
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)

    # Shape of output `X`:
    # (`batch_size`, `num_heads`, no. of queries or key-value pairs,
    # `num_hiddens` / `num_heads`)
    X = X.permute(0, 2, 1, 3)

    # Shape of `output`:
    # (`batch_size` * `num_heads`, no. of queries or key-value pairs,
    # `num_hiddens` / `num_heads`)
    return X.reshape(-1, X.shape[2], X.shape[3])

def transpose_output(X, num_heads):
    """Reverse the operation of `transpose_qkv`."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)

class MultiHeadAttention(nn.Module):
    """Multi-head attention."""
    def __init__(self, key_size, query_size, value_size, num_hiddens,
                 num_heads, dropout, bias=False, **kwargs):
        super(MultiHeadAttention, self).__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        # Shape of `queries`, `keys`, or `values`:
        # (`batch_size`, no. of queries or key-value pairs, `num_hiddens`)
        # Shape of `valid_lens`:
        # (`batch_size`,) or (`batch_size`, no. of queries)
        # After transposing, shape of output `queries`, `keys`, or `values`:
        # (`batch_size` * `num_heads`, no. of queries or key-value pairs,
        # `num_hiddens` / `num_heads`)
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)

        if valid_lens is not None:
            # On axis 0, copy the first item (scalar or vector) for
            # `num_heads` times, then copy the next item, and so on
            valid_lens = torch.repeat_interleave(
                valid_lens, repeats=self.num_heads, dim=0)

        # Shape of `output`: (`batch_size` * `num_heads`, no. of queries,
        # `num_hiddens` / `num_heads`)
        output = self.attention(queries, keys, values, valid_lens)

        # Shape of `output_concat`:
        # (`batch_size`, no. of queries, `num_hiddens`)
        output_concat = transpose_output(output, self.num_heads)
        return self.W_o(output_concat)

# (chapter "Attention Pooling: Nadaraya-Watson Kernel Regression".)
class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,), requires_grad=True))

    def forward(self, queries, keys, values):
        # Shape of the output `queries` and `attention_weights`:
        # (no. of queries, no. of key-value pairs)
        queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
        self.attention_weights = nn.functional.softmax(
            -((queries - keys) * self.w)**2 / 2, dim=1)
        # Shape of `values`: (no. of queries, no. of key-value pairs)
        return torch.bmm(self.attention_weights.unsqueeze(1),
                         values.unsqueeze(-1)).reshape(-1)
# ---------------------------------------------------------------------------


MANIFEST = {}


def save(name, t, expr):
    """Save tensor t as data/<name>.npy (C order) and record it."""
    a = np.ascontiguousarray(t.detach().cpu().numpy())
    assert a.dtype in (np.float32, np.float64, np.int64), (name, a.dtype)
    path = os.path.join(DATA, name + ".npy")
    np.save(path, a, allow_pickle=False)
    MANIFEST[name + ".npy"] = {
        "shape": list(a.shape),
        "dtype": str(a.dtype),
        "expr": expr,
    }
    print(f"wrote {os.path.relpath(path, os.path.dirname(os.path.dirname(HERE)))}"
          f"  shape={tuple(a.shape)} dtype={a.dtype}")


def f32(x):
    return torch.tensor(x, dtype=torch.float32)


def i64(x):
    return torch.tensor(x, dtype=torch.int64)


def make():
    # 1. sequence_mask -------------------------------------------------------
    X = f32([[1, 2, 3], [4, 5, 6]])
    vl = i64([1, 2])
    save("sequence_mask_d2l_X", X, "torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.float32)")
    save("sequence_mask_d2l_valid_len", vl, "torch.tensor([1, 2])")
    save("sequence_mask_d2l_out", sequence_mask(X.clone(), vl),
         "sequence_mask(X, valid_len)  # value=0")

    torch.manual_seed(1)
    X = torch.randn(4, 7)
    vl = i64([0, 3, 7, 5])
    save("sequence_mask_random_X", X, "torch.manual_seed(1); torch.randn(4, 7)")
    save("sequence_mask_random_valid_len", vl, "torch.tensor([0, 3, 7, 5])")
    save("sequence_mask_random_out", sequence_mask(X.clone(), vl, value=-1.0),
         "sequence_mask(X.clone(), valid_len, value=-1.0)")

    # 2. masked_softmax: the d2l demos ---------------------------------------
    torch.manual_seed(0)
    X1 = torch.rand(2, 2, 4)
    X2 = torch.rand(2, 2, 4)
    vl1 = i64([2, 3])
    vl2 = i64([[1, 3], [2, 4]])
    save("masked_softmax_d2l_1d_X", X1, "torch.manual_seed(0); torch.rand(2, 2, 4)  # first draw")
    save("masked_softmax_d2l_1d_valid_lens", vl1, "torch.tensor([2, 3])")
    save("masked_softmax_d2l_1d_out", masked_softmax(X1, vl1), "masked_softmax(X, valid_lens)")
    save("masked_softmax_d2l_2d_X", X2,
         "torch.manual_seed(0); torch.rand(2, 2, 4); torch.rand(2, 2, 4)  # second draw")
    save("masked_softmax_d2l_2d_valid_lens", vl2, "torch.tensor([[1, 3], [2, 4]])")
    save("masked_softmax_d2l_2d_out", masked_softmax(X2, vl2), "masked_softmax(X, valid_lens)")

    # 3. masked_softmax: random, larger --------------------------------------
    torch.manual_seed(2)
    X = torch.randn(3, 5, 9) * 4
    vl1 = i64([0, 4, 9])
    g = torch.Generator().manual_seed(3)
    vl2 = torch.randint(0, 10, (3, 5), generator=g, dtype=torch.int64)
    vl2[0, 0] = 0; vl2[1, 2] = 0; vl2[2, 4] = 0   # force some empty rows
    vl2[0, 4] = 9; vl2[1, 0] = 9; vl2[2, 2] = 9   # and some full rows
    vl2_expr = ("g = torch.Generator().manual_seed(3); "
                "v = torch.randint(0, 10, (3, 5), generator=g); "
                "v[0,0] = v[1,2] = v[2,4] = 0; v[0,4] = v[1,0] = v[2,2] = 9")
    save("masked_softmax_X", X, "torch.manual_seed(2); torch.randn(3, 5, 9) * 4")
    save("masked_softmax_1d_valid_lens", vl1, "torch.tensor([0, 4, 9])")
    save("masked_softmax_1d_out", masked_softmax(X.clone(), vl1),
         "masked_softmax(masked_softmax_X, masked_softmax_1d_valid_lens)")
    save("masked_softmax_2d_valid_lens", vl2, vl2_expr)
    save("masked_softmax_2d_out", masked_softmax(X.clone(), vl2),
         "masked_softmax(masked_softmax_X, masked_softmax_2d_valid_lens)")
    save("masked_softmax_none_out", masked_softmax(X.clone(), None),
         "masked_softmax(masked_softmax_X, None)  # == softmax(X, dim=-1)")

    XL = X * 1000
    save("masked_softmax_large_X", XL, "masked_softmax_X * 1000")
    save("masked_softmax_large_none_out", masked_softmax(XL.clone(), None),
         "masked_softmax(masked_softmax_large_X, None)")
    save("masked_softmax_large_1d_out", masked_softmax(XL.clone(), vl1),
         "masked_softmax(masked_softmax_large_X, masked_softmax_1d_valid_lens)")
    save("masked_softmax_large_2d_out", masked_softmax(XL.clone(), vl2),
         "masked_softmax(masked_softmax_large_X, masked_softmax_2d_valid_lens)")

    # 4. bmm ------------------------------------------------------------------
    A = torch.ones((2, 1, 4))
    B = torch.ones((2, 4, 6))
    save("bmm_ones_A", A, "torch.ones((2, 1, 4))")
    save("bmm_ones_B", B, "torch.ones((2, 4, 6))")
    save("bmm_ones_out", torch.bmm(A, B), "torch.bmm(A, B)  # all 4.0")

    weights = torch.ones((2, 10)) * 0.1
    values = torch.arange(20.0).reshape((2, 10))
    save("bmm_weights_weights", weights, "torch.ones((2, 10)) * 0.1")
    save("bmm_weights_values", values, "torch.arange(20.0).reshape((2, 10))")
    save("bmm_weights_out", torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)),
         "torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1))  # [[[4.5]], [[14.5]]]")

    torch.manual_seed(4)
    A = torch.randn(3, 5, 7)
    B = torch.randn(3, 7, 4)
    save("bmm_random_A", A, "torch.manual_seed(4); torch.randn(3, 5, 7)")
    save("bmm_random_B", B, "torch.manual_seed(4); torch.randn(3, 5, 7); torch.randn(3, 7, 4)")
    save("bmm_random_out", torch.bmm(A, B), "torch.bmm(A, B)")
    A64, B64 = A.double(), B.double()
    save("bmm_random_A_f64", A64, "bmm_random_A.double()")
    save("bmm_random_B_f64", B64, "bmm_random_B.double()")
    save("bmm_random_out_f64", torch.bmm(A64, B64), "torch.bmm(A.double(), B.double())")

    torch.manual_seed(5)
    A = torch.randn(4, 33, 17)
    B = torch.randn(4, 17, 29)
    save("bmm_odd_A", A, "torch.manual_seed(5); torch.randn(4, 33, 17)")
    save("bmm_odd_B", B, "torch.manual_seed(5); torch.randn(4, 33, 17); torch.randn(4, 17, 29)")
    save("bmm_odd_out", torch.bmm(A, B), "torch.bmm(A, B)")

    # 5. softmax / log_softmax along a middle dim -----------------------------
    torch.manual_seed(6)
    X = torch.randn(2, 3, 4)
    save("softmax_mid_X", X, "torch.manual_seed(6); torch.randn(2, 3, 4)")
    save("softmax_mid_dim1_out", nn.functional.softmax(X, dim=1),
         "nn.functional.softmax(X, dim=1)")
    save("log_softmax_mid_dim1_out", nn.functional.log_softmax(X, dim=1),
         "nn.functional.log_softmax(X, dim=1)")
    save("log_softmax_mid_dimlast_out", nn.functional.log_softmax(X, dim=-1),
         "nn.functional.log_softmax(X, dim=-1)")

    # 6. numerics at the edges: logits of +-3e38, infinities, NaN ------------
    # One row per case; docs/reliability.md promises PyTorch's numbers here,
    # NaN where PyTorch gives NaN (a +inf logit, a NaN, a row all -inf).
    inf, nan = float("inf"), float("nan")
    X = f32([[[3e38, -3e38, 0, 1],
              [-3e38, -3e38, -3e38, -3e38],
              [3e38, 3e38, 3e38, 3e38],
              [nan, 1, 2, 3],
              [inf, 1, 2, 3],
              [-inf, -inf, -inf, -inf],
              [-3e38, 3e38, -3e38, 3e38],
              [-inf, 0, -3e38, 1e-38]]])
    expr_x = ("torch.tensor([[[3e38, -3e38, 0, 1], [-3e38]*4, [3e38]*4, [nan, 1, 2, 3], [inf, 1, 2, 3], "
              "[-inf]*4, [-3e38, 3e38, -3e38, 3e38], [-inf, 0, -3e38, 1e-38]]])")
    vl = i64([[4, 3, 2, 4, 4, 4, 1, 2]])
    labels = i64([[0, 1, 2, 1, 0, 0, 1, 3]])
    save("edges_X", X, expr_x)
    save("edges_softmax_out", nn.functional.softmax(X, dim=-1), "nn.functional.softmax(X, dim=-1)")
    save("edges_log_softmax_out", nn.functional.log_softmax(X, dim=-1), "nn.functional.log_softmax(X, dim=-1)")
    save("edges_valid_lens", vl, "torch.tensor([[4, 3, 2, 4, 4, 4, 1, 2]])")
    save("edges_masked_softmax_out", masked_softmax(X.clone(), vl), "masked_softmax(X, valid_lens)  # d2l's, -1e6")
    save("edges_labels", labels, "torch.tensor([[0, 1, 2, 1, 0, 0, 1, 3]])")
    save("edges_cross_entropy_out",
         nn.functional.cross_entropy(X.reshape(-1, 4), labels.reshape(-1), reduction="none").reshape(1, 8),
         "nn.functional.cross_entropy(X.reshape(-1, 4), labels.reshape(-1), reduction='none').reshape(1, 8)")


# ---------------------------------------------------------------------------
# Attention modules: every case is a folder data/attention/<case>/ holding the
# inputs, outputs and attention weights as .npy, every state_dict entry as
# <key>.npy (e.g. W_q.weight.npy: the layout dimtensor's
# nn::load_parameters(module, folder) reads) and the whole state_dict once
# more as weights.safetensors.
# ---------------------------------------------------------------------------
ATTENTION = "attention"


def save_case(case, role, t, expr):
    os.makedirs(os.path.join(DATA, ATTENTION, case), exist_ok=True)
    save(f"{ATTENTION}/{case}/{role}", t, expr)


SAFETENSORS_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
                      np.dtype(np.int64): "I64", np.dtype(np.int32): "I32"}


def safetensors_bytes(tensors):
    """A safetensors file holding the dict name -> numpy array, written by hand
    (Debian packages no safetensors): an unsigned little-endian 64-bit header
    size, the JSON header ("__metadata__" first, then the tensors in sorted
    key order, data offsets relative to the end of the header), padded with
    spaces to a multiple of 8, then the tensors' little-endian bytes."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for key in sorted(tensors):
        a = np.ascontiguousarray(tensors[key])
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
        header[key] = {"dtype": SAFETENSORS_DTYPES[a.dtype], "shape": list(a.shape),
                       "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def read_safetensors(path):
    """The reverse of safetensors_bytes, for verify(): name -> numpy array."""
    with open(path, "rb") as fh:
        blob = fh.read()
    (n,) = struct.unpack("<Q", blob[:8])
    assert n % 8 == 0 and 8 + n <= len(blob), path
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    data, out, end = blob[8 + n:], {}, 0
    names = {v: k for k, v in SAFETENSORS_DTYPES.items()}
    for key, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        b, f = e["data_offsets"]
        assert b == end, (path, key)   # no holes, no overlaps
        out[key] = np.frombuffer(data[b:f], dtype=names[e["dtype"]].newbyteorder("<")).reshape(e["shape"])
        end = f
    assert end == len(data), path      # nothing after the last tensor
    return out


def save_state_dict(case, module, expr):
    """Every state_dict entry as <case>/<key>.npy, and all as <case>/weights.safetensors."""
    sd = module.state_dict()
    for key, t in sd.items():
        save_case(case, key, t, f"{expr}.state_dict()[{key!r}]")
    arrays = {k: np.ascontiguousarray(t.detach().cpu().numpy()) for k, t in sd.items()}
    rel = f"{ATTENTION}/{case}/weights.safetensors"
    with open(os.path.join(DATA, rel), "wb") as fh:
        fh.write(safetensors_bytes(arrays))
    MANIFEST[rel] = {
        "format": "safetensors",
        "tensors": {k: {"shape": list(a.shape), "dtype": str(a.dtype)} for k, a in sorted(arrays.items())},
        "expr": f"{expr}.state_dict(), written by safetensors_bytes()",
    }
    print(f"wrote tests/parity/data/{rel}  ({len(arrays)} tensors)")


def lens_cases(case, run, lens, exprs):
    """run(valid_lens) -> (output, attention_weights) for each named valid_lens."""
    for suffix, vl in lens.items():
        if vl is not None:
            save_case(case, f"valid_lens_{suffix}", vl, exprs[suffix])
        with torch.no_grad():
            out, w = run(vl)
        how = f"valid_lens_{suffix}" if vl is not None else "None"
        save_case(case, f"output_{suffix}", out, f"net(queries, keys, values, {how})")
        save_case(case, f"attention_weights_{suffix}", w, f"net(queries, keys, values, {how}); net.attention_weights")


def make_attention():
    # 1. AdditiveAttention, the chapter's toy: keys all equal, so the output is
    #    the mean of the first valid_lens values whatever the weights.
    case = "additive_toy"
    torch.manual_seed(10)
    queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    valid_lens = torch.tensor([2, 6])
    net = AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
    net.eval()
    save_case(case, "queries", queries, "torch.manual_seed(10); torch.normal(0, 1, (2, 1, 20))")
    save_case(case, "keys", keys, "torch.ones((2, 10, 2))")
    save_case(case, "values", values, "torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)")
    save_state_dict(case, net, "AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)")
    lens_cases(case, lambda vl: (net(queries, keys, values, vl), net.attention_weights),
               {"1d": valid_lens}, {"1d": "torch.tensor([2, 6])"})

    # 2. AdditiveAttention, random: query and key sizes differ, keys != values.
    case = "additive_random"
    torch.manual_seed(11)
    queries, keys, values = torch.randn(3, 4, 5), torch.randn(3, 7, 6), torch.randn(3, 7, 3)
    net = AdditiveAttention(key_size=6, query_size=5, num_hiddens=9, dropout=0.2)
    net.eval()
    save_case(case, "queries", queries, "torch.manual_seed(11); torch.randn(3, 4, 5)")
    save_case(case, "keys", keys, "torch.manual_seed(11); torch.randn(3, 4, 5); torch.randn(3, 7, 6)")
    save_case(case, "values", values, "... torch.randn(3, 7, 6); torch.randn(3, 7, 3)")
    save_state_dict(case, net, "(after the draws above) "
                    "AdditiveAttention(key_size=6, query_size=5, num_hiddens=9, dropout=0.2)")
    lens_cases(case, lambda vl: (net(queries, keys, values, vl), net.attention_weights),
               {"1d": i64([2, 7, 5]), "2d": i64([[1, 3, 7, 0], [2, 2, 5, 6], [7, 4, 1, 3]]), "none": None},
               {"1d": "torch.tensor([2, 7, 5])", "2d": "torch.tensor([[1, 3, 7, 0], [2, 2, 5, 6], [7, 4, 1, 3]])"})

    # 3. DotProductAttention: the chapter's toy, then random.
    case = "dot_product_toy"
    torch.manual_seed(12)
    queries = torch.normal(0, 1, (2, 1, 2))
    keys = torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    net = DotProductAttention(dropout=0.5)
    net.eval()
    save_case(case, "queries", queries, "torch.manual_seed(12); torch.normal(0, 1, (2, 1, 2))")
    save_case(case, "keys", keys, "torch.ones((2, 10, 2))")
    save_case(case, "values", values, "torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)")
    save_state_dict(case, net, "DotProductAttention(dropout=0.5)")  # empty
    lens_cases(case, lambda vl: (net(queries, keys, values, vl), net.attention_weights),
               {"1d": i64([2, 6])}, {"1d": "torch.tensor([2, 6])"})

    case = "dot_product_random"
    torch.manual_seed(13)
    queries, keys, values = torch.randn(3, 4, 5), torch.randn(3, 7, 5), torch.randn(3, 7, 3)
    net = DotProductAttention(dropout=0.5)
    net.eval()
    save_case(case, "queries", queries, "torch.manual_seed(13); torch.randn(3, 4, 5)")
    save_case(case, "keys", keys, "torch.manual_seed(13); torch.randn(3, 4, 5); torch.randn(3, 7, 5)")
    save_case(case, "values", values, "... torch.randn(3, 7, 5); torch.randn(3, 7, 3)")
    lens_cases(case, lambda vl: (net(queries, keys, values, vl), net.attention_weights),
               {"1d": i64([2, 7, 0]), "2d": i64([[1, 3, 7, 0], [2, 2, 5, 6], [7, 4, 1, 3]]), "none": None},
               {"1d": "torch.tensor([2, 7, 0])", "2d": "torch.tensor([[1, 3, 7, 0], [2, 2, 5, 6], [7, 4, 1, 3]])"})

    # 4. MultiHeadAttention: 12 hiddens, 3 heads, batch 2, 4 queries, 6 pairs.
    def mha_case(case, seed, key_size, query_size, value_size, bias):
        torch.manual_seed(seed)
        queries = torch.randn(2, 4, query_size)
        keys = torch.randn(2, 6, key_size)
        values = torch.randn(2, 6, value_size)
        ctor = (f"MultiHeadAttention(key_size={key_size}, query_size={query_size}, value_size={value_size}, "
                f"num_hiddens=12, num_heads=3, dropout=0.5, bias={bias})")
        net = MultiHeadAttention(key_size, query_size, value_size, 12, 3, 0.5, bias=bias)
        net.eval()
        save_case(case, "queries", queries, f"torch.manual_seed({seed}); torch.randn(2, 4, {query_size})")
        save_case(case, "keys", keys, f"... torch.randn(2, 4, {query_size}); torch.randn(2, 6, {key_size})")
        save_case(case, "values", values, f"... torch.randn(2, 6, {key_size}); torch.randn(2, 6, {value_size})")
        save_state_dict(case, net, f"(after the draws above) {ctor}")
        lens_cases(case, lambda vl: (net(queries, keys, values, vl), net.attention.attention_weights),
                   {"1d": i64([3, 5]), "2d": i64([[1, 6, 0, 4], [2, 3, 6, 5]]), "none": None},
                   {"1d": "torch.tensor([3, 5])", "2d": "torch.tensor([[1, 6, 0, 4], [2, 3, 6, 5]])"})

    mha_case("mha", 14, 12, 12, 12, False)
    # d2l's reshaping helpers on their own (pure data movement), on mha's queries.
    torch.manual_seed(14)
    X = torch.randn(2, 4, 12)
    save_case("mha", "transpose_qkv_queries", transpose_qkv(X, 3), "transpose_qkv(queries, 3)  # (2*3, 4, 4)")
    save_case("mha", "transpose_output_queries", transpose_output(transpose_qkv(X, 3), 3),
              "transpose_output(transpose_qkv(queries, 3), 3)  # == queries")
    mha_case("mha_bias", 15, 12, 12, 12, True)
    mha_case("mha_sizes", 16, 7, 5, 4, False)

    # 5. Nadaraya-Watson: the chapter's data set (random, so seeded), the
    #    non-parametric pooling, and NWKernelRegression trained as the book does.
    case = "nadaraya_watson"
    torch.manual_seed(17)
    n_train = 50
    x_train, _ = torch.sort(torch.rand(n_train) * 5)

    def f(x):
        return 2 * torch.sin(x) + x**0.8

    y_train = f(x_train) + torch.normal(0.0, 0.5, (n_train,))
    x_test = torch.arange(0, 5, 0.1)
    n_test = len(x_test)
    X_repeat = x_test.repeat_interleave(n_train).reshape((-1, n_train))
    attention_weights = nn.functional.softmax(-(X_repeat - x_train)**2 / 2, dim=1)
    y_hat = torch.matmul(attention_weights, y_train)
    save_case(case, "x_train", x_train, "torch.manual_seed(17); torch.sort(torch.rand(50) * 5)[0]")
    save_case(case, "y_train", y_train, "2 * torch.sin(x_train) + x_train**0.8 + torch.normal(0.0, 0.5, (50,))")
    save_case(case, "x_test", x_test, "torch.arange(0, 5, 0.1)")
    save_case(case, "attention_weights", attention_weights,
              "nn.functional.softmax(-(x_test.repeat_interleave(50).reshape((-1, 50)) - x_train)**2 / 2, dim=1)")
    save_case(case, "y_hat", y_hat, "torch.matmul(attention_weights, y_train)")

    # The parametric model, trained for 5 epochs with the book's code; its w
    # is exported, and its prediction with keys x_train.repeat((n_test, 1)).
    X_tile = x_train.repeat((n_train, 1))
    Y_tile = y_train.repeat((n_train, 1))
    keys = X_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
    values = Y_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
    torch.manual_seed(18)
    net = NWKernelRegression()
    loss = nn.MSELoss(reduction='none')
    trainer = torch.optim.SGD(net.parameters(), lr=0.5)
    for epoch in range(5):
        trainer.zero_grad()
        l = loss(net(x_train, keys, values), y_train)
        l.sum().backward()
        trainer.step()
    keys = x_train.repeat((n_test, 1))
    values = y_train.repeat((n_test, 1))
    y_hat = net(x_test, keys, values).detach()
    save_case(case, "w", net.w.detach(),
              "torch.manual_seed(18); NWKernelRegression().w after 5 epochs of SGD(lr=0.5) as in the book")
    save_case(case, "attention_weights_w", net.attention_weights.detach(),
              "net(x_test, x_train.repeat((n_test, 1)), y_train.repeat((n_test, 1))); net.attention_weights")
    save_case(case, "y_hat_w", y_hat, "net(x_test, x_train.repeat((n_test, 1)), y_train.repeat((n_test, 1)))")


def write_manifest():
    # Remove stale goldens this script no longer produces.
    for f in sorted(os.listdir(DATA)):
        if f.endswith(".npy") and f not in MANIFEST:
            os.remove(os.path.join(DATA, f))
            print(f"removed stale data/{f}")
    for root, dirs, files in os.walk(os.path.join(DATA, ATTENTION), topdown=False):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), DATA)
            if f.endswith((".npy", ".safetensors")) and rel not in MANIFEST:
                os.remove(os.path.join(root, f))
                print(f"removed stale data/{rel}")
        if not os.listdir(root):
            os.rmdir(root)
    manifest = {
        "generator": "tests/parity/make_goldens.py",
        "run": "/usr/bin/python3 tests/parity/make_goldens.py",
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "oracle": "d2l/torch.py sequence_mask and masked_softmax (chapter attention-scoring-functions), "
                  "torch.bmm, torch.nn.functional.softmax / log_softmax; "
                  "d2l's AdditiveAttention, DotProductAttention, transpose_qkv, transpose_output, "
                  "MultiHeadAttention and the Nadaraya-Watson chapter's pooling and NWKernelRegression "
                  "(attention/<case>/, eval mode)",
        "files": dict(sorted(MANIFEST.items())),
    }
    path = os.path.join(DATA, "manifest.json")
    with open(path, "w") as fh:
        json.dump(manifest, fh, indent=2, sort_keys=False)
        fh.write("\n")
    print(f"wrote tests/parity/data/manifest.json  ({len(MANIFEST)} files, torch {torch.__version__})")


def verify():
    """Reload everything with numpy only and check shapes and known values."""
    with open(os.path.join(DATA, "manifest.json")) as fh:
        man = json.load(fh)["files"]
    L = {}
    for f, info in man.items():
        if info.get("format") == "safetensors":
            st = read_safetensors(os.path.join(DATA, f))
            assert sorted(st) == sorted(info["tensors"]), f
            folder = os.path.dirname(f)
            for key, a in st.items():
                assert list(a.shape) == info["tensors"][key]["shape"], (f, key)
                assert str(a.dtype) == info["tensors"][key]["dtype"], (f, key)
                # the same numbers, bit for bit, as <key>.npy beside it
                assert np.array_equal(a, np.load(os.path.join(DATA, folder, key + ".npy")), equal_nan=True), (f, key)
            continue
        a = np.load(os.path.join(DATA, f), allow_pickle=False)
        assert list(a.shape) == info["shape"], f
        assert str(a.dtype) == info["dtype"], f
        assert a.flags["C_CONTIGUOUS"], f
        L[f[:-4]] = a

    # sequence_mask
    assert np.array_equal(L["sequence_mask_d2l_out"], np.array([[1, 0, 0], [4, 5, 0]], np.float32))
    X, vl, out = L["sequence_mask_random_X"], L["sequence_mask_random_valid_len"], L["sequence_mask_random_out"]
    for i, n in enumerate(vl):
        assert np.array_equal(out[i, :n], X[i, :n]) and np.all(out[i, n:] == -1.0)

    # masked_softmax: masked positions exactly 0, valid part sums to 1,
    # length-0 rows uniform 1/n, valid part equals a plain softmax.
    def check_ms(Xn, vln, outn):
        X, out = L[Xn], L[outn]
        n = X.shape[-1]
        if vln is None:
            lens = np.full(X.shape[:-1], n)
        else:
            v = L[vln]
            lens = np.repeat(v[:, None], X.shape[1], axis=1) if v.ndim == 1 else v
        for idx in np.ndindex(*X.shape[:-1]):
            k, row = int(lens[idx]), out[idx]
            if k == 0:
                assert np.allclose(row, 1.0 / n, rtol=0, atol=1e-7), (outn, idx, row)
                continue
            assert np.all(row[k:] == 0.0), (outn, idx)
            x = X[idx][:k].astype(np.float64)
            ref = np.exp(x - x.max()); ref /= ref.sum()
            assert np.allclose(row[:k], ref, rtol=0, atol=2e-6), (outn, idx)
            assert np.all(np.isfinite(row))
    check_ms("masked_softmax_d2l_1d_X", "masked_softmax_d2l_1d_valid_lens", "masked_softmax_d2l_1d_out")
    check_ms("masked_softmax_d2l_2d_X", "masked_softmax_d2l_2d_valid_lens", "masked_softmax_d2l_2d_out")
    check_ms("masked_softmax_X", "masked_softmax_1d_valid_lens", "masked_softmax_1d_out")
    check_ms("masked_softmax_X", "masked_softmax_2d_valid_lens", "masked_softmax_2d_out")
    check_ms("masked_softmax_X", None, "masked_softmax_none_out")
    check_ms("masked_softmax_large_X", None, "masked_softmax_large_none_out")
    check_ms("masked_softmax_large_X", "masked_softmax_1d_valid_lens", "masked_softmax_large_1d_out")
    check_ms("masked_softmax_large_X", "masked_softmax_2d_valid_lens", "masked_softmax_large_2d_out")
    v2 = L["masked_softmax_2d_valid_lens"]
    assert (v2 == 0).any() and (v2 == 9).any()

    # bmm
    assert L["bmm_ones_out"].shape == (2, 1, 6) and np.all(L["bmm_ones_out"] == 4.0)
    assert np.allclose(L["bmm_weights_out"].reshape(-1), [4.5, 14.5], rtol=0, atol=1e-5)
    for name in ("bmm_random", "bmm_odd"):
        ref = np.matmul(L[name + "_A"].astype(np.float64), L[name + "_B"].astype(np.float64))
        assert np.allclose(L[name + "_out"], ref, rtol=0, atol=1e-4), name
    ref = np.matmul(L["bmm_random_A_f64"], L["bmm_random_B_f64"])
    assert np.allclose(L["bmm_random_out_f64"], ref, rtol=0, atol=1e-12)
    assert np.array_equal(L["bmm_random_A_f64"], L["bmm_random_A"].astype(np.float64))

    # softmax / log_softmax along a middle dim
    X = L["softmax_mid_X"].astype(np.float64)
    def lsm(x, ax):
        m = x.max(axis=ax, keepdims=True)
        return x - m - np.log(np.exp(x - m).sum(axis=ax, keepdims=True))
    assert np.allclose(L["softmax_mid_dim1_out"], np.exp(lsm(X, 1)), rtol=0, atol=1e-6)
    assert np.allclose(L["softmax_mid_dim1_out"].sum(axis=1), 1.0, atol=1e-6)
    assert np.allclose(L["log_softmax_mid_dim1_out"], lsm(X, 1), rtol=0, atol=1e-5)
    assert np.allclose(L["log_softmax_mid_dimlast_out"], lsm(X, -1), rtol=0, atol=1e-5)

    verify_attention(L)

    total = sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(DATA) for f in files)
    # Goldens stay small: cases are sized to exercise each rule, not to be big.
    assert total < 512 * 1024, total
    print(f"verified {len(man)} files, {total} bytes in tests/parity/data/")


def verify_attention(L):
    """Independent numpy checks of the attention goldens (float64 references)."""
    A = lambda case, role: L[f"{ATTENTION}/{case}/{role}"]

    def lens_of(case, suffix, shape):   # valid lengths per (batch, query) row
        if suffix == "none":
            return np.full(shape[:2], shape[2])
        v = A(case, f"valid_lens_{suffix}")
        return np.repeat(v[:, None], shape[1], axis=1) if v.ndim == 1 else v

    def pool(scores, lens):
        w = np.empty_like(scores)
        for b, q in np.ndindex(*scores.shape[:2]):
            s = scores[b, q].copy()
            s[int(lens[b, q]):] = -1e6
            e = np.exp(s - s.max())
            w[b, q] = e / e.sum()
        return w

    def check(case, suffix, scores, values, out_of):
        w = pool(scores, lens_of(case, suffix, scores.shape))
        assert np.allclose(A(case, f"attention_weights_{suffix}"), w, rtol=0, atol=1e-6), (case, suffix)
        assert np.allclose(A(case, f"output_{suffix}"), out_of(np.matmul(w, values)), rtol=0, atol=1e-5), (case, suffix)

    # the chapter's toys: exactly the mean of the first valid_lens values
    for case in ("additive_toy", "dot_product_toy"):
        assert np.allclose(A(case, "output_1d"), [[[2, 3, 4, 5]], [[10, 11, 12, 13]]], rtol=0, atol=1e-5), case
    for case in ("additive_toy", "additive_random"):
        q, k, v = (A(case, r).astype(np.float64) for r in ("queries", "keys", "values"))
        Wq, Wk, wv = (A(case, r).astype(np.float64) for r in ("W_q.weight", "W_k.weight", "w_v.weight"))
        feats = np.tanh((q @ Wq.T)[:, :, None, :] + (k @ Wk.T)[:, None, :, :])
        scores = (feats @ wv.T)[..., 0]
        for suffix in ("1d", "2d", "none"):
            if f"{ATTENTION}/{case}/output_{suffix}" in L:
                check(case, suffix, scores, v, lambda o: o)
    for case in ("dot_product_toy", "dot_product_random"):
        q, k, v = (A(case, r).astype(np.float64) for r in ("queries", "keys", "values"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        for suffix in ("1d", "2d", "none"):
            if f"{ATTENTION}/{case}/output_{suffix}" in L:
                check(case, suffix, scores, v, lambda o: o)
    for case in ("mha", "mha_bias", "mha_sizes"):
        q, k, v = (A(case, r).astype(np.float64) for r in ("queries", "keys", "values"))
        lin = {}
        for name in ("W_q", "W_k", "W_v", "W_o"):
            W = A(case, f"{name}.weight").astype(np.float64)
            bk = f"{ATTENTION}/{case}/{name}.bias"
            b = L[bk].astype(np.float64) if bk in L else 0.0
            lin[name] = (lambda W, b: lambda x: x @ W.T + b)(W, b)
        heads = 3
        split = lambda x: x.reshape(x.shape[0], x.shape[1], heads, -1).transpose(0, 2, 1, 3)  # [B, H, L, F]
        qh, kh, vh = split(lin["W_q"](q)), split(lin["W_k"](k)), split(lin["W_v"](v))
        scores = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(qh.shape[-1])        # [B, H, Q, K]
        for suffix in ("1d", "2d", "none"):
            lens = lens_of(case, suffix, (q.shape[0], q.shape[1], k.shape[1]))
            w = np.stack([pool(scores[:, h], lens) for h in range(heads)], axis=1)   # [B, H, Q, K]
            got = A(case, f"attention_weights_{suffix}").reshape(w.shape)           # b*heads + h
            assert np.allclose(got, w, rtol=0, atol=1e-6), (case, suffix)
            concat = (w @ vh).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
            assert np.allclose(A(case, f"output_{suffix}"), lin["W_o"](concat), rtol=0, atol=1e-5), (case, suffix)
    q = A("mha", "queries")
    assert np.array_equal(A("mha", "transpose_qkv_queries"),
                          q.reshape(2, 4, 3, 4).transpose(0, 2, 1, 3).reshape(6, 4, 4))
    assert np.array_equal(A("mha", "transpose_output_queries"), q)
    assert f"{ATTENTION}/mha/W_q.bias" not in L and f"{ATTENTION}/mha_bias/W_o.bias" in L

    case = "nadaraya_watson"
    xtr, ytr, xte = (A(case, r).astype(np.float64) for r in ("x_train", "y_train", "x_test"))
    assert np.all(np.diff(xtr) >= 0) and xtr.shape == (50,) and xte.shape == (50,)
    for wkey, wsuffix in ((1.0, ""), (float(A(case, "w")[0]), "_w")):
        s = -((xte[:, None] - xtr[None, :]) * wkey) ** 2 / 2
        e = np.exp(s - s.max(axis=1, keepdims=True))
        w = e / e.sum(axis=1, keepdims=True)
        assert np.allclose(A(case, "attention_weights" + wsuffix), w, rtol=0, atol=1e-6), wsuffix
        assert np.allclose(A(case, "y_hat" + wsuffix), w @ ytr, rtol=0, atol=1e-5), wsuffix


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    MANIFEST.clear()
    make()
    make_attention()
    goldens_attention_grad.make(sys.modules[__name__])
    goldens_training.make(sys.modules[__name__])
    goldens_modules.make(sys.modules[__name__])
    goldens_seq2seq.make(sys.modules[__name__])
    goldens_transformer.make(sys.modules[__name__])
    write_manifest()
    verify()
    sys.exit(0)
