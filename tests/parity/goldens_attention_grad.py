"""Goldens for the gradients of the attention modules: d2l's own classes
(copied verbatim in make_goldens.py) differentiated by torch's autograd.

Called by make_goldens.py (make(g), g being that module), after
make_attention().  Writes data/attention_grad/<case>/<role>.npy through
g.save, so every file is in the manifest; the folder is rebuilt from scratch
on every run, so no stale file survives.

Each case is a case of make_attention() (same seeds, same module): its
inputs, valid_lens and weights are read from data/attention/<case>/ (the
script asserts they are the ones drawn here), so only two kinds of file are
new, kept few and flat because the goldens' total size is capped:

  G                 a fixed random tensor of the output's shape (seed 40 + case index)
  grads_<lens>      for valid_lens <lens> (`1d`, `2d`, `none`): the gradients of
                    sum(net(queries, keys, values, valid_lens) * G), float32, flattened
                    (C order) and concatenated: queries, keys, values, then every
                    parameter in state_dict order (W_q.weight, W_q.bias, ...)

Cases and valid_lens: additive_random (1d, 2d, none), dot_product_random
(1d with a length 0, 2d), mha_bias (1d, 2d), mha_sizes (2d, none).
"""
import os
import shutil

import numpy as np

CASE_ROOT = "attention_grad"


def make(g):
    torch, i64 = g.torch, g.i64
    root = os.path.join(g.DATA, CASE_ROOT)
    shutil.rmtree(root, ignore_errors=True)

    def save(case, role, t, expr):
        os.makedirs(os.path.join(root, case), exist_ok=True)
        g.save(f"{CASE_ROOT}/{case}/{role}", t, expr)

    def same_as_attention_golden(case, role, t):
        a = np.load(os.path.join(g.DATA, g.ATTENTION, case, role + ".npy"))
        assert np.array_equal(a, t.detach().numpy()), (case, role)

    def differentiate(case, index, net, inputs, lens):
        """Saves G and, per valid_lens, the flat gradients of sum(net(...) * G)."""
        names = ("queries", "keys", "values")
        for name, t in zip(names, inputs):
            same_as_attention_golden(case, name, t)
        for key, t in net.state_dict().items():
            same_as_attention_golden(case, key, t)
        with torch.no_grad():
            shape = net(*inputs, None).shape
        torch.manual_seed(40 + index)
        G = torch.randn(shape)
        save(case, "G", G, f"torch.manual_seed({40 + index}); torch.randn{tuple(shape)}")
        order = ", ".join(names + tuple(net.state_dict().keys()))
        for suffix, vl in lens.items():
            if vl is not None:
                same_as_attention_golden(case, f"valid_lens_{suffix}", vl)
            leaves = [t.clone().requires_grad_() for t in inputs]
            net.zero_grad()
            (net(*leaves, vl) * G).sum().backward()
            params = dict(net.named_parameters())
            grads = [t.grad for t in leaves] + [params[key].grad for key in net.state_dict().keys()]
            how = f"valid_lens_{suffix}" if vl is not None else "None"
            save(case, f"grads_{suffix}", torch.cat([t.reshape(-1) for t in grads]),
                 f"(net(queries, keys, values, {how}) * G).sum().backward(); the .grad of {order}, "
                 "flattened and concatenated")

    # Additive attention: make_attention()'s additive_random.
    torch.manual_seed(11)
    inputs = (torch.randn(3, 4, 5), torch.randn(3, 7, 6), torch.randn(3, 7, 3))
    net = g.AdditiveAttention(key_size=6, query_size=5, num_hiddens=9, dropout=0.2)
    net.eval()
    differentiate("additive_random", 0, net, inputs,
                  {"1d": i64([2, 7, 5]), "2d": i64([[1, 3, 7, 0], [2, 2, 5, 6], [7, 4, 1, 3]]), "none": None})

    # Dot-product attention: make_attention()'s dot_product_random (a valid length 0 in 1-D).
    torch.manual_seed(13)
    inputs = (torch.randn(3, 4, 5), torch.randn(3, 7, 5), torch.randn(3, 7, 3))
    net = g.DotProductAttention(dropout=0.5)
    net.eval()
    differentiate("dot_product_random", 1, net, inputs,
                  {"1d": i64([2, 7, 0]), "2d": i64([[1, 3, 7, 0], [2, 2, 5, 6], [7, 4, 1, 3]])})

    # Multi-head attention: make_attention()'s mha_bias and mha_sizes.
    lens = {"1d": i64([3, 5]), "2d": i64([[1, 6, 0, 4], [2, 3, 6, 5]]), "none": None}
    for index, (case, seed, key_size, query_size, value_size, bias, which) in enumerate(
            (("mha_bias", 15, 12, 12, 12, True, ("1d", "2d")), ("mha_sizes", 16, 7, 5, 4, False, ("2d", "none")))):
        torch.manual_seed(seed)
        inputs = (torch.randn(2, 4, query_size), torch.randn(2, 6, key_size), torch.randn(2, 6, value_size))
        net = g.MultiHeadAttention(key_size, query_size, value_size, 12, 3, 0.5, bias=bias)
        net.eval()
        differentiate(case, 2 + index, net, inputs, {k: lens[k] for k in which})
