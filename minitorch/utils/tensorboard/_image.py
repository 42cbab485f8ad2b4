"""Images for TensorBoard: layouts to HWC, a grid of a batch, and a PNG encoder on zlib (no Pillow).

The layout rules are PyTorch's (torch.utils.tensorboard._utils): a batch is laid out as a grid of
at most 8 columns, one channel becomes three (grey), values are scaled by 255 unless uint8.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np


def png(image: np.ndarray) -> bytes:
    """A PNG of an (H, W, 3) or (H, W, 4) uint8 array: 8-bit RGB or RGBA, no interlace, each
    row with filter 0 (none), the whole in one IDAT chunk."""
    height, width, channels = image.shape
    color_type = {3: 2, 4: 6}[channels]  # PNG's colour types: 2 truecolour, 6 truecolour + alpha
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # a filter byte opens each row
    rows[:, 1:] = image.reshape(height, width * channels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + chunk(b"IEND", b""))


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """(N, C, H, W) with C 1, 3 or 4 -> (C', rows*H, cols*W), images row by row, the rest zero."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] not in (3, 4):
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, c, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols) if n else 0
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:
    """An image of the given layout (NCHW, CHW, HWC, HW, ... in any order) as (H, W, C)."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError("size of input tensor and input format are different. "
                             f"tensor shape: {tensor.shape}, input_format: {input_format}")
    fmt = input_format.upper()
    if len(fmt) == 4:
        return make_grid(tensor.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        hw = tensor.transpose([fmt.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    raise AssertionError(f"input_format should have 2, 3 or 4 dimensions, got {input_format}")


def to_uint8(hwc: np.ndarray) -> np.ndarray:
    """uint8 values as they are; anything else is taken to lie in [0, 1]: times 255, clipped."""
    scale = 1 if hwc.dtype == np.uint8 else 255
    return (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def figure_to_image(figures, close: bool = True) -> np.ndarray:
    """A matplotlib figure as a (3, H, W) uint8 array, or a list of figures as (N, 3, H, W)."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if close:
            plt.close(figure)
        return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
