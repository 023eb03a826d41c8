"""``torch.hub``: the cache folder and weight downloads; fetching model code raises at the call.

``load_state_dict_from_url`` (and ``download_url_to_file``) download into
``get_dir()/checkpoints`` as torch does and read the file with `lazytorch.load` (torch's
format). ``load``/``list``/``help`` import *model code* from a GitHub repository written
against the real torch: they raise ``NotImplementedError`` at the call.

>>> import lazytorch
>>> lazytorch.hub.get_dir().endswith("hub")
True
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request
from typing import Any

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

_hub_dir: str | None = None


def get_dir() -> str:
    """Where downloads go: ``set_dir``'s folder, else ``$TORCH_HOME/hub``, else
    ``$XDG_CACHE_HOME/torch/hub`` (``~/.cache/torch/hub``) — torch's rule, so a weight
    file torch downloaded is found again."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "torch"
    )
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike[str]) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Download `url` to `dst` (atomically: a partial download never takes `dst`'s name)."""
    import hashlib

    digest = hashlib.sha256()
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url) as src:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(
                f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")'
            )
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> Any:
    """Download a checkpoint (once; cached in `model_dir`) and `lazytorch.load` it."""
    from lazytorch.serialization import load as _load  # lazy: import time (loads nn)

    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        prefix = None
        if check_hash:  # torch's convention: name-<sha256 prefix>.ext
            stem = name.split(".")[0]
            prefix = stem.rsplit("-", 1)[-1] if "-" in stem else None
        download_url_to_file(url, cached, prefix, progress=progress)
    return _load(cached, map_location=map_location, weights_only=weights_only)


class _Faketqdm:
    """torch.hub's stand-in for ``tqdm.tqdm`` when tqdm is not installed: a byte counter
    that writes its progress to stderr. Like torch's, it is not iterable (a script that
    loops over ``tqdm(loader)`` needs the real tqdm under torch as well)."""

    def __init__(
        self,
        total: float | None = None,
        disable: bool = False,
        unit: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self.total = total
        self.disable = disable
        self.n: float = 0

    def update(self, n: float) -> None:
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def write(self, s: str) -> None:
        sys.stderr.write(f"{s}\n")

    def close(self) -> None:
        self.disable = True

    def __enter__(self) -> _Faketqdm:
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        if self.disable:
            return
        sys.stderr.write("\n")


def __getattr__(name: str) -> Any:
    """``torch.hub.tqdm``: tqdm's class when tqdm is installed, else `_Faketqdm` (torch's
    rule); looked up on first use so that importing lazytorch does not import tqdm."""
    if name == "tqdm":
        try:
            from tqdm import tqdm  # lazy: optional dependency

            return tqdm
        except ImportError:
            return _Faketqdm
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _no_model_code(api: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.hub.{api}: lazytorch cannot import a hub repository's model code (it is "
        "written against the real torch); build the model in your script and load its "
        "weights with lazytorch.hub.load_state_dict_from_url(url)"
    )


def load(repo_or_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    raise _no_model_code("load")


def list(github: str, *args: Any, **kwargs: Any) -> Any:
    raise _no_model_code("list")


def help(github: str, model: str, *args: Any, **kwargs: Any) -> Any:
    raise _no_model_code("help")
