"""Goldens for training: losses, optimizers, gradient clipping, and the
Nadaraya-Watson regression trained as the book trains it.

Called by make_goldens.py (make(g), g being that module).  Writes
data/training/<case>/<role>.npy through g.save, so every file is in the
manifest; the folder is rebuilt from scratch on every run, so no stale file
survives.

Cases:
  mse               nn.MSELoss(reduction=...) on fixed random tensors, and the
                    gradients of the mean loss for both operands.
  cross_entropy     F.cross_entropy with the classes in dim 1 of [2, 5, 3]
                    logits (dimtensor names the class dim instead), its three
                    reductions and the logits' gradient of the mean; a second
                    case with large logits (no overflow).
  masked_ce         d2l's MaskedSoftmaxCELoss on [3, 4, 6] predictions, and
                    the predictions' gradient of loss.sum(); d2l's own check
                    (ones, valid_len [4, 2, 0]).
  sgd, sgd_momentum, adam, adam_decay
                    three steps on two parameters with fixed gradients; the
                    second parameter has no gradient at step 2 (skipped).
  clip              d2l's grad_clipping on two gradients, above and below theta.
  nadaraya_watson   NWKernelRegression's initial w, the per-epoch losses and
                    the final w of the book's 5 epochs of SGD(lr=0.5), on
                    make_attention's data (seeds 17 and 18).
"""
import os
import shutil

CASE_ROOT = "training"


def make(g):
    torch, nn, f32, i64 = g.torch, g.nn, g.f32, g.i64
    root = os.path.join(g.DATA, CASE_ROOT)
    shutil.rmtree(root, ignore_errors=True)

    def save(case, role, t, expr):
        os.makedirs(os.path.join(root, case), exist_ok=True)
        g.save(f"{CASE_ROOT}/{case}/{role}", t, expr)

    # --- MSELoss -------------------------------------------------------------
    torch.manual_seed(30)
    pred = torch.randn(3, 4)
    target = torch.randn(3, 4)
    save("mse", "pred", pred, "torch.manual_seed(30); torch.randn(3, 4)")
    save("mse", "target", target, "torch.manual_seed(30); torch.randn(3, 4); torch.randn(3, 4)")
    for red in ("none", "mean", "sum"):
        save("mse", f"loss_{red}", nn.MSELoss(reduction=red)(pred, target), f"nn.MSELoss(reduction='{red}')(pred, target)")
    p, t = pred.clone().requires_grad_(), target.clone().requires_grad_()
    nn.MSELoss()(p, t).backward()
    save("mse", "grad_pred_mean", p.grad, "nn.MSELoss()(pred, target).backward(); pred.grad")
    save("mse", "grad_target_mean", t.grad, "nn.MSELoss()(pred, target).backward(); target.grad")

    # --- cross_entropy -------------------------------------------------------
    torch.manual_seed(31)
    logits = torch.randn(2, 5, 3) * 2
    labels = torch.randint(0, 5, (2, 3))
    save("cross_entropy", "logits", logits, "torch.manual_seed(31); torch.randn(2, 5, 3) * 2  # classes in dim 1")
    save("cross_entropy", "labels", labels, "torch.randint(0, 5, (2, 3))")
    for red in ("none", "mean", "sum"):
        save("cross_entropy", f"loss_{red}", nn.functional.cross_entropy(logits, labels, reduction=red),
             f"F.cross_entropy(logits, labels, reduction='{red}')")
    x = logits.clone().requires_grad_()
    nn.functional.cross_entropy(x, labels).backward()
    save("cross_entropy", "grad_mean", x.grad, "F.cross_entropy(logits, labels).backward(); logits.grad")
    big = f32([[1000.0, -1000.0, 999.0, 0.0], [-50.0, 80.0, 79.5, 80.0]])
    big_labels = i64([2, 0])
    save("cross_entropy", "large_logits", big, "large logits [2, 4], classes in dim 1")
    save("cross_entropy", "large_labels", big_labels, "torch.tensor([2, 0])")
    save("cross_entropy", "large_loss_none", nn.functional.cross_entropy(big, big_labels, reduction="none"),
         "F.cross_entropy(large_logits, large_labels, reduction='none')")

    # --- d2l's MaskedSoftmaxCELoss -------------------------------------------
    class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
        """The softmax cross-entropy loss with masks (d2l/torch.py, verbatim)."""
        # `pred` shape: (`batch_size`, `num_steps`, `vocab_size`)
        # `label` shape: (`batch_size`, `num_steps`)
        # `valid_len` shape: (`batch_size`,)
        def forward(self, pred, label, valid_len):
            weights = torch.ones_like(label)
            weights = g.sequence_mask(weights, valid_len)
            self.reduction = 'none'
            unweighted_loss = super(MaskedSoftmaxCELoss, self).forward(
                pred.permute(0, 2, 1), label)
            weighted_loss = (unweighted_loss * weights).mean(dim=1)
            return weighted_loss

    loss = MaskedSoftmaxCELoss()
    save("masked_ce", "d2l_check", loss(torch.ones(3, 4, 10), torch.ones((3, 4), dtype=torch.long),
                                        torch.tensor([4, 2, 0])),
         "MaskedSoftmaxCELoss()(torch.ones(3, 4, 10), torch.ones((3, 4), dtype=torch.long), torch.tensor([4, 2, 0]))")
    torch.manual_seed(32)
    pred = torch.randn(3, 4, 6)
    label = torch.randint(0, 6, (3, 4))
    valid_len = i64([4, 1, 3])
    save("masked_ce", "pred", pred, "torch.manual_seed(32); torch.randn(3, 4, 6)")
    save("masked_ce", "label", label, "torch.randint(0, 6, (3, 4))")
    save("masked_ce", "valid_len", valid_len, "torch.tensor([4, 1, 3])")
    x = pred.clone().requires_grad_()
    out = loss(x, label, valid_len)
    out.sum().backward()
    save("masked_ce", "loss", out, "MaskedSoftmaxCELoss()(pred, label, valid_len)")
    save("masked_ce", "grad_pred", x.grad, "MaskedSoftmaxCELoss()(pred, label, valid_len).sum().backward(); pred.grad")

    # --- optimizers: three steps with fixed gradients ------------------------
    def optimizer_case(case, seed, make_opt, expr):
        torch.manual_seed(seed)
        a = torch.randn(3, 4)
        b = torch.randn(5)
        grads = [(torch.randn(3, 4), torch.randn(5)) for _ in range(3)]
        save(case, "a0", a, f"torch.manual_seed({seed}); torch.randn(3, 4)")
        save(case, "b0", b, "torch.randn(5)")
        pa, pb = nn.Parameter(a.clone()), nn.Parameter(b.clone())
        opt = make_opt([pa, pb])
        a_steps, b_steps = [], []
        for k, (ga, gb) in enumerate(grads, start=1):
            pa.grad = ga.clone()
            pb.grad = None if k == 2 else gb.clone()
            opt.step()
            a_steps.append(pa.detach().clone())
            b_steps.append(pb.detach().clone())
        save(case, "grads_a", torch.stack([ga for ga, _ in grads]), "the gradients of a at steps 1-3: torch.randn(3, 4) each")
        save(case, "grads_b", torch.stack([gb for _, gb in grads]),
             "the gradients of b at steps 1-3: torch.randn(5) each (b.grad = None at step 2)")
        save(case, "a_steps", torch.stack(a_steps), f"{expr}: a after steps 1-3")
        save(case, "b_steps", torch.stack(b_steps), f"{expr}: b after steps 1-3 (no gradient at step 2)")

    optimizer_case("sgd", 33, lambda ps: torch.optim.SGD(ps, lr=0.1), "torch.optim.SGD(lr=0.1)")
    optimizer_case("sgd_momentum", 34, lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01),
                   "torch.optim.SGD(lr=0.05, momentum=0.9, weight_decay=0.01)")
    optimizer_case("adam", 35, lambda ps: torch.optim.Adam(ps, lr=0.01), "torch.optim.Adam(lr=0.01)")
    optimizer_case("adam_decay", 36,
                   lambda ps: torch.optim.Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
                   "torch.optim.Adam(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)")

    # --- d2l's grad_clipping -------------------------------------------------
    def grad_clipping(params, theta):
        """d2l/torch.py's grad_clipping, over a list of parameters."""
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > theta:
            for param in params:
                param.grad[:] *= theta / norm
        return norm

    torch.manual_seed(37)
    ga, gb = torch.randn(3, 4), torch.randn(5)
    save("clip", "grad_a", ga, "torch.manual_seed(37); torch.randn(3, 4)")
    save("clip", "grad_b", gb, "torch.randn(5)")
    for name, theta in (("clipped", 1.0), ("unclipped", 100.0)):
        pa, pb = nn.Parameter(torch.zeros(3, 4)), nn.Parameter(torch.zeros(5))
        pa.grad, pb.grad = ga.clone(), gb.clone()
        norm = grad_clipping([pa, pb], theta)
        save("clip", f"norm_{name}", norm.reshape(1), f"grad_clipping([a, b], {theta}) (the norm)")
        save("clip", f"grad_a_{name}", pa.grad, f"grad_clipping([a, b], {theta}); a.grad")
        save("clip", f"grad_b_{name}", pb.grad, f"grad_clipping([a, b], {theta}); b.grad")

    # --- Nadaraya-Watson, trained as the book does --------------------------
    # The data of make_attention's "nadaraya_watson" case (same seeds, same draws).
    torch.manual_seed(17)
    n_train = 50
    x_train, _ = torch.sort(torch.rand(n_train) * 5)

    def f(x):
        return 2 * torch.sin(x) + x**0.8

    y_train = f(x_train) + torch.normal(0.0, 0.5, (n_train,))
    X_tile = x_train.repeat((n_train, 1))
    Y_tile = y_train.repeat((n_train, 1))
    keys = X_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
    values = Y_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
    torch.manual_seed(18)
    net = g.NWKernelRegression()
    save("nadaraya_watson", "w_initial", net.w.detach().clone(), "torch.manual_seed(18); NWKernelRegression().w")
    loss = nn.MSELoss(reduction='none')
    trainer = torch.optim.SGD(net.parameters(), lr=0.5)
    losses, ws = [], []
    for epoch in range(5):
        trainer.zero_grad()
        l = loss(net(x_train, keys, values), y_train)
        l.sum().backward()
        trainer.step()
        print(f'epoch {epoch + 1}, loss {float(l.sum()):.6f}')
        losses.append(float(l.sum()))
        ws.append(float(net.w))
    save("nadaraya_watson", "losses", f32(losses), "float(l.sum()) of each of the 5 epochs (before its step)")
    save("nadaraya_watson", "w_per_epoch", f32(ws), "net.w after each of the 5 epochs")
    verify(g)


def verify(g):
    """Independent numpy checks of what make() wrote, read back from disk."""
    import numpy as np
    load = lambda rel: np.load(os.path.join(g.DATA, rel + ".npy"), allow_pickle=False)
    T = lambda case, role: load(f"{CASE_ROOT}/{case}/{role}").astype(np.float64)
    L = {f"{CASE_ROOT}/cross_entropy/labels": load(f"{CASE_ROOT}/cross_entropy/labels"),
         "attention/nadaraya_watson/w": load("attention/nadaraya_watson/w")}
    p, t = T("mse", "pred"), T("mse", "target")
    assert np.allclose(T("mse", "loss_none"), (p - t) ** 2, atol=1e-6)
    assert np.allclose(T("mse", "loss_mean"), ((p - t) ** 2).mean(), atol=1e-6)
    x, lab = T("cross_entropy", "logits"), L[f"{CASE_ROOT}/cross_entropy/labels"]
    lse = np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1)) + x.max(axis=1)
    picked = np.take_along_axis(x, lab[:, None, :], axis=1)[:, 0, :]
    assert np.allclose(T("cross_entropy", "loss_none"), lse - picked, atol=1e-5)
    assert np.allclose(T("masked_ce", "d2l_check"), [2.3026, 1.1513, 0.0], atol=1e-4)
    assert T("nadaraya_watson", "losses").shape == (5,)
    assert np.allclose(T("nadaraya_watson", "w_per_epoch")[-1], L["attention/nadaraya_watson/w"][0], atol=0)
    print(f"verified data/{CASE_ROOT}/")
