"""Audio classification as PyTorch's "Speech Command Classification with torchaudio" tutorial writes
it, with the SPEECHCOMMANDS download replaced by seeded NumPy waveforms of differing lengths (a
tone per word): the collate_fn that pads with torch.nn.utils.rnn.pad_sequence(batch_first=True)
after item.t() and permutes back, labels to indices through torch.tensor(labels.index(word)) and
torch.stack, the M5 network (Conv1d of kernel 80 and stride 16, BatchNorm1d, MaxPool1d,
F.avg_pool1d(x, x.shape[-1]), permute, F.log_softmax(dim=2)), Adam with weight_decay, StepLR, F.nll_loss
on output.squeeze(), and the test loop's argmax(dim=-1) / pred.squeeze().eq(target).sum().item().
Then the spectrogram front end of the audio tutorials: torch.stft with a hann_window and
return_complex=True, abs().pow(2) power, a mel filterbank (built in NumPy as torchaudio's
melscale_fbanks) applied with torch.matmul, log of the clamped mel energies, and a small Conv2d
classifier with AdaptiveAvgPool2d."""
import numpy as np

from prog_helpers import compare_program, numpy_of, split_bias_before_norm, start_from, state_numpy

LABELS = ["yes", "no", "up", "down"]
SAMPLE_RATE = 2000


def waveforms(seed, n):
    """n (waveform (1, T), sample_rate, label, speaker_id, utterance_number) items as the dataset
    gives them; T between 1600 and 2000."""
    rng = np.random.default_rng(seed)
    items = []
    for k in range(n):
        label = LABELS[k % len(LABELS)]
        t = np.arange(rng.integers(1600, 2001)) / SAMPLE_RATE
        tone = 120.0 * (1 + LABELS.index(label)) * (1 + 0.05 * rng.standard_normal())
        wave = 0.5 * np.sin(2 * np.pi * tone * t) + 0.1 * rng.standard_normal(t.shape)
        items.append((wave[None].astype(np.float32), SAMPLE_RATE, label, f"spk{k % 3}", k))
    return items


def m5_tutorial(torch, init=None, epochs=3, batch_size=8, n_channel=8):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    labels = LABELS

    def label_to_index(word):
        # Return the position of the word in labels
        return torch.tensor(labels.index(word))

    def pad_sequence(batch):
        # Make all tensor in a batch the same length by padding with zeros
        batch = [item.t() for item in batch]
        batch = torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=0.)
        return batch.permute(0, 2, 1)

    def collate_fn(batch):
        # A data tuple has the form:
        # waveform, sample_rate, label, speaker_id, utterance_number
        tensors, targets = [], []
        # Gather in lists, and encode labels as indices
        for waveform, _, label, *_ in batch:
            tensors += [torch.from_numpy(waveform)]
            targets += [label_to_index(label)]
        # Group the list of tensors into a batched tensor
        tensors = pad_sequence(tensors)
        targets = torch.stack(targets)
        return tensors, targets

    class M5(nn.Module):
        def __init__(self, n_input=1, n_output=35, stride=16, n_channel=32):
            super().__init__()
            self.conv1 = nn.Conv1d(n_input, n_channel, kernel_size=80, stride=stride)
            self.bn1 = nn.BatchNorm1d(n_channel)
            self.pool1 = nn.MaxPool1d(4)
            self.conv2 = nn.Conv1d(n_channel, n_channel, kernel_size=3)
            self.bn2 = nn.BatchNorm1d(n_channel)
            self.pool2 = nn.MaxPool1d(4)
            self.conv3 = nn.Conv1d(n_channel, 2 * n_channel, kernel_size=3)
            self.bn3 = nn.BatchNorm1d(2 * n_channel)
            self.pool3 = nn.MaxPool1d(2)
            self.fc1 = nn.Linear(2 * n_channel, n_output)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(self.bn1(x))
            x = self.pool1(x)
            x = self.conv2(x)
            x = F.relu(self.bn2(x))
            x = self.pool2(x)
            x = self.conv3(x)
            x = F.relu(self.bn3(x))
            x = self.pool3(x)
            x = F.avg_pool1d(x, x.shape[-1])
            x = x.permute(0, 2, 1)
            x = self.fc1(x)
            return F.log_softmax(x, dim=2)

    def number_of_correct(pred, target):
        # count number of correct predictions
        return pred.squeeze().eq(target).sum().item()

    def get_likely_index(tensor):
        # find most likely label index for each element in the batch
        return tensor.argmax(dim=-1)

    torch.manual_seed(0)
    model = M5(n_input=1, n_output=len(labels), n_channel=n_channel)
    result = {}
    start_from(torch, model, init, result)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    train_set, test_set = waveforms(0, 32), waveforms(1, 16)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=batch_size, shuffle=False, collate_fn=collate_fn)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=batch_size, shuffle=False, collate_fn=collate_fn)
    optimizer = optim.Adam(model.parameters(), lr=0.01, weight_decay=0.0001)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
    losses, accuracies, first_shape = [], [], None
    for epoch in range(1, epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            first_shape = first_shape or tuple(data.shape)
            output = model(data)
            # negative log-likelihood for a tensor of size (batch x 1 x n_output)
            loss = F.nll_loss(output.squeeze(), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        model.eval()
        correct = 0
        for data, target in test_loader:
            output = model(data)
            pred = get_likely_index(output)
            correct += number_of_correct(pred, target)
        accuracies.append(correct / len(test_loader.dataset))
    state, noisy = split_bias_before_norm(state_numpy(model), ("conv1.bias", "conv2.bias", "conv3.bias"))
    result.update(n_params=n_params, losses=losses, accuracies=accuracies, first_shape=first_shape,
                  lr=scheduler.get_last_lr(), state=state, own=noisy)
    return result


def mel_fbanks(n_freqs, n_mels, sample_rate, f_min=0.0):
    """Triangular filters on the HTK mel scale, (n_freqs, n_mels), as torchaudio's melscale_fbanks."""
    hz_to_mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)  # noqa: E731
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs)
    m_pts = np.linspace(hz_to_mel(f_min), hz_to_mel(sample_rate / 2), n_mels + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0, np.minimum(down, up)).astype(np.float32)


def spectrogram_cnn(torch, init=None, n_fft=128, hop_length=64, n_mels=16, steps=5):
    nn, F = torch.nn, torch.nn.functional

    class MelSpectrogram(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hann_window(n_fft))
            self.register_buffer("fb", torch.from_numpy(mel_fbanks(n_fft // 2 + 1, n_mels, SAMPLE_RATE)))

        def forward(self, waveform):  # (N, T) -> (N, 1, n_mels, frames)
            spec = torch.stft(waveform, n_fft, hop_length=hop_length, window=self.window, center=True,
                              pad_mode="reflect", return_complex=True)
            power = spec.abs().pow(2)
            mel = torch.matmul(power.transpose(-1, -2), self.fb).transpose(-1, -2)
            return torch.log(torch.clamp(mel, min=1e-10)).unsqueeze(1)

    class AudioCNN(nn.Module):
        def __init__(self, n_classes):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)))
            self.classifier = nn.Linear(16, n_classes)

        def forward(self, x):
            return self.classifier(torch.flatten(self.features(x), 1))

    torch.manual_seed(0)
    frontend, model = MelSpectrogram(), AudioCNN(len(LABELS))
    result = {}
    start_from(torch, model, init, result)
    items = waveforms(2, 16)
    length = min(w.shape[1] for w, *_ in items)
    waves = torch.from_numpy(np.concatenate([w[:, :length] for w, *_ in items]))
    targets = torch.tensor([LABELS.index(label) for _, _, label, *_ in items])
    with torch.no_grad():
        feats = frontend(waves)
        feats = (feats - feats.mean()) / feats.std()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(feats), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result.update(feats=numpy_of(feats), losses=losses, grads={k: numpy_of(p.grad) for k, p in model.named_parameters()})
    return result


def test_speech_commands_m5():
    ref, got = compare_program(m5_tutorial, rtol=1e-3, atol=1e-5)
    longest = max(w.shape[1] for w, *_ in waveforms(0, 32)[:8])
    assert ref["first_shape"] == (8, 1, longest)  # padded to the longest waveform of the batch
    assert ref["losses"][-1] < ref["losses"][0]
    np.testing.assert_allclose(ref["lr"], [0.01 * 0.1])


def test_log_mel_spectrogram_cnn():
    ref, got = compare_program(spectrogram_cnn, rtol=1e-3, atol=1e-4)
    assert ref["feats"].shape[:3] == (16, 1, 16)
    assert ref["losses"][-1] < ref["losses"][0]
