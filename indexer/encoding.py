"""HTML bytes to text: by what the page declares, else by what it looks like.

A page is read with the first of these that fits:

1. a byte order mark: UTF-8, UTF-32 or UTF-16, little or big endian;
2. UTF-16 without a mark, when NUL bytes fill every other byte of the page's start (its
   ASCII markup in UTF-16);
3. UTF-8, when the page's non-ASCII bytes are valid UTF-8, or nearly (a stray byte or two
   among many valid sequences). Text in a legacy encoding is not valid UTF-8 beyond a few
   bytes, so this comes before a declaration: a UTF-8 page labelled ISO-8859-1 reads right;
4. the declared encoding: the XML declaration (``<?xml ... encoding="..."?>``), then the first
   ``<meta charset>`` or ``<meta http-equiv="Content-Type" content="...; charset=...">`` in the
   first :data:`PRESCAN_BYTES` bytes (comments skipped), when the page decodes with it without
   error — unless that reading is mojibake and the detected one is not (below);
5. the encoding uchardet detects (through resiliparse), when the page decodes with it
   without error;
6. of the declared, detected and windows-1252 readings, the one with the fewest undecodable
   bytes, each replaced by U+FFFD.

Labels are mapped as browsers map them (the WHATWG Encoding Standard): iso-8859-1, latin1
and us-ascii read as windows-1252, gb2312 and gbk as gb18030, euc-kr as windows-949,
x-sjis as Shift_JIS (with Microsoft's extensions when plain Shift_JIS fails), big5 as
windows-950; a ``<meta>`` naming UTF-16 means UTF-8 (the declaration was readable as ASCII).
A declaration that does not fit the bytes is passed over without a word.

A single-byte declaration (windows-1252, ISO-8859-*, KOI8-R, windows-1251 ...) decodes any
bytes, so a page that lies with one is not caught by errors: its reading is *mojibake* when at
least :data:`MOJIBAKE` of its words with a non-ASCII character, and :data:`MOJIBAKE_WORDS`,
look broken: a lower-case letter followed by a capital inside the word (``оНЦНДЮ``:
windows-1251 read as KOI8-R), capitals only (``ЯРН``: ``сто`` so read), letters and symbols
run together (``ÌìÆøÔ¤±¨``: GBK read as windows-1252) or three accented Latin-1 letters in a
row (``Ïîãîäà``: windows-1251 read as windows-1252). Such a page is read by the detected
encoding instead when that reading decodes without error and has at most a quarter of the
share of broken words. A page that tells the truth has next to none, and is not sent to
detection.

A page is rejected (:class:`NotTextError`) only when even its best reading is not text: more
than :data:`MAX_NOT_TEXT` of its characters are control characters (other than whitespace)
or undecodable bytes, as in a binary file.
"""

from __future__ import annotations

import codecs
import re
from itertools import pairwise

__all__ = ["MAX_NOT_TEXT", "PRESCAN_BYTES", "NotTextError", "decode_html"]

PRESCAN_BYTES = 4096
"""How far into the page a ``<meta>`` declaration is looked for."""

MAX_NOT_TEXT = 0.05
"""Largest share of control characters and undecodable bytes in a page read as text."""

MOJIBAKE = 0.25
"""Share of broken words (module docstring) from which a declared reading is mojibake."""

MOJIBAKE_WORDS = 4
"""... and how many at least: a few odd words in a short page say nothing."""


class NotTextError(ValueError):
    """The bytes are not text in any known encoding; the message is the reject reason."""


_BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF8, ("utf-8",)),
    (codecs.BOM_UTF32_LE, ("utf-32-le", "utf-16-le")),  # FF FE 00 00: or UTF-16 then a NUL
    (codecs.BOM_UTF32_BE, ("utf-32-be",)),
    (codecs.BOM_UTF16_LE, ("utf-16-le",)),
    (codecs.BOM_UTF16_BE, ("utf-16-be",)),
)

# Python codecs narrower than the browsers' decoder of the same label, widened; the first
# codec that decodes the page without error is used.
_WIDER: dict[str, tuple[str, ...]] = {
    "iso8859-1": ("cp1252",),  # from Python's own labels: latin_1, iso8859_1
    "gbk": ("gb18030",),
    "euc_kr": ("cp949",),
    "shift_jis": ("shift_jis", "cp932"),  # cp932 differs from browsers on 6 symbols (〜 ‖ − ¢ £ ¬)
    "big5": ("cp950",),
    "iso8859-11": ("cp874",),
}

_XML_DECLARATION = re.compile(rb"\s*<\?xml\s[^>]*?\bencoding\s*=\s*[\"']([^\"']+)[\"']")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_META = re.compile(r"<meta[\s/]([^>]*)>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""([^\s=/>]+)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")
_CONTENT_CHARSET = re.compile(r"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I)
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")  # C0 controls but \t \n \f \r
# A word as the mojibake test reads it: a run of anything but spaces and ASCII non-letters.
_NON_ASCII_WORD = re.compile(r"[^\s\x00-\x40\x5b-\x60\x7b-\x7f]+")
# Three letters of the Latin-1 block in a row (``Ïîãîäà``: windows-1251 read as Latin-1).
_LATIN1_RUN = re.compile(r"[\xc0-\xd6\xd8-\xf6\xf8-\xff]{3}")
# A letter beside a symbol of the Latin-1 block (¤ ± ¨ £ ¬ ½ × ...) or a box-drawing one.
_LETTER_SYMBOL = re.compile(
    r"[^\W\d_][\xa2-\xa9\xac-\xaf\xb1\xb4\xb6-\xb8\xbc-\xbe\xd7\xf7\u2500-\u257f]"
    r"|[\xa2-\xa9\xac-\xaf\xb1\xb4\xb6-\xb8\xbc-\xbe\xd7\xf7\u2500-\u257f][^\W\d_]"
)


def decode_html(data: bytes) -> str:
    """The text of an HTML page (a byte order mark removed), read as the module says.

    Raises :class:`NotTextError` when no reading of the bytes is text.
    """
    for bom, names in _BOMS:
        if data.startswith(bom):
            return _checked(*_best(data[len(bom) :], names))
    utf16 = _utf16_without_bom(data)
    if utf16 is not None and (text := _strict(data, (utf16,))) is not None:
        return _checked(text, 0)
    utf8 = _utf8(data)
    if utf8 is not None:
        return _checked(*utf8)
    declared = _declared(data)
    if declared and (text := _strict(data, declared)) is not None:
        return _checked(_unless_mojibake(data, text, declared), 0)
    detected = _detected(data)
    if detected and (text := _strict(data, detected)) is not None:
        return _checked(text, 0)
    return _checked(*_best(data, (*declared, *detected, "cp1252")))


def _unless_mojibake(data: bytes, text: str, declared: tuple[str, ...]) -> str:
    """``text`` (the declared reading), or the detected reading when ``text`` is mojibake and
    that one is clearly not (module docstring)."""
    broken, words = _broken(text)
    if broken < MOJIBAKE_WORDS or broken < MOJIBAKE * words:
        return text
    detected = tuple(c for c in _detected(data) if c not in declared)
    other = _strict(data, detected) if detected else None
    if other is not None:
        other_broken, other_words = _broken(other)
        if other_words and other_broken * 4 * words <= broken * other_words:
            return other
    return text


def _broken(text: str) -> tuple[int, int]:
    """How many words with a non-ASCII character look broken (module docstring), of how
    many."""
    words = [w for w in _NON_ASCII_WORD.findall(text) if not w.isascii()]
    broken = sum(
        1
        for w in words
        if _case_flip(w) or _LETTER_SYMBOL.search(w) or _LATIN1_RUN.search(w) or _capitals(w)
    )
    return broken, len(words)


def _capitals(word: str) -> bool:
    """A word of two or more letters, all of them capitals (rare in text, most words of a
    Cyrillic page read in the other Cyrillic encoding)."""
    return word.isupper() and sum(c.isalpha() for c in word) >= 2


def _case_flip(word: str) -> bool:
    """A lower-case letter followed by a capital inside ``word``."""
    return any(a.islower() and b.isupper() for a, b in pairwise(word))


def _checked(text: str, errors: int) -> str:
    bad = errors + len(_NOT_TEXT.findall(text))
    if bad > MAX_NOT_TEXT * len(text):
        raise NotTextError(
            f"not text in any known encoding: {bad / len(text):.0%} of its characters are"
            " control characters or undecodable bytes"
        )
    return text


def _strict(data: bytes, names: tuple[str, ...]) -> str | None:
    """``data`` decoded by the first of ``names`` that decodes all of it, else None."""
    for name in names:
        try:
            return data.decode(name)
        except UnicodeDecodeError:
            continue
    return None


def _best(data: bytes, names: tuple[str, ...]) -> tuple[str, int]:
    """The reading by one of ``names`` with the fewest undecodable bytes, and their number."""
    best: tuple[str, int] | None = None
    for name in names:
        try:
            text = data.decode(name)
            return text, 0
        except UnicodeDecodeError:
            text = data.decode(name, "replace")
            errors = len(text) - len(data.decode(name, "ignore"))  # one U+FFFD per error
        if best is None or errors < best[1]:
            best = (text, errors)
    assert best is not None
    return best


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16LE or -BE when a NUL is the high byte of many code units and never the low one."""
    head = data[:PRESCAN_BYTES]
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if odd * 4 >= len(head) // 2 > 0 and even == 0:
        return "utf-16-le"
    if even * 4 >= len(head) // 2 > 0 and odd == 0:
        return "utf-16-be"
    return None


def _utf8(data: bytes) -> tuple[str, int] | None:
    """The UTF-8 reading and its number of errors, when UTF-8 is what the bytes look like.

    Pure ASCII counts too, unless it holds an escape (ISO-2022-JP is 7-bit). With errors:
    when there are at most a tenth as many as valid non-ASCII characters (text in a legacy
    encoding has more errors than valid sequences when read as UTF-8).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return (text, 0) if not text.isascii() or "\x1b" not in text else None
    text = data.decode("utf-8", "replace")
    valid = data.decode("utf-8", "ignore")
    errors = len(text) - len(valid)
    non_ascii = len(valid) - len(valid.encode("ascii", "ignore"))
    return (text, errors) if errors * 10 <= non_ascii else None


def _declared(data: bytes) -> tuple[str, ...]:
    """Codecs of the encoding the page declares (XML declaration, then ``<meta>``), or ()."""
    xml = _XML_DECLARATION.match(data, 0, 1024)
    if xml and (names := _codecs(xml.group(1).decode("latin-1"))):
        return names
    head = _COMMENT.sub("", data[:PRESCAN_BYTES].decode("latin-1")).split("<!--", 1)[0]
    for meta in _META.finditer(head):
        attrs = {
            m.group(1).lower(): (m.group(2) or "").strip("\"'")
            for m in _ATTRIBUTE.finditer(meta.group(1))
        }
        label = attrs.get("charset")
        if label is None and attrs.get("http-equiv", "").lower() == "content-type":
            found = _CONTENT_CHARSET.search(attrs.get("content", ""))
            label = next((g for g in found.groups() if g is not None), None) if found else None
        if label and (names := _codecs(label)):
            return ("utf-8",) if names[0].startswith(("utf-16", "utf-32")) else names
    return ()


def _detected(data: bytes) -> tuple[str, ...]:
    """Codecs of the encoding uchardet finds in the bytes, or ()."""
    from resiliparse.parse.encoding import detect_encoding  # only for undeclared pages

    name = detect_encoding(data, html5_compatible=False)
    return _codecs(name) if name else ()


def _codecs(label: str) -> tuple[str, ...]:
    """Python codecs for an encoding label, as browsers read it, or () when unknown."""
    from resiliparse.parse.encoding import map_encoding_to_html5

    label = label.strip()
    name = map_encoding_to_html5(label, fallback_utf8=False)
    if name is None:  # e.g. "cp949", uchardet's name for windows-949
        try:
            info = codecs.lookup(label)
        except LookupError:
            return ()
        if not info._is_text_encoding:
            return ()
        name = info.name
    return _WIDER.get(name, (name,))
