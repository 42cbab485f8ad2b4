"""lucidrains/minGRU-pytorch: minGRU.py, minLSTM.py, minLM.py and train.py at a tiny size on random
bytes in place of enwik8. The parallel form scans in log space (heinsen_associative_scan_log:
cumsum, Tensor.logcumsumexp, exp; log_g through torch.where and -F.softplus(-x)), the sequential
form steps with torch.lerp(prev_hidden, hidden, gate); minLM stacks nn.RMSNorm, the minGRU or minLSTM
and a feed-forward in ModuleLists (an optional causal depthwise Conv1d after F.pad(x, (k - 1, 0))),
and its loss is F.cross_entropy(logits.transpose(1, 2), labels). train.py's loop: a Dataset whose
__getitem__ draws torch.randint starts, a DataLoader cycled forever, gradient accumulation,
clip_grad_norm_, Adam, a validation loss under no_grad, and base_decoding with the recurrent cache
(prev_hiddens, one token at a time), top_k through torch.full_like(-inf).scatter_ and gumbel_sample
from torch.zeros_like(t).uniform_(0, 1). The cached decoding must give the logits of the full
parallel pass."""
import math

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def min_lm_module(torch):
    """minGRU.py, minLSTM.py and minLM.py as published, for the library `torch`."""
    nn, F = torch.nn, torch.nn.functional
    Linear, Identity, Module, ModuleList, RMSNorm = nn.Linear, nn.Identity, nn.Module, nn.ModuleList, nn.RMSNorm

    def exists(v):
        return v is not None

    def default(v, d):
        return v if exists(v) else d

    # appendix B
    # https://github.com/glassroom/heinsen_sequence

    def heinsen_associative_scan_log(log_coeffs, log_values):
        a_star = log_coeffs.cumsum(dim = 1)
        log_h0_plus_b_star = (log_values - a_star).logcumsumexp(dim = 1)
        log_h = a_star + log_h0_plus_b_star
        return log_h.exp()

    # appendix B.3

    def g(x):
        return torch.where(x >= 0, x + 0.5, x.sigmoid())

    def log_g(x):
        return torch.where(x >= 0, (F.relu(x) + 0.5).log(), -F.softplus(-x))

    # log-space version of minGRU - B.3.1
    # they enforce the hidden states to be positive

    class minGRU(Module):
        def __init__(self, dim, expansion_factor = 1., proj_out = None):
            super().__init__()

            dim_inner = int(dim * expansion_factor)
            proj_out = default(proj_out, expansion_factor != 1.)

            self.to_hidden_and_gate = Linear(dim, dim_inner * 2, bias = False)
            self.to_out = Linear(dim_inner, dim, bias = False) if proj_out else Identity()

        def forward(self, x, prev_hidden = None, return_next_prev_hidden = False):
            seq_len = x.shape[1]
            hidden, gate = self.to_hidden_and_gate(x).chunk(2, dim = -1)

            if seq_len == 1:
                # handle sequential

                hidden = g(hidden)
                gate = gate.sigmoid()
                out = torch.lerp(prev_hidden, hidden, gate) if exists(prev_hidden) else (hidden * gate)
            else:
                # parallel

                log_coeffs = -F.softplus(gate)

                log_z = -F.softplus(-gate)
                log_tilde_h = log_g(hidden)
                log_values = log_z + log_tilde_h

                if exists(prev_hidden):
                    log_values = torch.cat((prev_hidden.log(), log_values), dim = 1)
                    log_coeffs = F.pad(log_coeffs, (0, 0, 1, 0))

                out = heinsen_associative_scan_log(log_coeffs, log_values)
                out = out[:, -seq_len:]

            next_prev_hidden = out[:, -1:]

            out = self.to_out(out)

            if not return_next_prev_hidden:
                return out

            return out, next_prev_hidden

    class minLSTM(Module):
        def __init__(self, dim, expansion_factor = 1., proj_out = None):
            super().__init__()

            dim_inner = int(dim * expansion_factor)
            proj_out = default(proj_out, expansion_factor != 1.)

            self.to_hidden_and_f_i_gate = Linear(dim, dim_inner * 3, bias = False)
            self.to_out = Linear(dim_inner, dim, bias = False) if proj_out else Identity()

        def forward(self, x, prev_hidden = None, return_next_prev_hidden = False):
            seq_len = x.shape[1]
            hidden, f_gate, i_gate = self.to_hidden_and_f_i_gate(x).chunk(3, dim = -1)

            if seq_len == 1:
                # handle sequential

                hidden = g(hidden)
                f_gate = f_gate.sigmoid()
                i_gate = i_gate.sigmoid()
                f_gate_prime = f_gate/(f_gate + i_gate)
                i_gate_prime = i_gate/(f_gate + i_gate)
                out = (
                    (prev_hidden * f_gate_prime) + (hidden * i_gate_prime) if exists(prev_hidden)
                    else (hidden * i_gate_prime)
                )
            else:
                # parallel

                diff = F.softplus(-f_gate) - F.softplus(-i_gate)

                log_f = -F.softplus(diff)
                log_i = -F.softplus(-diff)

                log_h_0 = -F.softplus(log_f)

                log_tilde_h = log_g(hidden)
                log_values = log_i + log_tilde_h

                if exists(prev_hidden):
                    log_h_0 = log_g(prev_hidden)
                    log_values = torch.cat((log_h_0, log_values), dim = 1)
                    log_f = F.pad(log_f, (0, 0, 1, 0))

                out = heinsen_associative_scan_log(log_f, log_values)
                out = out[:, -seq_len:]

            next_prev_hidden = out[:, -1:]

            out = self.to_out(out)

            if not return_next_prev_hidden:
                return out

            return out, next_prev_hidden

    def FeedForward(dim, mult = 4):
        dim_inner = int(dim * mult)
        return nn.Sequential(
            nn.Linear(dim, dim_inner),
            nn.GELU(),
            nn.Linear(dim_inner, dim)
        )

    class CausalDepthWiseConv1d(Module):
        def __init__(self, dim, kernel_size):
            super().__init__()
            self.kernel_size = kernel_size
            self.net = nn.Sequential(
                nn.Conv1d(dim, dim, kernel_size = kernel_size, groups = dim),
                nn.Conv1d(dim, dim, kernel_size = 1)
            )

        def forward(self, x):
            x = x.transpose(1, 2) # b n d -> b d n
            x = F.pad(x, (self.kernel_size - 1, 0), value = 0.)
            x = self.net(x)
            return x.transpose(1, 2) # b d n -> b n d

    class minLM(Module):
        def __init__(
            self,
            *,
            num_tokens,
            dim,
            depth,
            ff_mult = 4,
            expansion = 1.5,
            conv_kernel_size = 3,
            use_lstm = False,
            enable_conv = False
        ):
            super().__init__()
            self.token_emb = nn.Embedding(num_tokens, dim)

            self.layers = ModuleList([])

            min_rnn_klass = minGRU if not use_lstm else minLSTM

            for _ in range(depth):
                self.layers.append(ModuleList([
                    CausalDepthWiseConv1d(dim, conv_kernel_size) if enable_conv else None,
                    RMSNorm(dim),
                    min_rnn_klass(dim, expansion_factor = expansion),
                    RMSNorm(dim),
                    FeedForward(dim, mult = ff_mult)
                ]))

            self.norm = RMSNorm(dim)
            self.to_logits = nn.Linear(dim, num_tokens, bias = False)

            self.can_cache = not enable_conv

        def forward(
            self,
            x,
            return_loss = False,
            return_prev_hiddens = False,
            prev_hiddens = None
        ):

            if return_loss:
                x, labels = x[:, :-1], x[:, 1:]

            x = self.token_emb(x)

            # handle previous hiddens, for recurrent decoding

            if exists(prev_hiddens):
                x = x[:, -1:]

            next_prev_hiddens = []
            prev_hiddens = iter(default(prev_hiddens, []))

            for conv, norm, mingru, ff_norm, ff in self.layers:

                # conv

                if exists(conv):
                    assert len(list(prev_hiddens)) == 0, 'caching not supported for conv version'
                    x = conv(x) + x

                # min gru

                prev_hidden = next(prev_hiddens, None)

                min_gru_out, next_prev_hidden = mingru(
                    norm(x),
                    prev_hidden,
                    return_next_prev_hidden = True
                )

                x = min_gru_out + x
                next_prev_hiddens.append(next_prev_hidden)

                # feedforward

                x = ff(ff_norm(x)) + x

            embed = self.norm(x)
            logits = self.to_logits(embed)

            if not return_loss:
                if not return_prev_hiddens:
                    return logits

                return logits, next_prev_hiddens

            loss = F.cross_entropy(
                logits.transpose(1, 2),
                labels
            )

            return loss

    return minLM


def train_script(torch, minLM, init, result, *, use_lstm, enable_conv, num_batches=3):
    """train.py's helpers and loop, with its constants scaled down."""
    Tensor = torch.Tensor
    DataLoader, Dataset = torch.utils.data.DataLoader, torch.utils.data.Dataset
    BATCH_SIZE, GRAD_ACCUM_EVERY, LEARNING_RATE, SEQ_LEN = 2, 2, 1e-3, 12
    PRIME_LENGTH, GENERATE_LENGTH = 4, 10

    def exists(v):
        return v is not None

    def cycle(loader):
        while True:
            for data in loader:
                yield data

    # sampling helpers

    def log(t, eps = 1e-20):
        return torch.log(t.clamp(min = eps))

    def gumbel_noise(t):
        noise = torch.zeros_like(t).uniform_(0, 1)
        return -log(-log(noise))

    def gumbel_sample(t, temperature = 1., dim = -1, keepdim = True):
        return ((t / max(temperature, 1e-10)) + gumbel_noise(t)).argmax(dim = dim, keepdim = keepdim)

    def top_k(logits, thres = 0.9):
        k = math.ceil((1 - thres) * logits.shape[-1])
        val, ind = torch.topk(logits, k)
        probs = torch.full_like(logits, float('-inf'))
        probs.scatter_(-1, ind, val)
        return probs

    def base_decoding(
        net,
        prompt: Tensor,
        seq_len: int,
        temperature = 1.,
        filter_thres = 0.9,
    ):
        prompt_seq_len, out = prompt.shape[-1], prompt.clone()
        sample_num_times = max(0, seq_len - prompt_seq_len)

        prev_hiddens = None
        step_logits = []

        for _ in range(sample_num_times):
            logits, next_prev_hiddens = net(out, return_prev_hiddens = True, prev_hiddens = prev_hiddens)
            logits = logits[:, -1]
            step_logits.append(logits)

            if net.can_cache:
                prev_hiddens = next_prev_hiddens

            logits = top_k(logits, thres = filter_thres)
            sample = gumbel_sample(logits, temperature = temperature, dim = -1)

            out = torch.cat((out, sample), dim = -1)

        return out[..., prompt_seq_len:], step_logits

    torch.manual_seed(0)
    model = minLM(num_tokens = 256, dim = 16, depth = 2, use_lstm = use_lstm, enable_conv = enable_conv)
    start_from(torch, model, init, result)

    rng = np.random.default_rng(0)
    data = rng.integers(32, 127, 400).astype(np.uint8)
    np_train, np_valid = np.split(data, [300])
    data_train, data_val = torch.from_numpy(np_train), torch.from_numpy(np_valid)

    class TextSamplerDataset(Dataset):
        def __init__(self, data, seq_len):
            super().__init__()
            self.data = data
            self.seq_len = seq_len

        def __len__(self):
            return self.data.size(0) // self.seq_len

        def __getitem__(self, index):
            rand_start = torch.randint(0, self.data.size(0) - self.seq_len, (1,))
            full_seq = self.data[rand_start : rand_start + self.seq_len + 1].long()
            return full_seq

    train_dataset = TextSamplerDataset(data_train, SEQ_LEN)
    val_dataset = TextSamplerDataset(data_val, SEQ_LEN)
    train_loader = cycle(DataLoader(train_dataset, batch_size = BATCH_SIZE))
    val_loader = cycle(DataLoader(val_dataset, batch_size = BATCH_SIZE))

    optim = torch.optim.Adam(model.parameters(), lr = LEARNING_RATE)
    losses, val_losses = [], []
    for i in range(num_batches):
        model.train()
        for _ in range(GRAD_ACCUM_EVERY):
            data = next(train_loader)
            loss = model(data, return_loss = True)
            (loss / GRAD_ACCUM_EVERY).backward()
        losses.append(loss.item())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optim.step()
        optim.zero_grad()

        model.eval()
        with torch.no_grad():
            valid_data = next(val_loader)
            val_losses.append(model(valid_data, return_loss = True).item())

    model.eval()
    inp = val_dataset[0][:PRIME_LENGTH]
    prompt = inp[None, ...]
    with torch.no_grad():
        sampled, step_logits = base_decoding(model, prompt, GENERATE_LENGTH)
        greedy, greedy_logits = base_decoding(model, prompt, GENERATE_LENGTH, temperature = 0.)
        # the recurrent (cached) steps against one parallel pass over the same tokens
        full = model(torch.cat((prompt, greedy), dim = -1)[:, :-1])[:, PRIME_LENGTH - 1:]
    np.testing.assert_allclose(numpy_of(torch.stack(greedy_logits, dim=1)), numpy_of(full), rtol=1e-4, atol=1e-4)
    result.update(losses=losses, val_losses=val_losses, sampled=numpy_of(sampled),
                  step_logits=[numpy_of(t) for t in step_logits], greedy=numpy_of(greedy),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def min_lm_program(torch, init=None, use_lstm=False, enable_conv=False):
    minLM = min_lm_module(torch)
    return train_script(torch, minLM, init, {}, use_lstm=use_lstm, enable_conv=enable_conv)


@pytest.mark.parametrize("use_lstm", [False, True])
def test_min_lm_cached_decoding(use_lstm):
    # atol: Adam's first steps are about lr * sign(grad), so a weight whose gradient is near zero
    # moves by rounding noise times lr (the gradients themselves agree to ~1e-8)
    compare_program(min_lm_program, atol=1e-4, use_lstm=use_lstm)


def test_min_lm_with_conv():
    compare_program(min_lm_program, enable_conv=True)
