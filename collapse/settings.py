"""Settings of the collapsing proxy, from the environment and flags of ``python -m collapse``.

Every setting has an environment variable of the same name in upper case (``ES_URL``,
``COLLAPSE_MAX_DISTANCE``, ...). ``ES_URL`` takes one node or a comma-separated list.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from indexer.grouping import DEFAULT_THRESHOLDS

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """What the proxy needs to know; immutable once the app starts."""

    model_config = SettingsConfigDict(env_prefix="", frozen=True, extra="ignore")

    es_url: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["http://127.0.0.1:9200"],
        description="Elasticsearch node URLs, comma-separated in the environment.",
    )
    es_connect_timeout: float = Field(2.0, gt=0, description="Seconds to open a connection.")
    es_timeout: float = Field(30.0, gt=0, description="Seconds to wait for an answer.")
    es_max_connections: int = Field(100, ge=1, description="Pooled connections per process.")
    es_engine: Literal["auto", "elasticsearch", "opensearch"] = Field(
        "auto", description="The engine behind es_url; auto asks GET / once (indexer.engine)."
    )
    # Reliability, security and observability (issue 7).
    es_retries: int = Field(
        2, ge=0, le=5, description="Extra rounds over the nodes for reads that fail to connect."
    )
    es_retry_backoff: float = Field(
        0.1, ge=0, le=5, description="Base seconds of the jittered back-off between rounds."
    )
    max_body_bytes: int = Field(
        10 * 1024 * 1024, ge=1, description="Largest request body accepted (413 above)."
    )
    admin_passthrough: bool = Field(
        False, description="Forward requests outside the allowlist unchanged instead of 403."
    )
    compress_answers: bool = Field(
        True,
        description="Gzip collapsed answers of 1 KiB or more for clients that accept it, as "
        "Elasticsearch does (pass-through answers come compressed by Elasticsearch itself).",
    )
    collapse_log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        "info",
        description="Lowest level the proxy logs (access lines are info: 'warning' drops them).",
    )
    write_api_key: SecretStr | None = Field(
        None, description="Key that write endpoints require in X-API-Key; unset: writes answer 403."
    )
    # Write-path enrichment (issue 4): on when write_api_key is set; see docs/write-path.md.
    write_model_store: str = Field(
        "collapse-boilerplate", description="Index where the indexer stores boilerplate models."
    )
    write_map_fingerprints: bool = Field(
        True,
        description="Before writing to an index whose mapping lacks collapse_fp, add it (and "
        "create a missing index with it where Elasticsearch would auto-create it); false: "
        "never change a mapping (collapse.write_mapping).",
    )
    write_model_cache_seconds: float = Field(
        60.0,
        ge=0,
        description="Seconds a loaded (or absent) boilerplate model, and an index's recorded "
        "text fields, are reused.",
    )
    exposed_indices: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["*"],
        description="Index patterns the proxy serves, comma-separated (* the only wildcard); "
        "never the boilerplate model store, hidden or '.' indices unless named "
        "(collapse.exposure).",
    )
    exposure_cache_seconds: float = Field(
        5.0, ge=0, description="Seconds the cluster's index and alias names are reused."
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Origins allowed by CORS, comma-separated; none default."
    )
    ready_indices: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Indices /ready checks for the collapse_fp mapping; empty: any index will do.",
    )
    collapse_time_budget_ms: int = Field(
        1000, ge=1, description="Past this, collapsing gives up and answers degraded (uncollapsed)."
    )

    collapse_enabled: bool = Field(
        True, description="Collapse unless a request says collapse=false."
    )
    collapse_max_distance: int = Field(
        DEFAULT_THRESHOLDS.max_distance,
        ge=0,
        le=64,
        description="Largest SimHash Hamming distance of near-duplicates.",
    )
    collapse_min_similarity: float = Field(
        DEFAULT_THRESHOLDS.min_similarity,
        ge=0.0,
        le=1.0,
        description="Smallest MinHash similarity of near-duplicates.",
    )
    collapse_min_tokens: int = Field(
        DEFAULT_THRESHOLDS.min_tokens,
        ge=0,
        description="Documents with fewer words of content group by exact key only.",
    )
    collapse_window_factor: int = Field(
        3, ge=1, le=100, description="Window of ranked hits fetched: factor x (from + size)."
    )
    collapse_min_window: int = Field(30, ge=1, description="Smallest window fetched.")
    collapse_max_window: int = Field(
        1000, ge=1, le=10_000, description="Largest window, including fetches to fill a page."
    )
    collapse_refills: int = Field(
        2, ge=0, le=10, description="Further fetches when the window holds too few groups."
    )
    collapse_doc_values: bool = Field(
        True,
        description="Refills and the probe read hits from doc values, without _id or _source "
        "(indices whose collapse_fp.packed and collapse_fp.id have doc values); the page's "
        "representatives among refilled hits are fetched in full beside the probe.",
    )
    collapse_members: int = Field(5, ge=0, le=1000, description="Members listed per group.")
    collapse_probe_size: int = Field(
        30, ge=0, le=10_000, description="Candidates fetched per page beyond the window."
    )
    collapse_coalesce: int = Field(
        2,
        ge=0,
        le=64,
        description="Batches in flight per kind of search (windows; the proxy's own searches) "
        "before further searches of concurrent requests wait and travel together in one "
        "_msearch (0: every search alone). A lone request never waits.",
    )
    collapse_compiled: bool = Field(
        True,
        description="Decode fingerprints and group with compiled passes (numba, loaded at "
        "start-up) instead of numpy: the same answers, less CPU per search, more memory per "
        "worker.",
    )
    collapse_total_limit: int = Field(
        10_000, ge=1, le=10_000, description="collapse_total is exact up to this many hits."
    )
    collapse_cursor_reps: int = Field(
        200, ge=0, le=10_000, description="Earlier representatives a search_after cursor carries."
    )
    collapse_expand_size: int = Field(
        100, ge=1, le=10_000, description="Members the expander lists per page by default."
    )

    @field_validator("collapse_log_level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("es_url", mode="before")
    @classmethod
    def _split_urls(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list):
            if not value:
                raise ValueError("ES_URL names no node")
            return [str(url).rstrip("/") for url in value]
        return value

    @field_validator("cors_origins", "ready_indices", "exposed_indices", mode="before")
    @classmethod
    def _split_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("exposed_indices")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("EXPOSED_INDICES names no pattern (use * for every index)")
        for pattern in value:
            if pattern.startswith("-") or pattern.startswith("<") or "," in pattern:
                raise ValueError(
                    f"EXPOSED_INDICES: {pattern!r} is not an index pattern (names with * as "
                    "the wildcard; exclusions and date math are not supported)"
                )
        return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
