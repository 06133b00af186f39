"""Goldens of d2l's Transformer (tests/parity/transformer_parity_test.cpp):
PositionalEncoding, PositionWiseFFN, AddNorm, EncoderBlock,
TransformerEncoder, DecoderBlock and TransformerDecoder, copied verbatim from
d2l/torch.py (chapters "Self-Attention and Positional Encoding" and
"Transformer"), in an EncoderDecoder (goldens_seq2seq's), on make_goldens'
MultiHeadAttention.  Dropout 0, so that training mode (the decoder's causal
valid lengths) is deterministic.

One case folder, data/attention/transformer/ (written through save_case):
the state_dict (<key>.npy and weights.safetensors; d2l's nn.Sequential keys
blks.block<i>. renamed blks.<i>., as dimtensor numbers its blocks), the
tokens X, Y, the sources' valid_lens, a weighting G_output, and for each of
`train` (net.train(): query i of the decoder sees its steps 0..i) and `eval`:
  output_<m>                  the logits (batch, dec steps, vocab)
  enc_attention_<i>_<m>       encoder block i's self-attention weights
  dec_self_attention_<i>_<m>  decoder block i's self-attention weights
  dec_cross_attention_<i>_<m> decoder block i's weights over the encoder
(attention weights as (batch, heads, queries, keys): d2l's
(batch * heads, queries, keys) reshaped), and for `train`
  grad_<key>                  every parameter's gradient of sum(output * G_output)

Called by make_goldens.py as goldens_transformer.make(module of make_goldens).
"""
import collections
import math

import goldens_seq2seq


def d2l_classes(g):
    """d2l's classes, verbatim; d2l.MultiHeadAttention is make_goldens'."""
    torch, nn = g.torch, g.nn
    _, _, EncoderDecoder = goldens_seq2seq.d2l_classes(g)

    class PositionalEncoding(nn.Module):
        """位置编码"""
        def __init__(self, num_hiddens, dropout, max_len=1000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(dropout)
            # 创建一个足够长的P
            self.P = torch.zeros((1, max_len, num_hiddens))
            X = torch.arange(max_len, dtype=torch.float32).reshape(
                -1, 1) / torch.pow(10000, torch.arange(
                0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
            self.P[:, :, 0::2] = torch.sin(X)
            self.P[:, :, 1::2] = torch.cos(X)

        def forward(self, X):
            X = X + self.P[:, :X.shape[1], :].to(X.device)
            return self.dropout(X)

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

    class AddNorm(nn.Module):
        """残差连接后进行层规范化"""
        def __init__(self, normalized_shape, dropout, **kwargs):
            super(AddNorm, self).__init__(**kwargs)
            self.dropout = nn.Dropout(dropout)
            self.ln = nn.LayerNorm(normalized_shape)

        def forward(self, X, Y):
            return self.ln(self.dropout(Y) + X)

    class EncoderBlock(nn.Module):
        """Transformer编码器块"""
        def __init__(self, key_size, query_size, value_size, num_hiddens,
                     norm_shape, ffn_num_input, ffn_num_hiddens, num_heads,
                     dropout, use_bias=False, **kwargs):
            super(EncoderBlock, self).__init__(**kwargs)
            self.attention = g.MultiHeadAttention(
                key_size, query_size, value_size, num_hiddens, num_heads, dropout,
                use_bias)
            self.addnorm1 = AddNorm(norm_shape, dropout)
            self.ffn = PositionWiseFFN(
                ffn_num_input, ffn_num_hiddens, num_hiddens)
            self.addnorm2 = AddNorm(norm_shape, dropout)

        def forward(self, X, valid_lens):
            Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
            return self.addnorm2(Y, self.ffn(Y))

    class TransformerEncoder(nn.Module):
        """Transformer编码器"""
        def __init__(self, vocab_size, key_size, query_size, value_size,
                     num_hiddens, norm_shape, ffn_num_input, ffn_num_hiddens,
                     num_heads, num_layers, dropout, use_bias=False, **kwargs):
            super(TransformerEncoder, self).__init__(**kwargs)
            self.num_hiddens = num_hiddens
            self.embedding = nn.Embedding(vocab_size, num_hiddens)
            self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
            self.blks = nn.Sequential()
            for i in range(num_layers):
                self.blks.add_module("block"+str(i),
                    EncoderBlock(key_size, query_size, value_size, num_hiddens,
                                 norm_shape, ffn_num_input, ffn_num_hiddens,
                                 num_heads, dropout, use_bias))

        def forward(self, X, valid_lens, *args):
            # 因为位置编码值在-1和1之间，
            # 因此嵌入值乘以嵌入维度的平方根进行缩放，
            # 然后再与位置编码相加。
            X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
            self.attention_weights = [None] * len(self.blks)
            for i, blk in enumerate(self.blks):
                X = blk(X, valid_lens)
                self.attention_weights[
                    i] = blk.attention.attention.attention_weights
            return X

    class DecoderBlock(nn.Module):
        """解码器中第i个块"""
        def __init__(self, key_size, query_size, value_size, num_hiddens,
                     norm_shape, ffn_num_input, ffn_num_hiddens, num_heads,
                     dropout, i, **kwargs):
            super(DecoderBlock, self).__init__(**kwargs)
            self.i = i
            self.attention1 = g.MultiHeadAttention(
                key_size, query_size, value_size, num_hiddens, num_heads, dropout)
            self.addnorm1 = AddNorm(norm_shape, dropout)
            self.attention2 = g.MultiHeadAttention(
                key_size, query_size, value_size, num_hiddens, num_heads, dropout)
            self.addnorm2 = AddNorm(norm_shape, dropout)
            self.ffn = PositionWiseFFN(ffn_num_input, ffn_num_hiddens,
                                       num_hiddens)
            self.addnorm3 = AddNorm(norm_shape, dropout)

        def forward(self, X, state):
            enc_outputs, enc_valid_lens = state[0], state[1]
            # 训练阶段，输出序列的所有词元都在同一时间处理，
            # 因此state[2][self.i]初始化为None。
            # 预测阶段，输出序列是通过词元一个接着一个解码的，
            # 因此state[2][self.i]包含着直到当前时间步第i个块解码的输出表示
            if state[2][self.i] is None:
                key_values = X
            else:
                key_values = torch.cat((state[2][self.i], X), axis=1)
            state[2][self.i] = key_values
            if self.training:
                batch_size, num_steps, _ = X.shape
                # dec_valid_lens的开头:(batch_size,num_steps),
                # 其中每一行是[1,2,...,num_steps]
                dec_valid_lens = torch.arange(
                    1, num_steps + 1, device=X.device).repeat(batch_size, 1)
            else:
                dec_valid_lens = None

            # 自注意力
            X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
            Y = self.addnorm1(X, X2)
            # 编码器－解码器注意力。
            # enc_outputs的开头:(batch_size,num_steps,num_hiddens)
            Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
            Z = self.addnorm2(Y, Y2)
            return self.addnorm3(Z, self.ffn(Z)), state

    class TransformerDecoder(nn.Module):
        def __init__(self, vocab_size, key_size, query_size, value_size,
                     num_hiddens, norm_shape, ffn_num_input, ffn_num_hiddens,
                     num_heads, num_layers, dropout, **kwargs):
            super(TransformerDecoder, self).__init__(**kwargs)
            self.num_hiddens = num_hiddens
            self.num_layers = num_layers
            self.embedding = nn.Embedding(vocab_size, num_hiddens)
            self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
            self.blks = nn.Sequential()
            for i in range(num_layers):
                self.blks.add_module("block"+str(i),
                    DecoderBlock(key_size, query_size, value_size, num_hiddens,
                                 norm_shape, ffn_num_input, ffn_num_hiddens,
                                 num_heads, dropout, i))
            self.dense = nn.Linear(num_hiddens, vocab_size)

        def init_state(self, enc_outputs, enc_valid_lens, *args):
            return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

        def forward(self, X, state):
            X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
            self._attention_weights = [[None] * len(self.blks) for _ in range (2)]
            for i, blk in enumerate(self.blks):
                X, state = blk(X, state)
                # 解码器自注意力权重
                self._attention_weights[0][
                    i] = blk.attention1.attention.attention_weights
                # “编码器－解码器”自注意力权重
                self._attention_weights[1][
                    i] = blk.attention2.attention.attention_weights
            return self.dense(X), state

        @property
        def attention_weights(self):
            return self._attention_weights

    return TransformerEncoder, TransformerDecoder, EncoderDecoder


class Renamed:
    """A module whose state_dict has d2l's blks.block<i>. keys as blks.<i>."""
    def __init__(self, module):
        self.module = module

    def state_dict(self):
        return collections.OrderedDict(
            (k.replace(".blks.block", ".blks."), v) for k, v in self.module.state_dict().items())


def make(g):
    torch = g.torch
    TransformerEncoder, TransformerDecoder, EncoderDecoder = d2l_classes(g)
    case = "transformer"
    # A small config: num_hiddens 8, 2 heads, FFN 16, 2 layers, dropout 0;
    # vocabularies 11 and 12, batch 2, 5 source and 4 target steps.
    torch.manual_seed(61)
    h, ffn, heads, layers = 8, 16, 2, 2
    encoder = TransformerEncoder(11, h, h, h, h, [h], h, ffn, heads, layers, 0.0)
    decoder = TransformerDecoder(12, h, h, h, h, [h], h, ffn, heads, layers, 0.0)
    net = EncoderDecoder(encoder, decoder)
    expr = ("torch.manual_seed(61); EncoderDecoder(TransformerEncoder(11, 8, 8, 8, 8, [8], 8, 16, 2, 2, 0.0), "
            "TransformerDecoder(12, 8, 8, 8, 8, [8], 8, 16, 2, 2, 0.0)), keys blks.block<i>. as blks.<i>.")
    g.save_state_dict(case, Renamed(net), expr)
    X = torch.randint(0, 11, (2, 5))
    Y = torch.randint(0, 12, (2, 4))
    valid_lens = torch.tensor([5, 3])
    G_output = torch.randn(2, 4, 12)
    g.save_case(case, "X", X, "torch.randint(0, 11, (2, 5))  # (batch, source steps)")
    g.save_case(case, "Y", Y, "torch.randint(0, 12, (2, 4))  # (batch, target steps)")
    g.save_case(case, "valid_lens", valid_lens, "torch.tensor([5, 3])")
    g.save_case(case, "G_output", G_output, "torch.randn(2, 4, 12)")

    def per_head(w):
        return w.detach().reshape(2, heads, w.shape[1], w.shape[2])

    for mode in ("train", "eval"):
        net.train(mode == "train")
        net.zero_grad(set_to_none=True)
        output, _ = net(X, Y, valid_lens)
        g.save_case(case, f"output_{mode}", output.detach(), f"net.{mode}(); net(X, Y, valid_lens)[0]")
        for i in range(layers):
            g.save_case(case, f"enc_attention_{i}_{mode}", per_head(net.encoder.attention_weights[i]),
                        f"net.encoder.attention_weights[{i}].reshape(2, 2, 5, 5)")
            g.save_case(case, f"dec_self_attention_{i}_{mode}", per_head(net.decoder.attention_weights[0][i]),
                        f"net.decoder.attention_weights[0][{i}].reshape(2, 2, 4, 4)")
            g.save_case(case, f"dec_cross_attention_{i}_{mode}", per_head(net.decoder.attention_weights[1][i]),
                        f"net.decoder.attention_weights[1][{i}].reshape(2, 2, 4, 5)")
        if mode == "train":
            (output * G_output).sum().backward()
            for key, p in net.named_parameters():
                key = key.replace(".blks.block", ".blks.")
                g.save_case(case, f"grad_{key}", p.grad, f"net.{key}.grad after sum(output * G_output).backward()")
