"""An audio front end written in torch ops the way torchaudio.functional writes it (torchaudio is not
installed; its functions are plain torch code): spectrogram (torch.stft with a hann_window,
return_complex=True, power 2), melscale_fbanks (htk and slaney scales, slaney norm: _hz_to_mel,
_mel_to_hz with a masked assignment, _create_triangular_filterbank), create_dct (ortho and None),
amplitude_to_DB with top_db, MFCC as torchaudio.transforms.MFCC composes them, torchaudio's
griffinlim (torch.istft and torch.stft in a loop over complex angles with momentum, tprev.mul_),
an istft round trip, and SpecAugment's mask_along_axis_iid (torch.rand positions: compared by the
structure of the masks, the draws being each library's own). Then a small classifier trained on
the MFCCs of NumPy tones for a few Adam steps."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def torchaudio_functional(torch):
    def _hz_to_mel(freq, mel_scale="htk"):
        if mel_scale not in ["slaney", "htk"]:
            raise ValueError('mel_scale should be one of "htk" or "slaney".')

        if mel_scale == "htk":
            return 2595.0 * math.log10(1.0 + (freq / 700.0))

        # Fill in the linear part
        f_min = 0.0
        f_sp = 200.0 / 3

        mels = (freq - f_min) / f_sp

        # Fill in the log-scale part
        min_log_hz = 1000.0
        min_log_mel = (min_log_hz - f_min) / f_sp
        logstep = math.log(6.4) / 27.0

        if freq >= min_log_hz:
            mels = min_log_mel + math.log(freq / min_log_hz) / logstep

        return mels

    def _mel_to_hz(mels, mel_scale="htk"):
        if mel_scale not in ["slaney", "htk"]:
            raise ValueError('mel_scale should be one of "htk" or "slaney".')

        if mel_scale == "htk":
            return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)

        # Fill in the linear scale
        f_min = 0.0
        f_sp = 200.0 / 3
        freqs = f_min + f_sp * mels

        # And now the nonlinear scale
        min_log_hz = 1000.0
        min_log_mel = (min_log_hz - f_min) / f_sp
        logstep = math.log(6.4) / 27.0

        log_t = mels >= min_log_mel
        freqs[log_t] = min_log_hz * torch.exp(logstep * (mels[log_t] - min_log_mel))

        return freqs

    def _create_triangular_filterbank(all_freqs, f_pts):
        # Adopted from Librosa
        # calculate the difference between each filter mid point and each stft freq point in hertz
        f_diff = f_pts[1:] - f_pts[:-1]  # (n_filter + 1)
        slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)  # (n_freqs, n_filter + 2)
        # create overlapping triangles
        zero = torch.zeros(1)
        down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]  # (n_freqs, n_filter)
        up_slopes = slopes[:, 2:] / f_diff[1:]  # (n_freqs, n_filter)
        fb = torch.max(zero, torch.min(down_slopes, up_slopes))

        return fb

    def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=None, mel_scale="htk"):
        if norm is not None and norm != "slaney":
            raise ValueError('norm must be one of None or "slaney"')

        # freq bins
        all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)

        # calculate mel freq bins
        m_min = _hz_to_mel(f_min, mel_scale=mel_scale)
        m_max = _hz_to_mel(f_max, mel_scale=mel_scale)

        m_pts = torch.linspace(m_min, m_max, n_mels + 2)
        f_pts = _mel_to_hz(m_pts, mel_scale=mel_scale)

        # create filterbank
        fb = _create_triangular_filterbank(all_freqs, f_pts)

        if norm is not None and norm == "slaney":
            # Slaney-style mel is scaled to be approx constant energy per channel
            enorm = 2.0 / (f_pts[2 : n_mels + 2] - f_pts[:n_mels])
            fb *= enorm.unsqueeze(0)

        return fb

    def create_dct(n_mfcc, n_mels, norm):
        if norm is not None and norm != "ortho":
            raise ValueError('norm must be either "ortho" or None')

        # http://en.wikipedia.org/wiki/Discrete_cosine_transform#DCT-II
        n = torch.arange(float(n_mels))
        k = torch.arange(float(n_mfcc)).unsqueeze(1)
        dct = torch.cos(math.pi / float(n_mels) * (n + 0.5) * k)  # size (n_mfcc, n_mels)

        if norm is None:
            dct *= 2.0
        else:
            dct[0] *= 1.0 / math.sqrt(2.0)
            dct *= math.sqrt(2.0 / float(n_mels))
        return dct.t()

    def amplitude_to_DB(x, multiplier, amin, db_multiplier, top_db=None):
        x_db = multiplier * torch.log10(torch.clamp(x, min=amin))
        x_db -= multiplier * db_multiplier

        if top_db is not None:
            # Expand batch
            shape = x_db.size()
            packed_channels = shape[-3] if x_db.dim() > 2 else 1
            x_db = x_db.reshape(-1, packed_channels, shape[-2], shape[-1])

            x_db = torch.max(x_db, (x_db.amax(dim=(-3, -2, -1)) - top_db).view(-1, 1, 1, 1))

            # Repack batch
            x_db = x_db.reshape(shape)

        return x_db

    def spectrogram(waveform, pad, window, n_fft, hop_length, win_length, power, normalized, center=True,
                    pad_mode="reflect", onesided=True):
        if pad > 0:
            waveform = torch.nn.functional.pad(waveform, (pad, pad), "constant")

        # pack batch
        shape = waveform.size()
        waveform = waveform.reshape(-1, shape[-1])

        # default values are consistent with librosa.core.spectrum._spectrogram
        spec_f = torch.stft(
            input=waveform,
            n_fft=n_fft,
            hop_length=hop_length,
            win_length=win_length,
            window=window,
            center=center,
            pad_mode=pad_mode,
            normalized=False,
            onesided=onesided,
            return_complex=True,
        )

        # unpack batch
        spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])

        if normalized:
            spec_f /= window.pow(2.0).sum().sqrt()
        if power is not None:
            if power == 1.0:
                return spec_f.abs()
            return spec_f.abs().pow(power)
        return spec_f

    def _get_complex_dtype(real_dtype):
        if real_dtype == torch.double:
            return torch.cdouble
        if real_dtype == torch.float:
            return torch.cfloat
        raise ValueError(f"Unexpected dtype {real_dtype}")

    def griffinlim(specgram, window, n_fft, hop_length, win_length, power, n_iter, momentum, length, rand_init):
        if not 0 <= momentum < 1:
            raise ValueError("momentum must be in range [0, 1). Found: {}".format(momentum))

        momentum = momentum / (1 + momentum)

        # pack batch
        shape = specgram.size()
        specgram = specgram.reshape([-1] + list(shape[-2:]))

        specgram = specgram.pow(1 / power)

        # initialize the phase
        if rand_init:
            angles = torch.rand(specgram.size(), dtype=_get_complex_dtype(specgram.dtype), device=specgram.device)
        else:
            angles = torch.full(specgram.size(), 1, dtype=_get_complex_dtype(specgram.dtype), device=specgram.device)

        # And initialize the previous iterate to 0
        tprev = torch.tensor(0.0, dtype=specgram.dtype, device=specgram.device)
        for _ in range(n_iter):
            # Invert with our current estimate of the phases
            inverse = torch.istft(
                specgram * angles, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
                length=length
            )

            # Rebuild the spectrogram
            rebuilt = torch.stft(
                input=inverse,
                n_fft=n_fft,
                hop_length=hop_length,
                win_length=win_length,
                window=window,
                center=True,
                pad_mode="reflect",
                normalized=False,
                onesided=True,
                return_complex=True,
            )

            # Update our phase estimates
            angles = rebuilt
            if momentum:
                angles = angles - tprev.mul_(momentum)
            angles = angles.div(angles.abs().add(1e-16))

            # Store the previous iterate
            tprev = rebuilt

        # Return the final phase estimates
        waveform = torch.istft(
            specgram * angles, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window, length=length
        )

        # unpack batch
        waveform = waveform.reshape(shape[:-2] + waveform.shape[-1:])

        return waveform

    def mask_along_axis_iid(specgrams, mask_param, mask_value, axis, p=1.0):
        dim = specgrams.dim()

        if dim < 3:
            raise ValueError(f"Spectrogram must have at least three dimensions ({dim} given).")

        if axis not in [dim - 2, dim - 1]:
            raise ValueError(
                f"Only Frequency and Time masking are supported (axis {dim-2} and axis {dim-1} supported; {axis} given)."
            )

        if not 0.0 <= p <= 1.0:
            raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")

        mask_param = int(specgrams.shape[axis] * p) if p < 1.0 else mask_param
        if mask_param < 1:
            return specgrams

        device = specgrams.device
        dtype = specgrams.dtype

        value = torch.rand(specgrams.shape[: (dim - 2)], device=device, dtype=dtype) * mask_param
        min_value = torch.rand(specgrams.shape[: (dim - 2)], device=device, dtype=dtype) * (
            specgrams.size(axis) - value)

        # Create broadcastable mask
        mask_start = min_value.long()[..., None, None]
        mask_end = (min_value.long() + value.long())[..., None, None]
        mask = torch.arange(0, specgrams.size(axis), device=device, dtype=dtype)

        # Per batch example masking
        specgrams = specgrams.transpose(axis, -1)
        specgrams = specgrams.masked_fill((mask >= mask_start) & (mask < mask_end), mask_value)
        specgrams = specgrams.transpose(axis, -1)

        return specgrams

    return dict(melscale_fbanks=melscale_fbanks, create_dct=create_dct, amplitude_to_DB=amplitude_to_DB,
                spectrogram=spectrogram, griffinlim=griffinlim, mask_along_axis_iid=mask_along_axis_iid)


def tones(rng, n, sample_rate, seconds, n_classes):
    """n waveforms (n, 1, samples) of class k: a tone at 300 * (k + 1) Hz with a harmonic, noise."""
    t = np.arange(int(sample_rate * seconds)) / sample_rate
    labels = rng.integers(0, n_classes, n)
    waves = []
    for k in labels:
        f = 300.0 * (k + 1) * rng.uniform(0.97, 1.03)
        w = np.sin(2 * np.pi * f * t) + 0.3 * np.sin(2 * np.pi * 2 * f * t + rng.uniform(0, np.pi))
        waves.append(w + 0.1 * rng.standard_normal(t.shape))
    return np.asarray(waves, dtype=np.float32)[:, None, :], labels


def audio_frontend(torch, init=None, steps=4, batch_size=4, sample_rate=8000, n_classes=3):
    nn = torch.nn
    fn = torchaudio_functional(torch)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    waves_np, labels_np = tones(rng, steps * batch_size, sample_rate, 0.25, n_classes)
    n_fft, hop_length, n_mels, n_mfcc = 256, 64, 32, 13
    result = {}

    # torchaudio.transforms.MelSpectrogram / AmplitudeToDB / MFCC, as MFCC composes them
    window = torch.hann_window(n_fft)
    fb = fn["melscale_fbanks"](n_fft // 2 + 1, 0.0, sample_rate / 2.0, n_mels, sample_rate)
    fb_slaney = fn["melscale_fbanks"](n_fft // 2 + 1, 20.0, sample_rate / 2.0, n_mels, sample_rate, norm="slaney",
                                      mel_scale="slaney")
    dct_mat = fn["create_dct"](n_mfcc, n_mels, "ortho")
    top_db = 80.0
    amin = 1e-10
    db_multiplier = math.log10(max(amin, 1.0))

    def mfcc(waveform, fb=fb, log_mels=False):
        specgram = fn["spectrogram"](waveform, 0, window, n_fft, hop_length, n_fft, 2.0, False)
        mel_specgram = torch.matmul(specgram.transpose(-1, -2), fb).transpose(-1, -2)
        if log_mels:
            log_offset = 1e-6
            mel_specgram = torch.log(mel_specgram + log_offset)
        else:
            mel_specgram = fn["amplitude_to_DB"](mel_specgram, 10.0, amin, db_multiplier, top_db)
        # (..., time, n_mels) dot (n_mels, n_mfcc) -> (..., n_nfcc, time)
        return torch.matmul(mel_specgram.transpose(-1, -2), dct_mat).transpose(-1, -2)

    waves = torch.from_numpy(waves_np)
    result.update(fb=numpy_of(fb), fb_slaney=numpy_of(fb_slaney), dct=numpy_of(dct_mat),
                  dct_none=numpy_of(fn["create_dct"](n_mfcc, n_mels, None)),
                  mfcc=numpy_of(mfcc(waves[:2])), mfcc_log=numpy_of(mfcc(waves[:2], fb=fb_slaney, log_mels=True)))

    # istft inverts stft (hann window, hop a quarter of the window: the NOLA condition holds)
    spec = torch.stft(waves[:2, 0], n_fft, hop_length=hop_length, window=window, return_complex=True)
    back = torch.istft(spec, n_fft, hop_length=hop_length, window=window, length=waves.shape[-1])
    result.update(spec=numpy_of(torch.view_as_real(spec)), roundtrip=numpy_of(back),
                  roundtrip_err=float((back - waves[:2, 0]).abs().max()))

    # torchaudio.transforms.GriffinLim(n_fft, n_iter=8, hop_length, power=2.0, momentum=0.99, rand_init=False)
    power_spec = fn["spectrogram"](waves[:2], 0, window, n_fft, hop_length, n_fft, 2.0, False)
    recon = fn["griffinlim"](power_spec, window, n_fft, hop_length, n_fft, 2.0, 8, 0.99, waves.shape[-1], False)
    result.update(griffinlim=numpy_of(recon))

    # SpecAugment: torchaudio.transforms.FrequencyMasking(iid_masks=True) and TimeMasking
    feats = mfcc(waves[:4])
    masked = fn["mask_along_axis_iid"](feats.clone(), 4, 0.0, feats.dim() - 2)
    masked = fn["mask_along_axis_iid"](masked, 6, 0.0, feats.dim() - 1)
    zero = numpy_of(masked == 0)
    rows, cols = zero.all(axis=-1), zero.all(axis=-2)
    result["own"] = dict(rows=rows, cols=cols)
    result.update(mask_shape=list(masked.shape), masked_rows_at_most=bool(rows.sum(-1).max() <= 4),
                  masked_cols_at_most=bool(cols.sum(-1).max() <= 6),
                  unmasked_kept=bool(np.array_equal(numpy_of(masked)[~zero], numpy_of(feats)[~zero])))

    class AudioClassifier(nn.Module):
        def __init__(self, n_mfcc, n_classes):
            super().__init__()
            self.conv1 = nn.Conv1d(n_mfcc, 16, kernel_size=3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm1d(16)
            self.conv2 = nn.Conv1d(16, 16, kernel_size=3, padding=1)
            self.pool = nn.AdaptiveAvgPool1d(1)
            self.fc = nn.Linear(16, n_classes)

        def forward(self, x):
            x = x.squeeze(1)  # (batch, n_mfcc, time)
            x = torch.relu(self.bn1(self.conv1(x)))
            x = torch.relu(self.conv2(x))
            return self.fc(self.pool(x).squeeze(-1))

    model = AudioClassifier(n_mfcc, n_classes)
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for step in range(steps):
        x = waves[step * batch_size:(step + 1) * batch_size]
        y = torch.from_numpy(labels_np[step * batch_size:(step + 1) * batch_size])
        features = mfcc(x)
        features = (features - features.mean(dim=-1, keepdim=True)) / (features.std(dim=-1, keepdim=True) + 1e-5)
        optimizer.zero_grad()
        loss = criterion(model(features), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result.update(losses=losses, params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_mfcc_griffinlim_specaugment_and_training():
    ref, got = compare_program(audio_frontend, rtol=1e-3, atol=1e-3)
    assert ref["roundtrip_err"] < 1e-4 and got["roundtrip_err"] < 1e-4
    assert ref["masked_rows_at_most"] and ref["masked_cols_at_most"] and ref["unmasked_kept"]
    # every example got a frequency band and a time span masked
    for own in (ref["own"], got["own"]):
        assert own["rows"].any(axis=-1).all() or own["cols"].any(axis=-1).all()
