"""Per-request collapsing controls, read from the query string so the body stays Elasticsearch's.

``collapse``, ``collapse_max_distance``, ``collapse_min_similarity``, ``collapse_window``,
``collapse_members``, ``collapse_explain``, ``collapse_total``; defaults come from
:class:`~collapse.settings.Settings`. Any invalid value is a 400 in Elasticsearch's error shape.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from collapse.errors import BadRequest
from collapse.settings import Settings

__all__ = [
    "CONTROL_NAMES",
    "CollapseParams",
    "collapse_disabled",
    "int_or_none",
    "other_format",
    "pretty",
]

CONTROL_NAMES = frozenset(
    {
        "collapse",
        "collapse_max_distance",
        "collapse_min_similarity",
        "collapse_window",
        "collapse_members",
        "collapse_explain",
        "collapse_total",
    }
)


class CollapseParams(BaseModel):
    """How one request is collapsed.

    ``max_distance`` may go up to 64: inside the window every pair is compared, so grouping
    there is exact at any distance; the probe beyond the window finds only copies that share a
    probe key (``indexer.hits``: a band, or a block, guaranteed only within 3 bits), so counts
    beyond the window are approximate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    max_distance: int = Field(ge=0, le=64)
    min_similarity: float = Field(ge=0.0, le=1.0)
    window: int | None = Field(None, ge=1, le=10_000)
    members: int = Field(ge=0, le=1000)
    explain: bool = False
    total: bool = False

    @classmethod
    def from_query(cls, query: Mapping[str, str], settings: Settings) -> CollapseParams:
        """Controls from the query string over the settings' defaults (BadRequest if invalid)."""
        if not query:  # most searches: the settings' defaults, validated once per settings
            cached = _DEFAULTS.get(id(settings))
            if cached is not None and cached[0] is settings:
                return cached[1]
            made = cls._from_query(query, settings)
            _DEFAULTS.clear()
            _DEFAULTS[id(settings)] = (settings, made)
            return made
        return cls._from_query(query, settings)

    @classmethod
    def _from_query(cls, query: Mapping[str, str], settings: Settings) -> CollapseParams:
        unknown = sorted(k for k in query if k.startswith("collapse") and k not in CONTROL_NAMES)
        if unknown:
            raise BadRequest(
                f"request contains unrecognized parameter: [{unknown[0]}]",
                valid=sorted(CONTROL_NAMES),
            )
        raw: dict[str, object] = {
            "enabled": _flag(query, "collapse", settings.collapse_enabled),
            "max_distance": query.get("collapse_max_distance", settings.collapse_max_distance),
            "min_similarity": query.get(
                "collapse_min_similarity", settings.collapse_min_similarity
            ),
            "window": query.get("collapse_window"),
            "members": query.get("collapse_members", settings.collapse_members),
            "explain": _flag(query, "collapse_explain", False),
            "total": _flag(query, "collapse_total", False),
        }
        window = int_or_none(raw["window"]) if raw["window"] is not None else None
        if window is not None and window > settings.collapse_max_window:
            raise BadRequest(
                f"collapse_window must be at most {settings.collapse_max_window} "
                "(COLLAPSE_MAX_WINDOW)"
            )
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = _QUERY_NAME.get(str(first["loc"][0]), str(first["loc"][0]))
            raise BadRequest(
                f"invalid value [{first.get('input')}] for [{name}]: {first['msg']}"
            ) from exc


#: The defaults of the last settings asked (by ``id``, the settings kept to check it).
_DEFAULTS: dict[int, tuple[Settings, CollapseParams]] = {}

_QUERY_NAME = {
    "enabled": "collapse",
    "max_distance": "collapse_max_distance",
    "min_similarity": "collapse_min_similarity",
    "window": "collapse_window",
    "members": "collapse_members",
    "explain": "collapse_explain",
    "total": "collapse_total",
}


def int_or_none(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _flag(query: Mapping[str, str], name: str, default: bool) -> bool:
    """Elasticsearch's boolean parameters: ``true``/``false``, and a bare ``?name`` is true."""
    if name not in query:
        return default
    value = query[name].strip().lower()
    if value in ("", "true"):
        return True
    if value == "false":
        return False
    raise BadRequest(
        f"Failed to parse value [{query[name]}] as only [true] or [false] are allowed "
        f"(parameter [{name}])"
    )


def collapse_disabled(query: Mapping[str, str]) -> bool:
    """Cheap check for ``collapse=false`` before any other work (the pass-through path)."""
    return query.get("collapse", "").strip().lower() == "false"


#: The media types of Elasticsearch's other answer formats (``format=`` or ``Accept``).
_OTHER_FORMATS = ("yaml", "smile", "cbor")


def other_format(fmt: str | None, accept: str | None) -> bool:
    """Whether a search asks for an answer in another format than JSON (``format=yaml``,
    ``Accept: application/yaml``, SMILE, CBOR): the proxy reads and writes JSON, so such a
    search is forwarded uncollapsed, Elasticsearch's own answer."""
    if fmt is not None and fmt.strip().lower() not in ("", "json"):
        return True
    return accept is not None and any(kind in accept.lower() for kind in _OTHER_FORMATS)


def pretty(query: Mapping[str, str]) -> bool:
    """Elasticsearch's ``?pretty``: the answer indented (a bare ``?pretty`` too)."""
    value = query.get("pretty")
    return value is not None and value.strip().lower() != "false"
