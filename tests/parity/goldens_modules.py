"""Goldens of the trainable modules (tests/parity/modules_parity_test.cpp):
torch.nn.GRU (two layers, eval mode), torch.nn.LayerNorm, d2l's
PositionWiseFFN and torch.nn.Embedding.  For each, the inputs, the module's
state_dict (<key>.npy and weights.safetensors), the outputs, a random
weighting G of each output and the gradients of sum(out * G) with respect
to the inputs and every parameter (grad_<input>, grad_<key>).

Called by make_goldens.py as goldens_modules.make(module of make_goldens);
the cases are folders data/attention/module_<name>/ (written through
save_case, so the manifest lists them and stale files are removed).
"""


# d2l's PositionWiseFFN, verbatim from d2l/torch.py (chapter "Transformer").
def position_wise_ffn(nn):
    class PositionWiseFFN(nn.Module):
        """基于位置的前馈网络"""
        def __init__(self, ffn_num_input, ffn_num_hiddens, ffn_num_outputs,
                     **kwargs):
            super(PositionWiseFFN, self).__init__(**kwargs)
            self.dense1 = nn.Linear(ffn_num_input, ffn_num_hiddens)
            self.relu = nn.ReLU()
            self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

        def forward(self, X):
            return self.dense2(self.relu(self.dense1(X)))
    return PositionWiseFFN


def make(g):
    torch, nn = g.torch, g.nn

    def save_grads(case, module, inputs):
        """grad_<name> of each input (name -> tensor) and grad_<key> of each parameter."""
        for name, t in inputs.items():
            g.save_case(case, f"grad_{name}", t.grad, f"{name}.grad after sum(out * G).backward()")
        for key, p in module.named_parameters():
            g.save_case(case, f"grad_{key}", p.grad, f"net.{key}.grad after sum(out * G).backward()")

    # --- GRU: two layers, d2l's time-major layout, eval mode (no dropout) ----
    case = "module_gru"
    torch.manual_seed(40)
    net = nn.GRU(4, 5, 2, dropout=0.1)
    net.eval()
    X = torch.randn(6, 3, 4)
    H0 = torch.randn(2, 3, 5)
    g.save_state_dict(case, net, "torch.manual_seed(40); nn.GRU(4, 5, 2, dropout=0.1)")
    g.save_case(case, "X", X, "torch.randn(6, 3, 4)  # (num_steps, batch, embed)")
    g.save_case(case, "H0", H0, "torch.randn(2, 3, 5)  # (num_layers, batch, num_hiddens)")
    G_out = torch.randn(6, 3, 5)
    G_state = torch.randn(2, 3, 5)
    g.save_case(case, "G_output", G_out, "torch.randn(6, 3, 5)")
    g.save_case(case, "G_state", G_state, "torch.randn(2, 3, 5)")
    x, h0 = X.clone().requires_grad_(), H0.clone().requires_grad_()
    out, state = net(x, h0)
    g.save_case(case, "output", out, "net.eval(); net(X, H0)[0]")
    g.save_case(case, "state", state, "net.eval(); net(X, H0)[1]")
    ((out * G_out).sum() + (state * G_state).sum()).backward()
    save_grads(case, net, {"X": x, "H0": h0})
    with torch.no_grad():
        out0, state0 = net(X)
    g.save_case(case, "output_zero_state", out0, "net.eval(); net(X)[0]")
    g.save_case(case, "state_zero_state", state0, "net.eval(); net(X)[1]")

    # --- LayerNorm over the last dim, random affine parameters -------------
    case = "module_layer_norm"
    torch.manual_seed(41)
    net = nn.LayerNorm(6)
    with torch.no_grad():
        net.weight.copy_(torch.rand(6) + 0.5)
        net.bias.copy_(torch.randn(6))
    X = torch.randn(2, 3, 6) * 2 + 1
    G = torch.randn(2, 3, 6)
    g.save_state_dict(case, net, "torch.manual_seed(41); nn.LayerNorm(6), weight rand(6) + 0.5, bias randn(6)")
    g.save_case(case, "X", X, "torch.randn(2, 3, 6) * 2 + 1")
    g.save_case(case, "G_output", G, "torch.randn(2, 3, 6)")
    x = X.clone().requires_grad_()
    out = net(x)
    g.save_case(case, "output", out, "net(X)")
    (out * G).sum().backward()
    save_grads(case, net, {"X": x})

    # --- d2l's PositionWiseFFN ----------------------------------------------
    case = "module_ffn"
    torch.manual_seed(42)
    net = position_wise_ffn(nn)(4, 8, 4)
    X = torch.randn(2, 3, 4)
    G = torch.randn(2, 3, 4)
    g.save_state_dict(case, net, "torch.manual_seed(42); PositionWiseFFN(4, 8, 4)")
    g.save_case(case, "X", X, "torch.randn(2, 3, 4)")
    g.save_case(case, "G_output", G, "torch.randn(2, 3, 4)")
    x = X.clone().requires_grad_()
    out = net(x)
    g.save_case(case, "output", out, "net(X)")
    (out * G).sum().backward()
    save_grads(case, net, {"X": x})

    # --- Embedding, repeated indices ----------------------------------------
    case = "module_embedding"
    torch.manual_seed(43)
    net = nn.Embedding(10, 4)
    tokens = g.i64([[1, 2, 4, 1, 9], [0, 1, 1, 7, 2]])
    G = torch.randn(2, 5, 4)
    g.save_state_dict(case, net, "torch.manual_seed(43); nn.Embedding(10, 4)")
    g.save_case(case, "tokens", tokens, "torch.tensor([[1, 2, 4, 1, 9], [0, 1, 1, 7, 2]])")
    g.save_case(case, "G_output", G, "torch.randn(2, 5, 4)")
    out = net(tokens)
    g.save_case(case, "output", out, "net(tokens)")
    (out * G).sum().backward()
    save_grads(case, net, {})
