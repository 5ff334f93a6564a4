"""``_source`` filtering: ask Elasticsearch for ``collapse_fp`` too, strip it from the answer.

The user's filter may sit in the body (``_source``: bool, pattern, list, or includes/excludes)
or in the query string (``_source``, ``_source_includes``, ``_source_excludes``). It is moved
into the body, with ``collapse_fp`` added to the includes; the answer keeps ``collapse_fp`` only
when the request names it in its own includes, and drops ``_source`` when it asked for none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from indexer.hits import FINGERPRINT_FIELD

__all__ = ["SOURCE_PARAMS", "SourcePlan", "plan"]

SOURCE_PARAMS = ("_source", "_source_includes", "_source_excludes")


def _patterns(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, list):
        return [str(p) for p in value]
    return []


def _names_fp(pattern: str) -> bool:
    return pattern == FINGERPRINT_FIELD or pattern.startswith(FINGERPRINT_FIELD + ".")


@dataclass(frozen=True)
class SourcePlan:
    """The ``_source`` to send and how to trim the answer back to what the user asked."""

    send: Any  # the body's new ``_source`` (None: leave it out)
    keep_fp: bool
    drop_source: bool

    def strip(self, hit: dict[str, Any]) -> None:
        """Bring one hit back to the user's own ``_source`` filtering."""
        if self.drop_source:
            hit.pop("_source", None)
        elif not self.keep_fp:
            source = hit.get("_source")
            if isinstance(source, dict):
                source.pop(FINGERPRINT_FIELD, None)


def plan(body: dict[str, Any], query: dict[str, str]) -> SourcePlan:
    """Rewrite the request's filter so ``collapse_fp`` comes back (pops query-string forms)."""
    raw: Any = body.get("_source")
    if any(k in query for k in SOURCE_PARAMS):
        raw_q = query.pop("_source", None)
        includes = _patterns(query.pop("_source_includes", None))
        excludes = _patterns(query.pop("_source_excludes", None))
        if raw_q is not None and raw_q.lower() in ("true", "false", ""):
            raw = raw_q.lower() != "false"
        elif raw_q is not None:
            includes = _patterns(raw_q) + includes
        if includes or excludes:
            raw = {"includes": includes, "excludes": excludes}
    if raw is None or raw is True:
        return SourcePlan(send=None, keep_fp=False, drop_source=False)
    if raw is False:
        return SourcePlan(send={"includes": [FINGERPRINT_FIELD]}, keep_fp=False, drop_source=True)
    if isinstance(raw, dict):
        includes = _patterns(raw.get("includes", raw.get("include")))
        excludes = _patterns(raw.get("excludes", raw.get("exclude")))
    else:
        includes, excludes = _patterns(raw), []
    keep_fp = any(_names_fp(p) for p in includes)
    send: dict[str, Any] = {}
    if includes:
        send["includes"] = [*includes, FINGERPRINT_FIELD]
    kept_excludes = [p for p in excludes if not _names_fp(p) and p != "*"]
    if kept_excludes:
        send["excludes"] = kept_excludes
    if any(_names_fp(p) for p in excludes):
        keep_fp = False
    return SourcePlan(send=send or None, keep_fp=keep_fp, drop_source=False)
