"""SummaryWriter: scalars, histograms, images and text for TensorBoard, in
the event-file layout PyTorch's writer produces."""

import os
import struct
import time
import zlib

import numpy as np

from ember.utils.tensorboard import _events

__all__ = ["FileWriter", "SummaryWriter"]


def _numpy(x):
    import ember

    if isinstance(x, ember.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _scalar(x):
    arr = _numpy(x).squeeze()
    if arr.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {arr.size} and "
                             f"{arr.ndim} dimensions.")
    return float(arr)


def _default_bins():
    v, positive = 1e-12, []
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    return [-b for b in reversed(positive)] + [0] + positive


def _histogram(values, bins, max_bins=None):
    values = values.reshape(-1).astype(np.float64)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        if len(counts) % group:
            counts = np.pad(counts, (0, group - len(counts) % group))
        counts = counts.reshape(-1, group).sum(axis=-1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    nonzero = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(nonzero, [0, nonzero[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return (values.min(), values.max(), len(values), values.sum(), values.dot(values), limits.tolist(),
            counts.astype(np.float64).tolist())


def _png(hwc):
    """A PNG of an HxWxC uint8 image (C = 1, 3 or 4)."""
    height, width, channels = hwc.shape
    color = {1: 0, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + hwc[row].tobytes() for row in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _to_hwc(img, dataformats):
    dataformats = dataformats.upper()
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shordhand twice.         input_format: {dataformats}")
    if img.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different.         tensor shape: "
                             f"{img.shape}, input_format: {dataformats}")
    if len(dataformats) == 2:
        img = img[..., None]
        dataformats += "C"
    hwc = img.transpose([dataformats.index(c) for c in "HWC"])
    if hwc.shape[2] == 1:
        hwc = np.concatenate([hwc, hwc, hwc], 2)
    return hwc


class FileWriter:
    """Writes events to one log directory."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self._log_dir = str(log_dir)
        self.event_writer = _events.EventFileWriter(self._log_dir, filename_suffix)

    def get_logdir(self):
        return self._log_dir

    def add_summary(self, summary, global_step=None, walltime=None):
        walltime = time.time() if walltime is None else walltime
        self.event_writer.write(_events.event(walltime, int(global_step or 0), summary=summary))

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


class SummaryWriter:
    """Writes TensorBoard events under log_dir (default runs/<time>_<host><comment>)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime

            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self.default_bins = _default_bins()
        self._get_file_writer()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        value = _events.scalar_value(tag, _scalar(scalar_value))
        self._get_file_writer().add_summary(_events.summary(value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each entry goes to its own writer in log_dir/<main_tag>_<tag>."""
        walltime = time.time() if walltime is None else walltime
        self._get_file_writer()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self.file_writer.get_logdir(), main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs,
                                                             self.filename_suffix)
            writer.add_summary(_events.summary(_events.scalar_value(main_tag, _scalar(value))), global_step,
                               walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        histo = _histogram(_numpy(values), bins, max_bins)
        self._get_file_writer().add_summary(_events.summary(_events.histogram_value(tag, *histo)), global_step,
                                            walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        img = _numpy(img_tensor)
        scale = 1 if img.dtype == np.uint8 else 255
        hwc = (_to_hwc(img, dataformats).astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
        height, width, channels = hwc.shape
        value = _events.image_value(tag, height, width, channels, _png(hwc))
        self._get_file_writer().add_summary(_events.summary(value), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_events.summary(_events.text_value(tag + "/text_summary", text_string)),
                                            global_step,
                                            walltime)

    def flush(self):
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
