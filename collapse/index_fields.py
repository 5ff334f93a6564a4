"""What each index records in its mapping's ``_meta`` (``indexer.hits.META_KEY``), read by
the proxy: its text fields (``indexer init --text-field``) and its probe scheme (``--probe``).

Writers and lookups through the proxy fingerprint the fields the index records, the same fields
``indexer ingest`` and ``indexer backfill`` read; an index recording none, or not existing yet,
is read with the defaults. The probe and the lookup look copies up by the keys of the schemes
of the indices searched. Answers are cached per index expression for ``ttl`` seconds: a change
made by ``init`` reaches the proxy within that time, and the documents written meanwhile carry
the old fields in ``collapse_fp.fields``, so the next ``indexer backfill`` redoes them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from collapse import jsonio
from collapse.credentials import Refused, is_refusal
from collapse.errors import BadRequest, ProxyError, UpstreamUnavailable
from collapse.upstream import Upstream
from indexer.documents import DEFAULT_TEXT_FIELDS, TextFields
from indexer.hits import FINGERPRINT_FIELD, META_KEY, PROBES, probe_in

#: An index expression's ``_meta`` entries, one per concrete index ([]: none exists yet).
_Entries = list[dict[str, Any]]

__all__ = ["IndexFields"]


class IndexFields:
    """Per index expression, the text fields and probe schemes its indices record (cached)."""

    def __init__(self, upstream: Upstream, ttl: float = 60.0, max_entries: int = 10_000) -> None:
        self.upstream = upstream
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: dict[str, tuple[float, _Entries]] = {}

    async def get(
        self, indices: Iterable[str], headers: Mapping[str, str] | None = None
    ) -> dict[str, TextFields]:
        """The fields of each named index (``headers``: the client's credentials).

        Raises :class:`~collapse.errors.BadRequest` when the indices behind a name record
        different fields, :class:`~collapse.credentials.Refused` when Elasticsearch refuses
        the read."""
        return {name: _fields(name, await self._meta(name, headers)) for name in set(indices)}

    async def probes(
        self, index: str | None, headers: Mapping[str, str] | None = None
    ) -> frozenset[str]:
        """The probe schemes of the indices ``index`` names (None: all), for the keys a probe
        sends. Every scheme when their mappings cannot be read (a user allowed to search but
        not to view metadata): keys of an unused scheme only match nothing."""
        try:
            entries = await self._meta(index or "_all", headers)
        except ProxyError:
            return frozenset(PROBES)
        return _schemes(entries)

    def cached_probes(self, index: str | None) -> frozenset[str] | None:
        """What :meth:`probes` answers while its read is cached and fresh (no round trip, no
        task to schedule), else None."""
        entry = self._entries.get(index or "_all")
        if entry is None or entry[0] < time.monotonic():
            return None
        return _schemes(entry[1])

    async def _meta(self, name: str, headers: Mapping[str, str] | None) -> _Entries:
        now = time.monotonic()
        entry = self._entries.get(name)
        if entry is None or entry[0] < now:
            entries = await self._load(name, headers or {})
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            entry = self._entries[name] = (now + self.ttl, entries)
        return entry[1]

    async def _load(self, index: str, headers: Mapping[str, str]) -> _Entries:
        answer = await self.upstream.request(
            "GET",
            f"/{quote(index, safe=',*')}/_mapping",
            # every index with fingerprint fields, recording an entry or not (then: defaults)
            params={
                "filter_path": f"*.mappings._meta.{META_KEY},"
                f"*.mappings.properties.{FINGERPRINT_FIELD}.dynamic"
            },
            headers={**headers, "accept": "application/json"},
        )
        if answer.status_code == 404:
            return []  # created by this write, with the defaults
        if is_refusal(answer):
            raise Refused(answer)
        if answer.status_code >= 300:
            raise UpstreamUnavailable(
                f"could not read the mappings of {index!r} "
                f"(Elasticsearch answered {answer.status_code})"
            )
        body = jsonio.loads(answer.content) if answer.content.strip() else {}
        out: _Entries = []
        for concrete in body.values() if isinstance(body, dict) else ():
            entry = concrete.get("mappings", {}).get("_meta", {}).get(META_KEY, {})
            out.append(entry if isinstance(entry, dict) else {})
        return out


def _schemes(entries: _Entries) -> frozenset[str]:
    return frozenset(probe_in({META_KEY: e}) for e in entries) or frozenset(PROBES[:1])


def _fields(index: str, entries: _Entries) -> TextFields:
    """The one set of text fields the indices behind ``index`` record (BadRequest if several)."""
    found: set[TextFields] = set()
    for entry in entries:
        found.add(TextFields.recorded(entry) or DEFAULT_TEXT_FIELDS)
    if len(found) > 1:
        raise BadRequest(
            f"the indices behind {index!r} record different text fields ("
            + "; ".join(sorted(f.tag for f in found))
            + "): write to one index at a time"
        )
    return found.pop() if found else DEFAULT_TEXT_FIELDS
