"""Resume state of an ingestion: the inputs, and how many of their documents are settled.

``done`` is a watermark over the global input sequence: every document numbered below it
was acknowledged by Elasticsearch or written to the rejects file. ``--resume`` skips them;
documents after the watermark may have been sent before the kill and are sent again under
the same stable id, so the index still holds each document exactly once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from indexer.sources import InputSpec

__all__ = ["Checkpoint", "ResumeMismatch", "SeqWatermark", "StateInUse", "StateNotAFile", "held"]


class ResumeMismatch(Exception):
    """The inputs changed since the interrupted run; resuming would skip the wrong documents."""


class StateInUse(Exception):
    """Another running ingestion holds this state file (parallel runs need one each)."""


class StateNotAFile(Exception):
    """The state path names something else than a file (``/dev/null``, a folder): the run
    replaces and removes its state file, which would replace and remove that."""


_LOCK_WAIT_SECONDS = 5.0


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the state file ``path`` for one run: an exclusive lock on ``<path>.lock``, removed
    at the end; :class:`StateInUse` when another run holds it. Two runs sharing a state file
    (and a rejects file) would overwrite each other's."""
    if path.exists() and not path.is_file():
        raise StateNotAFile(
            f"the state file {path} exists and is not a regular file: the run replaces and "
            "then removes its state file; name a file (or leave --state out)"
        )
    lock = path.with_name(path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    # a run that was just killed may hold it a moment longer (its worker processes, which
    # share the lock, are still exiting): wait a little before calling it another run's
    deadline = time.monotonic() + _LOCK_WAIT_SECONDS
    while True:
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            raise StateInUse(
                f"another `indexer ingest` is using the state file {path} (and likely the same "
                "rejects file): give each parallel ingester its own --state and --rejects, or "
                "run each in its own folder"
            ) from None
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed the lock file meanwhile: take the new one
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
        os.close(fd)


class Checkpoint(BaseModel):
    """What is written to the state file after each acknowledged bulk chunk."""

    index: str
    inputs: list[InputSpec]
    done: int = 0
    finished: bool = False

    @classmethod
    def load(cls, path: Path) -> Checkpoint | None:
        if not path.exists():
            return None
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def save(self, path: Path) -> None:
        """Write atomically (temp file + rename), so a kill never leaves half a state."""
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(self.model_dump_json(), encoding="utf-8")
        os.replace(tmp, path)

    def check_resumable(self, index: str, inputs: list[InputSpec]) -> None:
        if self.index != index or self.inputs != inputs:
            raise ResumeMismatch(
                "the inputs or index differ from the interrupted run's (files changed, added or "
                "reordered); run without --resume to ingest from the start (ids are stable, so "
                "documents already indexed are overwritten, not duplicated)"
            )


class SeqWatermark:
    """Lowest sequence number not yet settled, from settlements arriving in any order."""

    def __init__(self, start: int) -> None:
        self.value = start
        self._ahead: set[int] = set()

    def settle_many(self, seqs: list[int]) -> None:
        """:meth:`settle` each of ``seqs`` (ascending); a run from the watermark in one step."""
        if seqs and seqs[0] == self.value and seqs[-1] - seqs[0] == len(seqs) - 1:
            self.value = seqs[-1] + 1
            while self.value in self._ahead:
                self._ahead.remove(self.value)
                self.value += 1
            return
        for seq in seqs:
            self.settle(seq)

    def settle(self, seq: int) -> None:
        if seq != self.value:
            self._ahead.add(seq)
            return
        self.value += 1
        while self.value in self._ahead:
            self._ahead.remove(self.value)
            self.value += 1
