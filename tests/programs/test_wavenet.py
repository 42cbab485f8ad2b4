"""A WaveNet as the audio repositories write it (vincentherrmann/pytorch-wavenet,
golbin/WaveNet): mu-law companding with torch.sign, torch.log1p and torch.abs, quantisation to 256
classes and its inverse with torch.expm1; a causal Conv1d (kernel 2, padding trimmed), residual
blocks of dilated causal convolutions (dilation 1, 2, 4, ... made causal by F.pad on the left) with
the gated activation torch.tanh(f) * torch.sigmoid(g), 1x1 residual and skip convolutions, the
skip connections summed and narrowed to the output length, F.one_hot inputs permuted to (N, C,
T), cross_entropy over the 256 classes, Adam with clip_grad_norm_, and greedy generation one sample
at a time with torch.argmax on a sliding receptive field."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def mu_law_encode(torch, audio, quantization_channels=256):
    mu = float(quantization_channels - 1)
    safe_audio_abs = torch.minimum(torch.abs(audio), torch.tensor(1.0))
    magnitude = torch.log1p(mu * safe_audio_abs) / np.log1p(mu)
    signal = torch.sign(audio) * magnitude
    return ((signal + 1) / 2 * mu + 0.5).to(torch.int64)


def mu_law_decode(torch, output, quantization_channels=256):
    mu = float(quantization_channels - 1)
    signal = 2 * (output.to(torch.float32) / mu) - 1
    magnitude = (1 / mu) * torch.expm1(torch.abs(signal) * np.log1p(mu))
    return torch.sign(signal) * magnitude


def wavenet(torch, init=None, layer_size=3, stack_size=2, in_channels=256, res_channels=16, steps=4,
            generate=6):
    nn, F = torch.nn, torch.nn.functional

    class CausalConv1d(nn.Module):
        """Causal convolution of kernel 2: pad one step, drop the look-ahead output."""

        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=2, stride=1, padding=1, bias=False)

        def forward(self, x):
            output = self.conv(x)
            return output[:, :, :-1]

    class DilatedCausalConv1d(nn.Module):
        def __init__(self, channels, dilation=1):
            super().__init__()
            self.dilation = dilation
            self.conv = nn.Conv1d(channels, channels, kernel_size=2, stride=1, dilation=dilation, padding=0,
                                  bias=False)

        def forward(self, x):
            return self.conv(F.pad(x, (self.dilation, 0)))

    class ResidualBlock(nn.Module):
        def __init__(self, res_channels, skip_channels, dilation):
            super().__init__()
            self.dilated_filter = DilatedCausalConv1d(res_channels, dilation=dilation)
            self.dilated_gate = DilatedCausalConv1d(res_channels, dilation=dilation)
            self.conv_res = nn.Conv1d(res_channels, res_channels, 1)
            self.conv_skip = nn.Conv1d(res_channels, skip_channels, 1)

        def forward(self, x, skip_size):
            gated = torch.tanh(self.dilated_filter(x)) * torch.sigmoid(self.dilated_gate(x))
            output = self.conv_res(gated)
            output += x
            skip = self.conv_skip(gated)
            skip = skip[:, :, -skip_size:]
            return output, skip

    class ResidualStack(nn.Module):
        def __init__(self, layer_size, stack_size, res_channels, skip_channels):
            super().__init__()
            self.res_blocks = nn.ModuleList(
                [ResidualBlock(res_channels, skip_channels, d) for d in self.build_dilations(layer_size, stack_size)])

        @staticmethod
        def build_dilations(layer_size, stack_size):
            dilations = []
            for s in range(0, stack_size):
                for l in range(0, layer_size):
                    dilations.append(2 ** l)
            return dilations

        def forward(self, x, skip_size):
            output = x
            skip_connections = []
            for res_block in self.res_blocks:
                output, skip = res_block(output, skip_size)
                skip_connections.append(skip)
            return torch.stack(skip_connections)

    class DensNet(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv1 = nn.Conv1d(channels, channels, 1)
            self.conv2 = nn.Conv1d(channels, channels, 1)
            self.relu = nn.ReLU()

        def forward(self, x):
            output = self.relu(x)
            output = self.conv1(output)
            output = self.relu(output)
            return self.conv2(output)

    class WaveNet(nn.Module):
        def __init__(self, layer_size, stack_size, in_channels, res_channels):
            super().__init__()
            self.receptive_fields = int(np.sum([2 ** l for l in range(0, layer_size)] * stack_size))
            self.causal = CausalConv1d(in_channels, res_channels)
            self.res_stack = ResidualStack(layer_size, stack_size, res_channels, in_channels)
            self.densnet = DensNet(in_channels)

        def calc_output_size(self, x):
            output_size = int(x.size(2)) - self.receptive_fields
            if output_size < 1:
                raise ValueError(f"Input size {x.size(2)} is not larger than the receptive field "
                                 f"{self.receptive_fields}")
            return output_size

        def forward(self, x):
            output = x.transpose(1, 2)  # (N, T, C) -> (N, C, T)
            output_size = self.calc_output_size(output)
            output = self.causal(output)
            skip_connections = self.res_stack(output, output_size)
            output = torch.sum(skip_connections, dim=0)
            output = self.densnet(output)
            return output.transpose(1, 2).contiguous()

    torch.manual_seed(0)
    model = WaveNet(layer_size, stack_size, in_channels, res_channels)
    result = {}
    start_from(torch, model, init, result)
    # a chirp with a little noise as the "audio", in [-1, 1]
    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 48, dtype=np.float32)
    audio = (0.8 * np.sin(2 * np.pi * (3 + 6 * t) * t) + 0.05 * rng.standard_normal((2, 48))).astype(np.float32)
    audio = np.clip(audio, -1.2, 1.2)  # beyond [-1, 1] is clamped by the encoder
    quantized = mu_law_encode(torch, torch.from_numpy(audio))
    decoded = mu_law_decode(torch, quantized)
    inputs = F.one_hot(quantized[:, :-1], in_channels).float()  # (N, T, 256)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    losses = []
    for _ in range(steps):
        logits = model(inputs)  # (N, T - receptive field, 256)
        targets = quantized[:, -logits.size(1):]
        loss = F.cross_entropy(logits.view(-1, in_channels), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    window = quantized[:1, -model.receptive_fields - 1:]
    generated = []
    with torch.no_grad():
        for _ in range(generate):
            x = F.one_hot(window, in_channels).float()
            out = model(x)
            next_sample = torch.argmax(out[:, -1, :], dim=-1)
            generated.append(int(next_sample.item()))
            window = torch.cat([window[:, 1:], next_sample.unsqueeze(1)], dim=1)
    try:
        model(inputs[:, :model.receptive_fields])
        too_short = ""
    except ValueError as e:
        too_short = str(e)
    result.update(quantized=numpy_of(quantized), decoded=numpy_of(decoded), losses=losses,
                  last_logits=numpy_of(logits), generated=generated, too_short=too_short,
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_wavenet_mu_law_dilated_causal():
    ref, got = compare_program(wavenet, rtol=1e-3, atol=1e-5)
    assert ref["losses"][-1] < ref["losses"][0]
    # mu-law round trip: the quantisation error is small where the signal is small
    assert ref["quantized"].min() >= 0 and ref["quantized"].max() <= 255
    assert ref["too_short"].startswith("Input size")
