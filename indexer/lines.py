"""Bulk NDJSON lines, as the workers build them and the bulk path sends them.

Light on purpose (orjson only): ``indexer.prepare`` builds these and is shared with the
proxy's write path, which must not import the Elasticsearch client (``indexer.bulk``).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

__all__ = ["LineBatch", "action_line"]


def action_line(doc_id: str, body: bytes) -> bytes:
    """The NDJSON of one document: its ``index`` action line and its ``_source`` line."""
    return b'{"index":{"_id":' + orjson.dumps(doc_id) + b"}}\n" + body + b"\n"


@dataclass(slots=True)
class LineBatch:
    """Documents ready to send, as parallel lists: sequence numbers, ids, NDJSON lines."""

    seqs: list[int]
    ids: list[str]
    lines: list[bytes]

    def __reduce__(self) -> tuple[type[LineBatch], tuple[list[int], list[str], list[bytes]]]:
        return LineBatch, (self.seqs, self.ids, self.lines)  # three lists: cheap to pickle

    def __len__(self) -> int:
        return len(self.seqs)
