"""A token tagger on padded batches: Embedding with padding_idx, a per-token MLP, and
CrossEntropyLoss with ignore_index for the padding and label smoothing; RMSprop. The padding's
embedding row must stay zero and get no gradient."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

VOCAB, TAGS, PAD, IGNORE = 20, 4, 0, -100


def make_batch(rng, batch, max_len=9):
    """Token ids 1..VOCAB-1 padded with PAD to max_len; a token's tag is its id mod TAGS, the
    padding's IGNORE."""
    lengths = rng.integers(3, max_len + 1, batch)
    tokens = np.full((batch, max_len), PAD, dtype=np.int64)
    tags = np.full((batch, max_len), IGNORE, dtype=np.int64)
    for row, n in enumerate(lengths):
        tokens[row, :n] = rng.integers(1, VOCAB, n)
        tags[row, :n] = tokens[row, :n] % TAGS
    return tokens, tags


def tagger(torch, init=None, steps=20, batch=16):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(VOCAB, 16, padding_idx=PAD), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, TAGS))
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss(ignore_index=IGNORE, label_smoothing=0.1)
    rng = np.random.default_rng(0)
    losses, pad_grads = [], []
    for _ in range(steps):
        tokens, tags = make_batch(rng, batch)
        logits = model(torch.from_numpy(tokens))  # (B, T, TAGS)
        loss = criterion(logits.view(-1, TAGS), torch.from_numpy(tags).view(-1))
        optimizer.zero_grad()
        loss.backward()
        pad_grads.append(model[0].weight.grad[PAD].abs().sum().item())
        optimizer.step()
        losses.append(loss.item())
    tokens, tags = make_batch(rng, 64)
    with torch.no_grad():
        logits = model(torch.from_numpy(tokens))
        # The same loss per token, unreduced: the padding's entries are 0.
        per_token = nn.functional.cross_entropy(logits.transpose(1, 2), torch.from_numpy(tags), ignore_index=IGNORE,
                                                label_smoothing=0.1, reduction="none")
    mask = tags != IGNORE
    accuracy = (numpy_of(logits.argmax(-1))[mask] == tags[mask]).mean()
    result.update(losses=losses, pad_grads=pad_grads, per_token=numpy_of(per_token), padding=~mask, accuracy=accuracy,
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_tagger_ignore_index_label_smoothing():
    ref, got = compare_program(tagger)
    assert ref["accuracy"] > 0.9
    assert got["pad_grads"] == [0.0] * 20
    np.testing.assert_array_equal(got["params"]["0.weight"][0], 0)  # the padding row stays zero
    np.testing.assert_array_equal(got["per_token"][got["padding"]], 0)
