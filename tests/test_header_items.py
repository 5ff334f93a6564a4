"""``collapse.http11.header_items``: an answer's headers read as ``httpx.Headers.items()`` reads
them (what the proxy's own searches pass on to the client, byte for byte)."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st

from collapse.http11 import header_items

_NAMES = st.sampled_from([b"Content-Type", b"content-type", b"Warning", b"X-Elastic-Product"])
_BYTES = st.binary(max_size=12)
_PAIRS = st.lists(st.tuples(_NAMES | _BYTES, _BYTES), max_size=6)


@given(_PAIRS)
def test_header_items_are_what_httpx_headers_items_are(pairs: list[tuple[bytes, bytes]]) -> None:
    assert list(header_items(pairs).items()) == list(httpx.Headers(pairs).items())


def test_repeated_names_join_and_non_ascii_values_decode_as_httpx_does() -> None:
    pairs = [
        (b"Warning", b'299 Elasticsearch "a"'),
        (b"warning", b'299 Elasticsearch "b"'),
        (b"X-Note", "é".encode()),
    ]
    assert header_items(pairs) == {
        "warning": '299 Elasticsearch "a", 299 Elasticsearch "b"',
        "x-note": "é",
    }
    latin = [(b"x-note", b"\xe9")]
    assert header_items(latin) == dict(httpx.Headers(latin).items()) == {"x-note": "é"}
