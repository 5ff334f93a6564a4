"""The text fields each index records (``indexer init --text-field``), read by the proxy.

Writers and lookups through the proxy fingerprint the fields the index records in its
mapping's ``_meta`` (``indexer.mapping.META_KEY``), the same fields ``indexer ingest`` and
``indexer backfill`` read; an index recording none, or not existing yet, is read with the
defaults. Answers are cached per index name for ``ttl`` seconds: a change made by ``init``
reaches the proxy within that time, and the documents written meanwhile carry the old fields
in ``collapse_fp.fields``, so the next ``indexer backfill`` redoes them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from urllib.parse import quote

from collapse import jsonio
from collapse.credentials import Refused, is_refusal
from collapse.errors import BadRequest, UpstreamUnavailable
from collapse.upstream import Upstream
from indexer.documents import DEFAULT_TEXT_FIELDS, TextFields
from indexer.mapping import META_KEY

__all__ = ["IndexFields"]


class IndexFields:
    """Per index name, the :class:`~indexer.documents.TextFields` it records (cached)."""

    def __init__(self, upstream: Upstream, ttl: float = 60.0, max_entries: int = 10_000) -> None:
        self.upstream = upstream
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: dict[str, tuple[float, TextFields]] = {}

    async def get(
        self, indices: Iterable[str], headers: Mapping[str, str] | None = None
    ) -> dict[str, TextFields]:
        """The fields of each named index (``headers``: the client's credentials)."""
        now = time.monotonic()
        out: dict[str, TextFields] = {}
        for name in set(indices):
            entry = self._entries.get(name)
            if entry is None or entry[0] < now:
                fields = await self._load(name, headers or {})
                if len(self._entries) >= self.max_entries:
                    self._entries.clear()
                entry = self._entries[name] = (now + self.ttl, fields)
            out[name] = entry[1]
        return out

    async def _load(self, index: str, headers: Mapping[str, str]) -> TextFields:
        answer = await self.upstream.request(
            "GET",
            f"/{quote(index, safe=',*')}/_mapping",
            params={"filter_path": f"*.mappings._meta.{META_KEY}"},
            headers={**headers, "accept": "application/json"},
        )
        if answer.status_code == 404:
            return DEFAULT_TEXT_FIELDS  # created by this write, with the defaults
        if is_refusal(answer):
            raise Refused(answer)
        if answer.status_code >= 300:
            raise UpstreamUnavailable(
                f"could not read the text fields of {index!r} "
                f"(Elasticsearch answered {answer.status_code})"
            )
        body = jsonio.loads(answer.content) if answer.content.strip() else {}
        found: set[TextFields] = set()
        for concrete in body.values() if isinstance(body, dict) else ():
            entry = concrete.get("mappings", {}).get("_meta", {}).get(META_KEY, {})
            names = entry.get("text_fields") if isinstance(entry, dict) else None
            try:
                found.add(TextFields.of(names) if isinstance(names, list) else DEFAULT_TEXT_FIELDS)
            except ValueError:
                found.add(DEFAULT_TEXT_FIELDS)
        if len(found) > 1:
            raise BadRequest(
                f"the indices behind {index!r} record different text fields ("
                + "; ".join(sorted(f.tag for f in found))
                + "): write to one index at a time"
            )
        return found.pop() if found else DEFAULT_TEXT_FIELDS
