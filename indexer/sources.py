"""Input readers: JSON Lines files (or ``-`` for stdin) and folders of ``.html`` files and
JSON Lines shards.

Readers only split input into raw items, numbered in one sequence across all inputs, and
keep where each came from (file and line): parsing and validation happen in the workers
(``indexer.prepare``), so that a bad line becomes a reject, not a crash.

A file that is one JSON array of documents (an export) is read as its elements. JSON Lines
come plain or compressed (gzip, bzip2, xz; zstd with the ``zstandard`` package),
told by their first bytes, not their name: dumps are shipped compressed, and a compressed
file read as lines would be rejected line by line. What cannot be read on (a compressed
stream that ends early or is damaged, zstd without its package) becomes one item of kind
:data:`UNREADABLE` after the lines read before it: a reject naming the file, the line and
why, so that the rest of the run goes on and nothing read is lost.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import sys
import zlib
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any, cast

import orjson
from pydantic import BaseModel

__all__ = [
    "HTML_SUFFIXES",
    "UNREADABLE",
    "InputSpec",
    "RawBatch",
    "RawItem",
    "describe_inputs",
    "open_lines",
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


#: The kind of the item that stands for the unreadable rest of an input (its data: why).
UNREADABLE = "unreadable"

#: The first bytes of each compressed format, and its name.
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark
#: What a damaged or cut compressed stream raises while it is read.
_STREAM_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


class _NoDecoder(Exception):
    pass


def _compression(head: bytes) -> str | None:
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def open_lines(stream: IO[bytes]) -> Iterable[bytes]:
    """The lines of ``stream`` (a buffered binary stream: a file opened ``"rb"``, stdin's
    buffer): itself, or decompressed when it starts with a gzip, bzip2, xz or zstd header."""
    buffered = cast(io.BufferedReader, stream)
    kind = _compression(buffered.peek(6)[:6])
    if kind is None:
        return buffered
    if kind == "gzip":
        return cast(IO[bytes], gzip.GzipFile(fileobj=buffered))  # members one after another
    if kind == "bzip2":
        return bz2.BZ2File(buffered)
    if kind == "xz":
        return lzma.LZMAFile(buffered)
    try:
        import zstandard
    except ImportError:
        raise _NoDecoder(
            "zstd-compressed: install the zstandard package (pip install zstandard), or "
            "decompress it (zstd -dc FILE | python -m indexer ingest ... -)"
        ) from None
    reader = zstandard.ZstdDecompressor().stream_reader(buffered, read_across_frames=True)
    return io.BufferedReader(reader)


def _jsonl_rows(stream: IO[bytes], source: str, seq: int) -> Iterator[Row]:
    """The rows of a JSON Lines stream numbered from ``seq`` (blank lines skipped); an
    :data:`UNREADABLE` row last when it cannot be read to its end. A stream whose first
    non-blank byte opens a JSON array is read as one (:func:`_array_rows`)."""
    number = 0
    first = True
    try:
        lines = enumerate(open_lines(stream), start=1)
        for number, line in lines:
            data = line.rstrip(b"\r\n")
            if number == 1 and data.startswith(_BOM):
                data = data[len(_BOM) :]  # a byte order mark a Windows tool wrote (RFC 8259 §8.1)
            if not data.strip():
                continue  # blank lines are not documents
            if first:
                first = False
                if data.lstrip().startswith(b"["):
                    yield from _array_rows(number, data, lines, source, seq)
                    return
            yield seq, source, number, "jsonl", data
            seq += 1
    except _NoDecoder as exc:
        yield seq, source, None, UNREADABLE, f"input not read: {exc}".encode()
    except _STREAM_ERRORS as exc:
        why = (
            f"input read up to line {number} only: its compressed data is damaged or cut "
            f"there ({type(exc).__name__}: {exc}); the lines before it were read"
        )
        yield seq, source, number + 1, UNREADABLE, why.encode()


#: The largest JSON array read whole (bytes); a larger one is one reject saying how to convert it.
ARRAY_LIMIT = 1 << 30


def _array_rows(
    number: int, data: bytes, lines: Iterator[tuple[int, bytes]], source: str, seq: int
) -> Iterator[Row]:
    """A file that is one JSON array of documents (an export: ``mongoexport --jsonArray``,
    ``json_agg``): one row per element, its ``line`` the element's position (1-based). When
    the file does not parse as one array, its lines are JSON Lines after all, each judged on
    its own."""
    collected = [(number, data)]
    size = len(data)
    for n, line in lines:
        collected.append((n, line.rstrip(b"\r\n")))
        size += len(line)
        if size > ARRAY_LIMIT:
            why = (
                f"a JSON array over {ARRAY_LIMIT >> 20} MiB, not read: convert it to JSON "
                "Lines, one document a line (jq -c '.[]' FILE)"
            )
            yield seq, source, number, UNREADABLE, why.encode()
            return
    whole = b"\n".join(d for _, d in collected)
    items: Any = None
    try:
        items = orjson.loads(whole)
    except orjson.JSONDecodeError:
        with contextlib.suppress(ValueError):  # what orjson refuses: NaN, integers over 64 bits
            items = json.loads(whole)
    if isinstance(items, list):
        for position, item in enumerate(items, start=1):
            try:
                raw = orjson.dumps(item)
            except (orjson.JSONEncodeError, TypeError):
                raw = json.dumps(item, ensure_ascii=False).encode("utf-8", "surrogatepass")
            yield seq, source, position, "jsonl", raw
            seq += 1
        return
    for n, d in collected:
        if d.strip():
            yield seq, source, n, "jsonl", d
            seq += 1


#: The names of JSON Lines files in a folder (each also compressed: ``.jsonl.gz``, ...).
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
_COMPRESSED_SUFFIXES = ("", ".gz", ".bz2", ".xz", ".zst")
_JSONL_NAMES = tuple(j + c for j in JSONL_SUFFIXES for c in _COMPRESSED_SUFFIXES)


class EmptyFolder(ValueError):
    """A folder given as an input holds no file the readers take."""


def _folder_files(folder: Path) -> list[tuple[Path, str]]:
    """The files of ``folder`` (and its subfolders) the readers take, sorted by path, with
    their kind: ``.html``/``.htm`` pages, and JSON Lines (or JSON array) files by their
    names (a dump's shards: ``part-00000.json.gz``); other files (``_SUCCESS``, READMEs) are
    left out."""
    out = []
    for p in sorted(folder.rglob("*")):
        name = p.name.lower()
        if p.suffix.lower() in HTML_SUFFIXES:
            kind = "html"
        elif name.endswith(_JSONL_NAMES):
            kind = "jsonl"
        else:
            continue
        if p.is_file():
            out.append((p, kind))
    return out


def describe_inputs(paths: Sequence[str]) -> list[InputSpec]:
    """Size and mtime of every file the inputs expand to (stdin is not resumable: size -1)."""
    specs: list[InputSpec] = []
    for raw in paths:
        if raw == "-":
            specs.append(InputSpec(path="-", size=-1, mtime_ns=0))
            continue
        path = Path(raw)
        files = [f for f, _ in _folder_files(path)] if path.is_dir() else [path]
        if path.is_dir() and not files:
            raise EmptyFolder(
                f"the folder {raw} holds no file to ingest: .html or .htm pages, or JSON Lines "
                f"named {', '.join(JSONL_SUFFIXES)} (also compressed: .gz, .bz2, .xz, .zst)"
            )
        for f in files:
            st = f.stat()
            specs.append(InputSpec(path=str(f.resolve()), size=st.st_size, mtime_ns=st.st_mtime_ns))
    return specs


def read_items(paths: Sequence[str]) -> Iterator[RawItem]:
    """Every input document in order: JSON Lines files, and the files of folders (sorted)."""
    return (RawItem(*row) for row in read_rows(paths))


Row = tuple[int, str, int | None, str, bytes]  # RawItem's fields, as a plain tuple


def read_rows(paths: Sequence[str]) -> Iterator[Row]:
    """Every input document in order as plain tuples (no object per document on the reading
    side): JSON Lines files, and the files of folders (sorted)."""
    seq = 0
    for raw in paths:
        if raw == "-":
            stream, source = sys.stdin.buffer, "<stdin>"
        else:
            path = Path(raw)
            if path.is_dir():
                for f, kind in _folder_files(path):
                    if kind == "html":
                        yield seq, os.fspath(f), None, "html", f.read_bytes()
                        seq += 1
                        continue
                    with f.open("rb") as shard:
                        for row in _jsonl_rows(shard, os.fspath(f), seq):
                            yield row
                            seq = row[0] + 1
                continue
            stream, source = path.open("rb"), os.fspath(path)
        try:
            for row in _jsonl_rows(stream, source, seq):
                yield row
                seq = row[0] + 1
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
