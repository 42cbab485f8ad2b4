"""SummaryWriter and FileWriter: PyTorch's API over event files that we encode ourselves.

An event file is created when its writer is (events.out.tfevents.<time>.<host>.<pid>.<n><suffix>)
and opens with the file_version event. Events wait in a queue of max_queue records and reach the
disk when the queue is full, every flush_secs (a daemon thread), on flush(), close() and at
interpreter exit.
"""
from __future__ import annotations

import atexit
import itertools
import math
import os
import socket
import threading
import time
import weakref
from datetime import datetime
from typing import Optional

import numpy as np

from . import _proto as pb
from . import summary as S
from ._image import figure_to_image, make_grid, png

__all__ = ["FileWriter", "SummaryWriter"]

_file_ids = itertools.count()  # the <n> of event file names: files made in one second stay apart
_open_writers: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()


class EventFileWriter:
    """One event file: a queue of framed records, written when full, on a timer and on demand."""

    def __init__(self, logdir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = "") -> None:
        self._logdir = logdir
        os.makedirs(logdir, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.{next(_file_ids)}"
        self._file_name = os.path.join(logdir, name) + filename_suffix
        self._file = open(self._file_name, "wb")
        self._max_queue = max_queue
        self._queue: list = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        _open_writers.add(self)
        self.add_event(pb.event(time.time(), file_version="brain.Event:2", writer="minitorch.utils.tensorboard"))
        self.flush()
        # the timer holds only a weak reference, so a writer nobody keeps can still be collected
        ref = weakref.ref(self)
        closed = self._closed
        threading.Thread(target=_flush_every, args=(ref, closed, flush_secs), daemon=True).start()

    def get_logdir(self) -> str:
        return self._logdir

    def add_event(self, event: bytes) -> None:
        if self._closed.is_set():
            raise RuntimeError("add_event on a closed event file writer")
        with self._lock:
            self._queue.append(pb.record(event))
            full = len(self._queue) >= self._max_queue
        if full:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            if self._file.closed:
                return
            self._file.write(b"".join(self._queue))
            self._queue.clear()
            self._file.flush()

    def close(self) -> None:
        self.flush()
        self._closed.set()
        with self._lock:
            self._file.close()
        _open_writers.discard(self)


def _flush_every(ref, closed: threading.Event, seconds: float) -> None:
    while not closed.wait(seconds):
        writer = ref()
        if writer is None:
            return
        writer.flush()
        del writer


@atexit.register
def _flush_at_exit() -> None:
    for w in list(_open_writers):
        w.flush()


class FileWriter:
    """Writes Event messages for one log directory (torch.utils.tensorboard.FileWriter)."""

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: bytes) -> None:
        self.event_writer.add_event(event)

    def add_summary(self, summary: bytes, global_step=None, walltime=None) -> None:
        wall = time.time() if walltime is None else walltime
        self.add_event(pb.event(wall, 0 if global_step is None else int(global_step), summary=summary))

    def add_graph(self, graph: bytes, walltime=None) -> None:
        self.add_event(pb.event(time.time() if walltime is None else walltime, graph_def=graph))

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


def _encode(tag: str) -> str:
    """A tag made safe as a folder name, as PyTorch's: %, / and \\ as %xx."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _pbtxt_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class SummaryWriter:
    """Writes entries to event files in log_dir for TensorBoard to read."""

    def __init__(self, log_dir=None, comment: str = "", purge_step: Optional[int] = None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = S.default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The run's FileWriter, made anew after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard hides the events of earlier files from this step on
                step, now = self.purge_step, time.time()
                self.file_writer.add_event(pb.event(now, step, file_version="brain.Event:2"))
                self.file_writer.add_event(pb.event(now, step, session_log_start=True))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, summary: bytes, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        self._add(S.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Each entry goes to its own run, log_dir/<main_tag>_<tag>, under the tag main_tag."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(run)
            if fw is None:
                fw = self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs, self.filename_suffix)
            fw.add_summary(S.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(S.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        self._add(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        self._add(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """A matplotlib figure (or a list of them, as one grid) as an image; needs matplotlib."""
        if isinstance(figure, list):
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats="CHW")

    def add_audio(self, tag: str, snd_tensor, global_step=None, sample_rate: int = 44100, walltime=None) -> None:
        """A mono clip (1, L) with values in [-1, 1], as 16-bit WAV for the AUDIO tab."""
        self._add(S.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_video(self, tag: str, vid_tensor, global_step=None, fps: int = 4, walltime=None) -> None:
        """Clips (N, T, C, H, W), uint8 in [0, 255] or floats in [0, 1], tiled into one GIF; needs
        moviepy (without it, PyTorch's message and an empty value)."""
        self._add(S.video(tag, vid_tensor, fps), global_step, walltime)

    def add_mesh(self, tag: str, vertices, colors=None, faces=None, config_dict=None, global_step=None,
                 walltime=None) -> None:
        """Vertices (B, N, 3), and optionally colors (B, N, 3) and faces (B, F, 3), for the MESH tab."""
        self._add(S.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        self._add(S.text(tag, text_string), global_step, walltime)

    def add_pr_curve(self, tag: str, labels, predictions, global_step=None, num_thresholds: int = 127,
                     weights=None, walltime=None) -> None:
        self._add(S.pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """The hyperparameters and metrics of one run, in the run log_dir/<run_name> (default: the
        time), for the HPARAMS tab; each metric is also logged there as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = S.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w_hp:
            for s in summaries:
                w_hp.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """The graph of one forward of model(*input_to_model), recorded by minitorch's tracer
        (use_strict_trace is TorchScript's and has no effect here)."""
        from ._graph import graph_def
        self._get_file_writer().add_graph(graph_def(model, input_to_model, verbose))

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag: str = "default",
                      metadata_header=None) -> None:
        """Points for the projector: log_dir/<step>/<tag>/tensors.tsv (and metadata.tsv,
        sprite.png), listed in log_dir/projector_config.pbtxt."""
        mat = S.make_np(mat)
        step = str(0 if global_step is None else global_step).zfill(5)
        subdir = f"{step}/{_encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _write_tsv(metadata, save_path, metadata_header)
        if label_img is not None:
            label_img = S.make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _write_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        with open(os.path.join(save_path, "tensors.tsv"), "w", encoding="utf-8") as f:
            f.writelines("\t".join(str(v.item()) for v in row) + "\n" for row in mat)
        # EmbeddingInfo in text format, fields in number order: tensor_name 1, metadata_path 2,
        # sprite 5 (image_path 1, single_image_dim 2), tensor_path 6
        lines = [f"  tensor_name: {_pbtxt_string(f'{tag}:{step}')}"]
        if metadata is not None:
            lines.append(f"  metadata_path: {_pbtxt_string(subdir + '/metadata.tsv')}")
        if label_img is not None:
            lines += ["  sprite {", f"    image_path: {_pbtxt_string(subdir + '/sprite.png')}",
                      f"    single_image_dim: {label_img.shape[3]}", f"    single_image_dim: {label_img.shape[2]}",
                      "  }"]
        lines.append(f"  tensor_path: {_pbtxt_string(subdir + '/tensors.tsv')}")
        self._projector_entries = getattr(self, "_projector_entries", []) + ["embeddings {\n" + "\n".join(lines)
                                                                             + "\n}\n"]
        with open(os.path.join(self._get_file_writer().get_logdir(), "projector_config.pbtxt"), "w") as f:
            f.write("".join(self._projector_entries))

    def flush(self) -> None:
        for w in (self.all_writers or {}).values():
            w.flush()

    def close(self) -> None:
        if self.all_writers is None:
            return  # a second close does nothing
        for w in self.all_writers.values():
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()


def _write_tsv(metadata, save_path: str, metadata_header=None) -> None:
    if not metadata_header:
        rows = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        rows = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(rows) + "\n").encode("utf-8"))


def _write_sprite(label_img: np.ndarray, save_path: str) -> None:
    """The images in a square grid on a square canvas of ceil(sqrt(N)) columns (values in [0, 1])."""
    grid = make_grid(label_img, ncols=math.ceil(label_img.shape[0] ** 0.5))[:3].transpose(1, 2, 0)
    side = grid.shape[1]
    square = np.zeros((side, side, 3))
    square[: grid.shape[0]] = grid
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(png(np.uint8((square * 255).clip(0, 255))))
