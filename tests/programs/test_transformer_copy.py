"""A tiny nn.Transformer trained on a toy copy task: the decoder learns to reproduce the source
sequence, shifted right behind a start token, under a causal target mask from
Transformer.generate_square_subsequent_mask and a source padding mask; batch_first, dropout 0, Adam,
cross-entropy over the vocabulary. Both libraries start from the same weights; the losses and the
final weights must match step for step."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

VOCAB, D_MODEL, HEADS, LEN, BOS, PAD = 10, 16, 2, 6, 1, 0


def copy_task(torch, init=None, steps=8, batch=6):
    nn = torch.nn
    torch.manual_seed(0)

    class Copier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Embedding(LEN + 1, D_MODEL)
            self.transformer = nn.Transformer(d_model=D_MODEL, nhead=HEADS, num_encoder_layers=2,
                                              num_decoder_layers=2, dim_feedforward=32, dropout=0.0,
                                              batch_first=True)
            self.head = nn.Linear(D_MODEL, VOCAB)

        def embed_seq(self, x):
            pos = torch.arange(x.size(1))
            return self.embed(x) * math.sqrt(D_MODEL) + self.pos(pos)

        def forward(self, src, tgt_in):
            tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
            out = self.transformer(self.embed_seq(src), self.embed_seq(tgt_in), tgt_mask=tgt_mask,
                                   src_key_padding_mask=src == PAD, memory_key_padding_mask=src == PAD,
                                   tgt_is_causal=True)
            return self.head(out)

    model = Copier()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    losses = []
    model.train()
    for _ in range(steps):
        seq = rng.integers(2, VOCAB, (batch, LEN))
        seq[0, LEN - 2:] = PAD  # a padded source
        src = torch.from_numpy(seq)
        tgt_in = torch.from_numpy(np.concatenate([np.full((batch, 1), BOS), seq[:, :-1]], axis=1))
        logits = model(src, tgt_in)
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), src.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        src = torch.from_numpy(rng.integers(2, VOCAB, (2, LEN)))
        tgt_in = torch.cat([torch.full((2, 1), BOS), src[:, :-1]], dim=1)
        result["eval_logits"] = numpy_of(model(src, tgt_in))
    state = {k: numpy_of(v) for k, v in model.state_dict().items()}
    for k in [k for k in state if k.endswith("in_proj_bias")]:
        # the keys' third of it has no gradient but rounding (a constant added to a row of scores),
        # which Adam turns into full-size steps that differ between any two libraries
        state[k] = np.concatenate([state[k][:D_MODEL], state[k][2 * D_MODEL:]])
    result.update(losses=losses, state=state)
    return result


def test_transformer_copy_task():
    ref, got = compare_program(copy_task)
    assert ref["losses"][-1] < ref["losses"][0]
