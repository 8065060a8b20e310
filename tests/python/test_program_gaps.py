"""What real PyTorch programs (pytorch/examples, torchvision) reach that Ember
lacked: pickling a Transformer whose layers keep F.relu, weights-only loading
of a PyTorch-saved model whose classes the user allowed, torch.hub's home
folder and torch.utils.model_zoo."""

from __future__ import annotations

import io
import subprocess
import sys

import torch

import ember
import ember.nn.functional as F


def test_transformer_default_activation_is_the_public_relu():
    for layer in (
        ember.nn.TransformerEncoderLayer(8, 2),
        ember.nn.TransformerDecoderLayer(8, 2),
        ember.nn.Transformer(8, 2, 1, 1, 16).encoder.layers[0],
    ):
        assert layer.activation is F.relu
    assert torch.nn.TransformerEncoderLayer(8, 2).activation is torch.nn.functional.relu


def test_whole_transformer_saves_and_loads():
    ember.manual_seed(0)
    model = ember.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0).eval()
    buf = io.BytesIO()
    ember.save(model, buf)
    buf.seek(0)
    back = ember.load(buf, weights_only=False).eval()
    src, tgt = ember.randn(3, 1, 8), ember.randn(2, 1, 8)
    assert back.encoder.layers[0].activation is F.relu
    assert ember.equal(back(src, tgt), model(src, tgt))


def test_weights_only_load_of_torch_module_with_allowed_classes(tmp_path):
    path = tmp_path / "model.pt"
    subprocess.run(
        [sys.executable, "-c",
         "import torch; torch.manual_seed(0); "
         f"torch.save(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Dropout(0.5)), {str(path)!r})"],
        check=True,
    )
    want = torch.load(path, weights_only=False)
    allowed = [ember.nn.Sequential, ember.nn.Linear, ember.nn.Dropout]
    with ember.serialization.safe_globals(allowed):
        got = ember.load(path)
    assert type(got[0]) is ember.nn.Linear and type(got[1]) is ember.nn.Dropout
    assert got[0].weight.tolist() == want[0].weight.tolist()
    assert got[0].bias.tolist() == want[0].bias.tolist()


def test_hub_home_and_model_zoo(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert ember.hub._get_torch_home() == torch.hub._get_torch_home() == str(tmp_path / "th")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ember.hub._get_torch_home() == torch.hub._get_torch_home()
    assert ember.hub.get_dir() == torch.hub.get_dir()
    from ember.utils.model_zoo import load_url, tqdm

    assert load_url is ember.hub.load_state_dict_from_url
    with tqdm(total=4, disable=True) as bar:
        bar.update(2)
