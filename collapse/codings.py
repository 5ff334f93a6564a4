"""HTTP content codings: request bodies decoded (gzip, deflate), answers gzipped.

Decoding is bounded: output past a limit stops it (a small compressed body can expand a
thousandfold). Answers are compressed at Elasticsearch's own default level
(``http.compression_level``: 3), only for clients that accept gzip and only from
:data:`MIN_COMPRESSED` bytes, below which gzip's own header outweighs what it saves.
"""

from __future__ import annotations

import zlib

from collapse.errors import BadRequest, PayloadTooLarge, UnsupportedEncoding

__all__ = ["MIN_COMPRESSED", "accepts_gzip", "codings_of", "decode_body", "gzipped"]

#: Content codings decoded here (RFC 9110 §8.4.1; the ``x-`` forms are their old names).
_GZIP = frozenset({"gzip", "x-gzip"})
_DEFLATE = frozenset({"deflate", "x-deflate"})
_CHUNK = 1 << 16  # bytes of output decoded per step (the limit is checked between steps)


class _Undecodable(Exception):
    pass


class _TooLarge(Exception):
    pass


def codings_of(values: list[bytes]) -> list[str]:
    """The codings of every ``Content-Encoding`` header, in the order they were applied,
    ``identity`` dropped."""
    out: list[str] = []
    for value in values:
        for part in value.decode("latin-1").split(","):
            coding = part.strip().lower()
            if coding and coding != "identity":
                out.append(coding)
    return out


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    """``data`` decoded by zlib with ``wbits``, concatenated streams (gzip members) included,
    at most ``limit`` bytes of output."""
    out: list[bytes] = []
    size = 0
    while True:
        d = zlib.decompressobj(wbits)
        pending = data
        while True:
            chunk = d.decompress(pending, _CHUNK)
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            out.append(chunk)
            pending = d.unconsumed_tail
            if d.eof or not (pending or chunk):
                break
        if not d.eof:
            raise _Undecodable("the compressed body ends before its stream does")
        data = d.unused_data
        if not data:
            return b"".join(out)
        if wbits != 31:  # only gzip concatenates members
            raise _Undecodable("bytes follow the compressed stream")


def _deflate_wbits(data: bytes) -> int:
    """HTTP's ``deflate`` is a zlib stream (RFC 1950); some clients send the raw deflate data
    alone. A zlib header says which: compression method 8, and a multiple of 31."""
    if len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0:
        return 15
    return -15


def decode_body(body: bytes, codings: list[str], limit: int) -> bytes:
    """``body`` with ``codings`` (in the order they were applied) undone; at most ``limit``
    bytes. Raises :class:`~collapse.errors.BadRequest` for a body that does not decode,
    :class:`~collapse.errors.PayloadTooLarge` past the limit and
    :class:`~collapse.errors.UnsupportedEncoding` for a coding it does not know."""
    unknown = [c for c in codings if c not in _GZIP | _DEFLATE]
    if unknown:
        raise UnsupportedEncoding(
            f"request body in Content-Encoding [{', '.join(unknown)}]: the proxy decodes "
            "gzip and deflate only"
        )
    try:
        for coding in reversed(codings):
            wbits = 31 if coding in _GZIP else _deflate_wbits(body)
            body = _inflate(body, wbits, limit)
    except _TooLarge:
        raise PayloadTooLarge(
            f"request body decoded from [{', '.join(codings)}] is larger than the limit of "
            f"{limit} bytes (setting max_body_bytes)"
        ) from None
    except (zlib.error, _Undecodable) as exc:
        raise BadRequest(
            f"request body does not decode as Content-Encoding [{', '.join(codings)}]: {exc}"
        ) from None
    return body


#: Answers shorter than this (bytes) are sent as they are.
MIN_COMPRESSED = 1024
_LEVEL = 3


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (``gzip``, ``x-gzip`` or ``*``
    with a quality above 0, RFC 9110 §12.5.3)."""
    if not accept_encoding:
        return False
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.partition(";")
        if coding.strip() not in ("gzip", "x-gzip", "*"):
            continue
        q = params.strip()
        if q.startswith("q="):
            try:
                return float(q[2:]) > 0
            except ValueError:
                return False
        return True
    return False


def gzipped(content: bytes) -> bytes:
    """``content`` as one gzip member."""
    packer = zlib.compressobj(_LEVEL, zlib.DEFLATED, 31)
    return packer.compress(content) + packer.flush()
