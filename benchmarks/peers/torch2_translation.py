"""The PyTorch 2 side of the translation benchmark (bench_translation_bench;
scripts/performance.py runs both).

Reads what bench_translation_bench wrote (DIMTENSOR_BENCH_INPUTS, under
translation/): the epoch's batches, the sentence, and per model its first
weights with dimtensor's eval-mode loss of the first batch, gradient of
decoder.dense.weight and decoded tokens.  It builds d2l's models
(Seq2SeqEncoder with Seq2SeqAttentionDecoder, embed 32, hidden 32, 2 GRU
layers; TransformerEncoder with TransformerDecoder, hidden 32, 2 blocks,
4 heads, FFN 64; d2l/torch.py as tests/parity copies it), loads the weights by
their keys, checks the loss and gradient (1e-4) and the tokens, then times:

  d2l_train_<model>       one epoch of d2l's train_seq2seq loop (teacher
                          forcing, MaskedSoftmaxCELoss summed, backward,
                          grad_clipping to 1, Adam lr 0.005), train mode,
                          dropout 0.1, in PyTorch 2 eager
  compiled_train_<model>  the same with the model torch.compile'd
  d2l_decode_<model>      d2l's predict_seq2seq of the sentence (greedy, one
                          decoder step per token), eval mode

Prints one JSON object: versions, threads, per case the median time in
milliseconds, and the checks.  Needs torch (PyPI) and numpy.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
from torch import nn

from peer_common import goldens, load_params, median_ms


# d2l's training code, verbatim from d2l/torch.py (chapter "Sequence to
# Sequence Learning"), less its plotting and timing.
def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    def forward(self, pred, label, valid_len):
        weights = torch.ones_like(label)
        weights = sequence_mask(weights, valid_len)
        self.reduction = 'none'
        unweighted_loss = super(MaskedSoftmaxCELoss, self).forward(pred.permute(0, 2, 1), label)
        weighted_loss = (unweighted_loss * weights).mean(dim=1)
        return weighted_loss


def grad_clipping(net, theta):
    params = [p for p in net.parameters() if p.requires_grad]
    norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm


def train_epoch(net, batches, optimizer, loss, bos_index):
    net.train()
    for X, X_valid_len, Y, Y_valid_len in batches:
        optimizer.zero_grad()
        bos = torch.tensor([bos_index] * Y.shape[0]).reshape(-1, 1)
        dec_input = torch.cat([bos, Y[:, :-1]], 1)  # teacher forcing
        Y_hat, _ = net(X, dec_input, X_valid_len)
        l = loss(Y_hat, Y, Y_valid_len)
        l.sum().backward()
        grad_clipping(net, 1)
        optimizer.step()


def predict(net, src_tokens, src_valid_len, bos, eos, num_steps):
    """d2l's predict_seq2seq from the sentence's indices on."""
    net.eval()
    with torch.no_grad():
        enc_valid_len = torch.tensor([src_valid_len])
        enc_X = torch.unsqueeze(torch.tensor(src_tokens, dtype=torch.long), dim=0)
        enc_outputs = net.encoder(enc_X, enc_valid_len)
        dec_state = net.decoder.init_state(enc_outputs, enc_valid_len)
        dec_X = torch.unsqueeze(torch.tensor([bos], dtype=torch.long), dim=0)
        output_seq = []
        for _ in range(num_steps):
            Y, dec_state = net.decoder(dec_X, dec_state)
            dec_X = Y.argmax(dim=2)
            pred = dec_X.squeeze(dim=0).type(torch.int32).item()
            if pred == eos:
                break
            output_seq.append(pred)
    return output_seq


def d2l_models():
    g = goldens()
    import goldens_seq2seq
    import goldens_transformer
    encoder, decoder, encoder_decoder = goldens_seq2seq.d2l_classes(g)
    t_encoder, t_decoder, _ = goldens_transformer.d2l_classes(g)

    def bahdanau(src, tgt):
        return encoder_decoder(encoder(src, 32, 32, 2, 0.1), decoder(tgt, 32, 32, 2, 0.1))

    def transformer(src, tgt):
        h = 32
        return encoder_decoder(t_encoder(src, h, h, h, h, [h], h, 64, 4, 2, 0.1),
                               t_decoder(tgt, h, h, h, h, [h], h, 64, 4, 2, 0.1))
    return {"bahdanau": bahdanau, "transformer": transformer}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, help="the directory bench_translation_bench wrote")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per case")
    parser.add_argument("--no-compile", dest="compile", action="store_false", help="leave out torch.compile")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.ones(8).sum()
    makers = d2l_models()
    d = os.path.join(args.inputs, "translation")

    def load(name):
        return torch.from_numpy(np.load(os.path.join(d, name + ".npy")))

    src_valid_len, bos, eos, src_count, tgt_count, num_steps, count = [int(v) for v in load("meta")]
    src = [int(v) for v in load("src")]
    batches = [(load("X_%d" % k), load("X_valid_len_%d" % k), load("Y_%d" % k), load("Y_valid_len_%d" % k))
               for k in range(count)]
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(), "cases": {}, "checks": {},
              "errors": []}
    loss = MaskedSoftmaxCELoss()
    for model, make in makers.items():
        net = make(src_count, tgt_count)
        net.load_state_dict(load_params(os.path.join(d, model, "params")), strict=True)
        # The check: eval mode, the first batch's loss and a gradient, as bench_translation_bench's.
        net.eval()
        X, X_valid_len, Y, Y_valid_len = batches[0]
        dec_input = torch.cat([torch.tensor([bos] * Y.shape[0]).reshape(-1, 1), Y[:, :-1]], 1)
        l = loss(net(X, dec_input, X_valid_len)[0], Y, Y_valid_len).sum()
        l.backward()
        l = l.detach()
        want = float(np.load(os.path.join(d, model, "loss.npy")))
        grad = torch.from_numpy(np.load(os.path.join(d, model, "grad_dense.npy")))
        checks = {"loss": abs(float(l) - want) / abs(want),
                  "grad": float((net.decoder.dense.weight.grad - grad).abs().max()) / float(grad.abs().max())}
        dec = make(src_count, tgt_count)
        dec.load_state_dict(load_params(os.path.join(d, model + "_decoding", "params")), strict=True)
        tokens = predict(dec, src, src_valid_len, bos, eos, num_steps)
        want_tokens = [int(v) for v in np.load(os.path.join(d, model + "_decoding", "tokens.npy"))]
        if model == "transformer":
            # d2l's TransformerDecoder adds position 0's encoding to every
            # step it decodes one at a time (its PositionalEncoding reads
            # P[:, :1] for a one-step input); dimtensor's adds the step's own.
            # From the second token on the two differ by design: the first
            # token and the number of steps (the work timed) must agree.
            checks["tokens_equal"] = tokens[:1] == want_tokens[:1] and len(tokens) == len(want_tokens)
        else:
            checks["tokens_equal"] = tokens == want_tokens
        result["checks"][model] = checks
        if not (checks["loss"] <= 1e-4 and checks["grad"] <= 1e-4 and checks["tokens_equal"]):
            result["errors"].append("%s: PyTorch and dimtensor differ (%s)" % (model, checks))
            continue
        optimizer = torch.optim.Adam(net.parameters(), lr=0.005)
        ms, n = median_ms(lambda: train_epoch(net, batches, optimizer, loss, bos), args.min_time, 5)
        result["cases"]["d2l_train_" + model] = {"ms": ms, "runs": n}
        ms, n = median_ms(lambda: predict(dec, src, src_valid_len, bos, eos, num_steps), args.min_time, 20)
        result["cases"]["d2l_decode_" + model] = {"ms": ms, "runs": n, "steps": min(len(tokens) + 1, num_steps)}
        if args.compile:
            try:
                compiled = torch.compile(net)
                c_opt = torch.optim.Adam(net.parameters(), lr=0.005)
                ms, n = median_ms(lambda: train_epoch(compiled, batches, c_opt, loss, bos), args.min_time, 5)
                result["cases"]["compiled_train_" + model] = {"ms": ms, "runs": n}
            except Exception as e:  # noqa: BLE001 - the reason goes into the report
                result["errors"].append("torch.compile of %s: %s" % (model, str(e).splitlines()[0][:200]))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
