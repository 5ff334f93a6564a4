"""The write path maps ``collapse_fp`` into the indices it writes to, as ``indexer init`` does.

A document written through the proxy carries ``collapse_fp``. In an index whose mapping lacks
it, Elasticsearch would map it dynamically: ``band``, ``exact_key`` and ``packed`` as analysed
text with keyword sub-fields (a costlier index, read from ``_source`` only), which ``indexer
init`` then refuses to change. So before the first write to an index name (again after
``ttl`` seconds), for a name of one index or alias (no wildcard, comma or date math), the
proxy reads how the name's indices map ``collapse_fp.version``
(``GET /{name}/_mapping/field/...``, the client's credentials) and

* adds :func:`indexer.mapping.fingerprint_mapping` to each concrete index lacking it
  (``PUT /{indices}/_mapping``: the other fields and the index's ``_meta`` are untouched);
* creates a missing index with that mapping (``PUT /{name}``: matching index templates apply
  as they do on auto-creation) only where Elasticsearch would create it for the write: the
  cluster's ``action.auto_create_index`` is ``true`` (its default) and the request does not
  ``require_alias``;
* leaves everything else to Elasticsearch, the write going on as the client sent it: an index
  whose ``collapse_fp`` is already mapped otherwise, a refusal of the client's credentials, a
  data stream's template. Those are logged (``collapse.error``), once per name and period.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from collapse import jsonio
from collapse.upstream import Upstream
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import fingerprint_mapping

__all__ = ["MappingGuard"]

error_log = logging.getLogger("collapse.error")

#: The field whose mapping tells whether an index maps ``collapse_fp`` (as ``init`` does:
#: keyword; dynamically: text).
_PROBE_FIELD = f"{FINGERPRINT_FIELD}.version"
_JSON = {"content-type": "application/json", "accept": "application/json"}


def plain_index_name(name: str) -> bool:
    """One index named as it is: no pattern, list, date math or exclusion to resolve."""
    return bool(name) and not any(c in name for c in '*,<>?" ') and not name.startswith(("-", "_"))


class MappingGuard:
    """Per index name, ``collapse_fp`` mapped before the proxy writes documents there."""

    def __init__(self, upstream: Upstream, ttl: float = 60.0, max_entries: int = 10_000) -> None:
        self.upstream = upstream
        self.ttl = ttl
        self.max_entries = max_entries
        #: name -> when to check it again, and the check (writes arriving while it runs wait
        #: for it: a write let through meanwhile could auto-create the index unmapped)
        self._checked: dict[str, tuple[float, asyncio.Future[None]]] = {}
        self._auto_create: tuple[float, bool] | None = None

    async def ensure(
        self, names: Iterable[str], headers: Mapping[str, str], *, may_create: bool = True
    ) -> None:
        """Map ``collapse_fp`` where the indices behind ``names`` lack it (module docstring);
        never raises: whatever cannot be done is left to Elasticsearch and logged."""
        now = time.monotonic()
        waits: list[asyncio.Future[None]] = []
        for name in set(names):
            entry = self._checked.get(name)
            if entry is None or entry[0] <= now:
                if len(self._checked) >= self.max_entries:
                    self._checked = {n: e for n, e in self._checked.items() if not e[1].done()}
                check = asyncio.ensure_future(self._ensure(name, dict(headers), may_create))
                entry = self._checked[name] = (now + self.ttl, check)
            if not entry[1].done():
                waits.append(entry[1])
        if waits:  # shielded: a client gone away cancels its own wait, not the check
            await asyncio.gather(*(asyncio.shield(w) for w in waits))

    async def _ensure(self, name: str, headers: dict[str, str], may_create: bool) -> None:
        if not plain_index_name(name):
            return  # a pattern or a list names no write target: Elasticsearch refuses the write
        try:
            mapped = await self._mapped(name, headers)
            if mapped is None:
                if not (may_create and await self._may_auto_create()):
                    return  # Elasticsearch decides, as for any write
                if await self._create(name, headers):
                    return
                mapped = await self._mapped(name, headers)  # created meanwhile by another
                if mapped is None:
                    return
            lacking = sorted(ix for ix, kind in mapped.items() if kind is None)
            if lacking:
                await self._put(lacking, headers)
            other = sorted(ix for ix, kind in mapped.items() if kind not in (None, "keyword"))
            if other:
                error_log.warning(
                    "collapse_fp is mapped dynamically in %s (indexer init refuses such an "
                    "index): create a new index with `indexer init` and reindex into it",
                    ", ".join(other),
                )
        except _Refused as exc:
            error_log.warning("collapse_fp not mapped in %r: %s", name, exc)
        except Exception as exc:  # the write goes on, and meets whatever this met
            error_log.warning("collapse_fp not mapped in %r: %r", name, exc)

    async def _mapped(self, name: str, headers: dict[str, str]) -> dict[str, str | None] | None:
        """Each concrete index behind ``name`` with the type of ``collapse_fp.version`` (None:
        unmapped); None when no index has the name."""
        answer = await self.upstream.request(
            "GET",
            f"/{quote(name, safe=',*')}/_mapping/field/{_PROBE_FIELD}",
            headers={**headers, "accept": "application/json"},
        )
        body = _json(answer.content)
        if answer.status_code == 404 and _error_type(body) == "index_not_found_exception":
            return None
        if answer.status_code != 200:
            raise _Refused(f"reading its mapping: {answer.status_code} {_reason(body)}")
        out: dict[str, str | None] = {}
        for index, entry in body.items():
            field = ((entry or {}).get("mappings") or {}).get(_PROBE_FIELD) or {}
            mapping = (field.get("mapping") or {}).get("version") or {}
            kind = mapping.get("type")
            out[index] = kind if isinstance(kind, str) else None
        return out

    async def _put(self, indices: list[str], headers: dict[str, str]) -> None:
        body = {"properties": {FINGERPRINT_FIELD: fingerprint_mapping()}}
        answer = await self.upstream.request(
            "PUT",
            f"/{','.join(quote(ix, safe='') for ix in indices)}/_mapping",
            content=jsonio.dumps(body),
            headers={**headers, **_JSON},
        )
        if answer.status_code != 200:
            raise _Refused(f"adding it: {answer.status_code} {_reason(_json(answer.content))}")

    async def _create(self, name: str, headers: dict[str, str]) -> bool:
        """Whether this call created the index (False: it exists already)."""
        body = {"mappings": {"properties": {FINGERPRINT_FIELD: fingerprint_mapping()}}}
        answer = await self.upstream.request(
            "PUT",
            f"/{quote(name, safe='')}",
            content=jsonio.dumps(body),
            headers={**headers, **_JSON},
        )
        if answer.status_code == 200:
            return True
        got = _json(answer.content)
        if _error_type(got) == "resource_already_exists_exception":
            return False
        raise _Refused(f"creating the index: {answer.status_code} {_reason(got)}")

    async def _may_auto_create(self) -> bool:
        """Whether the cluster creates indices on write everywhere (``action.auto_create_index``
        true, its default); False when its settings cannot be read. Read with the proxy's own
        credentials (the setting is the cluster's, not the client's), cached ``ttl``."""
        now = time.monotonic()
        if self._auto_create is not None and self._auto_create[0] > now:
            return self._auto_create[1]
        answer = await self.upstream.request(
            "GET",
            "/_cluster/settings",
            params={"include_defaults": "true", "flat_settings": "true"},
            headers={"accept": "application/json"},
        )
        allowed = False
        if answer.status_code == 200:
            body = _json(answer.content)
            value: Any = None
            for level in ("transient", "persistent", "defaults"):  # the first one set wins
                got = (body.get(level) or {}).get("action.auto_create_index")
                if got is not None:
                    value = got
                    break
            allowed = str(value).lower() == "true" if value is not None else True
        self._auto_create = (now + self.ttl, allowed)
        return allowed


class _Refused(Exception):
    """Elasticsearch did not let the mapping be read or changed."""


def _json(content: bytes) -> dict[str, Any]:
    try:
        body = jsonio.loads(content) if content.strip() else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _error_type(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("type") if isinstance(error, dict) else None


def _reason(body: Any) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return f"{error.get('type')}: {error.get('reason')}"
    return str(error or "")[:200]
