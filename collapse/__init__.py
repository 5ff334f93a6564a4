"""Query-time near-duplicate collapsing: an Elasticsearch-compatible proxy, and the same
collapsed search inside a Python app (``collapse.inprocess``).

The in-process names are resolved on first use, so that ``import collapse`` (and the proxy's
own modules, which import the package) load neither the app nor a client library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from collapse.settings import Settings

if TYPE_CHECKING:
    from collapse.inprocess import AsyncCollapser, Collapser, MountedProxy, asgi_app

__all__ = ["AsyncCollapser", "Collapser", "MountedProxy", "Settings", "asgi_app"]

_IN_PROCESS = frozenset({"AsyncCollapser", "Collapser", "MountedProxy", "asgi_app"})


def __getattr__(name: str) -> Any:
    if name in _IN_PROCESS:
        return getattr(importlib.import_module("collapse.inprocess"), name)
    raise AttributeError(f"module 'collapse' has no attribute {name!r}")
