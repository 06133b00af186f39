#!/usr/bin/python3
"""Golden data for dimtensor's parity tests against d2l's own PyTorch code.

How to run (from the repository root), with Debian's python and python3-torch:

    /usr/bin/python3 tests/parity/make_goldens.py

Writes tests/parity/data/*.npy (float32 unless the name ends in _f64; valid
lengths are int64; C order) and tests/parity/data/manifest.json, which lists
every file with its shape, dtype and the expression that produced it, plus the
torch and numpy versions used (read at run time; the committed data was made
with Debian's torch 1.13.0a0 and numpy 1.24.2).

The script is deterministic (every random case is seeded) and idempotent:
running it again rewrites byte-identical files and deletes stale *.npy files
in data/ that it no longer produces. After writing, it loads every file back
with numpy and checks shapes, dtypes and a few known values.
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn

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


def write_manifest():
    # Remove stale goldens this script no longer produces.
    for f in sorted(os.listdir(DATA)):
        if f.endswith(".npy") and f not in MANIFEST:
            os.remove(os.path.join(DATA, f))
            print(f"removed stale data/{f}")
    manifest = {
        "generator": "tests/parity/make_goldens.py",
        "run": "/usr/bin/python3 tests/parity/make_goldens.py",
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "oracle": "d2l/torch.py sequence_mask and masked_softmax (chapter attention-scoring-functions), "
                  "torch.bmm, torch.nn.functional.softmax / log_softmax",
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

    total = sum(os.path.getsize(os.path.join(DATA, f)) for f in os.listdir(DATA))
    assert total < 200 * 1024, total
    print(f"verified {len(man)} files, {total} bytes in tests/parity/data/")


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    MANIFEST.clear()
    make()
    write_manifest()
    verify()
    sys.exit(0)
