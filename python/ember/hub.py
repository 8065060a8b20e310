"""ember.hub: models published as a repository with a hubconf.py, loaded from
a local directory or from the hub cache (downloaded there when online), and
checkpoints cached from URLs."""

import importlib.util
import os
import re
import shutil
import sys
import tempfile
import warnings
from urllib.parse import urlparse

import ember

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir = None


class _ProgressToStderr:
    """tqdm's few calls a download makes, as a percentage (or byte count) on
    stderr: what `tqdm` is here when the tqdm package is not installed."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        done = f"{self.n:.1f} bytes" if self.total is None else f"{100 * self.n / float(self.total):.1f}%"
        sys.stderr.write(f"\r{done}")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm
except ImportError:
    tqdm = _ProgressToStderr


def get_dir():
    """The hub cache: set_dir's folder, else $TORCH_HOME/hub, else
    $XDG_CACHE_HOME/torch/hub (~/.cache/torch/hub)."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def _get_torch_home():
    """$TORCH_HOME, else $XDG_CACHE_HOME/torch (~/.cache/torch); torchvision keeps its data sets there."""
    return os.path.expanduser(
        os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch"))
    )


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _parse_repo(github):
    repo_info, _, ref = github.partition(":")
    owner, _, name = repo_info.partition("/")
    return owner, name, ref or "main"


def _check_trusted(owner, name, folder, trust_repo):
    hub_dir = get_dir()
    trusted_file = os.path.join(hub_dir, "trusted_list")
    trusted = []
    if os.path.exists(trusted_file):
        with open(trusted_file) as f:
            trusted = [line.strip() for line in f]
    owner_name = f"{owner}_{name}"
    known = owner_name in trusted or folder in (os.listdir(hub_dir) if os.path.isdir(hub_dir) else []) or (
        owner in _TRUSTED_OWNERS)
    if trust_repo is None:
        if not known:
            warnings.warn(
                "You are about to download and run code from an untrusted repository. In a future release, this "
                "won't be allowed. To add the repository to your trusted list, change the command to load(..., "
                "trust_repo=False) and a command prompt will appear asking for an explicit confirmation of trust, or "
                "load(..., trust_repo=True), which will assume that the prompt is to be answered with 'yes'. You can "
                "also use load(..., trust_repo='check') which will only prompt for confirmation if the repo is not "
                "already trusted. This will eventually be the default behaviour",
                stacklevel=4,
            )
        return
    if trust_repo is False or (trust_repo == "check" and not known):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                       f"such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                       f"list of repositories (y/N)?")
        if answer.lower() not in ("y", "yes"):
            raise ValueError("Untrusted repository.")
        trust_repo = True
    if trust_repo is True and owner_name not in trusted:
        os.makedirs(hub_dir, exist_ok=True)
        with open(trusted_file, "a") as f:
            f.write(owner_name + "\n")


def _github_dir(github, force_reload, trust_repo, verbose):
    owner, name, ref = _parse_repo(github)
    hub_dir = get_dir()
    folder = f"{owner}_{name}_{ref.replace('/', '_')}"
    _check_trusted(owner, name, folder, trust_repo)
    repo_dir = os.path.join(hub_dir, folder)
    if os.path.exists(repo_dir) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    os.makedirs(hub_dir, exist_ok=True)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    archive = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    if verbose:
        sys.stderr.write(f'Downloading: "{url}" to {archive}\n')
    download_url_to_file(url, archive, progress=False)
    import zipfile

    with zipfile.ZipFile(archive) as z:
        top = z.infolist()[0].filename
        extracted = os.path.join(hub_dir, top)
        z.extractall(hub_dir)
    os.remove(archive)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.exists(path):
        import errno

        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [p for p in getattr(module, VAR_DEPENDENCY, []) if importlib.util.find_spec(p) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return repo_or_dir
    return _github_dir(repo_or_dir, force_reload, trust_repo, verbose)


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entrypoints (public callables) of a repository's hubconf.py."""
    module = _import_hubconf(_github_dir(github, force_reload, trust_repo, verbose))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    module = _import_hubconf(_github_dir(github, force_reload, trust_repo, True))
    return _entry(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Calls entrypoint `model` of the repository's hubconf.py with args."""
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose)
    return _entry(_import_hubconf(repo_dir), model)(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads url to dst through a temporary file; with hash_prefix, the
    SHA-256 of the data must start with it."""
    import hashlib  # with urllib.request 20 ms: imported on first use
    from urllib.request import Request, urlopen

    request = Request(url, headers={"User-Agent": "ember.hub"})
    response = urlopen(request)
    dst = os.path.expanduser(dst)
    folder = os.path.dirname(os.path.abspath(dst))
    digest = hashlib.sha256() if hash_prefix is not None else None
    with tempfile.NamedTemporaryFile(delete=False, dir=folder) as f:
        try:
            while True:
                chunk = response.read(READ_DATA_CHUNK)
                if not chunk:
                    break
                f.write(chunk)
                if digest is not None:
                    digest.update(chunk)
            f.close()
            if digest is not None and not digest.hexdigest().startswith(hash_prefix):
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
            shutil.move(f.name, dst)
        finally:
            if os.path.exists(f.name):
                os.remove(f.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """Loads a checkpoint from the hub's checkpoints folder, downloading it
    there first when it is not cached."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    return ember.load(cached, map_location=map_location, weights_only=weights_only)
