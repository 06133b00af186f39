"""Goldens of d2l's sequence-to-sequence model with Bahdanau attention
(tests/parity/seq2seq_parity_test.cpp): Seq2SeqEncoder,
Seq2SeqAttentionDecoder and EncoderDecoder, copied verbatim from d2l/torch.py
(chapters "Sequence to Sequence Learning" and "Bahdanau Attention"), in eval
mode.

One case folder, data/attention/seq2seq_bahdanau/ (written through save_case,
so the manifest lists every file): the model's state_dict (<key>.npy and
weights.safetensors), the source and target tokens X, Y, the sources' valid
lengths valid_lens, random weightings G_output and G_state, and for each of
`lens` (enc_valid_lens = valid_lens) and `none` (no valid lengths):
  output_<s>             the decoder's output (batch, dec steps, vocab)
  state_<s>              the decoder's final GRU state (layers, batch, hiddens)
  attention_weights_<s>  the per-step weights stacked (batch, dec steps, enc steps)
  grad_<key>_<s>         every parameter's gradient of
                         sum(output * G_output) + sum(state * G_state)

Called by make_goldens.py as goldens_seq2seq.make(module of make_goldens).
"""


def d2l_classes(g):
    """d2l's classes, verbatim; d2l.AdditiveAttention is make_goldens'."""
    torch, nn = g.torch, g.nn

    class Encoder(nn.Module):
        """编码器-解码器架构的基本编码器接口"""
        def __init__(self, **kwargs):
            super(Encoder, self).__init__(**kwargs)

        def forward(self, X, *args):
            raise NotImplementedError

    class Decoder(nn.Module):
        """编码器-解码器架构的基本解码器接口"""
        def __init__(self, **kwargs):
            super(Decoder, self).__init__(**kwargs)

        def init_state(self, enc_outputs, *args):
            raise NotImplementedError

        def forward(self, X, state):
            raise NotImplementedError

    class EncoderDecoder(nn.Module):
        """编码器-解码器架构的基类"""
        def __init__(self, encoder, decoder, **kwargs):
            super(EncoderDecoder, self).__init__(**kwargs)
            self.encoder = encoder
            self.decoder = decoder

        def forward(self, enc_X, dec_X, *args):
            enc_outputs = self.encoder(enc_X, *args)
            dec_state = self.decoder.init_state(enc_outputs, *args)
            return self.decoder(dec_X, dec_state)

    class Seq2SeqEncoder(Encoder):
        """用于序列到序列学习的循环神经网络编码器"""
        def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                     dropout=0, **kwargs):
            super(Seq2SeqEncoder, self).__init__(**kwargs)
            # 嵌入层
            self.embedding = nn.Embedding(vocab_size, embed_size)
            self.rnn = nn.GRU(embed_size, num_hiddens, num_layers,
                              dropout=dropout)

        def forward(self, X, *args):
            # 输出'X'的形状：(batch_size,num_steps,embed_size)
            X = self.embedding(X)
            # 在循环神经网络模型中，第一个轴对应于时间步
            X = X.permute(1, 0, 2)
            # 如果未提及状态，则默认为0
            output, state = self.rnn(X)
            # output的形状:(num_steps,batch_size,num_hiddens)
            # state的形状:(num_layers,batch_size,num_hiddens)
            return output, state

    class AttentionDecoder(Decoder):
        """带有注意力机制解码器的基本接口"""
        def __init__(self, **kwargs):
            super(AttentionDecoder, self).__init__(**kwargs)

        @property
        def attention_weights(self):
            raise NotImplementedError

    class Seq2SeqAttentionDecoder(AttentionDecoder):
        def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                     dropout=0, **kwargs):
            super(Seq2SeqAttentionDecoder, self).__init__(**kwargs)
            self.attention = g.AdditiveAttention(
                num_hiddens, num_hiddens, num_hiddens, dropout)
            self.embedding = nn.Embedding(vocab_size, embed_size)
            self.rnn = nn.GRU(
                embed_size + num_hiddens, num_hiddens, num_layers,
                dropout=dropout)
            self.dense = nn.Linear(num_hiddens, vocab_size)

        def init_state(self, enc_outputs, enc_valid_lens, *args):
            # outputs的形状为(batch_size，num_steps，num_hiddens).
            # hidden_state的形状为(num_layers，batch_size，num_hiddens)
            outputs, hidden_state = enc_outputs
            return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

        def forward(self, X, state):
            # enc_outputs的形状为(batch_size,num_steps,num_hiddens).
            # hidden_state的形状为(num_layers,batch_size,
            # num_hiddens)
            enc_outputs, hidden_state, enc_valid_lens = state
            # 输出X的形状为(num_steps,batch_size,embed_size)
            X = self.embedding(X).permute(1, 0, 2)
            outputs, self._attention_weights = [], []
            for x in X:
                # query的形状为(batch_size,1,num_hiddens)
                query = torch.unsqueeze(hidden_state[-1], dim=1)
                # context的形状为(batch_size,1,num_hiddens)
                context = self.attention(
                    query, enc_outputs, enc_outputs, enc_valid_lens)
                # 在特征维度上连结
                x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
                # 将x变形为(1,batch_size,embed_size+num_hiddens)
                out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
                outputs.append(out)
                self._attention_weights.append(self.attention.attention_weights)
            # 全连接层变换后，outputs的形状为
            # (num_steps,batch_size,vocab_size)
            outputs = self.dense(torch.cat(outputs, dim=0))
            return outputs.permute(1, 0, 2), [enc_outputs, hidden_state,
                                              enc_valid_lens]

        @property
        def attention_weights(self):
            return self._attention_weights

    return Seq2SeqEncoder, Seq2SeqAttentionDecoder, EncoderDecoder


def make(g):
    torch = g.torch
    Seq2SeqEncoder, Seq2SeqAttentionDecoder, EncoderDecoder = d2l_classes(g)
    case = "seq2seq_bahdanau"
    # The chapter's test sizes (vocab 10, embed 8, hiddens 16, 2 layers,
    # batch 4), 7 source and 6 target steps (different, so a mix-up shows).
    torch.manual_seed(60)
    encoder = Seq2SeqEncoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    decoder = Seq2SeqAttentionDecoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    net = EncoderDecoder(encoder, decoder)
    net.eval()
    expr = ("torch.manual_seed(60); EncoderDecoder(Seq2SeqEncoder(10, 8, 16, 2), "
            "Seq2SeqAttentionDecoder(10, 8, 16, 2))")
    g.save_state_dict(case, net, expr)
    X = torch.randint(0, 10, (4, 7))
    Y = torch.randint(0, 10, (4, 6))
    valid_lens = torch.tensor([7, 3, 5, 1])
    G_output = torch.randn(4, 6, 10)
    G_state = torch.randn(2, 4, 16)
    g.save_case(case, "X", X, "torch.randint(0, 10, (4, 7))  # (batch, source steps)")
    g.save_case(case, "Y", Y, "torch.randint(0, 10, (4, 6))  # (batch, target steps)")
    g.save_case(case, "valid_lens", valid_lens, "torch.tensor([7, 3, 5, 1])")
    g.save_case(case, "G_output", G_output, "torch.randn(4, 6, 10)")
    g.save_case(case, "G_state", G_state, "torch.randn(2, 4, 16)")
    for suffix, lens in (("lens", valid_lens), ("none", None)):
        net.zero_grad(set_to_none=True)
        output, state = net(X, Y, lens)
        hidden = state[1]
        weights = torch.cat(net.decoder.attention_weights, dim=1)
        how = "valid_lens" if lens is not None else "None"
        g.save_case(case, f"output_{suffix}", output.detach(), f"net(X, Y, {how})[0]")
        g.save_case(case, f"state_{suffix}", hidden.detach(), f"net(X, Y, {how})[1][1]")
        g.save_case(case, f"attention_weights_{suffix}", weights.detach(),
                    f"torch.cat(net.decoder.attention_weights, dim=1) after net(X, Y, {how})")
        ((output * G_output).sum() + (hidden * G_state).sum()).backward()
        for key, p in net.named_parameters():
            g.save_case(case, f"grad_{key}_{suffix}", p.grad,
                        f"net.{key}.grad after (sum(output * G_output) + sum(state * G_state)).backward(), {how}")
