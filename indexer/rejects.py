"""The rejects file: one JSON line per document not indexed, with why and the original."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import IO

from pydantic import BaseModel

__all__ = ["Reject", "RejectsFile"]


class Reject(BaseModel):
    """A document that was not indexed. ``original`` is the input as text; when the input is
    not valid UTF-8, ``original_base64`` holds its exact bytes instead."""

    seq: int
    source: str
    line: int | None = None
    id: str | None = None
    reason: str
    original: str | None = None
    original_base64: str | None = None

    @classmethod
    def of(
        cls,
        seq: int,
        source: str,
        line: int | None,
        reason: str,
        data: bytes | str | None,
        id: str | None = None,
    ) -> Reject:
        """A reject keeping ``data`` losslessly (text if it decodes, else base64)."""
        if isinstance(data, bytes):
            try:
                return cls(
                    seq=seq,
                    source=source,
                    line=line,
                    id=id,
                    reason=reason,
                    original=data.decode("utf-8"),
                )
            except UnicodeDecodeError:
                b64 = base64.b64encode(data).decode("ascii")
                return cls(
                    seq=seq, source=source, line=line, id=id, reason=reason, original_base64=b64
                )
        return cls(seq=seq, source=source, line=line, id=id, reason=reason, original=data)


class RejectsFile:
    """Appends rejects as JSON Lines, flushed at every checkpoint (``flush``)."""

    def __init__(self, path: Path, *, append: bool) -> None:
        self.path = path
        self.count = 0
        self._fh: IO[str] | None = None
        self._mode = "a" if append else "w"

    def write(self, reject: Reject) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open(self._mode, encoding="utf-8")
        self._fh.write(
            json.dumps(reject.model_dump(exclude_none=True, exclude={"seq"}), ensure_ascii=False)
            + "\n"
        )
        self.count += 1

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
