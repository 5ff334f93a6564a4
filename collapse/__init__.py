"""Query-time near-duplicate collapsing: an Elasticsearch-compatible proxy."""

from collapse.settings import Settings

__all__ = ["Settings"]
