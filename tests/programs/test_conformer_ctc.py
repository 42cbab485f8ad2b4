"""sooftware's conformer (conformer/*.py) trained with CTC as its README runs it, on log-mel features
computed as NeMo's FilterbankFeatures writes its preprocessor (the LibriSpeech download replaced by
seeded NumPy waveforms of differing lengths): preemphasis through torch.cat of shifted slices,
torch.stft(win_length < n_fft, a hann_window(periodic=False), center=True, return_complex=True) then
torch.view_as_real, the magnitude sqrt(x.pow(2).sum(-1) + guard), the mel matmul, the log guard, the
lengths from torch.floor_divide, the per-feature normalisation over valid frames (torch.where with
a scalar 0.0, sum(axis=2), x_std.masked_fill(x_std.isnan(), 0.0), x_std += constant) and the pad
masking with torch.arange(...).repeat(...) >= seq_len.unsqueeze(1); SpecAugment's freq/time
masks written into a bool mask with python random; then the Conformer: Swish, the GLU module
(chunk(2, dim=self.dim)), the xavier-initialised Linear wrapper (init.xavier_uniform_,
init.zeros_), Transpose, FeedForwardModule, the sinusoidal PositionalEncoding buffer
(torch.zeros(..., requires_grad=False)), RelativeMultiHeadAttention with nn.Parameter(torch.Tensor(h,
d)) biases initialised by xavier_uniform_ and its _relative_shift (new_zeros, cat, view, view_as),
the depthwise Conv1d (groups=in_channels) ConformerConvModule with BatchNorm1d, Conv2dSubampling
with input_lengths >> 2 and output_lengths -= 1, half-step ResidualConnectionModule, log_softmax
outputs; nn.CTCLoss on outputs.transpose(0, 1), a few Adam steps, greedy CTC decoding
(argmax, unique_consecutive)."""
import math
import random

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, split_bias_before_norm, start_from, state_numpy
from test_speech_commands import mel_fbanks

SAMPLE_RATE = 4000
CONSTANT = 1e-5


def utterances(seed, n):
    """n (waveform, transcript) pairs: a tone per token, lengths differing."""
    rng = np.random.default_rng(seed)
    waves, texts = [], []
    for k in range(n):
        tokens = list(rng.integers(1, 5, rng.integers(2, 4)))
        pieces = []
        for tok in tokens:
            t = np.arange(int(SAMPLE_RATE * rng.uniform(0.08, 0.12))) / SAMPLE_RATE
            pieces.append(0.5 * np.sin(2 * np.pi * 300.0 * tok * t))
        wave = np.concatenate(pieces) + 0.05 * rng.standard_normal(sum(len(p) for p in pieces))
        waves.append(wave.astype(np.float32))
        texts.append(tokens)
    return waves, texts


def conformer_modules(torch):
    nn = torch.nn
    init = torch.nn.init
    Tensor = torch.Tensor
    F = torch.nn.functional

    # ---- conformer/activation.py ----
    class Swish(nn.Module):
        def __init__(self):
            super(Swish, self).__init__()

        def forward(self, inputs: Tensor) -> Tensor:
            return inputs * inputs.sigmoid()

    class GLU(nn.Module):
        def __init__(self, dim: int) -> None:
            super(GLU, self).__init__()
            self.dim = dim

        def forward(self, inputs: Tensor) -> Tensor:
            outputs, gate = inputs.chunk(2, dim=self.dim)
            return outputs * gate.sigmoid()

    # ---- conformer/modules.py ----
    class ResidualConnectionModule(nn.Module):
        def __init__(self, module: nn.Module, module_factor: float = 1.0, input_factor: float = 1.0):
            super(ResidualConnectionModule, self).__init__()
            self.module = module
            self.module_factor = module_factor
            self.input_factor = input_factor

        def forward(self, inputs: Tensor) -> Tensor:
            return (self.module(inputs) * self.module_factor) + (inputs * self.input_factor)

    class Linear(nn.Module):
        def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
            super(Linear, self).__init__()
            self.linear = nn.Linear(in_features, out_features, bias=bias)
            init.xavier_uniform_(self.linear.weight)
            if bias:
                init.zeros_(self.linear.bias)

        def forward(self, x: Tensor) -> Tensor:
            return self.linear(x)

    class Transpose(nn.Module):
        def __init__(self, shape: tuple):
            super(Transpose, self).__init__()
            self.shape = shape

        def forward(self, x: Tensor) -> Tensor:
            return x.transpose(*self.shape)

    # ---- conformer/feed_forward.py ----
    class FeedForwardModule(nn.Module):
        def __init__(self, encoder_dim: int = 512, expansion_factor: int = 4, dropout_p: float = 0.1) -> None:
            super(FeedForwardModule, self).__init__()
            self.sequential = nn.Sequential(
                nn.LayerNorm(encoder_dim),
                Linear(encoder_dim, encoder_dim * expansion_factor, bias=True),
                Swish(),
                nn.Dropout(p=dropout_p),
                Linear(encoder_dim * expansion_factor, encoder_dim, bias=True),
                nn.Dropout(p=dropout_p),
            )

        def forward(self, inputs: Tensor) -> Tensor:
            return self.sequential(inputs)

    # ---- conformer/embedding.py ----
    class PositionalEncoding(nn.Module):
        def __init__(self, d_model: int = 512, max_len: int = 10000) -> None:
            super(PositionalEncoding, self).__init__()
            pe = torch.zeros(max_len, d_model, requires_grad=False)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer('pe', pe)

        def forward(self, length: int) -> Tensor:
            return self.pe[:, :length]

    # ---- conformer/attention.py ----
    class RelativeMultiHeadAttention(nn.Module):
        def __init__(self, d_model: int = 512, num_heads: int = 16, dropout_p: float = 0.1):
            super(RelativeMultiHeadAttention, self).__init__()
            assert d_model % num_heads == 0, "d_model % num_heads should be zero."
            self.d_model = d_model
            self.d_head = int(d_model / num_heads)
            self.num_heads = num_heads
            self.sqrt_dim = math.sqrt(d_model)
            self.query_proj = Linear(d_model, d_model)
            self.key_proj = Linear(d_model, d_model)
            self.value_proj = Linear(d_model, d_model)
            self.pos_proj = Linear(d_model, d_model, bias=False)
            self.dropout = nn.Dropout(p=dropout_p)
            self.u_bias = nn.Parameter(torch.Tensor(self.num_heads, self.d_head))
            self.v_bias = nn.Parameter(torch.Tensor(self.num_heads, self.d_head))
            torch.nn.init.xavier_uniform_(self.u_bias)
            torch.nn.init.xavier_uniform_(self.v_bias)
            self.out_proj = Linear(d_model, d_model)

        def forward(self, query, key, value, pos_embedding, mask=None):
            batch_size = value.size(0)
            query = self.query_proj(query).view(batch_size, -1, self.num_heads, self.d_head)
            key = self.key_proj(key).view(batch_size, -1, self.num_heads, self.d_head).permute(0, 2, 1, 3)
            value = self.value_proj(value).view(batch_size, -1, self.num_heads, self.d_head).permute(0, 2, 1, 3)
            pos_embedding = self.pos_proj(pos_embedding).view(batch_size, -1, self.num_heads, self.d_head)
            content_score = torch.matmul((query + self.u_bias).transpose(1, 2), key.transpose(2, 3))
            pos_score = torch.matmul((query + self.v_bias).transpose(1, 2), pos_embedding.permute(0, 2, 3, 1))
            pos_score = self._relative_shift(pos_score)
            score = (content_score + pos_score) / self.sqrt_dim
            if mask is not None:
                mask = mask.unsqueeze(1)
                score.masked_fill_(mask, -1e9)
            attn = F.softmax(score, -1)
            attn = self.dropout(attn)
            context = torch.matmul(attn, value).transpose(1, 2)
            context = context.contiguous().view(batch_size, -1, self.d_model)
            return self.out_proj(context)

        def _relative_shift(self, pos_score: Tensor) -> Tensor:
            batch_size, num_heads, seq_length1, seq_length2 = pos_score.size()
            zeros = pos_score.new_zeros(batch_size, num_heads, seq_length1, 1)
            padded_pos_score = torch.cat([zeros, pos_score], dim=-1)
            padded_pos_score = padded_pos_score.view(batch_size, num_heads, seq_length2 + 1, seq_length1)
            pos_score = padded_pos_score[:, :, 1:].view_as(pos_score)
            return pos_score

    class MultiHeadedSelfAttentionModule(nn.Module):
        def __init__(self, d_model: int, num_heads: int, dropout_p: float = 0.1):
            super(MultiHeadedSelfAttentionModule, self).__init__()
            self.positional_encoding = PositionalEncoding(d_model)
            self.layer_norm = nn.LayerNorm(d_model)
            self.attention = RelativeMultiHeadAttention(d_model, num_heads, dropout_p)
            self.dropout = nn.Dropout(p=dropout_p)

        def forward(self, inputs: Tensor, mask=None):
            batch_size, seq_length, _ = inputs.size()
            pos_embedding = self.positional_encoding(seq_length)
            pos_embedding = pos_embedding.repeat(batch_size, 1, 1)
            inputs = self.layer_norm(inputs)
            outputs = self.attention(inputs, inputs, inputs, pos_embedding=pos_embedding, mask=mask)
            return self.dropout(outputs)

    # ---- conformer/convolution.py ----
    class DepthwiseConv1d(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                     padding: int = 0, bias: bool = False) -> None:
            super(DepthwiseConv1d, self).__init__()
            assert out_channels % in_channels == 0, "out_channels should be constant multiple of in_channels"
            self.conv = nn.Conv1d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size,
                                  groups=in_channels, stride=stride, padding=padding, bias=bias)

        def forward(self, inputs: Tensor) -> Tensor:
            return self.conv(inputs)

    class PointwiseConv1d(nn.Module):
        def __init__(self, in_channels: int, out_channels: int, stride: int = 1, padding: int = 0,
                     bias: bool = True) -> None:
            super(PointwiseConv1d, self).__init__()
            self.conv = nn.Conv1d(in_channels=in_channels, out_channels=out_channels, kernel_size=1, stride=stride,
                                  padding=padding, bias=bias)

        def forward(self, inputs: Tensor) -> Tensor:
            return self.conv(inputs)

    class ConformerConvModule(nn.Module):
        def __init__(self, in_channels: int, kernel_size: int = 31, expansion_factor: int = 2,
                     dropout_p: float = 0.1) -> None:
            super(ConformerConvModule, self).__init__()
            assert (kernel_size - 1) % 2 == 0, "kernel_size should be a odd number for 'SAME' padding"
            assert expansion_factor == 2, "Currently, Only Supports expansion_factor 2"
            self.sequential = nn.Sequential(
                nn.LayerNorm(in_channels),
                Transpose(shape=(1, 2)),
                PointwiseConv1d(in_channels, in_channels * expansion_factor, stride=1, padding=0, bias=True),
                GLU(dim=1),
                DepthwiseConv1d(in_channels, in_channels, kernel_size, stride=1, padding=(kernel_size - 1) // 2),
                nn.BatchNorm1d(in_channels),
                Swish(),
                PointwiseConv1d(in_channels, in_channels, stride=1, padding=0, bias=True),
                nn.Dropout(p=dropout_p),
            )

        def forward(self, inputs: Tensor) -> Tensor:
            return self.sequential(inputs).transpose(1, 2)

    class Conv2dSubampling(nn.Module):
        def __init__(self, in_channels: int, out_channels: int) -> None:
            super(Conv2dSubampling, self).__init__()
            self.sequential = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2),
                nn.ReLU(),
                nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=2),
                nn.ReLU(),
            )

        def forward(self, inputs: Tensor, input_lengths: Tensor):
            outputs = self.sequential(inputs.unsqueeze(1))
            batch_size, channels, subsampled_lengths, sumsampled_dim = outputs.size()
            outputs = outputs.permute(0, 2, 1, 3)
            outputs = outputs.contiguous().view(batch_size, subsampled_lengths, channels * sumsampled_dim)
            output_lengths = input_lengths >> 2
            output_lengths -= 1
            return outputs, output_lengths

    # ---- conformer/encoder.py ----
    class ConformerBlock(nn.Module):
        def __init__(self, encoder_dim: int = 512, num_attention_heads: int = 8,
                     feed_forward_expansion_factor: int = 4, conv_expansion_factor: int = 2,
                     feed_forward_dropout_p: float = 0.1, attention_dropout_p: float = 0.1,
                     conv_dropout_p: float = 0.1, conv_kernel_size: int = 31, half_step_residual: bool = True):
            super(ConformerBlock, self).__init__()
            if half_step_residual:
                self.feed_forward_residual_factor = 0.5
            else:
                self.feed_forward_residual_factor = 1
            self.sequential = nn.Sequential(
                ResidualConnectionModule(
                    module=FeedForwardModule(encoder_dim=encoder_dim, expansion_factor=feed_forward_expansion_factor,
                                             dropout_p=feed_forward_dropout_p),
                    module_factor=self.feed_forward_residual_factor,
                ),
                ResidualConnectionModule(
                    module=MultiHeadedSelfAttentionModule(d_model=encoder_dim, num_heads=num_attention_heads,
                                                          dropout_p=attention_dropout_p),
                ),
                ResidualConnectionModule(
                    module=ConformerConvModule(in_channels=encoder_dim, kernel_size=conv_kernel_size,
                                               expansion_factor=conv_expansion_factor, dropout_p=conv_dropout_p),
                ),
                ResidualConnectionModule(
                    module=FeedForwardModule(encoder_dim=encoder_dim, expansion_factor=feed_forward_expansion_factor,
                                             dropout_p=feed_forward_dropout_p),
                    module_factor=self.feed_forward_residual_factor,
                ),
                nn.LayerNorm(encoder_dim),
            )

        def forward(self, inputs: Tensor) -> Tensor:
            return self.sequential(inputs)

    class ConformerEncoder(nn.Module):
        def __init__(self, input_dim: int = 80, encoder_dim: int = 512, num_layers: int = 17,
                     num_attention_heads: int = 8, feed_forward_expansion_factor: int = 4,
                     conv_expansion_factor: int = 2, input_dropout_p: float = 0.1,
                     feed_forward_dropout_p: float = 0.1, attention_dropout_p: float = 0.1,
                     conv_dropout_p: float = 0.1, conv_kernel_size: int = 31, half_step_residual: bool = True):
            super(ConformerEncoder, self).__init__()
            self.conv_subsample = Conv2dSubampling(in_channels=1, out_channels=encoder_dim)
            self.input_projection = nn.Sequential(
                Linear(encoder_dim * (((input_dim - 1) // 2 - 1) // 2), encoder_dim),
                nn.Dropout(p=input_dropout_p),
            )
            self.layers = nn.ModuleList([ConformerBlock(
                encoder_dim=encoder_dim,
                num_attention_heads=num_attention_heads,
                feed_forward_expansion_factor=feed_forward_expansion_factor,
                conv_expansion_factor=conv_expansion_factor,
                feed_forward_dropout_p=feed_forward_dropout_p,
                attention_dropout_p=attention_dropout_p,
                conv_dropout_p=conv_dropout_p,
                conv_kernel_size=conv_kernel_size,
                half_step_residual=half_step_residual,
            ) for _ in range(num_layers)])

        def count_parameters(self) -> int:
            """ Count parameters of encoder """
            return sum([p.numel() for p in self.parameters()])

        def update_dropout(self, dropout_p: float) -> None:
            """ Update dropout probability of encoder """
            for name, child in self.named_children():
                if isinstance(child, nn.Dropout):
                    child.p = dropout_p

        def forward(self, inputs: Tensor, input_lengths: Tensor):
            outputs, output_lengths = self.conv_subsample(inputs, input_lengths)
            outputs = self.input_projection(outputs)
            for layer in self.layers:
                outputs = layer(outputs)
            return outputs, output_lengths

    # ---- conformer/model.py ----
    class Conformer(nn.Module):
        def __init__(self, num_classes: int, input_dim: int = 80, encoder_dim: int = 512,
                     num_encoder_layers: int = 17, num_attention_heads: int = 8,
                     feed_forward_expansion_factor: int = 4, conv_expansion_factor: int = 2,
                     input_dropout_p: float = 0.1, feed_forward_dropout_p: float = 0.1,
                     attention_dropout_p: float = 0.1, conv_dropout_p: float = 0.1, conv_kernel_size: int = 31,
                     half_step_residual: bool = True) -> None:
            super(Conformer, self).__init__()
            self.encoder = ConformerEncoder(
                input_dim=input_dim, encoder_dim=encoder_dim, num_layers=num_encoder_layers,
                num_attention_heads=num_attention_heads, feed_forward_expansion_factor=feed_forward_expansion_factor,
                conv_expansion_factor=conv_expansion_factor, input_dropout_p=input_dropout_p,
                feed_forward_dropout_p=feed_forward_dropout_p, attention_dropout_p=attention_dropout_p,
                conv_dropout_p=conv_dropout_p, conv_kernel_size=conv_kernel_size,
                half_step_residual=half_step_residual,
            )
            self.fc = Linear(encoder_dim, num_classes, bias=False)

        def count_parameters(self) -> int:
            """ Count parameters of encoder """
            return self.encoder.count_parameters()

        def update_dropout(self, dropout_p) -> None:
            """ Update dropout probability of model """
            self.encoder.update_dropout(dropout_p)

        def forward(self, inputs: Tensor, input_lengths: Tensor):
            encoder_outputs, encoder_output_lengths = self.encoder(inputs, input_lengths)
            outputs = self.fc(encoder_outputs)
            outputs = nn.functional.log_softmax(outputs, dim=-1)
            return outputs, encoder_output_lengths

    return Conformer


def filterbank_modules(torch):
    nn = torch.nn

    def normalize_batch(x, seq_len, normalize_type):
        x_mean = None
        x_std = None
        if normalize_type == "per_feature":
            batch_size = x.shape[0]
            max_time = x.shape[2]
            # When doing stream capture to a graph, item() is not allowed
            # becuase it calls cudaStreamSynchronize(). Therefore, we are
            # sacrificing some error checking when running with cuda graphs.
            if (torch.cuda.is_available() and not torch.cuda.is_current_stream_capturing()
                    and torch.any(seq_len == 1).item()):
                raise ValueError("normalize_batch with `per_feature` normalize_type received a tensor of length 1.")
            time_steps = torch.arange(max_time, device=x.device).unsqueeze(0).expand(batch_size, max_time)
            valid_mask = time_steps < seq_len.unsqueeze(1)
            x_mean_numerator = torch.where(valid_mask.unsqueeze(1), x, 0.0).sum(axis=2)
            x_mean_denominator = valid_mask.sum(axis=1)
            x_mean = x_mean_numerator / x_mean_denominator.unsqueeze(1)
            # Subtract 1 in the denominator to correct for the bias.
            x_std = torch.sqrt(
                torch.sum(torch.where(valid_mask.unsqueeze(1), x - x_mean.unsqueeze(2), 0.0) ** 2, axis=2)
                / (x_mean_denominator.unsqueeze(1) - 1.0)
            )
            x_std = x_std.masked_fill(x_std.isnan(), 0.0)  # edge case: only 1 frame in denominator
            # make sure x_std is not zero
            x_std += CONSTANT
            return (x - x_mean.unsqueeze(2)) / x_std.unsqueeze(2), x_mean, x_std
        return x, x_mean, x_std

    class FilterbankFeatures(nn.Module):
        def __init__(self, sample_rate=16000, n_window_size=320, n_window_stride=160, normalize="per_feature",
                     n_fft=None, preemph=0.97, nfilt=64, log=True, log_zero_guard_value=2 ** -24, pad_to=16,
                     pad_value=0, mag_power=2.0, mel_norm="slaney"):
            super().__init__()
            self.log_zero_guard_value = log_zero_guard_value
            self.win_length = n_window_size
            self.hop_length = n_window_stride
            self.n_fft = n_fft or 2 ** math.ceil(math.log2(self.win_length))
            self.stft_pad_amount = None
            window_tensor = torch.hann_window(self.win_length, periodic=False)
            self.register_buffer("window", window_tensor)
            self.normalize = normalize
            self.log = log
            self.preemph = preemph
            self.pad_to = pad_to
            self.pad_value = pad_value
            self.mag_power = mag_power
            filterbanks = torch.tensor(mel_fbanks(self.n_fft // 2 + 1, nfilt, sample_rate).T).unsqueeze(0)
            self.register_buffer("fb", filterbanks)

        def stft(self, x):
            return torch.stft(
                x,
                n_fft=self.n_fft,
                hop_length=self.hop_length,
                win_length=self.win_length,
                center=False if self.stft_pad_amount is not None else True,
                window=self.window.to(dtype=torch.float, device=x.device),
                return_complex=True,
            )

        def get_seq_len(self, seq_len):
            # Assuming that center is True is stft_pad_amount = 0
            pad_amount = self.stft_pad_amount * 2 if self.stft_pad_amount is not None else self.n_fft // 2 * 2
            seq_len = torch.floor_divide((seq_len + pad_amount - self.n_fft), self.hop_length) + 1
            return seq_len.to(dtype=torch.long)

        def forward(self, x, seq_len):
            seq_len = self.get_seq_len(seq_len)
            # do preemphasis
            if self.preemph is not None:
                timemask = torch.arange(x.shape[1], device=x.device).unsqueeze(0) < seq_len.unsqueeze(1)
                x = torch.cat((x[:, 0].unsqueeze(1), x[:, 1:] - self.preemph * x[:, :-1]), dim=1)
                x = x.masked_fill(~timemask, 0.0)
            x = self.stft(x)
            # torch stft returns complex tensor (of shape [B,N,T]); so convert to magnitude
            # guard is needed for sqrt if grads are passed through
            guard = 0
            x = torch.view_as_real(x)
            x = torch.sqrt(x.pow(2).sum(-1) + guard)
            # get power spectrum
            if self.mag_power != 1.0:
                x = x.pow(self.mag_power)
            # dot with filterbank energies
            x = torch.matmul(self.fb.to(x.dtype), x)
            # log features if required
            if self.log:
                x = torch.log(x + self.log_zero_guard_value)
            # normalize if required
            if self.normalize:
                x, _, _ = normalize_batch(x, seq_len, normalize_type=self.normalize)
            # mask to zero any values beyond seq_len in batch, pad to multiple of `pad_to` (for efficiency)
            max_len = x.size(-1)
            mask = torch.arange(max_len, device=x.device)
            mask = mask.repeat(x.size(0), 1) >= seq_len.unsqueeze(1)
            x = x.masked_fill(mask.unsqueeze(1).type(torch.bool).to(device=x.device), self.pad_value)
            del mask
            pad_to = self.pad_to
            if pad_to > 0:
                pad_amt = x.size(-1) % pad_to
                if pad_amt != 0:
                    x = nn.functional.pad(x, (0, pad_to - pad_amt), value=self.pad_value)
            return x, seq_len

    class SpecAugment(nn.Module):
        def __init__(self, freq_masks=0, time_masks=0, freq_width=10, time_width=10, rng=None, mask_value=0.0):
            super().__init__()
            self._rng = random.Random() if rng is None else rng
            self.freq_masks = freq_masks
            self.time_masks = time_masks
            self.freq_width = freq_width
            self.time_width = time_width
            self.mask_value = mask_value

        @torch.no_grad()
        def forward(self, input_spec, length):
            sh = input_spec.shape
            mask = torch.zeros(sh, dtype=torch.bool)
            for idx in range(sh[0]):
                for i in range(self.freq_masks):
                    x_left = self._rng.randint(0, sh[1] - self.freq_width)
                    w = self._rng.randint(0, self.freq_width)
                    mask[idx, x_left:x_left + w, :] = True
                for i in range(self.time_masks):
                    time_width = self.time_width
                    y_left = self._rng.randint(0, max(1, int(length[idx]) - time_width))
                    w = self._rng.randint(0, time_width)
                    mask[idx, :, y_left:y_left + w] = True
            input_spec = input_spec.masked_fill(mask.to(input_spec.device), self.mask_value)
            return input_spec

    return FilterbankFeatures, SpecAugment


def conformer_program(torch, init=None, steps=3, spec_augment=False):
    nn = torch.nn
    Conformer = conformer_modules(torch)
    FilterbankFeatures, SpecAugment = filterbank_modules(torch)
    torch.manual_seed(0)
    waves, texts = utterances(0, 3)
    # a batch as a collate_fn pads it
    audio_lengths = torch.tensor([len(w) for w in waves])
    audio = torch.zeros(len(waves), int(audio_lengths.max()))
    for k, w in enumerate(waves):
        audio[k, :len(w)] = torch.from_numpy(w)
    featurizer = FilterbankFeatures(sample_rate=SAMPLE_RATE, n_window_size=80, n_window_stride=32, nfilt=16,
                                    pad_to=4)
    result = {}
    with torch.no_grad():
        feats, feat_lengths = featurizer(audio, audio_lengths)
    if spec_augment:
        feats = SpecAugment(freq_masks=2, time_masks=2, freq_width=3, time_width=4, rng=random.Random(0))(
            feats, feat_lengths)
    result["feats"], result["feat_lengths"] = numpy_of(feats), numpy_of(feat_lengths)

    # README: inputs (batch, time, dim), input_lengths, targets padded with 0, target_lengths
    inputs = feats.transpose(1, 2).contiguous()
    input_lengths = feat_lengths
    targets = torch.LongTensor([t + [0] * (3 - len(t)) for t in texts])
    target_lengths = torch.LongTensor([len(t) for t in texts])
    criterion = nn.CTCLoss()
    model = Conformer(num_classes=5, input_dim=16, encoder_dim=16, num_encoder_layers=2, num_attention_heads=2,
                      conv_kernel_size=7, input_dropout_p=0.0, feed_forward_dropout_p=0.0, attention_dropout_p=0.0,
                      conv_dropout_p=0.0)
    result["n_params"] = model.count_parameters()
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        outputs, output_lengths = model(inputs, input_lengths)
        loss = criterion(outputs.transpose(0, 1), targets, output_lengths, target_lengths)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result["losses"], result["output_lengths"] = losses, numpy_of(output_lengths)
    model.eval()
    with torch.no_grad():
        outputs, output_lengths = model(inputs, input_lengths)
    hyps = []
    for k in range(outputs.size(0)):
        best = outputs[k, :output_lengths[k]].argmax(-1)
        hyps.append([int(t) for t in torch.unique_consecutive(best) if t != 0])
    result["hyps"], result["eval_outputs"] = hyps, numpy_of(outputs)
    # a key bias adds the same q.b to every key's score, which the softmax takes out: its gradient is
    # rounding noise, which Adam scales into full steps (as the biases before a norm)
    state, noisy = split_bias_before_norm(state_numpy(model), {k for k in model.state_dict() if "key_proj.linear.bias" in k})
    result["state"], result["own"] = state, noisy
    return result


def test_conformer_ctc_training():
    ref, got = compare_program(conformer_program, rtol=1e-3, atol=1e-4)
    assert ref["losses"][-1] < ref["losses"][0]


def test_conformer_with_spec_augment():
    compare_program(conformer_program, steps=2, spec_augment=True, rtol=1e-3, atol=1e-4)
