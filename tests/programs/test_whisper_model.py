"""openai/whisper's whisper/model.py (v20240930) at a tiny size with random weights, and the greedy
decoding loop of whisper/decoding.py around it: LayerNorm/Linear/Conv1d subclasses that cast
(super().forward(x.float()).type(x.dtype), weight.to(x.dtype), Conv1d._conv_forward overridden),
sinusoids through np.log and torch.arange(length)[:, np.newaxis], MultiHeadAttention with a
class-level use_sdpa switch and the disable_sdpa() context manager (F.scaled_dot_product_attention
with is_causal, or (q * scale) @ (k * scale).transpose(-1, -2) plus the
torch.empty(n, n).fill_(-np.inf).triu_(1) mask), the decoder's kv cache kept by forward hooks on the
key/value projections (install_kv_cache_hooks: a dict keyed by modules, torch.cat(...).detach()
returned from the hook in place of the output), alignment_heads as a sparse bool buffer
(to_sparse(), set_alignment_heads from a base85 gzip dump, .indices().T as timing.py reads it), and
GreedyDecoder.update's bookkeeping (log_softmax, logprobs[torch.arange(n), next_tokens],
next_tokens[tokens[:, -1] == eot] = eot, SuppressTokens's logits[:, list] = -np.inf). A fine-tuning
step on the logits (cross entropy, AdamW) checks the gradients through both attention paths."""
import base64
import gzip
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Tuple

import numpy as np

from prog_helpers import compare_program, fit, numpy_of, start_from


@dataclass
class ModelDimensions:
    n_mels: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_vocab: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int


def whisper_module(torch):
    """whisper/model.py, as published, for the library `torch`."""
    nn, F = torch.nn, torch.nn.functional
    Tensor = torch.Tensor
    try:
        from_functional = F.scaled_dot_product_attention
        SDPA_AVAILABLE = True
    except (ImportError, RuntimeError, OSError, AttributeError):
        from_functional = None
        SDPA_AVAILABLE = False
    scaled_dot_product_attention = from_functional

    class LayerNorm(nn.LayerNorm):
        def forward(self, x: Tensor) -> Tensor:
            return super().forward(x.float()).type(x.dtype)

    class Linear(nn.Linear):
        def forward(self, x: Tensor) -> Tensor:
            return F.linear(
                x,
                self.weight.to(x.dtype),
                None if self.bias is None else self.bias.to(x.dtype),
            )

    class Conv1d(nn.Conv1d):
        def _conv_forward(self, x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
            return super()._conv_forward(
                x, weight.to(x.dtype), None if bias is None else bias.to(x.dtype)
            )

    def sinusoids(length, channels, max_timescale=10000):
        """Returns sinusoids for positional embedding"""
        assert channels % 2 == 0
        log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
        inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
        scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
        return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)

    @contextmanager
    def disable_sdpa():
        prev_state = MultiHeadAttention.use_sdpa
        try:
            MultiHeadAttention.use_sdpa = False
            yield
        finally:
            MultiHeadAttention.use_sdpa = prev_state

    class MultiHeadAttention(nn.Module):
        use_sdpa = True

        def __init__(self, n_state: int, n_head: int):
            super().__init__()
            self.n_head = n_head
            self.query = Linear(n_state, n_state)
            self.key = Linear(n_state, n_state, bias=False)
            self.value = Linear(n_state, n_state)
            self.out = Linear(n_state, n_state)

        def forward(
            self,
            x: Tensor,
            xa: Optional[Tensor] = None,
            mask: Optional[Tensor] = None,
            kv_cache: Optional[dict] = None,
        ):
            q = self.query(x)

            if kv_cache is None or xa is None or self.key not in kv_cache:
                # hooks, if installed (i.e. kv_cache is not None), will prepend the cached kv tensors;
                # otherwise, perform key/value projections for self- or cross-attention as usual.
                k = self.key(x if xa is None else xa)
                v = self.value(x if xa is None else xa)
            else:
                # for cross-attention, calculate keys and values once and reuse in subsequent calls.
                k = kv_cache[self.key]
                v = kv_cache[self.value]

            wv, qk = self.qkv_attention(q, k, v, mask)
            return self.out(wv), qk

        def qkv_attention(
            self, q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None
        ) -> Tuple:
            n_batch, n_ctx, n_state = q.shape
            scale = (n_state // self.n_head) ** -0.25
            q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
            k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
            v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)

            if SDPA_AVAILABLE and MultiHeadAttention.use_sdpa:
                a = scaled_dot_product_attention(
                    q, k, v, is_causal=mask is not None and n_ctx > 1
                )
                out = a.permute(0, 2, 1, 3).flatten(start_dim=2)
                qk = None
            else:
                qk = (q * scale) @ (k * scale).transpose(-1, -2)
                if mask is not None:
                    qk = qk + mask[:n_ctx, :n_ctx]
                qk = qk.float()

                w = F.softmax(qk, dim=-1).to(q.dtype)
                out = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
                qk = qk.detach()

            return out, qk

    class ResidualAttentionBlock(nn.Module):
        def __init__(self, n_state: int, n_head: int, cross_attention: bool = False):
            super().__init__()

            self.attn = MultiHeadAttention(n_state, n_head)
            self.attn_ln = LayerNorm(n_state)

            self.cross_attn = (
                MultiHeadAttention(n_state, n_head) if cross_attention else None
            )
            self.cross_attn_ln = LayerNorm(n_state) if cross_attention else None

            n_mlp = n_state * 4
            self.mlp = nn.Sequential(
                Linear(n_state, n_mlp), nn.GELU(), Linear(n_mlp, n_state)
            )
            self.mlp_ln = LayerNorm(n_state)

        def forward(
            self,
            x: Tensor,
            xa: Optional[Tensor] = None,
            mask: Optional[Tensor] = None,
            kv_cache: Optional[dict] = None,
        ):
            x = x + self.attn(self.attn_ln(x), mask=mask, kv_cache=kv_cache)[0]
            if self.cross_attn:
                x = x + self.cross_attn(self.cross_attn_ln(x), xa, kv_cache=kv_cache)[0]
            x = x + self.mlp(self.mlp_ln(x))
            return x

    class AudioEncoder(nn.Module):
        def __init__(
            self, n_mels: int, n_ctx: int, n_state: int, n_head: int, n_layer: int
        ):
            super().__init__()
            self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
            self.conv2 = Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
            self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))

            self.blocks: Iterable[ResidualAttentionBlock] = nn.ModuleList(
                [ResidualAttentionBlock(n_state, n_head) for _ in range(n_layer)]
            )
            self.ln_post = LayerNorm(n_state)

        def forward(self, x: Tensor):
            """
            x : torch.Tensor, shape = (batch_size, n_mels, n_ctx)
                the mel spectrogram of the audio
            """
            x = F.gelu(self.conv1(x))
            x = F.gelu(self.conv2(x))
            x = x.permute(0, 2, 1)

            assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
            x = (x + self.positional_embedding).to(x.dtype)

            for block in self.blocks:
                x = block(x)

            x = self.ln_post(x)
            return x

    class TextDecoder(nn.Module):
        def __init__(
            self, n_vocab: int, n_ctx: int, n_state: int, n_head: int, n_layer: int
        ):
            super().__init__()

            self.token_embedding = nn.Embedding(n_vocab, n_state)
            self.positional_embedding = nn.Parameter(torch.empty(n_ctx, n_state))

            self.blocks: Iterable[ResidualAttentionBlock] = nn.ModuleList(
                [
                    ResidualAttentionBlock(n_state, n_head, cross_attention=True)
                    for _ in range(n_layer)
                ]
            )
            self.ln = LayerNorm(n_state)

            mask = torch.empty(n_ctx, n_ctx).fill_(-np.inf).triu_(1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x: Tensor, xa: Tensor, kv_cache: Optional[dict] = None):
            """
            x : torch.LongTensor, shape = (batch_size, <= n_ctx)
                the text tokens
            xa : torch.Tensor, shape = (batch_size, n_audio_ctx, n_audio_state)
                the encoded audio features to be attended on
            """
            offset = next(iter(kv_cache.values())).shape[1] if kv_cache else 0
            x = (
                self.token_embedding(x)
                + self.positional_embedding[offset : offset + x.shape[-1]]
            )
            x = x.to(xa.dtype)

            for block in self.blocks:
                x = block(x, xa, mask=self.mask, kv_cache=kv_cache)

            x = self.ln(x)
            logits = (
                x @ torch.transpose(self.token_embedding.weight.to(x.dtype), 0, 1)
            ).float()

            return logits

    class Whisper(nn.Module):
        def __init__(self, dims: ModelDimensions):
            super().__init__()
            self.dims = dims
            self.encoder = AudioEncoder(
                self.dims.n_mels,
                self.dims.n_audio_ctx,
                self.dims.n_audio_state,
                self.dims.n_audio_head,
                self.dims.n_audio_layer,
            )
            self.decoder = TextDecoder(
                self.dims.n_vocab,
                self.dims.n_text_ctx,
                self.dims.n_text_state,
                self.dims.n_text_head,
                self.dims.n_text_layer,
            )
            # use the last half among the decoder layers for time alignment by default;
            # to use a specific set of heads, see `set_alignment_heads()` below.
            all_heads = torch.zeros(
                self.dims.n_text_layer, self.dims.n_text_head, dtype=torch.bool
            )
            all_heads[self.dims.n_text_layer // 2 :] = True
            self.register_buffer("alignment_heads", all_heads.to_sparse(), persistent=False)

        def set_alignment_heads(self, dump: bytes):
            array = np.frombuffer(
                gzip.decompress(base64.b85decode(dump)), dtype=bool
            ).copy()
            mask = torch.from_numpy(array).reshape(
                self.dims.n_text_layer, self.dims.n_text_head
            )
            self.register_buffer("alignment_heads", mask.to_sparse(), persistent=False)

        def embed_audio(self, mel: Tensor):
            return self.encoder(mel)

        def logits(self, tokens: Tensor, audio_features: Tensor):
            return self.decoder(tokens, audio_features)

        def forward(self, mel: Tensor, tokens: Tensor) -> Dict[str, Tensor]:
            return self.decoder(tokens, self.encoder(mel))

        @property
        def device(self):
            return next(self.parameters()).device

        @property
        def is_multilingual(self):
            return self.dims.n_vocab >= 51865

        @property
        def num_languages(self):
            return self.dims.n_vocab - 51765 - int(self.is_multilingual)

        def install_kv_cache_hooks(self, cache: Optional[dict] = None):
            cache = {**cache} if cache is not None else {}
            hooks = []

            def save_to_cache(module, _, output):
                if module not in cache or output.shape[1] > self.dims.n_text_ctx:
                    # save as-is, for the first token or cross attention
                    cache[module] = output
                else:
                    cache[module] = torch.cat([cache[module], output], dim=1).detach()
                return cache[module]

            def install_hooks(layer: nn.Module):
                if isinstance(layer, MultiHeadAttention):
                    hooks.append(layer.key.register_forward_hook(save_to_cache))
                    hooks.append(layer.value.register_forward_hook(save_to_cache))

            self.decoder.apply(install_hooks)
            return cache, hooks

    return Whisper, disable_sdpa


DIMS = ModelDimensions(n_mels=8, n_audio_ctx=12, n_audio_state=32, n_audio_head=4, n_audio_layer=2,
                       n_vocab=60, n_text_ctx=16, n_text_state=32, n_text_head=4, n_text_layer=2)
SOT, EOT, SUPPRESS = 50, 51, [52, 53, 57]


def greedy_decode(torch, model, audio_features, max_len: int):
    """decoding.py's main loop with a GreedyDecoder (temperature 0) and SuppressTokens, the kv
    cache installed by hooks and the whole prefix fed only on the first step."""
    F = torch.nn.functional
    n = audio_features.shape[0]
    tokens = torch.tensor([[SOT]]).repeat(n, 1)
    sum_logprobs = torch.zeros(n)
    kv_cache, hooks = model.install_kv_cache_hooks()
    steps = []
    try:
        for i in range(max_len):
            step_tokens = tokens if i == 0 else tokens[:, -1:]
            logits = model.decoder(step_tokens, audio_features, kv_cache=kv_cache)
            logits = logits[:, -1]
            logits[:, SUPPRESS] = -np.inf
            logprobs = F.log_softmax(logits.float(), dim=-1)
            next_tokens = logits.argmax(dim=-1)
            current_logprobs = logprobs[torch.arange(logprobs.shape[0]), next_tokens]
            sum_logprobs += current_logprobs * (tokens[:, -1] != EOT)
            next_tokens[tokens[:, -1] == EOT] = EOT
            tokens = torch.cat([tokens, next_tokens[:, None]], dim=-1)
            steps.append(numpy_of(logits))
            completed = (tokens[:, -1] == EOT).all()
            if completed or tokens.shape[-1] > DIMS.n_text_ctx:
                break
    finally:
        for hook in hooks:
            hook.remove()
    cached = sorted(tuple(v.shape) for v in kv_cache.values())
    return tokens, sum_logprobs, steps, cached


def whisper_program(torch, init=None, sdpa=True):
    Whisper, disable_sdpa = whisper_module(torch)
    F = torch.nn.functional
    torch.manual_seed(0)
    model = Whisper(DIMS)
    with torch.no_grad():
        model.decoder.positional_embedding.normal_(0, 0.02)
    result = {"nparams": sum(p.numel() for p in model.parameters()),
              "keys": sorted(model.state_dict().keys()),
              "heads": numpy_of(model.alignment_heads.indices().T)}
    start_from(torch, model, init, result)
    dump = base64.b85encode(gzip.compress(np.array([[0, 1, 0, 0], [1, 0, 0, 1]], dtype=bool).tobytes()))
    model.set_alignment_heads(dump)
    result["set_heads"] = [[int(l), int(h)] for l, h in model.alignment_heads.indices().T]
    result["dense_heads"] = numpy_of(model.alignment_heads.to_dense())

    rng = np.random.default_rng(0)
    mel = torch.from_numpy(rng.standard_normal((2, DIMS.n_mels, 2 * DIMS.n_audio_ctx)).astype(np.float32))
    prompt = torch.from_numpy(rng.integers(0, 50, (2, 6)))
    context = disable_sdpa() if not sdpa else _nothing()
    with context:
        model.eval()
        with torch.no_grad():
            audio_features = model.embed_audio(mel)
            full = model.logits(prompt, audio_features)
            tokens, sum_logprobs, steps, cached = greedy_decode(torch, model, audio_features, 8)
            # the same tokens through the decoder without a cache give the same last logits
            replay = model.logits(tokens[:, :-1], audio_features)[:, -1]
        result.update(audio=numpy_of(audio_features), full=numpy_of(full), tokens=numpy_of(tokens),
                      sum_logprobs=numpy_of(sum_logprobs), steps=steps, cached=cached, replay=numpy_of(replay))
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def loss_fn():
            logits = model(mel, prompt[:, :-1])
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), prompt[:, 1:].reshape(-1))

        result["losses"] = fit(opt, loss_fn, 3)
    result["grads"] = {n: numpy_of(p.grad) for n, p in model.named_parameters()}
    return result


@contextmanager
def _nothing():
    yield


def test_whisper_sdpa_greedy_decoding():
    ref, got = compare_program(whisper_program)
    assert len(ref["steps"]) >= 2


def test_whisper_manual_attention():
    compare_program(whisper_program, sdpa=False)


# --- whisper/audio.py, the ApplyTimestampRules filter of decoding.py, timing.py's alignment ---
SAMPLE_RATE, N_FFT, HOP_LENGTH = 16000, 400, 160
TIMESTAMP_BEGIN, NO_TIMESTAMPS = 56, 54
DIMS_TS = ModelDimensions(n_mels=8, n_audio_ctx=25, n_audio_state=32, n_audio_head=4, n_audio_layer=2,
                          n_vocab=72, n_text_ctx=16, n_text_state=32, n_text_head=4, n_text_layer=2)


def audio_functions(torch, filters_array):
    F = torch.nn.functional

    def pad_or_trim(array, length: int, *, axis: int = -1):
        """
        Pad or trim the audio array to N_SAMPLES, as expected by the encoder.
        """
        if torch.is_tensor(array):
            if array.shape[axis] > length:
                array = array.index_select(
                    dim=axis, index=torch.arange(length, device=array.device)
                )

            if array.shape[axis] < length:
                pad_widths = [(0, 0)] * array.ndim
                pad_widths[axis] = (0, length - array.shape[axis])
                array = F.pad(array, [pad for sizes in pad_widths[::-1] for pad in sizes])
        else:
            if array.shape[axis] > length:
                array = array.take(indices=range(length), axis=axis)

            if array.shape[axis] < length:
                pad_widths = [(0, 0)] * array.ndim
                pad_widths[axis] = (0, length - array.shape[axis])
                array = np.pad(array, pad_widths)

        return array

    def mel_filters(device, n_mels: int):
        """the mel filterbank matrix (assets/mel_filters.npz in the package; a local array here)"""
        return torch.from_numpy(filters_array).to(device)

    def log_mel_spectrogram(audio, n_mels: int = 80, padding: int = 0, device=None):
        if not torch.is_tensor(audio):
            audio = torch.from_numpy(audio)

        if device is not None:
            audio = audio.to(device)
        if padding > 0:
            audio = F.pad(audio, (0, padding))
        window = torch.hann_window(N_FFT).to(audio.device)
        stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
        magnitudes = stft[..., :-1].abs() ** 2

        filters = mel_filters(audio.device, n_mels)
        mel_spec = filters @ magnitudes

        log_spec = torch.clamp(mel_spec, min=1e-10).log10()
        log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
        log_spec = (log_spec + 4.0) / 4.0
        return log_spec

    def median_filter(x, filter_width: int):
        """Apply a median filter of width `filter_width` along the last dimension of `x`"""
        pad_width = filter_width // 2
        if x.shape[-1] <= pad_width:
            # F.pad requires the padding width to be smaller than the input dimension
            return x

        if (ndim := x.ndim) <= 2:
            # `F.pad` does not support reflect padding for 1D or 2D inputs
            x = x[None, None, :]

        assert (
            filter_width > 0 and filter_width % 2 == 1
        ), "`filter_width` should be an odd number"

        result = None
        x = F.pad(x, (filter_width // 2, filter_width // 2, 0, 0), mode="reflect")
        if result is None:
            # sort() is faster than torch.median (https://github.com/pytorch/pytorch/issues/51450)
            result = x.unfold(-1, filter_width, 1).sort()[0][..., filter_width // 2]

        if ndim <= 2:
            result = result[0, 0]

        return result

    return pad_or_trim, log_mel_spectrogram, median_filter


class ApplyTimestampRules:
    """decoding.py's ApplyTimestampRules with the tokenizer's ids as constants."""

    def __init__(self, sample_begin: int, max_initial_timestamp_index):
        self.no_timestamps, self.timestamp_begin, self.eot = NO_TIMESTAMPS, TIMESTAMP_BEGIN, EOT
        self.sample_begin = sample_begin
        self.max_initial_timestamp_index = max_initial_timestamp_index

    def apply(self, F, logits, tokens):
        # suppress <|notimestamps|> which is handled by without_timestamps
        if self.no_timestamps is not None:
            logits[:, self.no_timestamps] = -np.inf

        # timestamps have to appear in pairs, except directly before EOT; mask logits accordingly
        for k in range(tokens.shape[0]):
            sampled_tokens = tokens[k, self.sample_begin :]
            seq = [t for t in sampled_tokens.tolist()]
            last_was_timestamp = (
                len(seq) >= 1 and seq[-1] >= self.timestamp_begin
            )
            penultimate_was_timestamp = (
                len(seq) < 2 or seq[-2] >= self.timestamp_begin
            )

            if last_was_timestamp:
                if penultimate_was_timestamp:  # has to be non-timestamp
                    logits[k, self.timestamp_begin :] = -np.inf
                else:  # cannot be normal text tokens
                    logits[k, : self.eot] = -np.inf

            timestamps = sampled_tokens[
                sampled_tokens.ge(self.timestamp_begin)
            ]
            if timestamps.numel() > 0:
                # timestamps shouldn't decrease; forbid timestamp tokens smaller than the last
                # also force each segment to have a nonzero length, to prevent infinite looping
                if last_was_timestamp and not penultimate_was_timestamp:
                    timestamp_last = timestamps[-1]
                else:
                    timestamp_last = timestamps[-1] + 1
                logits[k, self.timestamp_begin : timestamp_last] = -np.inf

        if tokens.shape[1] == self.sample_begin:
            # suppress generating non-timestamp tokens at the beginning
            logits[:, : self.timestamp_begin] = -np.inf

            # apply the `max_initial_timestamp` option
            if self.max_initial_timestamp_index is not None:
                last_allowed = (
                    self.timestamp_begin + self.max_initial_timestamp_index
                )
                logits[:, last_allowed + 1 :] = -np.inf

        # if sum of probability over timestamps is above any other token, sample timestamp
        logprobs = F.log_softmax(logits.float(), dim=-1)
        for k in range(tokens.shape[0]):
            timestamp_logprob = logprobs[k, self.timestamp_begin :].logsumexp(
                dim=-1
            )
            max_text_token_logprob = logprobs[k, : self.timestamp_begin].max()
            if timestamp_logprob > max_text_token_logprob:
                logits[k, : self.timestamp_begin] = -np.inf


def whisper_audio_program(torch, init=None, device="cpu"):
    """transcribe-style use: audio -> log-mel (stft) -> encoder, decoding with timestamp rules and a
    temperature-0 greedy / temperature-1 Categorical step, then timing.py's find_alignment."""
    Whisper, disable_sdpa = whisper_module(torch)
    F = torch.nn.functional
    rng = np.random.default_rng(1)
    filters = np.abs(rng.standard_normal((DIMS_TS.n_mels, N_FFT // 2 + 1))).astype(np.float32) * 0.05
    pad_or_trim, log_mel_spectrogram, median_filter = audio_functions(torch, filters)
    torch.manual_seed(0)
    model = Whisper(DIMS_TS)
    with torch.no_grad():
        model.decoder.positional_embedding.normal_(0, 0.02)
    result = {}
    start_from(torch, model, init, result)
    model = model.to(device)
    model.eval()
    n_samples = HOP_LENGTH * 2 * DIMS_TS.n_audio_ctx
    audio = (0.3 * np.sin(np.arange(7000) * 0.05) + 0.05 * rng.standard_normal(7000)).astype(np.float32)
    audio = pad_or_trim(audio, n_samples)  # NumPy in, as load_audio gives it
    mel = log_mel_spectrogram(audio, DIMS_TS.n_mels, device=device)
    mel_t = log_mel_spectrogram(torch.from_numpy(audio[:5000]).to(device), DIMS_TS.n_mels, padding=n_samples - 5000)
    result.update(mel=numpy_of(mel), mel_padded=numpy_of(mel_t),
                  trimmed=numpy_of(pad_or_trim(torch.from_numpy(audio), 4000)))
    rules = ApplyTimestampRules(sample_begin=1, max_initial_timestamp_index=5)
    with torch.no_grad():
        audio_features = model.embed_audio(mel[None])
        tokens = torch.tensor([[SOT]], device=device)
        steps = []
        for i in range(10):
            logits = model.logits(tokens, audio_features)[:, -1]
            rules.apply(F, logits, tokens)
            steps.append(numpy_of(logits))
            next_tokens = logits.argmax(dim=-1)
            tokens = torch.cat([tokens, next_tokens[:, None]], dim=-1)
        torch.manual_seed(7)
        sampled = torch.distributions.Categorical(logits=logits / 1.0).sample()
    result.update(tokens=numpy_of(tokens), steps=steps, own={"sampled": numpy_of(sampled)})

    # timing.py's find_alignment: cross-attention QKs caught by forward hooks on the manual path
    text_tokens = [3, 9, 14, 22]
    align_tokens = torch.tensor([SOT, *text_tokens, EOT], device=device)
    QKs = [None] * model.dims.n_text_layer
    hooks = [
        block.cross_attn.register_forward_hook(
            lambda _, ins, outs, index=i: QKs.__setitem__(index, outs[-1][0])
        )
        for i, block in enumerate(model.decoder.blocks)
    ]
    with torch.no_grad(), disable_sdpa():
        logits = model(mel.unsqueeze(0), align_tokens.unsqueeze(0))[0]
        sampled_logits = logits[1:, :EOT]
        token_probs = sampled_logits.softmax(dim=-1)
        text_token_probs = token_probs[np.arange(len(text_tokens)), text_tokens]
        text_token_probs = text_token_probs.tolist()
    for hook in hooks:
        hook.remove()
    num_frames = mel.shape[-1]
    weights = torch.stack([QKs[_l][_h] for _l, _h in model.alignment_heads.indices().T])
    weights = weights[:, :, : num_frames // 2]
    weights = (weights * 1.0).softmax(dim=-1)
    std, mean = torch.std_mean(weights, dim=-2, keepdim=True, unbiased=False)
    weights = (weights - mean) / std
    weights = median_filter(weights, 7)
    matrix = weights.mean(axis=0)
    matrix = matrix[1:-1]
    result.update(text_token_probs=text_token_probs, matrix=numpy_of(matrix),
                  medfilt_1d=numpy_of(median_filter(torch.arange(12.0) ** 2 % 7, 5)))
    return result


def test_whisper_log_mel_timestamps_and_alignment():
    compare_program(whisper_audio_program)
