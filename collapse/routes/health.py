"""``/health`` (the process is up), ``/ready`` (Elasticsearch answers and has fingerprints), and
``/metrics`` (Prometheus text).

``/ready`` is ready when Elasticsearch answers and the fingerprint field ``collapse_fp`` is
mapped: on every index named by the ``ready_indices`` setting, or, when that is empty, on at
least one index. Otherwise 503 in Elasticsearch's error shape, with the reason.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from collapse.errors import ProxyError, UpstreamUnavailable
from collapse.metrics import exposition
from collapse.settings import Settings
from collapse.upstream import Upstream
from indexer.hits import FINGERPRINT_FIELD

__all__ = ["NotReady", "health", "metrics", "ready", "router"]

router = APIRouter(tags=["operations"])


class NotReady(UpstreamUnavailable):
    error_type = "not_ready"


@router.get("/health", summary="The proxy process is up")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/ready", summary="Elasticsearch answers and the fingerprint mapping is present")
async def ready(request: Request) -> Any:
    upstream: Upstream = request.app.state.upstream
    settings: Settings = request.app.state.settings
    indices = ",".join(settings.ready_indices) or "_all"
    try:
        answer = await upstream.request(
            "GET",
            f"/{indices}/_mapping/field/{FINGERPRINT_FIELD}*",
            params={"ignore_unavailable": "false", "allow_no_indices": "true"},
        )
    except ProxyError as exc:
        return NotReady(f"Elasticsearch is not reachable: {exc.reason}").response()
    # Elasticsearch answers 404 with ``{}`` when no index maps the field.
    found = answer.json() if answer.status_code in (200, 404) else {}
    if answer.status_code != 200 and (not isinstance(found, dict) or "error" in found):
        return NotReady(
            f"Elasticsearch answered {answer.status_code} for the mapping of {indices}",
            upstream_status=answer.status_code,
        ).response()
    mapped = sorted(
        name for name, body in found.items() if _has_fingerprint(body.get("mappings", {}))
    )
    if settings.ready_indices:
        missing = sorted(set(settings.ready_indices) - set(mapped))
        if missing:
            return NotReady(
                f"no {FINGERPRINT_FIELD} mapping on {', '.join(missing)}", missing=missing
            ).response()
    elif not mapped:
        return NotReady(f"no index has the {FINGERPRINT_FIELD} mapping").response()
    return {"status": "ready", "indices_with_fingerprints": mapped}


def _has_fingerprint(mappings: dict[str, Any]) -> bool:
    return any(
        name == FINGERPRINT_FIELD or name.startswith(FINGERPRINT_FIELD + ".") for name in mappings
    )


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics() -> Response:
    body, content_type = exposition()
    return Response(content=body, media_type=content_type)
