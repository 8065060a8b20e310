"""ember.hub from a local directory, the hub cache and file URLs, beside
torch.hub; ember.onnx importable."""

from __future__ import annotations

import hashlib

import pytest
from conftest import torch

import ember

HUBCONF = '''
dependencies = ["numpy"]


def linear(lib, seed=0, out_features=3):
    """A seeded linear layer."""
    lib.manual_seed(seed)
    return lib.nn.Linear(4, out_features)


def _private():
    return None
'''


@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    return d


def test_load_from_local_directory(repo):
    e = ember.hub.load(str(repo), "linear", ember, seed=3, source="local")
    t = torch.hub.load(str(repo), "linear", torch, seed=3, source="local")
    assert e.weight.tolist() == t.weight.tolist()
    assert e.bias.tolist() == t.bias.tolist()


def test_load_list_and_help_from_the_cache(repo, tmp_path):
    for L in (ember, torch):
        hub_dir = tmp_path / f"hub_{L.__name__}"
        hub_dir.mkdir()
        (hub_dir / "owner_models_main").symlink_to(repo)
        L.hub.set_dir(str(hub_dir))
    try:
        results = []
        for L in (ember, torch):
            m = L.hub.load("owner/models", "linear", L, seed=1, trust_repo=True, verbose=False)
            results.append((m.weight.tolist(), L.hub.list("owner/models", trust_repo=True, verbose=False),
                            L.hub.help("owner/models", "linear", trust_repo=True)))
        assert results[0] == results[1]
    finally:
        ember.hub._hub_dir = None
        torch.hub._hub_dir = None


@pytest.mark.parametrize(
    "call",
    [
        lambda L, repo: L.hub.load(str(repo), "linear", source="gitlab"),
        lambda L, repo: L.hub.load(str(repo), "nothing_here", source="local"),
        lambda L, repo: L.hub.load(str(repo / "missing"), "linear", source="local"),
    ],
)
def test_hub_errors(call, repo):
    with pytest.raises(Exception) as expected:
        call(torch, repo)
    with pytest.raises(type(expected.value)) as got:
        call(ember, repo)
    assert str(got.value) == str(expected.value)


def test_state_dict_from_file_url_and_hash_check(tmp_path):
    src = tmp_path / "weights.pt"
    torch.save({"w": torch.arange(4.0)}, str(src))
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    named = tmp_path / f"weights-{digest[:8]}.pt"
    named.write_bytes(src.read_bytes())
    sd = ember.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(tmp_path / "ckpt"), check_hash=True)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert (tmp_path / "ckpt" / named.name).exists()
    with pytest.raises(RuntimeError, match="invalid hash value"):
        ember.hub.download_url_to_file(src.as_uri(), str(tmp_path / "copy.pt"), hash_prefix="0000")
    assert not (tmp_path / "copy.pt").exists()


def test_hub_dir_follows_torch_home(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "hub")


def test_onnx_is_importable_and_export_says_it_is_unavailable():
    import ember.onnx

    assert ember.onnx.is_in_onnx_export() is False
    with pytest.raises(RuntimeError, match="not available"):
        ember.onnx.export(ember.nn.Linear(1, 1), (ember.ones(1),), "m.onnx")
