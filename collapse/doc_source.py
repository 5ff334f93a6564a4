"""``collapse_fp`` kept out of documents read by id (``_doc``, ``_source``, ``_mget``).

Searches through the proxy hide the fingerprint (``collapse.source``); documents read by id
hide it the same way, by asking Elasticsearch to exclude it, so the answer's bytes stay
Elasticsearch's own. A request that names ``collapse_fp`` in its includes gets it.
"""

from __future__ import annotations

from typing import Any

from collapse.source import SOURCE_PARAMS
from indexer.hits import FINGERPRINT_FIELD

__all__ = ["hiding_doc_source", "hiding_params"]


def _patterns(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, list):
        return [str(p) for p in value]
    return []


def _names_fp(patterns: list[str]) -> bool:
    return any(p == FINGERPRINT_FIELD or p.startswith(FINGERPRINT_FIELD + ".") for p in patterns)


def hiding_params(params: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The query string of a get or ``_mget`` with ``collapse_fp`` excluded from ``_source``;
    unchanged when the request names it in ``_source`` or ``_source_includes``, turns
    ``_source`` off, or asks for ``stored_fields`` only (an exclusion would bring ``_source``
    back there)."""
    names = {k for k, _ in params}
    if "stored_fields" in names and not names & set(SOURCE_PARAMS):
        return params
    for k, v in params:
        if k == "_source" and v.strip().lower() == "false":
            return params
        if k in ("_source", "_source_includes") and _names_fp(_patterns(v)):
            return params
    if "_source_excludes" not in names:
        return [*params, ("_source_excludes", FINGERPRINT_FIELD)]
    last = max(i for i, (k, _) in enumerate(params) if k == "_source_excludes")
    out = list(params)
    out[last] = ("_source_excludes", f"{params[last][1]},{FINGERPRINT_FIELD}")
    return out


def hiding_doc_source(value: Any) -> Any:
    """One ``_mget`` doc's own ``_source`` (it replaces the query string's filtering for that
    doc) with ``collapse_fp`` excluded unless its includes name it."""
    if value is False or (isinstance(value, str) and value.strip().lower() == "false"):
        return value
    if value is True or (isinstance(value, str) and value.strip().lower() == "true"):
        return {"excludes": [FINGERPRINT_FIELD]}
    if isinstance(value, dict):
        includes = _patterns(value.get("includes", value.get("include")))
        excludes = _patterns(value.get("excludes", value.get("exclude")))
    else:
        includes, excludes = _patterns(value), []
    if _names_fp(includes):
        return value
    out: dict[str, Any] = {"excludes": [*excludes, FINGERPRINT_FIELD]}
    if includes:
        out["includes"] = includes
    return out
