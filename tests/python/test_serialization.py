"""ember.save / ember.load: PyTorch's zip checkpoint format, checked against
files that torch writes and reads."""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from conftest import DTYPE_NAMES, torch

import ember
import ember.serialization as es


def _values(dtype_name, n=12):
    if dtype_name == "bool":
        return [i % 3 == 0 for i in range(n)]
    if dtype_name.startswith("float") or dtype_name == "bfloat16":
        return [i * 0.5 - 2 for i in range(n)]
    return [i % 100 - (0 if dtype_name == "uint8" else 3) for i in range(n)]


def _pair(dtype_name, shape=(3, 4)):
    v = _values(dtype_name, int(np.prod(shape)))
    e = ember.tensor(v, dtype=getattr(ember, dtype_name)).reshape(shape)
    t = torch.tensor(v, dtype=getattr(torch, dtype_name)).reshape(shape)
    return e, t


def _objects(lib, e_or_t):
    """The same nested object built from one library's tensors."""
    a, b = e_or_t
    return {
        "a": a,
        "view": a.narrow(1, 1, 2),
        "t": a.permute(1, 0),
        "b": b,
        "list": [a, 1, 2.5, "s", None],
        "tuple": (b, True),
    }


def _same_tensor(e, t):
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride()
    assert e.storage_offset() == t.storage_offset()
    assert e.requires_grad == t.requires_grad
    assert e.tolist() == t.tolist()


def _walk_same(e, t):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert (type(e).__name__ == "Parameter") == isinstance(t, torch.nn.Parameter)
        _same_tensor(e, t)
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            _walk_same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e) is type(t) and len(e) == len(t)
        for x, y in zip(e, t):
            _walk_same(x, y)
    else:
        assert e == t


def _ptr(x):
    return x.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_round_trips_every_dtype_both_directions(dtype_name):
    e, t = _pair(dtype_name)
    e2, t2 = _pair(dtype_name, (5,))
    eo, to = _objects(ember, (e, e2)), _objects(torch, (t, t2))
    # ember -> ember, ember -> torch
    buf = io.BytesIO()
    ember.save(eo, buf)
    buf.seek(0)
    _walk_same(ember.load(buf), to)
    buf.seek(0)
    _walk_same(eo, torch.load(buf))
    # torch -> ember
    buf = io.BytesIO()
    torch.save(to, buf)
    buf.seek(0)
    loaded = ember.load(buf)
    _walk_same(loaded, to)
    # views share one storage after loading, as in torch
    assert _ptr(loaded["a"]) == _ptr(loaded["view"]) == _ptr(loaded["t"]) == _ptr(loaded["list"][0])
    assert _ptr(loaded["a"]) != _ptr(loaded["b"])
    buf = io.BytesIO()
    ember.save(eo, buf)
    buf.seek(0)
    tl = torch.load(buf)
    assert _ptr(tl["a"]) == _ptr(tl["view"]) == _ptr(tl["t"]) and _ptr(tl["a"]) != _ptr(tl["b"])


def _build(lib):
    a = lib.tensor([float(i) for i in range(10)])
    i = lib.tensor([[0, 1], [2, 3]], dtype=lib.int32).permute(1, 0)
    p = lib.nn.Parameter(lib.ones(2))
    return {
        "a": a,
        "v": a.narrow(0, 2, 3),
        "i": i,
        "p": p,
        "p_again": p,
        "x": 3,
        "od": OrderedDict(k=1.5),
        "b": lib.tensor([True, False]),
        "h": lib.ones(3, dtype=lib.float16),
        "bf": lib.ones(2, dtype=lib.bfloat16),
        "empty": lib.zeros(0),
        "scalar": lib.tensor(2.5, dtype=lib.float64),
        "nested": [(1, "two", None), {"k": [b"bytes", 1.25, -(2**40)]}],
        "big": 2**70,
        "set": {1, 2},
    }


def test_files_are_byte_identical_to_torch(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "e").mkdir()
    torch.save(_build(torch), tmp_path / "t" / "ckpt.pt")
    ember.save(_build(ember), tmp_path / "e" / "ckpt.pt")
    bt = (tmp_path / "t" / "ckpt.pt").read_bytes()
    be = (tmp_path / "e" / "ckpt.pt").read_bytes()
    zt, ze = (
        zipfile.ZipFile(tmp_path / "t" / "ckpt.pt"),
        zipfile.ZipFile(tmp_path / "e" / "ckpt.pt"),
    )
    assert ze.namelist() == zt.namelist()
    assert ze.read("ckpt/data.pkl") == zt.read("ckpt/data.pkl")
    sid_t, sid_e = zt.read("ckpt/.data/serialization_id"), ze.read("ckpt/.data/serialization_id")
    assert len(sid_e) == 40 and sid_e.isdigit()
    # the serialization id is random: only it and its CRC (data descriptor and
    # central directory) may differ
    crc_t = zt.getinfo("ckpt/.data/serialization_id").CRC
    crc_e = ze.getinfo("ckpt/.data/serialization_id").CRC
    be = be.replace(sid_e, sid_t).replace(struct.pack("<I", crc_e), struct.pack("<I", crc_t))
    assert be == bt


def test_archive_layout(tmp_path):
    path = tmp_path / "model.v1.pth"
    ember.save({"w": ember.ones(3, 5), "b": ember.zeros(7, dtype=ember.int64)}, path)
    raw = path.read_bytes()
    z = zipfile.ZipFile(path)
    assert z.namelist() == [
        "model.v1/data.pkl",
        "model.v1/.format_version",
        "model.v1/.storage_alignment",
        "model.v1/byteorder",
        "model.v1/data/0",
        "model.v1/data/1",
        "model.v1/version",
        "model.v1/.data/serialization_id",
    ]
    for info in z.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        assert info.flag_bits == 0x0808
        name_len, extra_len = struct.unpack(
            "<HH", raw[info.header_offset + 26 : info.header_offset + 30]
        )
        start = info.header_offset + 30 + name_len + extra_len
        assert start % 64 == 0, info.filename
        assert (
            raw[info.header_offset + 30 + name_len : info.header_offset + 30 + name_len + 2]
            == b"FB"
        )
    assert z.read("model.v1/data.pkl")[:2] == b"\x80\x02"
    assert z.read("model.v1/byteorder") == b"little"
    assert z.read("model.v1/version") == b"3\n"
    assert z.read("model.v1/.format_version") == b"1"
    assert z.read("model.v1/.storage_alignment") == b"64"
    assert np.frombuffer(z.read("model.v1/data/0"), dtype=np.float32).tolist() == [1.0] * 15
    buf = io.BytesIO()
    ember.save(ember.ones(1), buf)
    assert zipfile.ZipFile(buf).namelist()[0] == "archive/data.pkl"
    buf = io.BytesIO()
    ember.save(ember.ones(1), buf, _disable_byteorder_record=True)
    assert "archive/byteorder" not in zipfile.ZipFile(buf).namelist()
    buf.seek(0)
    assert torch.load(buf).tolist() == [1.0]


def test_zip64_records_load_in_torch_and_ember(monkeypatch):
    monkeypatch.setattr(es, "_ZIP64_LIMIT", 100)  # every large enough record and offset goes zip64
    obj = {"x": ember.tensor([float(i) for i in range(64)]), "y": ember.ones(3)}
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    assert zipfile.ZipFile(buf).testzip() is None
    buf.seek(0)
    t = torch.load(buf)
    assert t["x"].tolist() == [float(i) for i in range(64)] and t["y"].tolist() == [1.0] * 3
    buf.seek(0)
    e = ember.load(buf)
    assert e["x"].tolist() == t["x"].tolist()


def test_file_objects_paths_and_offsets(tmp_path):
    e = ember.tensor([1.0, 2.0])
    path = tmp_path / "x.pt"
    ember.save(e, str(path))
    assert ember.load(str(path)).tolist() == [1.0, 2.0]
    with open(path, "wb") as f:
        ember.save(e, f)
    with open(path, "rb") as f:
        assert ember.load(f).tolist() == [1.0, 2.0]
    # an archive after other bytes in the same stream
    buf = io.BytesIO(b"head")
    buf.seek(4)
    ember.save(e, buf)
    buf.seek(4)
    assert ember.load(buf).tolist() == [1.0, 2.0]
    buf.seek(4)
    assert torch.load(buf).tolist() == [1.0, 2.0]

    class ReadOnly:  # read/seek/tell only, no readinto
        def __init__(self, data):
            self.b = io.BytesIO(data)
            self.read, self.seek, self.tell = self.b.read, self.b.seek, self.b.tell

    assert ember.load(ReadOnly(path.read_bytes())).tolist() == [1.0, 2.0]


def test_mmap_load(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3)}, path)
    w = ember.load(path, mmap=True)["w"]
    assert w.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    w.fill_(1)  # private mapping: the file is unchanged
    assert torch.load(path)["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(ValueError, match="f must be a file path"):
        ember.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_parameters_requires_grad_and_python_state():
    p = ember.nn.Parameter(ember.ones(2))
    frozen = ember.nn.Parameter(ember.ones(2), requires_grad=False)
    g = ember.ones(2).requires_grad_()
    nonleaf = g * g
    tagged = ember.ones(2)
    tagged.tag = "hello"
    ptag = ember.nn.Parameter(ember.zeros(1))
    ptag.note = 3
    obj = {
        "p": p,
        "frozen": frozen,
        "g": g,
        "nonleaf": nonleaf,
        "tagged": tagged,
        "ptag": ptag,
        "tied": p,
    }
    buf = io.BytesIO()
    ember.save(obj, buf)
    for loader in (ember.load, torch.load):
        buf.seek(0)
        r = loader(buf)
        assert type(r["p"]).__name__ == "Parameter" and r["p"].requires_grad
        assert type(r["frozen"]).__name__ == "Parameter" and not r["frozen"].requires_grad
        assert r["g"].requires_grad and r["nonleaf"].requires_grad and r["nonleaf"].is_leaf
        assert r["tagged"].tag == "hello" and r["ptag"].note == 3
        assert r["tied"] is r["p"]
    # torch's state-carrying tensors load in ember
    t = torch.ones(2)
    t.tag = "x"
    tp = torch.nn.Parameter(torch.ones(1))
    tp.note = 5
    buf = io.BytesIO()
    torch.save({"t": t, "tp": tp}, buf)
    buf.seek(0)
    r = ember.load(buf)
    assert r["t"].tag == "x" and r["tp"].note == 5 and type(r["tp"]).__name__ == "Parameter"


def test_python_values_sizes_dtypes_devices():
    obj = {
        "size": ember.Size([2, 3]),
        "dtype": ember.float16,
        "device": ember.device("cpu"),
        "od": OrderedDict([("b", 1), ("a", [1, 2])]),
        "set": {3},
        "bytes": b"\x00\xff",
        "complex": 1 + 2j,
        "bytearray": bytearray(b"ab"),
    }
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    t = torch.load(buf)
    assert t["size"] == torch.Size([2, 3]) and type(t["size"]) is torch.Size
    assert t["dtype"] is torch.float16 and t["device"] == torch.device("cpu")
    assert type(t["od"]) is OrderedDict and list(t["od"]) == ["b", "a"]
    assert t["set"] == {3} and t["bytes"] == b"\x00\xff" and t["complex"] == 1 + 2j
    buf = io.BytesIO()
    torch.save(
        {k: (v if k not in ("size", "dtype", "device") else t[k]) for k, v in obj.items()}, buf
    )
    buf.seek(0)
    e = ember.load(buf)
    assert type(e["size"]) is ember.Size and e["size"] == ember.Size([2, 3])
    assert e["dtype"] is ember.float16 and e["device"] == ember.device("cpu")
    assert e["bytearray"] == bytearray(b"ab")


def _models(monkeypatch):
    """An Ember model and a torch model of the same architecture (different weights)."""
    if not hasattr(ember.Tensor, "uniform_"):  # random initialisation is not on this branch
        monkeypatch.setattr(ember.nn.Linear, "reset_parameters", lambda self: None)
    em = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    other = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    em.load_state_dict(
        OrderedDict((k, ember.tensor(v.tolist())) for k, v in other.state_dict().items())
    )
    return em, tm


def _same_state(em, tm):
    es_, ts_ = em.state_dict(), tm.state_dict()
    assert list(es_) == list(ts_)
    for k in ts_:
        _same_tensor(es_[k], ts_[k])


def test_state_dict_round_trips_with_torch(monkeypatch):
    em, tm = _models(monkeypatch)
    buf = io.BytesIO()
    ember.save(em.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf)
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert sd._metadata == em.state_dict()._metadata
    tm.load_state_dict(sd)
    _same_state(em, tm)

    em2, tm2 = _models(monkeypatch)
    buf = io.BytesIO()
    torch.save(tm2.state_dict(), buf)
    buf.seek(0)
    sd = ember.load(buf)
    assert isinstance(sd, OrderedDict) and sd._metadata == tm2.state_dict()._metadata
    em2.load_state_dict(sd)
    _same_state(em2, tm2)
    # the optimizer-style nesting
    buf = io.BytesIO()
    ember.save({"model": em2.state_dict(), "epoch": 3, "lr": [0.1, 0.01]}, buf)
    buf.seek(0)
    r = torch.load(buf)
    assert r["epoch"] == 3 and r["lr"] == [0.1, 0.01]


class Custom:
    def __init__(self, v):
        self.v = v


def test_weights_only_allow_list():
    buf = io.BytesIO()
    ember.save({"c": Custom(3), "t": ember.ones(1)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as ei:
        ember.load(buf)
    msg = str(ei.value)
    assert msg.startswith("Weights only load failed.")
    assert (
        "Unsupported global: GLOBAL test_serialization.Custom was not an allowed global by default."
        in msg
    )
    # torch refuses it the same way
    buf.seek(0)
    with pytest.raises(
        pickle.UnpicklingError, match="Unsupported global: GLOBAL test_serialization.Custom"
    ):
        torch.load(buf)
    buf.seek(0)
    assert ember.load(buf, weights_only=False)["c"].v == 3
    buf.seek(0)
    assert es.get_unsafe_globals_in_checkpoint(buf) == ["test_serialization.Custom"]
    buf.seek(0)
    with es.safe_globals([Custom]):
        assert ember.load(buf)["c"].v == 3
    assert Custom not in es.get_safe_globals()
    es.add_safe_globals([Custom])
    try:
        buf.seek(0)
        assert ember.load(buf)["c"].v == 3
    finally:
        es.clear_safe_globals()
    # builtins that torch does not allow are refused too
    buf = io.BytesIO()
    ember.save({"f": frozenset([1])}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL frozenset was not an allowed global"):
        ember.load(buf)
    with pytest.raises(
        RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"
    ):
        ember.load(buf, pickle_module=pickle, weights_only=True)


def test_weights_only_false_maps_torch_modules():
    tm = torch.nn.Linear(2, 3)
    buf = io.BytesIO()
    torch.save(tm, buf)  # a whole module: torch.nn.modules.linear.Linear
    buf.seek(0)
    m = ember.load(buf, weights_only=False)
    assert type(m) is ember.nn.Linear
    np.testing.assert_allclose(m.weight.tolist(), tm.weight.tolist())


def _save_on(location, obj):
    class Pickler(es._CheckpointPickler):
        def _storage_ref(self, t):
            ref = super()._storage_ref(t)
            ref.location = location
            return ref

    buf = io.BytesIO()
    old = es._CheckpointPickler
    es._CheckpointPickler = Pickler
    try:
        ember.save(obj, buf)
    finally:
        es._CheckpointPickler = old
    buf.seek(0)
    return buf


def test_map_location():
    buf = _save_on("cuda:0", {"w": ember.tensor([1.0, 2.0])})
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            ember.load(buf)
    for ml in [
        "cpu",
        ember.device("cpu"),
        {"cuda:0": "cpu"},
        lambda s, loc: s,
        lambda s, loc: None if loc == "x" else s,
    ]:
        buf.seek(0)
        assert ember.load(buf, map_location=ml)["w"].tolist() == [1.0, 2.0]
    buf.seek(0)
    assert torch.load(buf, map_location="cpu")["w"].tolist() == [1.0, 2.0]
    seen = []
    buf.seek(0)
    ember.load(buf, map_location=lambda s, loc: seen.append((s.nbytes(), loc)) or s)
    assert seen == [(8, "cuda:0")]


def test_bad_inputs():
    a = ember.tensor([1.0, 2.0])
    as_int = ember._C._tensor_on_storage(ember._C._storage_bytes(a), ember.int32, 0, (2,), (1,))
    with pytest.raises(
        RuntimeError,
        match="Cannot save multiple tensors or storages that view the same data as different types",
    ):
        ember.save([a, as_int], io.BytesIO())
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(b"not a checkpoint"))
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        ember._C._tensor_on_storage(ember._C._storage_bytes(a), ember.float32, 1, (2,), (1,))


def test_big_endian_checkpoint_is_swapped():
    buf = io.BytesIO()
    torch.save(
        {"w": torch.tensor([1.0, -2.5]), "i": torch.tensor([1, 256], dtype=torch.int16)}, buf
    )
    z = zipfile.ZipFile(buf)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zo:
        for name in z.namelist():
            data = z.read(name)
            if name.endswith("byteorder"):
                data = b"big"
            elif name.endswith("data/0"):
                data = np.frombuffer(data, np.float32).byteswap().tobytes()
            elif name.endswith("data/1"):
                data = np.frombuffer(data, np.int16).byteswap().tobytes()
            zo.writestr(name, data)
    out.seek(0)
    r = ember.load(out)
    assert r["w"].tolist() == [1.0, -2.5] and r["i"].tolist() == [1, 256]


def test_plain_pickle_of_tensors():
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]]).permute(1, 0)
    b = pickle.loads(pickle.dumps(a))
    assert b.tolist() == a.tolist() and b.stride() == a.stride()
    p = ember.nn.Parameter(ember.ones(2))
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is type(p) and q.requires_grad
    t = ember.ones(1)
    t.extra = {"k": 1}
    assert pickle.loads(pickle.dumps(t)).extra == {"k": 1}


def test_untyped_storage_api():
    a = ember.tensor([1, 2], dtype=ember.uint8)
    s = a.untyped_storage()
    t = torch.tensor([1, 2], dtype=torch.uint8).untyped_storage()
    assert repr(s) == repr(t)
    assert s.nbytes() == len(s) == 2 and s.tolist() == [1, 2] and s[1] == 2
    assert os.path  # keep the import used


def test_legacy_format_both_directions(tmp_path):
    e, t = _pair("float32")
    e2, t2 = _pair("int16", (5,))
    path = tmp_path / "legacy.pt"
    torch.save(_objects(torch, (t, t2)), path, _use_new_zipfile_serialization=False)
    loaded = ember.load(path)
    _walk_same(loaded, _objects(torch, (t, t2)))
    assert _ptr(loaded["a"]) == _ptr(loaded["view"]) != _ptr(loaded["b"])
    ember.save(_objects(ember, (e, e2)), path, _use_new_zipfile_serialization=False)
    raw = path.read_bytes()
    assert pickle.loads(raw[:64]) == 0x1950A86A20F9469CFC6C
    tl = torch.load(path)
    _walk_same(_objects(ember, (e, e2)), tl)
    assert _ptr(tl["a"]) == _ptr(tl["view"]) != _ptr(tl["b"])
    _walk_same(ember.load(path), tl)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        ember.load(path, mmap=True)


class _Unlisted:
    """A class no weights-only allow-list holds."""

    def __init__(self):
        self.w = [1, 2]


@pytest.mark.parametrize(
    "env, weights_only",
    [
        ({}, None),
        ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, None),
        ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "yes"}, True),
        ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "true"}, False),
        ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, None),
    ],
)
def test_force_weights_only_environment(monkeypatch, recwarn, env, weights_only):
    """PyTorch's TORCH_FORCE_(NO_)WEIGHTS_ONLY_LOAD switches: the first wins
    over an explicit weights_only=False, the second only over an unset one."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    # Each library's load on its own line: a warning's registry key is its line.
    loads = {
        ember: lambda f: ember.load(f, weights_only=weights_only),
        torch: lambda f: torch.load(f, weights_only=weights_only),
    }

    def outcome(m):
        buf = io.BytesIO()
        m.save({"obj": _Unlisted()}, buf)
        buf.seek(0)
        recwarn.clear()
        try:
            r = loads[m](buf)
            return "loaded", r["obj"].w, [str(w.message) for w in recwarn if w.category is UserWarning]
        except Exception as e:  # the exception's type is the comparison
            return "raised", type(e).__name__

    assert outcome(ember) == outcome(torch)
