"""Input readers: JSON Lines files (or ``-`` for stdin) and folders of ``.html`` files.

Readers only split input into raw items, numbered in one sequence across all inputs, and
keep where each came from (file and line): parsing and validation happen in the workers
(``indexer.prepare``), so that a bad line becomes a reject, not a crash.
"""

from __future__ import annotations

import os
import sys
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from pydantic import BaseModel

__all__ = [
    "HTML_SUFFIXES",
    "InputSpec",
    "RawBatch",
    "RawItem",
    "describe_inputs",
    "read_items",
    "read_rows",
    "take",
]

HTML_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True, slots=True)
class RawItem:
    """One unparsed input document: bytes, where it came from, and its sequence number.

    A plain dataclass, not a pydantic model: one is made per input line and pickled to a
    worker, and its fields are set only by the readers below.
    """

    seq: int
    source: str
    line: int | None  # 1-based line for JSON Lines, None for an .html file
    kind: str  # "jsonl" | "html"
    data: bytes

    def __reduce__(self) -> tuple[type[RawItem], tuple[int, str, int | None, str, bytes]]:
        # pickled as a plain tuple: the dataclass default for slots goes through Python-level
        # __getstate__/__setstate__ (~5 us per item, both ways, on the main process's path)
        return RawItem, (self.seq, self.source, self.line, self.kind, self.data)


class InputSpec(BaseModel):
    """An input as seen at start (for --resume: the same inputs must come back unchanged)."""

    path: str
    size: int
    mtime_ns: int


def _html_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in HTML_SUFFIXES and p.is_file())


def describe_inputs(paths: Sequence[str]) -> list[InputSpec]:
    """Size and mtime of every file the inputs expand to (stdin is not resumable: size -1)."""
    specs: list[InputSpec] = []
    for raw in paths:
        if raw == "-":
            specs.append(InputSpec(path="-", size=-1, mtime_ns=0))
            continue
        path = Path(raw)
        files = _html_files(path) if path.is_dir() else [path]
        for f in files:
            st = f.stat()
            specs.append(InputSpec(path=str(f.resolve()), size=st.st_size, mtime_ns=st.st_mtime_ns))
    return specs


def _lines(stream: Iterable[bytes], source: str, start: int) -> Iterator[RawItem]:
    seq = start
    for number, line in enumerate(stream, start=1):
        data = line.rstrip(b"\r\n")
        if not data.strip():
            continue  # blank lines are not documents
        yield RawItem(seq, source, number, "jsonl", data)
        seq += 1


def read_items(paths: Sequence[str]) -> Iterator[RawItem]:
    """Every input document in order: JSONL lines, then .html files of folders (sorted)."""
    seq = 0
    for raw in paths:
        if raw == "-":
            for item in _lines(sys.stdin.buffer, "<stdin>", seq):
                seq = item.seq + 1
                yield item
            continue
        path = Path(raw)
        if path.is_dir():
            for f in _html_files(path):
                yield RawItem(seq, os.fspath(f), None, "html", f.read_bytes())
                seq += 1
            continue
        with path.open("rb") as stream:
            for item in _lines(stream, os.fspath(path), seq):
                seq = item.seq + 1
                yield item


Row = tuple[int, str, int | None, str, bytes]  # RawItem's fields, as a plain tuple


def read_rows(paths: Sequence[str]) -> Iterator[Row]:
    """:func:`read_items` as plain tuples (no object per document on the reading side)."""
    seq = 0
    for raw in paths:
        if raw == "-":
            stream, source = sys.stdin.buffer, "<stdin>"
        else:
            path = Path(raw)
            if path.is_dir():
                for f in _html_files(path):
                    yield seq, os.fspath(f), None, "html", f.read_bytes()
                    seq += 1
                continue
            stream, source = path.open("rb"), os.fspath(path)
        try:
            for number, line in enumerate(stream, start=1):
                data = line.rstrip(b"\r\n")
                if not data.strip():
                    continue  # blank lines are not documents
                yield seq, source, number, "jsonl", data
                seq += 1
        finally:
            if raw != "-":
                stream.close()


@dataclass(slots=True)
class RawBatch:
    """Raw items in input order as parallel lists: what the main process hands to a worker
    (consecutive items, or some of them: :meth:`subset`)."""

    seqs: list[int]
    sources: list[str]
    lines: list[int | None]
    kinds: list[str]
    datas: list[bytes]

    def __reduce__(self) -> tuple[type[RawBatch], tuple[list, list, list, list, list]]:
        return RawBatch, (self.seqs, self.sources, self.lines, self.kinds, self.datas)

    def __len__(self) -> int:
        return len(self.seqs)

    def items(self) -> list[RawItem]:
        return [
            RawItem(*row)
            for row in zip(self.seqs, self.sources, self.lines, self.kinds, self.datas, strict=True)
        ]

    def since(self, start: int) -> RawBatch:
        """The items numbered ``start`` or more."""
        if not self.seqs or self.seqs[0] >= start:
            return self
        i = next((i for i, s in enumerate(self.seqs) if s >= start), len(self.seqs))
        return RawBatch(
            self.seqs[i:], self.sources[i:], self.lines[i:], self.kinds[i:], self.datas[i:]
        )

    def find(self, seq: int) -> RawItem | None:
        """The item numbered ``seq``, if the batch holds it."""
        if not self.seqs or not self.seqs[0] <= seq <= self.seqs[-1]:
            return None
        i = seq - self.seqs[0]
        if self.seqs[i if i < len(self.seqs) else -1] != seq:  # not consecutive: a subset
            i = bisect_left(self.seqs, seq)
            if self.seqs[i] != seq:
                return None
        return RawItem(self.seqs[i], self.sources[i], self.lines[i], self.kinds[i], self.datas[i])

    def subset(self, indices: Sequence[int]) -> RawBatch:
        """The items at ``indices`` (increasing positions in this batch)."""
        return RawBatch(
            [self.seqs[i] for i in indices],
            [self.sources[i] for i in indices],
            [self.lines[i] for i in indices],
            [self.kinds[i] for i in indices],
            [self.datas[i] for i in indices],
        )

    def rows(self) -> Iterator[Row]:
        """The items as rows again (what :func:`take` reads)."""
        return zip(self.seqs, self.sources, self.lines, self.kinds, self.datas, strict=True)


def take(rows: Iterator[Row], n: int) -> RawBatch | None:
    """The next ``n`` rows (fewer at the end) as a batch; None when there are none left."""
    got = list(islice(rows, n))
    if not got:
        return None
    seqs, sources, lines, kinds, datas = map(list, zip(*got, strict=True))
    return RawBatch(seqs, sources, lines, kinds, datas)
