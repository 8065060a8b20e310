"""SummaryWriter against PyTorch's: both event files read back with
TensorBoard's own reader give the same scalars, histograms, images and text."""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import torch

import ember
import ember.utils.tensorboard

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator", reason="tensorboard reads the files back"
)
pytest.importorskip("torch.utils.tensorboard")


def _write(L, log_dir):
    import importlib

    tb = importlib.import_module(f"{L.__name__}.utils.tensorboard")
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    image = np.linspace(0, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    with tb.SummaryWriter(str(log_dir)) as w:
        for step in range(3):
            w.add_scalar("loss", L.tensor(1.0 / (step + 1)), step, walltime=100.0 + step)
            w.add_scalar("lr", 0.1 * step, step, walltime=100.0 + step)
        w.add_histogram("weights", L.tensor(values), 2, walltime=200.0)
        w.add_histogram("coarse", values, 3, bins="auto", max_bins=7, walltime=201.0)
        w.add_image("img", L.tensor(image), 4, walltime=300.0)
        w.add_image("gray", (image[0] * 255).astype(np.uint8), 5, walltime=301.0, dataformats="HW")
        w.add_text("note", "hello **world**", 6, walltime=400.0)
        w.add_scalars("run", {"train": 1.5, "val": 2.5}, 7, walltime=500.0)


def _read(path):
    acc = event_accumulator.EventAccumulator(str(path), size_guidance={k: 0 for k in (
        event_accumulator.SCALARS, event_accumulator.HISTOGRAMS, event_accumulator.IMAGES,
        event_accumulator.TENSORS)})
    acc.Reload()
    return acc


def test_event_files_read_back_as_pytorch_s(tmp_path):
    _write(ember, tmp_path / "ember")
    _write(torch, tmp_path / "torch")
    e, t = _read(tmp_path / "ember"), _read(tmp_path / "torch")
    assert e.Tags()["scalars"] == t.Tags()["scalars"]
    for tag in t.Tags()["scalars"]:
        assert [(s.wall_time, s.step, s.value) for s in e.Scalars(tag)] == [
            (s.wall_time, s.step, s.value) for s in t.Scalars(tag)]
    for tag in ("weights", "coarse"):
        (he,), (ht,) = e.Histograms(tag), t.Histograms(tag)
        assert (he.wall_time, he.step) == (ht.wall_time, ht.step)
        assert he.histogram_value == ht.histogram_value
    for tag in ("img", "gray"):
        (ie,), (it,) = e.Images(tag), t.Images(tag)
        assert (ie.step, ie.width, ie.height) == (it.step, it.width, it.height)
        pil = pytest.importorskip("PIL.Image")
        assert np.array_equal(np.asarray(pil.open(io.BytesIO(ie.encoded_image_string))),
                              np.asarray(pil.open(io.BytesIO(it.encoded_image_string))))
    (te,), (tt,) = e.Tensors("note/text_summary"), t.Tensors("note/text_summary")
    assert te.tensor_proto.string_val == tt.tensor_proto.string_val
    plugin = [acc.SummaryMetadata("note/text_summary").plugin_data.plugin_name for acc in (e, t)]
    assert plugin == ["text", "text"]
    for sub in ("run_train", "run_val"):
        se, st = _read(tmp_path / "ember" / sub), _read(tmp_path / "torch" / sub)
        assert [(s.step, s.value) for s in se.Scalars("run")] == [(s.step, s.value) for s in st.Scalars("run")]


def test_default_log_dir_and_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = ember.utils.tensorboard.SummaryWriter(comment="_x")
    assert w.get_logdir().startswith("runs/") and w.get_logdir().endswith("_x")
    with pytest.raises(AssertionError, match="one element"):
        w.add_scalar("bad", ember.ones(2))
    with pytest.raises(ValueError, match="no element"):
        w.add_histogram("empty", ember.ones(0))
    w.close()
