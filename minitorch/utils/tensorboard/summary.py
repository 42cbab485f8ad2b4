"""Summaries: each function returns the serialized `Summary` message for one kind of record, as
torch.utils.tensorboard.summary does (scalars, histograms, images, text, PR curves, hparams).

Values come as Python numbers, NumPy arrays or minitorch tensors (make_np). The arithmetic
(histogram buckets, the PR curve's counts) is NumPy's, done once per call, not per element in
Python.
"""
from __future__ import annotations

import io
import json
import numbers
import wave
from typing import Optional

import numpy as np

from . import _proto as pb
from ._image import convert_to_HWC, png, to_uint8

__all__ = ["audio", "hparams", "histogram", "image", "make_histogram", "make_np", "mesh", "pr_curve", "scalar", "text",
           "video"]


def make_np(x) -> np.ndarray:
    """A NumPy array of x: an array as it is, a scalar as a 1-element array, a tensor's values."""
    from minitorch import Tensor, bfloat16
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            raise NotImplementedError("Cannot log the values of a tensor on the meta device: it has none")
        x = x.detach()
        if x.dtype == bfloat16:  # NumPy has no bfloat16
            x = x.float()
        return x.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name: str, tensor, new_style: bool = False, double_precision: bool = False) -> bytes:
    """One value: simple_value (a float32), or with new_style a tensor for the scalars plugin."""
    value = make_np(tensor).squeeze()
    if value.ndim != 0:
        raise AssertionError("Tensor should contain one element (0 dimensions). "
                             f"Was given size: {value.size} and {value.ndim} dimensions.")
    x = float(value)
    if not new_style:
        return pb.summary_value(name, simple_value=x)
    t = (pb.tensor_proto(pb.DT_DOUBLE, double_val=[x]) if double_precision
         else pb.tensor_proto(pb.DT_FLOAT, float_val=[x]))
    return pb.summary_value(name, tensor=t, metadata=pb.plugin_metadata("scalars"))


def default_bins() -> list:
    """TensorFlow's histogram edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-v for v in reversed(pos)] + [0] + pos


def make_histogram(values: np.ndarray, bins, max_bins: Optional[int] = None) -> bytes:
    """HistogramProto of values with np.histogram's bins (a count, edges or a rule's name).
    bucket_limit[i] is bucket i's right edge; only the buckets from one empty bucket before the
    first non-empty one to the last non-empty one are kept (TensorBoard's convention)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins  # merge runs of `group` buckets, the last run padded
        pad = -len(counts) % group
        counts = np.pad(counts, (0, pad)).reshape(-1, group).sum(axis=-1)
        limits = np.append(limits[:-1:group], limits[-1])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    first, last = int(nonzero[0]), int(nonzero[-1])
    # the empty bucket before `first` ends at first's left edge: limits[first]
    kept_counts = np.concatenate([[0], counts[first:last + 1]]) if first == 0 else counts[first - 1:last + 1]
    kept_limits = limits[first:last + 2]
    return pb.histogram_proto(values.min(), values.max(), len(values), values.sum(), values.dot(values),
                              kept_limits.tolist(), kept_counts.tolist())


def histogram(name: str, values, bins, max_bins: Optional[int] = None) -> bytes:
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return pb.summary_value(name, histo=hist)


def image(tag: str, tensor, dataformats: str = "NCHW") -> bytes:
    """An image or a grid of a batch of images, as PNG."""
    hwc = to_uint8(convert_to_HWC(make_np(tensor), dataformats))
    height, width, channels = hwc.shape
    if height == 0 or width == 0:
        raise ValueError(f"image {tag!r} has no pixels: its size is {height}x{width}")
    return pb.summary_value(tag, image=pb.image_proto(height, width, channels, png(hwc)))


def text(tag: str, text_string: str) -> bytes:
    """A string for the text plugin, as a rank-1 DT_STRING tensor under tag/text_summary."""
    t = pb.tensor_proto(pb.DT_STRING, [1], string_val=[text_string.encode("utf-8")])
    return pb.summary_value(tag + "/text_summary", tensor=t, metadata=pb.plugin_metadata("text"))


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int, weights=None) -> np.ndarray:
    """(6, num_thresholds): true/false positives and negatives, precision and recall at each
    threshold i / (num_thresholds - 1)."""
    min_count = 1e-7  # keeps precision and recall finite where no prediction passes a threshold
    if weights is None:
        weights = 1.0
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=positive * weights)
    fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=(1.0 - positive) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]  # predictions at or above each threshold
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(min_count, tp + fp)
    recall = tp / np.maximum(min_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(tag: str, labels, predictions, num_thresholds: int = 127, weights=None) -> bytes:
    num_thresholds = min(num_thresholds, 127)  # the plugin's limit
    data = compute_curve(make_np(labels), make_np(predictions), num_thresholds, weights)
    content = pb.f_int(2, num_thresholds)  # PrCurvePluginData: version 1 (0), num_thresholds 2
    t = pb.tensor_proto(pb.DT_FLOAT, data.shape, float_val=data.reshape(-1).tolist())
    return pb.summary_value(tag, tensor=t, metadata=pb.plugin_metadata("pr_curves", content))


# ---- hparams (tensorboard/plugins/hparams: api.proto, plugin_data.proto) --------------------

_DATA_TYPE_STRING, _DATA_TYPE_FLOAT64 = 1, 3
_STATUS_SUCCESS = 1


def _struct_value(v) -> bytes:
    """google.protobuf.Value: oneof {number_value 2, string_value 3}."""
    if isinstance(v, str):
        return pb.f_bytes(3, v, keep=True)
    return pb.f_double(2, float(v), keep=True)


def _hparams_summary(tag: str, field: int, payload: bytes) -> bytes:
    """HParamsPluginData (version 1 = 0; oneof {experiment 2, session_start_info 3,
    session_end_info 4}) in the metadata of a value with no data."""
    return pb.summary_value(tag, metadata=pb.plugin_metadata("hparams", pb.f_message(field, payload)))


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: Optional[dict] = None):
    """The experiment, session-start and session-end summaries of one hparams run."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    from minitorch import Tensor
    infos, values = [], []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        if isinstance(v, str):
            kind = _DATA_TYPE_STRING
        elif isinstance(v, numbers.Real):  # a bool too, as a number (1.0 or 0.0), as PyTorch logs it
            kind = _DATA_TYPE_FLOAT64
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        # SessionStartInfo.hparams is a map<string, Value>: entries with key 1 and value 2
        values.append(pb.f_bytes(1, k, keep=True) + pb.f_message(2, _struct_value(v)))
        domain = None
        if k in hparam_domain_discrete:  # ListValue: values 1
            domain = pb.f_repeated(1, (_struct_value(d) for d in hparam_domain_discrete[k]))
        # HParamInfo: name 1, type 4, domain_discrete 5
        infos.append(pb.f_bytes(1, k) + pb.f_int(4, kind) + pb.f_message(5, domain))
    # MetricInfo: name 1 (MetricName: group 1, tag 2)
    metrics = [pb.f_message(1, pb.f_bytes(2, k)) for k in metric_dict]
    experiment = pb.f_repeated(4, infos) + pb.f_repeated(5, metrics)  # Experiment: hparam_infos 4, metric_infos 5
    start = pb.f_repeated(1, values)  # SessionStartInfo: hparams 1
    end = pb.f_int(1, _STATUS_SUCCESS)  # SessionEndInfo: status 1
    return (_hparams_summary("_hparams_/experiment", 2, experiment),
            _hparams_summary("_hparams_/session_start_info", 3, start),
            _hparams_summary("_hparams_/session_end_info", 4, end))


def audio(tag: str, tensor, sample_rate: int = 44100) -> bytes:
    """One mono clip as 16-bit PCM WAV: amplitudes in [-1, 1] (clipped, with PyTorch's printed
    warning, when beyond), scaled by 32767."""
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    fio = io.BytesIO()
    with wave.open(fio, "wb") as wave_write:
        wave_write.setnchannels(1)
        wave_write.setsampwidth(2)
        wave_write.setframerate(sample_rate)
        wave_write.writeframes(array.data)
    clip = pb.audio_proto(sample_rate, 1, array.shape[-1], fio.getvalue(), "audio/wav")
    return pb.summary_value(tag, audio=clip)


def _prepare_video(v: np.ndarray) -> np.ndarray:
    """(N, T, C, H, W) -> (T, rows * H, cols * W, C): the N clips tiled in a grid, N padded with
    black clips to a power of two, rows = 2 ** (floor(log2 N) // 2); uint8 values to [0, 1]."""
    b, t, c, h, w = v.shape
    if v.dtype == np.uint8:
        v = np.float32(v) / 255.0
    if b & (b - 1):
        v = np.concatenate((v, np.zeros((2 ** b.bit_length() - b, t, c, h, w))), axis=0)
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = v.shape[0] // n_rows
    v = np.reshape(v, (n_rows, n_cols, t, c, h, w)).transpose(2, 0, 4, 1, 5, 3)
    return np.reshape(v, (t, n_rows * h, n_cols * w, c))


def video(tag: str, tensor, fps: int = 4) -> bytes:
    """A clip (N, T, C, H, W) as an animated GIF image, which needs moviepy as PyTorch's does:
    without it, PyTorch's printed message and a value with the tag alone."""
    frames = _prepare_video(make_np(tensor))
    frames = (frames.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)  # floats by now
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return pb.summary_value(tag)
    try:
        from moviepy import editor as mpy
    except ImportError:
        print("moviepy is installed, but can't import moviepy.editor.", "Some packages could be missing [imageio, requests]")
        return pb.summary_value(tag)
    import tempfile

    _, h, w, c = frames.shape
    clip = mpy.ImageSequenceClip(list(frames), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        clip.write_gif(f.name, logger=None)
        with open(f.name, "rb") as gif:
            encoded = gif.read()
    return pb.summary_value(tag, image=pb.image_proto(h, w, c, encoded))


_MESH_CONTENT = {"VERTEX": 1, "FACE": 2, "COLOR": 3}  # MeshPluginData.ContentType


def mesh(tag: str, vertices, colors, faces, config_dict, display_name=None, description=None) -> bytes:
    """A mesh or point cloud for TensorBoard's mesh plugin: one float tensor value per part given
    (vertices, faces, colors: each (B, N, 3)) tagged <tag>_VERTEX and so on, each with the plugin's
    metadata (the parts' bitmask, the shape, config_dict as sorted JSON)."""
    json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(t, kind) for t, kind in ((vertices, "VERTEX"), (faces, "FACE"), (colors, "COLOR")) if t is not None]
    components = 0
    for _, kind in parts:
        components |= 1 << _MESH_CONTENT[kind]
    out = b""
    for t, kind in parts:
        array = make_np(t)
        if array.ndim != 3:
            raise ValueError("Tensor shape should be of shape BxNx3, but got %s." % str(list(array.shape)))
        content = pb.mesh_plugin_data(tag, _MESH_CONTENT[kind], components, array.shape, json_config)
        # SummaryMetadata: plugin_data 1 (plugin_name 1, content 2), display_name 2, summary_description 3
        metadata = (pb.f_message(1, pb.f_bytes(1, "mesh") + pb.f_bytes(2, content)) + pb.f_bytes(2, display_name or "")
                    + pb.f_bytes(3, description or ""))
        values = pb.tensor_proto(pb.DT_FLOAT, array.shape, float_val=array.reshape(-1).astype(np.float32).tolist())
        out += pb.summary_value(f"{tag}_{kind}", tensor=values, metadata=metadata)
    return out
