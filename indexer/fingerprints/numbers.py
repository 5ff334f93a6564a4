"""The number sketch: what a document's numbers say, so that copies with other numbers stay apart.

Two texts that differ only in a version, a year, a price or a model code are near-duplicates to
SimHash and MinHash, yet different documents to a reader. This module summarises, per
document, *which number stands where*, in a fixed-size sketch compared at verification
(``indexer.grouping``).

Definitions, on the text's bytes (NFKC and case folding as :func:`indexer.text.normalize`,
UTF-8; ASCII punctuation and common non-ASCII punctuation a space), cut into *runs*: maximal
runs of ASCII word bytes (``[0-9a-z_]``) or of other non-ASCII bytes, so that a script change
ends a run (``版本2`` is ``版本`` then ``2``):

* a *number* is a maximal sequence of *numeric* ASCII runs (holding a digit: a model's
  ``mp3``, ``x86``, ``s23``; a run with ``_``, an identifier's ``uint64_t`` or ``id_ed25519``,
  only in a document under :data:`SIDES_BELOW` words; the :data:`_MIN_WORD` or more letters
  a run starts with before a digit are a word of their own, the number's context: ``koi8`` is
  ``koi`` then ``8``, ``addr2line`` ``addr`` then ``2line``), each at most
  2 non-word characters (not bytes) after the one before on the same line (``2.1``,
  ``$1,299.99``, ``2026-12-01``, ``June 10, 2026``, ``1 000 000``, ``128gb``, ``sm-g991b`` →
  ``g991b``); runs further apart (``10 / 20``, ``3.5 – vt220``, ``0 = 0``, ``(7), 8``) are
  numbers of their own, each the other's context, so that a copy that drops or moves the word
  between two numbers reads no other value in its original's contexts; its *value* is its
  runs in order, separators not counted (``2.1`` = ``2-1`` ≠ ``21``); a unit of measure written
  a space (or up to :data:`_UNIT_SPACES`) after it is part of it, as when written close
  (``128 GB`` = ``128  GB`` = ``128GB``), and so is one that starts the next line (a text
  wrapped at a width: :func:`as_sketched`);
* a date or time stamp (3 or more runs of digits only, one a year 19xx or 20xx:
  ``2026-03-18 10:55``; or a day's, an hour's or a year's digits beside a month's name
  written in ASCII on the same line: ``11 October 2026``, not a file's size in ``1695 Aug
  30``, nor a number word, "no one may kill", nor a title's ``dd.1.gz#1`` over "May be
  followed …") on a line with
  fewer than :data:`_MIN_LINE` bytes of other words (a dateline, a "printed from <url> on
  <date>" line: a URL counts as one word), among the first or the last :data:`EDGE_LINES`
  lines of words of its document (a frame is around the content; a date inside it, in a
  session's output or a table, is the content's), is the frame's, and left out — but in a
  document under :data:`SIDES_BELOW` words of content (a listing, a quote, a headline) no
  date is the frame's: its short lines are its content ("The next meeting is on 18 March
  2026."), and a copy with another date is another document;
* its *context* is the word run right before it and the one right after it, over spaces and
  line breaks (a line break only stops a number); the start or end of the text counts as no
  run. A number's own word written against it (``koi8``) is its context before, with the word
  before the two; a neighbouring number reads such a pair whole (``ipv4``), and the word
  weighs nothing in its line's weight. Of a non-ASCII run only the 6 bytes next to the
  number count (2 CJK or 3 Cyrillic characters), of an ASCII run 32 (why not further out:
  docs/fingerprints.md, "Numbers"). An ASCII word without a digit counts by its first and last
  letter, its length and its inner letters in any order (:func:`_context_hashes`): a copy's
  typo ``monut`` is the context ``mount``, and so is any anagram with the same ends.
  In a document under :data:`SIDES_BELOW` words of content (a listing, a quote), each number
  is also entered twice more, each time with one neighbour alone as its context: a copy that
  changed the word beside a number still has the number's other neighbour, so a number
  changed there too still conflicts (the entry with both neighbours keeps a short document
  comparable with a longer one).
* a run of CJK numerals (第二章, 三天, 一百零五, 二〇二六年) is the number it writes, in ASCII
  digits (2, 3, 105, 2026): Chinese and Japanese texts write their numbers so as often as in
  digits (a numeral inside a word, 统一, 一些, is a number too: its context stays with it);
* an English, German or Russian word that writes a number (``two``, ``zwölf``, ``двух``;
  :data:`_NUMBER_WORDS`) is that number in digits, so "one-year" is not "two-year" and "in
  two days" is "in 2 days";
* a numbered list's label at a line's start (``2. If …``, ``3) …``, ``4、…``:
  :data:`_LIST_LABEL`; in a text with one on a line after its first) is a number whose
  context before is the word :data:`LABEL_WORD`, not the line above's last word: a copy that
  cut an item would otherwise have the next item's label where the cut one's stood, between
  the same words, with another value; a label changed in place still conflicts;
* a URL is the word ``url``; on a line of content (by the same weight) its numeric runs
  follow it as one number, between ``url`` and ``url`` (a link's ``posix_1003.1e`` is not
  ``posix_1003.2e``, nor ``posix_1006.1e``: ``_`` ends a run there as ``-`` does), while
  the URL of a short line (each host's "printed from <url>") has none.
  A URL with nothing after it on its line has no closing ``url``: a copy cut inside a link
  (``…/gpl-3`` of ``…/gpl-3.0.html⟩ oder neuer``) ends there with part of its number.

Every (context, value) occurrence is an *entry*. The sketch has :data:`NUMBER_CELLS` cells,
:data:`ROWS` rows of :data:`BUCKETS`: an entry falls in one cell of each row (by a hash of its
context of the row's own), which holds two sums over its entries: 16 bits of context hashes
and 8 bits of entry hashes. Stored as one ``uint32`` per cell, ``context_sum << 8 |
value_sum``, packed as 3 little-endian bytes (:func:`cells_to_bytes`): 144 bytes. The names
inside sentences (:mod:`indexer.fingerprints.sentence_names`: their own entries, in cells of
the same form and rule), the :data:`TITLE_CELLS` title cells (the entries of the text's first
line alone, in one row: a long page's body may fill every cell with numbers of its own, and
its title still says which page it is), the name cells (:mod:`indexer.fingerprints.names`)
and the writing cell follow them in the stored value (:data:`CELLS` in all).

**Conflict** (:func:`conflicts`): some cell of the two documents has equal context sums and
different value sums: the cell holds the same contexts in both, as often, with other values.
Guarantees, up to hash coincidences:

* a number changed where nothing else changed (the same contexts, as often, in one of its
  cells) always conflicts (missed when 8 value bits agree: 2**-8 a cell);
* numbers whose contexts are in one document only never conflict, however many (a "printed
  on <date>" line, a byline's date, a page counter in another template, "in 2 days" beside
  "in a couple of days", a number cut or added): they change their cells' context sums, so those
  cells are not compared. A cell whose context sums agree by chance (2**-16) may conflict.

Not promised: a changed number whose cells all also hold contexts of one document only (a
frame's numbers, a cut) is not seen — the more one-sided numbers, the likelier (measured in
docs/fingerprints.md, "Numbers"); nor one changed together with both its contexts; nor a
number written as a word outside :data:`_NUMBER_WORDS` (an ordinal, a compound such as
``twenty-two`` against ``22``, a language not listed). A frame that both documents share,
with another number in it (one template's page counter on two copies), conflicts, unless a
host model reads the line as the frame's (a counter under the footer: ``indexer.boilerplate``).
Order of the documents never matters. A document without numbers has an all-zero sketch.

A batch's bytes are sketched by a compiled kernel (:mod:`indexer.fingerprints.numbers_kernel`,
numba); the numpy path here (:func:`_sketches_of_buf_numpy`) is the readable reference it is
tested against, and runs where numba is missing. The kernel also rewrites the URLs of ASCII
texts in a batch's bytes (:func:`_urls`, which stays their definition, and that of the other
texts' URLs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from indexer.fingerprints.features import NO_WORDS
from indexer.fingerprints.names import NAME_CELLS, NAMED_BELOW, name_cells, names_agree
from indexer.fingerprints.sentence_names import WORD_KIND, name_entries
from indexer.fingerprints.writing import writing_codes, writings_agree
from indexer.text import normalize, sub_urls, top_code_points

if TYPE_CHECKING:
    from indexer.fingerprints.numbers_kernel import Tables

__all__ = [
    "BUCKETS",
    "CELLS",
    "LABEL_WORD",
    "NAMES_AT",
    "NAME_BUCKETS",
    "NAME_SIDES_BELOW",
    "NUMBER_CELLS",
    "ROWS",
    "SIDES_BELOW",
    "SKETCH_CELLS",
    "TITLE_AT",
    "TITLE_CELLS",
    "WORD_BUCKETS",
    "WORD_ROWS",
    "WRITING_CELL",
    "agree",
    "as_sketched",
    "cells_from_bytes",
    "cells_to_bytes",
    "conflicts",
    "dated_only",
    "frame_stamp_lines",
    "number_sketches",
    "sketches_of_bytes",
]

#: Rows of the sketch: a context falls in one cell of each (independent hashes).
ROWS = 2
#: Cells per row.
BUCKETS = 24
#: Documents with fewer words of content than this enter each number once more per neighbour,
#: and their dates are their own: a short text syndicated with a few words of its host's
#: ("(Source: …)") after it is still one.
SIDES_BELOW = 3 * NO_WORDS // 2
#: Documents with fewer words of content than this enter each name inside a sentence once more
#: per neighbour (:mod:`indexer.fingerprints.sentence_names`).
NAME_SIDES_BELOW = NO_WORDS
#: Cells of the number sketch proper.
NUMBER_CELLS = ROWS * BUCKETS
#: Cells per row of each kind of entry of the sketch of names inside sentences.
NAME_BUCKETS = 10
#: Rows per kind of entry of the names inside sentences: an entry falls in one cell of each.
NAME_ROWS = 2
#: Cells of the names inside sentences proper: rows of each kind of a name's context.
NAME_KINDS_CELLS = WORD_KIND * NAME_ROWS * NAME_BUCKETS
#: Cells per row of the entries of every word inside a sentence
#: (:data:`~indexer.fingerprints.sentence_names.WORD_KIND`): a short text's every word is one,
#: and a name replaced by another word changes the contexts of its two neighbours too, whose
#: cells must miss its own in some row.
WORD_BUCKETS = 24
#: Rows of the entries of every word inside a sentence.
WORD_ROWS = 2
#: Where the title's cells are, after the names inside sentences and the words'.
TITLE_AT = NUMBER_CELLS + NAME_KINDS_CELLS + WORD_ROWS * WORD_BUCKETS
#: Cells of the title's numbers (one row): the numbers of the document's first line alone.
TITLE_CELLS = 4
#: Cells compared by the sketch's rule: the number sketch's, the names inside sentences'
#: (:mod:`indexer.fingerprints.sentence_names`, :data:`NAME_ROWS` rows per kind of entry), then
#: the title's.
SKETCH_CELLS = TITLE_AT + TITLE_CELLS
#: Where the name cells (:mod:`indexer.fingerprints.names`) are.
NAMES_AT = SKETCH_CELLS
#: Where the writing cell (:mod:`indexer.fingerprints.writing`) is, after the name cells.
WRITING_CELL = NAMES_AT + NAME_CELLS
#: Cells stored in all (one ``uint32`` each, 3 bytes packed): the number sketch's, the names
#: inside sentences', the name cells, then the writing cell.
CELLS = WRITING_CELL + 1

_19, _20 = ord("1") * 256 + ord("9"), ord("2") * 256 + ord("0")
#: Units of measure (folded, as the sketch reads them) that stay with a number when spaced.
_UNITS = (
    "kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib", "pb", "bit", "bits", "kbps", "mbps",
    "gbps", "kbit", "mbit", "gbit", "hz", "khz", "mhz", "ghz", "mm", "cm", "km", "kg", "mg",
    "ml", "mah", "wh", "kwh", "kw", "mw", "mp", "fps", "dpi", "ppi", "px",
    "кб", "мб", "гб", "тб", "кг", "км", "см", "мм", "мл", "мгц", "ггц",
)  # fmt: skip
_CJK_DATE = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일号號]?")
_MONTH_WORD = re.compile(
    r"(?:январ[яьея]|феврал[яьея]|марта?|апрел[яьея]|ма[яй]|июн[яьея]|июл[яьея]|августа?"
    r"|сентябр[яьея]|октябр[яьея]|ноябр[яьея]|декабр[яьея]|märz|février|août|décembre"
    r"|março|fevereiro|dezembro|février)\b"
)
#: Month names (and abbreviations) written in ASCII, in the languages that write them so: a
#: date spelt with one ("Updated 11 October 2026") is a stamp like 2026-10-11.
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "januar",
    "februar",
    "maerz",
    "mai",
    "juni",
    "juli",
    "oktober",
    "dezember",
    "janvier",
    "fevrier",
    "mars",
    "avril",
    "juin",
    "juillet",
    "aout",
    "septembre",
    "octobre",
    "novembre",
    "decembre",
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "setiembre",
    "octubre",
    "noviembre",
    "diciembre",
    "gennaio",
    "febbraio",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "settembre",
    "ottobre",
    "dicembre",
    "januari",
    "februari",
    "maart",
    "mei",
    "augustus",
)
_MIN_LINE = 48  # weighted word bytes (numbers not counted) of a line a stamp is content on
#: A stamp is the frame's only on one of a document's first or last this many lines of words:
#: a frame is around the content, and a date inside it (a session's output, a table) is its own.
EDGE_LINES = 5
_MAX_SKIP = 8  # space and line-break runs skipped to find a neighbouring word
_MAX_GAP = 2  # non-word characters allowed between the runs of one number
_SIDE = 6  # bytes of a non-ASCII context run kept next to the number
_MAX_RUN = 32  # bytes of a run hashed (those next to the number for a context)
_MIN_WORD = 3  # letters a run starts with that are a word written against its number (koi8)
_NL = 1  # the byte a line break becomes
# the text's bytes: ASCII letters lower-cased, [0-9a-z_] and non-ASCII bytes kept, a line
# break _NL, any other ASCII byte a space
_BYTES = bytes(
    c | 0x20 if 65 <= c <= 90
    else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c >= 128)
    else _NL if c == 10 else 32
    for c in range(256)
)  # fmt: skip
_BYTES_KEEP_0 = b"\0" + _BYTES[1:]  # the same, with the texts' separator kept
_BYTES_KEEP_0_TABLE = np.frombuffer(_BYTES_KEEP_0, dtype=np.uint8)
# byte classes: space, ASCII word byte, non-ASCII, document separator (\0), line break
_SPACE, _ASCII, _OTHER, _SEP, _BREAK = 0, 1, 2, 3, 4
_CLASSES = bytes(
    _ASCII if (48 <= c <= 57 or 97 <= c <= 122 or c == 95)
    else _OTHER if c >= 128
    else _SEP if c == 0
    else _BREAK if c == _NL
    else _SPACE
    for c in range(256)
)  # fmt: skip
_DIGITS = bytes(1 if 48 <= c <= 57 else 0 for c in range(256))
_DIGIT_BYTES = b"0123456789"
_LETTER_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LEADS = bytes(1 if c in (0xC2, 0xE2, 0xE3) else 0 for c in range(256))  # of the punctuation
_U64 = np.uint64
_P = _U64(0x100000001B3)  # odd multiplier of the run hash
_POW = np.cumprod(np.r_[_U64(1), np.full(_MAX_RUN - 1, _P, dtype=np.uint64)], dtype=np.uint64)
_Q = _U64(0x9E3779B97F4A7C15)
_EMPTY = _U64(0x5EED)  # hash of "no run"
_LEFT, _RIGHT = _U64(0x51DE1E), _U64(0x51DE2F)  # salts of a context of one neighbour
_INNER = _U64(0x1AA3E5)  # salt of an inner letter of a context word (:func:`_context_hashes`)


def _fmix(x: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finaliser (wrapping uint64 arithmetic)."""
    x = x ^ (x >> _U64(33))
    x = x * _U64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> _U64(33))
    x = x * _U64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> _U64(33))


def _characters(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Characters of UTF-8 ``a`` in each range ``lo:hi``, counted exactly up to
    ``_MAX_GAP + 1`` (a gap of multi-byte punctuation, `` – ``, is as wide as `` - ``)."""
    span = hi - lo
    near = np.flatnonzero((span > _MAX_GAP) & (span <= 4 * _MAX_GAP))  # may hold fewer chars
    if len(near):
        k = np.arange(4 * _MAX_GAP)
        at = np.minimum(lo[near, None] + k, len(a) - 1)
        inner = ((a[at] & 0xC0) == 0x80) & (k < span[near, None])  # continuation bytes
        span = span.copy()
        span[near] -= inner.sum(axis=1)
    return span


def _range_hashes(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Hash of the bytes ``a[lo:hi]`` of each range (non-empty, at most ``_MAX_RUN`` long)."""
    if not len(lo):
        return np.zeros(0, dtype=np.uint64)
    lengths = hi - lo
    first = np.cumsum(lengths) - lengths
    seg = np.repeat(np.arange(len(lo)), lengths)
    pos = np.arange(int(lengths.sum())) - first[seg]
    terms = a[lo[seg] + pos].astype(np.uint64) * _POW[pos]
    with np.errstate(over="ignore"):
        return _fmix(np.add.reduceat(terms, first) + lengths.astype(np.uint64))


def number_sketches(
    texts: Sequence[str],
    folded: bool = False,
    units: np.ndarray | None = None,
    titles: Sequence[str] | None = None,
    written: Sequence[str] | None = None,
) -> np.ndarray:
    """(n, :data:`CELLS`) uint32: the number sketch of each text (module docstring), then its
    name cells (:mod:`indexer.fingerprints.names`) and its writing cell
    (:mod:`indexer.fingerprints.writing`). ``units``: each text's words of content,
    which decide the short documents' rules (none given: the long documents' rule, no names);
    ``folded``: the texts are already :func:`indexer.text.fold`-ed; ``titles``: each text's
    first line as written, when ``texts`` has frame lines blanked (default: their own);
    ``written``: the texts as written (case kept), whose names inside sentences
    (:mod:`indexer.fingerprints.sentence_names`) short documents enter as numbers."""
    sides = None if units is None else units < SIDES_BELOW
    top = top_code_points(texts)  # which texts the CJK steps read (here and the writing cell)
    stamps: list[list[int]] = [[] for _ in texts]
    listed = as_sketched(texts)
    out = _sketches_of_buf(*_joined_bytes(listed, folded, top), stamps, sides)
    firsts = [t.split("\n", 1)[0] if 0 not in s else "" for t, s in zip(texts, stamps, strict=True)]
    out[:, TITLE_AT:SKETCH_CELLS] = _title_cells(firsts, folded)
    named = None if units is None else np.flatnonzero(units < NAMED_BELOW).tolist()
    if units is not None and len(texts):
        mine = [t if folded else normalize(t) for t in texts]
        if titles is None:
            heads = [t.split("\n", 1)[0] for t in mine]
        else:
            heads = [t if folded else normalize(t) for t in titles]
        few = np.asarray(units) < NAMED_BELOW
        out[:, NAMES_AT:WRITING_CELL] = name_cells(heads, mine, few, ~few)
    if named and written is not None:
        short = [] if units is None else np.flatnonzero(units < NAME_SIDES_BELOW).tolist()
        _add_names(out, written, texts, named, short)
    out[:, WRITING_CELL] = writing_codes(texts, top)
    return out


def _title_cells(firsts: Sequence[str], folded: bool) -> np.ndarray:
    """(n, :data:`TITLE_CELLS`) cells of the numbers of each document's first line alone, by
    the sketch's rule (the first row's buckets summed by their number modulo the cells): a long
    page's title says which page it is (``ISO 8859-2`` or ``ISO 8859-16``) where its body's
    cells also hold many numbers of one document only, which hide a changed number there.
    ``firsts``: each text's first line as the sketch reads it (frame lines blanked; empty
    where the line is the frame's date stamp). A first line without a word (a page counter, a
    frame's year) is no title: no cells."""
    n = len(firsts)
    titled = [f if any(map(str.isalpha, f)) else "" for f in firsts]  # a word beside the numbers
    row = _sketches_of_buf(*_joined_bytes(titled, folded))[:, :BUCKETS].astype(np.int64)
    row = row.reshape(n, BUCKETS // TITLE_CELLS, TITLE_CELLS)
    ctx = (row >> 8).sum(axis=1) % 65536
    val = (row & 0xFF).sum(axis=1) % 256
    return (ctx << 8 | val).astype(np.uint32)


def _add_names(
    out: np.ndarray,
    written: Sequence[str],
    content: Sequence[str],
    named: list[int],
    sides: list[int],
) -> None:
    """Fills the sketch of the names inside sentences (:data:`NUMBER_CELLS` to
    :data:`TITLE_AT`) of the documents ``named`` (those ``sides`` also with each neighbour
    alone): :data:`NAME_ROWS` rows of :data:`NAME_BUCKETS` cells per kind of a name's entry
    (both neighbours, the word before, the word after), so that a name changed with nothing
    else is the only difference among its kind's contexts, and an entry falls in one cell of
    each row (one that a context of one document only shares hides it in that row only); then
    :data:`WORD_ROWS` rows of :data:`WORD_BUCKETS` cells of every word's entry."""
    doc, kind, ctx, value = name_entries(written, content, named, sides)
    if not len(doc):
        return
    with np.errstate(over="ignore"):
        pair = _fmix(ctx ^ _fmix(value + _Q))
    # each (document, kind) a row of its own, its kind's cells in the document's
    is_name = kind < WORD_KIND
    kinds = WORD_KIND
    cells = _sums(
        doc[is_name] * kinds + kind[is_name],
        ctx[is_name],
        pair[is_name],
        len(out) * kinds,
        NAME_BUCKETS,
        rows=NAME_ROWS,
    )
    words_at = NUMBER_CELLS + NAME_KINDS_CELLS
    out[:, NUMBER_CELLS:words_at] = cells.reshape(len(out), NAME_KINDS_CELLS)
    word = ~is_name
    out[:, words_at:TITLE_AT] = _sums(
        doc[word], ctx[word], pair[word], len(out), WORD_BUCKETS, rows=WORD_ROWS
    )


def _bytes_of(text: str, folded: bool = False) -> bytes:
    """The bytes the sketch reads: NFKC and case folding (:func:`indexer.text.normalize`),
    UTF-8, ASCII punctuation a space, a line break :data:`_NL` (non-ASCII punctuation becomes
    space, and a unit of measure one space after a number joins it, in
    :func:`sketches_of_bytes`)."""
    # a unit of measure one space after a number is joined to it in sketches_of_bytes
    return _text_of(text, folded).encode("utf-8", "replace").translate(_BYTES)


def _text_of(text: str, folded: bool, top: int | None = None, digits: bool | None = None) -> str:
    """:func:`_bytes_of` before its bytes: digits of every script in ASCII, numbers written in
    CJK numerals and dates spelt out, URLs as words. ``top``: the text's largest code point
    (:func:`indexer.text.top_code_points`; None: not known), which tells the steps that look
    for characters of one range (:data:`_CJK_FROM`) whether to look; ``digits``: whether it
    holds decimal digits outside ASCII (:func:`_other_digits`; None: look)."""
    if text.isascii():
        norm = text
    else:
        norm = text if folded else normalize(text)
        if digits or (digits is None and (top is None or top >= _DIGITS_FROM)):
            norm = _ascii_digits(norm)
        norm = _dates_spelt_out(_cjk_numerals(norm) if top is None or top >= _CJK_FROM else norm)
    return _urls(norm) if "://" in norm else norm


#: The zero of every decimal digit system outside ASCII (Unicode 14, category Nd: ten digits in
#: a row from each: Arabic-Indic, Persian, Devanagari, Bengali, Thai, Lao, Tibetan, Myanmar,
#: Khmer, …). A table rather than ``unicodedata``, so that the sketch reads the same digits on
#: every Python (tests/test_numbers.py holds it against ``unicodedata``).
_DIGIT_ZEROS = (
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
    0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0,
    0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0,
    0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0,
    0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0,
    0x1E950, 0x1FBF0,
)  # fmt: skip
#: Below the first of them a text holds no digit but ASCII's; from the last one's end on, none.
_DIGITS_FROM = _DIGIT_ZEROS[0]
_DIGITS_END = _DIGIT_ZEROS[-1] + 10


@lru_cache(maxsize=1)
def _digit_values() -> np.ndarray:
    """(``_DIGITS_END``,) int8: each code point's value as a digit of :data:`_DIGIT_ZEROS`'s
    systems, -1 for every other (ASCII's digits included: they stay as they are)."""
    values = np.full(_DIGITS_END, -1, dtype=np.int8)
    for zero in _DIGIT_ZEROS:
        values[zero : zero + 10] = np.arange(10, dtype=np.int8)
    return values


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _other_digits(texts: Sequence[str], top: np.ndarray) -> np.ndarray:
    """(n,) bool: which texts hold a digit outside ASCII, in one pass over those whose largest
    code point (``top``) reaches :data:`_DIGITS_FROM`."""
    out = np.zeros(len(texts), dtype=bool)
    rows = np.flatnonzero(top >= _DIGITS_FROM)
    if not len(rows):
        return out
    picked = [texts[i] for i in rows.tolist()]
    lengths = np.fromiter(map(len, picked), dtype=np.int64, count=len(picked))
    points = _code_points("".join(picked))
    digit = _digit_values().take(np.minimum(points, _DIGITS_END - 1)) >= 0
    ends = np.cumsum(lengths)
    seen = np.concatenate(([0], np.cumsum(digit, dtype=np.int64)))
    out[rows] = seen[ends] > seen[ends - lengths]
    return out


def _ascii_digits(norm: str) -> str:
    """Every decimal digit in ASCII (``١٥٠`` and ``१५०`` are ``150``): a price or a year written
    in the digits of its script is a number of the sketch as it is in ASCII's (NFKC already
    makes full-width digits ASCII; these it keeps)."""
    points = _code_points(norm)
    value = _digit_values().take(np.minimum(points, _DIGITS_END - 1))
    digit = value >= 0
    if not digit.any():
        return norm
    points = points.copy()
    points[digit] = 0x30 + value[digit].astype(np.uint32)
    return points.tobytes().decode("utf-32-le", "surrogatepass")


#: The first code point whose :func:`indexer.text.normalize` form holds a CJK numeral (⼀,
#: KANGXI RADICAL ONE: 一). NFKC makes a Han character only from one compatibility character
#: (no sequence composes into one), so a text wholly below it holds none, before or after.
_CJK_FROM = 0x2F00


#: Numbers written in CJK numerals: digits, and the multipliers that follow them.
_NUMERAL_RUN = re.compile("[〇零一二两兩三四五六七八九十百千万萬亿億]+")
_DIGIT_OF = {
    c: d
    for d, cs in enumerate(("〇零", "一", "二两兩", "三", "四", "五", "六", "七", "八", "九"))
    for c in cs
}
_SMALL = {"十": 10, "百": 100, "千": 1000}
_LARGE = {"万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000}


def _numeral(m: re.Match[str]) -> str:
    """A run of CJK numerals as its value in ASCII digits: digits alone read digit by digit
    (二〇二六 2026), with multipliers as counted (十三 13, 二十 20, 一百零五 105, 三万 30000)."""
    run = m.group()
    if not any(c in _SMALL or c in _LARGE for c in run):
        return "".join(str(_DIGIT_OF[c]) for c in run)
    total = section = digit = 0
    for c in run:
        if c in _DIGIT_OF:
            digit = _DIGIT_OF[c]
        elif c in _SMALL:
            section += (digit or 1) * _SMALL[c]
            digit = 0
        else:
            total = (total + section + digit) * _LARGE[c]
            section = digit = 0
    return str(total + section + digit)


def _cjk_numerals(norm: str) -> str:
    """Runs of CJK numerals (第二章, 三天, 二〇二六年) as their values in ASCII digits
    (:func:`_numeral`), so that a number written so is a number of the sketch."""
    return _NUMERAL_RUN.sub(_numeral, norm) if _NUMERAL_RUN.search(norm) else norm


def _joined_bytes(
    texts: Sequence[str], folded: bool, top: np.ndarray | None = None
) -> tuple[bytes, np.ndarray]:
    """``b"\\0".join(_bytes_of(t, folded) for t in texts)`` and each text's end past its
    separator (as :func:`sketches_of_bytes` has them), encoded and translated in one go: a
    text of ASCII without a URL is its own :func:`_text_of`; with the kernel, ASCII texts'
    URLs are rewritten there (:func:`.numbers_kernel.joined`), with the translation."""
    kernel = _kernel()
    if kernel is not None:  # the ASCII texts as written, their URLs rewritten by the kernel
        if top is None:
            top = top_code_points(texts)
        ascii_text = (top < 0x80).tolist()
        digits = _other_digits(texts, top).tolist()
        joined = "\0".join(
            t if a else _text_of(t, folded, c, d)
            for t, a, c, d in zip(texts, ascii_text, top.tolist(), digits, strict=True)
        )
        raw = joined.encode("utf-8", "replace")
        got = kernel.joined(raw, np.array(ascii_text), _BYTES_KEEP_0_TABLE, _MIN_LINE)
        return _joined_bytes_python(texts, folded) if got is None else got
    joined = "\0".join(t if t.isascii() and "://" not in t else _text_of(t, folded) for t in texts)
    buf = joined.encode("utf-8", "replace").translate(_BYTES_KEEP_0)
    ends = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == 0) + 1
    if len(ends) != len(texts) - 1:  # a text holds "\0" itself (a space to the sketch)
        return _joined_bytes_python(texts, folded)
    return buf, np.r_[ends, len(buf) + 1]


def _joined_bytes_python(texts: Sequence[str], folded: bool) -> tuple[bytes, np.ndarray]:
    """:func:`_joined_bytes` text by text (the definition)."""
    words = [_bytes_of(t, folded) for t in texts]
    return b"\0".join(words), np.cumsum([len(w) + 1 for w in words])


def _urls(norm: str) -> str:
    """Each URL as the word ``url``; on a line of content, followed by its numbers (as one) and
    ``url`` again, since a link in the text is the text's (``posix_1003.1e`` is not
    ``posix_1003.2e``). A URL on a short line (a "printed from", a "source:" line: weighed as
    :func:`_frame_lines` weighs) stays one word: each host's copy has its own. A document of
    one line, or of short lines only, is all content (a short text citing a link)."""
    lines = norm.split("\n")
    if len(lines) == 1 or not any(map(_content_or_url_line, lines)):
        # a document of one line, or of short lines only
        return sub_urls(_url_numbers, norm, _url_numbers_open)
    for i, line in enumerate(lines):
        if "://" in line:
            if _content_line(line):
                lines[i] = sub_urls(_url_numbers, line, _url_numbers_open)
            else:
                lines[i] = sub_urls(" url ", line)
    return "\n".join(lines)


def _word_weight(word: str) -> float:
    """A word's weight on its line: 0 if it holds a digit, else its letters' (an ASCII letter
    1, a non-ASCII byte 1/2), as :func:`_frame_lines` counts them."""
    if word.isascii():
        if word.isalpha():
            return len(word)
        raw = word.encode("ascii")
        if len(raw.translate(None, _DIGIT_BYTES)) < len(raw):
            return 0
        return len(raw) - len(raw.translate(None, _LETTER_BYTES))
    if word.isalpha():  # letters only (no character is both a letter and a digit)
        ascii_letters = len(word.encode("ascii", "ignore"))
        return ascii_letters + (len(word.encode("utf-8")) - ascii_letters) / 2
    if any(c.isdigit() for c in word):
        return 0
    return sum(1 if c < "\x80" else len(c.encode("utf-8")) / 2 for c in word if c.isalpha())


def _is_content(line: str) -> bool:
    """Whether a line's words weigh :data:`_MIN_LINE` or more (:func:`_word_weight`); stops at
    the word that reaches it (the line is split a few words at a time)."""
    total: float = 0
    rest = line
    while rest:
        words = rest.split(None, _SPLIT)
        rest = words.pop() if len(words) > _SPLIT else ""
        for word in words:
            total += _word_weight(word)
            if total >= _MIN_LINE:
                return True
    return False


_SPLIT = 24  # words split off a line at a time by _is_content


def _content_line(line: str) -> bool:
    """``_is_content`` of the line with its URLs cut: the words before the first URL's word
    first (a URL holds no space, so they are the cut line's first words), the rest if needed."""
    q = line.find("://")
    head = line[:q]
    if head and not head[-1].isspace():  # the first URL's word starts in ``head``
        parts = head.rsplit(None, 1)
        head = parts[0] if len(parts) == 2 else ""
    return _is_content(head) or _is_content(sub_urls(" ", line))


def _content_or_url_line(line: str) -> bool:
    """Whether a line is one of content, its URLs not weighed (:func:`_content_line`); in a
    line that is not ASCII a digit ends a word (a clause of a script written without spaces
    is one word, and would weigh nothing for holding a number)."""
    if not line.isascii():
        line = _DIGIT.sub(" ", line)
    return _content_line(line) if "://" in line else _is_content(line)


def _url_numbers(m: re.Match[str]) -> str:
    """``url``, the URL's numeric runs (:func:`_url_runs`), ``url``."""
    runs = _url_runs(m)
    return f" url {' '.join(runs)} url " if runs else " url "


def _url_numbers_open(m: re.Match[str]) -> str:
    """:func:`_url_numbers` of a URL that ends its line: no closing ``url``, so its number's
    context after it is what follows the line, as for any number at a line's end (a copy cut
    inside the link, ``gpl-3`` of ``gpl-3.0.html``, has another number there, not a changed
    one)."""
    runs = _url_runs(m)
    return f" url {' '.join(runs)} " if runs else " url "


def _url_runs(m: re.Match[str]) -> list[str]:
    """The URL's runs of ``[0-9a-z]`` that hold a digit (``_`` separates words in a link's
    path as ``-`` does: ``posix_1003.1e`` holds ``1003`` and ``1e``)."""
    return [r for r in _URL_RUN.findall(m.group()) if _DIGIT.search(r)]


_URL_RUN = re.compile(r"[0-9a-z]+", re.IGNORECASE)
_DIGIT = re.compile(r"[0-9]")


def _dates_spelt_out(norm: str) -> str:
    """Dates written with CJK date characters (2026年6月13日, 2026년 6월 13일) as 2026-6-13, and
    month names outside ASCII (марта, märz, décembre) as an ASCII one: stamps like the others."""
    if "年" in norm or "년" in norm:
        norm = _CJK_DATE.sub(r"\1-\2-\3 ", norm)
    return _MONTH_WORD.sub(_month, norm) if _may_name_a_month(norm) else norm


_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_YEAR = r"(?:19|20)[0-9][0-9]"
#: A numbered list's label at a line's start (``2. If SIGHUP …``, ``3) …``, ``4、…``): one to
#: three digits, then ``.`` or ``)`` and spaces before a letter (or a letter of a script
#: outside ASCII right after it), or ``、`` before a letter; full-width forms read as NFKC
#: reads them, so a text and its folded form have the same labels. Not a version (``3.x``,
#: ``2.1``) nor a date's day before its month's name (``1. Januar``).
_LABEL = (
    rf"([0-9０-９]{{1,3}})"
    rf"(?:[.)．）](?:(?=[ \t\u3000]+[^\W\d_])|(?=[^\x00-\x7f\W\d_]))|、(?=[ \t\u3000]*[^\W\d_]))"
    rf"(?![ \t\u3000]*(?i:{_MONTH_NAMES}|märz)\b)"
)
_LIST_LABEL = re.compile(rf"(\n[ \t\u3000]*){_LABEL}")
_FIRST_LABEL = re.compile(rf"\A([ \t\u3000]*){_LABEL}")


#: The word a list's label is read after (:func:`as_sketched`).
LABEL_WORD = "listlabel"
_LABELLED = rf"\1{LABEL_WORD} \2 "
#: A line break before a unit of measure (:data:`_UNITS`) at the next line's start: the unit is
#: a number's when the line ends in a digit (a text wrapped at a width: "into 7⏎bit format").
_UNIT_LINE = re.compile(
    rf"\n[ \t\u3000]*(?=(?i:{'|'.join(sorted(_UNITS, key=len, reverse=True))})(?!\w))"
)


def _unit_joined(m: re.Match[str]) -> str:
    """A space for a line break between a number and its unit (:data:`_UNIT_LINE`)."""
    before = m.string[max(0, m.start() - _UNIT_SPACES - 1) : m.start()].rstrip(" \t")[-1:]
    return " " if before.isdigit() else m.group()


def as_sketched(texts: Sequence[str]) -> list[str]:
    """``texts`` as the sketch reads them, two things a copy's layout changes read alike:

    * each label of a numbered list (:data:`_LIST_LABEL`) after the word :data:`LABEL_WORD`,
      its context then, instead of the line above's last word. A copy that drops an item (a
      cut) would otherwise put the next item's label where the dropped one's stood, between
      the same words, with another value; now the labels' contexts are the same as often only
      where no item is missing, so a label changed in place still conflicts and a cut list
      does not;
    * a number and its unit of measure on two lines (:data:`_UNIT_LINE`) on one, as a copy
      wrapped elsewhere writes them: the unit is the number's there, as on one line."""
    out = list(texts)
    for i, text in enumerate(texts):
        if _LIST_LABEL.search(text) is not None:
            text = _LIST_LABEL.sub(_LABELLED, text)
            out[i] = text = _FIRST_LABEL.sub(_LABELLED, text, count=1)
        if _UNIT_LINE.search(text) is not None:
            out[i] = _UNIT_LINE.sub(_unit_joined, text)
    return out


#: A date or a time of day as a frame writes it (the month's name in ASCII, as
#: :func:`_dates_spelt_out` leaves it): ``2024-07-28``, ``28.07.2024``, ``12 march 2025``,
#: ``february 12, 2025``, ``10:55:02``; a date's numbers hold a year.
_DATE_OR_TIME = re.compile(
    rf"\b(?:[0-9]{{1,2}}[-./][0-9]{{1,2}}[-./]{_YEAR}|{_YEAR}[-./][0-9]{{1,2}}[-./][0-9]{{1,2}}"
    rf"|(?:[0-9]{{1,2}}\.? *)?(?:{_MONTH_NAMES})\.?,? *(?:[0-9]{{1,2}}(?:st|nd|rd|th)?,? *)?{_YEAR}"
    rf"|[0-9]{{1,2}}:[0-9]{{2}}(?::[0-9]{{2}})?)\b"
)


def dated_only(line: str) -> bool:
    """Whether a folded line holds a digit and every digit of it is in a URL or in a date
    or time of day (``first published at <url> on 28 july 2024``): its numbers are a
    stamp's and a link's, none a price or a count of the page's own."""
    if not _DIGIT.search(line):
        return False
    rest = _DATE_OR_TIME.sub(" ", _dates_spelt_out(sub_urls(" ", line)))
    return _DIGIT.search(rest) is None


#: What each of :data:`_MONTH_WORD`'s names holds: one of these words...
_MONTH_STEMS = (
    "январ", "феврал", "март", "мая", "май", "апрел", "июн", "июл", "август", "сентябр",
    "октябр", "ноябр", "декабр", "märz", "février", "août", "décembre", "março", "fevereiro",
    "dezembro",
)  # fmt: skip
#: ... and so one of these letters or words (a Cyrillic а, ю or я; ä, é, û or ç).
_MONTH_MARKS = ("а", "ю", "я", "ä", "é", "û", "ç", "fevereiro", "dezembro")
#: Each mark with the stems that hold it (a stem under its first mark only): a text that holds
#: a mark is searched for that mark's stems alone.
_STEMS_BY_MARK = tuple(
    (mark, tuple(s for s in _MONTH_STEMS if next(m for m in _MONTH_MARKS if m in s) == mark))
    for mark in _MONTH_MARKS
)


def _may_name_a_month(norm: str) -> bool:
    """False where :data:`_MONTH_WORD` cannot match: none of the words its names hold is in
    the text. Each stem holds a mark, so the stems are searched only under the marks the text
    holds (most texts lack even the letters those words hold, found by ``in`` at memory
    speed; the regex tries its names at every character)."""
    for mark, stems in _STEMS_BY_MARK:
        if mark in norm:
            for stem in stems:
                if stem in norm:
                    return True
    return False


def _month(m: re.Match[str]) -> str:
    """A month's name where it starts a word (the pattern checks only its end: faster)."""
    at = m.start()
    before = m.string[at - 1] if at else " "
    return m.group() if before.isalnum() or before == "_" else " march "


def frame_stamp_lines(texts: Sequence[str], folded: bool = False) -> list[list[int]]:
    """Per text, the lines (0-based, by line break) that hold a date or time stamp of the frame
    (a dateline, a byline's "Updated 16 March 2026": see the module docstring)."""
    stamps: list[list[int]] = [[] for _ in texts]
    sketches_of_bytes([_bytes_of(t, folded) for t in texts], stamps)
    return stamps


def sketches_of_bytes(
    words: Sequence[bytes],
    stamps: list[list[int]] | None = None,
    sides: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`number_sketches` of texts given as their :func:`_bytes_of` (``stamps``: filled
    per text with the lines of its frame's stamps; ``sides``: the texts whose numbers are
    entered once per neighbour, see the module docstring)."""
    ends = np.cumsum([len(w) + 1 for w in words])  # each text's end, past its separator
    return _sketches_of_buf(b"\0".join(words), ends, stamps, sides)


def _sketches_of_buf(
    buf: bytes,
    ends: np.ndarray,
    stamps: list[list[int]] | None = None,
    sides: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`sketches_of_bytes` of the texts' bytes joined by ``\\0`` (``ends``: each text's
    end past its separator), by the compiled kernel (:mod:`.numbers_kernel`), which computes
    what :func:`_sketches_of_buf_numpy` (the reference) does."""
    kernel = _kernel()
    if kernel is None:
        return _sketches_of_buf_numpy(buf, ends, stamps, sides)
    out, docs, lines = kernel.sketch(buf, ends, sides, _kernel_tables(), _KERNEL_SHAPE)
    if stamps is not None:
        for d, ln in zip(docs.tolist(), lines.tolist(), strict=True):
            stamps[d].append(ln)
    return out


_KERNEL_SHAPE = (ROWS, BUCKETS, CELLS)


@lru_cache(maxsize=1)
def _kernel_tables() -> Tables:
    """This module's tables and constants as :func:`.numbers_kernel.sketch` takes them (line
    weights doubled there: a non-ASCII byte 1, an ASCII one 2, so :data:`_MIN_LINE` twice)."""
    constants = (
        _P, _Q, _EMPTY, _LEFT, _RIGHT, _MAX_SKIP, _MAX_GAP, 2 * _MIN_LINE, _SIDE, _MAX_RUN, _NL,
        _19, _20, _MIN_WORD, _INNER, _UNIT_SPACES, EDGE_LINES,
    )  # fmt: skip
    return (
        np.frombuffer(_CLASSES, dtype=np.uint8),
        _WORD_BYTE,
        _UNIT_KEYS,
        _UNIT_MAX,
        _month_hashes(),
        np.array([int(c) for c in constants], dtype=np.uint64),
        _number_word_tables(),
    )


def _number_word_tables() -> tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int
]:
    """:data:`_NUMBER_WORDS` as the kernel reads them: per byte 1 for a word byte (by
    :data:`_CLASSES`), 2 for one that may start common punctuation, 0 otherwise; per first
    two bytes (``first << 8 | second``) the lengths of the words starting so, as bits; the
    words' run hashes (:func:`_range_hashes`)
    sorted, their digits (a row each, in that order) and widths, the shortest and the longest
    word."""
    classes = np.frombuffer(_CLASSES, dtype=np.uint8)
    word = ((classes == _ASCII) | (classes == _OTHER)).astype(np.uint8)
    word[[0xC2, 0xE2, 0xE3]] = 2
    prefix = np.zeros(1 << 16, dtype=np.uint32)
    for w in _NUMBER_WORD_DIGITS:
        prefix[w[0] << 8 | w[1]] |= 1 << len(w)
    words = list(_NUMBER_WORD_DIGITS)
    buf = np.frombuffer(b"".join(words), dtype=np.uint8)
    size = np.array([len(w) for w in words], dtype=np.int64)
    hashes = _range_hashes(buf, np.cumsum(size) - size, np.cumsum(size))
    order = np.argsort(hashes)
    width = max(map(len, _NUMBER_WORD_DIGITS.values()))
    digits = np.zeros((len(words), width), dtype=np.uint8)
    for row, i in enumerate(order.tolist()):
        d = _NUMBER_WORD_DIGITS[words[i]]
        digits[row, : len(d)] = np.frombuffer(d, dtype=np.uint8)
    widths = np.array([len(_NUMBER_WORD_DIGITS[words[i]]) for i in order], dtype=np.int64)
    return (
        word,
        prefix,
        hashes[order],
        digits,
        widths,
        _NUMBER_WORD_MIN,
        _NUMBER_WORD_MAX,
    )


_use_kernel = False


def _kernel() -> ModuleType | None:
    """:mod:`.numbers_kernel` once :func:`warm_kernel` has loaded it, else None (the numpy
    path: the proxy's writes, ``lookup`` and ``fingerprint`` never load numba)."""
    return _load_kernel() if _use_kernel else None


@lru_cache(maxsize=1)
def _load_kernel() -> ModuleType | None:
    try:
        import indexer.fingerprints.numbers_kernel as numbers_kernel
    except ImportError:
        return None
    return numbers_kernel


def warm_kernel() -> bool:
    """Use the number sketch's compiled kernel from now on in this process (and the workers it
    forks): compiled, or loaded from numba's cache, here. False without numba."""
    global _use_kernel
    kernel = _load_kernel()
    if kernel is None:
        return False
    kernel.warm(_kernel_tables(), _KERNEL_SHAPE)
    _use_kernel = True
    return True


def _word_against_number(a: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """``bounds`` with a run's end added where a digit follows the :data:`_MIN_WORD` or more
    letters a run starts with (``koi8`` is ``koi`` then ``8``, as ``koi 8``): the word is the
    number's context, and a copy that cuts or changes it (``8-u`` for ``koi8-u``) has another
    context, not another number. Fewer letters stay the number's (``s23``, ``mp3``)."""
    letter = (a >= 97) & (a <= 122)
    at = np.flatnonzero(letter[:-1] & (a[1:] >= 48) & (a[1:] <= 57)) + 1
    if not len(at):
        return bounds
    start = bounds[np.searchsorted(bounds, at, side="right") - 1]
    others = np.r_[0, np.cumsum(~letter)]  # bytes other than letters before each position
    split = at[(at - start >= _MIN_WORD) & (others[at] == others[start])]
    return np.union1d(bounds, split) if len(split) else bounds


def _context_hashes(a: np.ndarray, lo: np.ndarray, hi: np.ndarray, ascii: np.ndarray) -> np.ndarray:
    """Hash of each context word ``a[lo:hi]`` (non-empty); an ASCII one (``ascii``) by its
    first letter, its last, its length and its inner letters in any order: a copy's typo that
    swaps two inner letters (``mount`` → ``monut``) leaves the number beside it in the same
    context, so a number changed there still conflicts. Other scripts' bytes, and a range
    holding a digit (a neighbouring number, ``ipv4``), are hashed in order
    (:func:`_range_hashes`)."""
    out = _range_hashes(a, lo, hi)
    if not len(lo):
        return out
    digit = np.r_[0, np.cumsum((a >= 48) & (a <= 57))]
    word = np.flatnonzero(ascii & (digit[hi] == digit[lo]))
    if not len(word):
        return out
    wlo, whi = lo[word], hi[word]
    inner = np.maximum(whi - wlo - 2, 0)
    first = np.cumsum(inner) - inner
    seg = np.repeat(np.arange(len(word)), inner)
    pos = wlo[seg] + 1 + np.arange(int(inner.sum())) - first[seg]
    sums = np.zeros(len(word), dtype=np.uint64)
    with np.errstate(over="ignore"):
        terms = _fmix(a[pos].astype(np.uint64) + _INNER)
        np.add.at(sums, seg, terms)
        ends = a[wlo].astype(np.uint64) * _P + a[whi - 1].astype(np.uint64) * _Q
        out[word] = _fmix(sums + ends + (whi - wlo).astype(np.uint64))
    return out


def _sketches_of_buf_numpy(
    buf: bytes,
    ends: np.ndarray,
    stamps: list[list[int]] | None = None,
    sides: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`_sketches_of_buf` in numpy: the reference the kernel is tested against."""
    buf, ends = _number_words(buf, ends)
    n = len(ends)
    out = np.zeros((n, CELLS), dtype=np.uint32)
    digits = np.flatnonzero(np.frombuffer(buf.translate(_DIGITS), dtype=np.bool_))
    if not len(digits):
        return out
    # a unit of measure after one space is the number's, as written close: "128 GB" = "128GB"
    spaces = _unit_spaces(buf, digits)
    if len(spaces):
        cut = [-1, *spaces.tolist(), len(buf)]
        buf = b"".join([buf[lo + 1 : hi] for lo, hi in pairwise(cut)])
        digits -= np.searchsorted(spaces, digits)  # no space removed is a digit
        ends -= np.searchsorted(spaces, ends)
    cls = np.frombuffer(buf.translate(_CLASSES), dtype=np.uint8).copy()
    a = np.frombuffer(buf, dtype=np.uint8)
    if not buf.isascii():
        _punctuation_is_space(buf, cls)
    # runs of one class: run r is bounds[r]:bounds[r + 1], of class kind[r]
    bounds = np.r_[0, np.flatnonzero(cls[1:] != cls[:-1]) + 1, len(a)]
    bounds = _word_against_number(a, bounds)
    kind = np.r_[cls[bounds[:-1]], _SEP, _SEP]  # two separators past the end
    # numeric runs: holding a digit (kid3, mp3, addr2line carry one) and, but in a short
    # document, no "_" (an identifier such as asn1_der: see below); digits ascend, so do runs
    of_digit = np.searchsorted(bounds, digits, side="right") - 1
    at = np.flatnonzero(np.r_[True, of_digit[1:] != of_digit[:-1]])
    runs, count = of_digit[at], np.diff(np.r_[at, len(of_digit)])
    size = bounds[runs + 1] - bounds[runs]
    only_digits = count == size
    lead = a[bounds[runs]].astype(np.int64) * 256 + a[np.minimum(bounds[runs] + 1, len(a) - 1)]
    year = (size == 4) & ((lead == _19) | (lead == _20))  # 19xx, 20xx
    dated = (size <= 2) | year  # a day's, an hour's or a year's run
    if b"_" in buf:  # a run with "_" is a number in a short document only (uint64_t)
        under = np.searchsorted(bounds, np.flatnonzero(a == 95), side="right") - 1
        keep = ~_member(runs, under)
        if sides is not None:
            keep |= sides[np.searchsorted(ends, bounds[runs], side="right")]
        only_digits, year, dated, runs = only_digits[keep], year[keep], dated[keep], runs[keep]
    if not len(runs):
        return out
    # a number: numeric runs each at most _MAX_GAP spaces after the one before
    gap = runs[:-1] + 1  # the run after each numeric run
    joined = np.r_[
        False,
        (runs[1:] == gap + 1)
        & (kind[gap] == _SPACE)
        & (_characters(a, bounds[gap], bounds[runs[1:]]) <= _MAX_GAP),
    ]
    heads = np.flatnonzero(~joined)  # each number's first run, as an index into runs
    first, last = runs[heads], runs[np.r_[heads[1:], len(runs)] - 1]
    number = np.cumsum(~joined) - 1  # the number each numeric run belongs to
    # values: hash of each numeric run, combined in order within its number
    lo = bounds[runs]
    h = _range_hashes(a, lo, np.minimum(bounds[runs + 1], lo + _MAX_RUN))
    offset = (np.arange(len(runs)) - heads[number]).astype(np.uint64)
    with np.errstate(over="ignore"):
        value = np.add.reduceat(_fmix(h + offset * _Q), heads)
    # contexts: the word runs right before and after (over spaces and line breaks)
    ib, hb = _side(a, kind, bounds, first - 1, -1)
    ia, ha = _side(a, kind, bounds, last + 1, 1)
    own = np.flatnonzero(kind[first - 1] == _ASCII)  # a word written against it (koi8)
    if len(own):  # its context before: that word with the word before the two
        _, hp = _side(a, kind, bounds, first[own] - 2, -1)
        with np.errstate(over="ignore"):
            hb[own] = _fmix(hb[own] * _Q + hp)
    # a month's name beside it on its line (a dateline is one line: "1⏎May be …" is none)
    breaks_before = np.r_[0, np.cumsum(kind == _BREAK)]  # the line-break runs before run r
    month = (_member(hb, _month_hashes()) & (breaks_before[first] == breaks_before[ib + 1])) | (
        _member(ha, _month_hashes()) & (breaks_before[ia] == breaks_before[last + 1])
    )
    doc = np.searchsorted(ends, bounds[first], side="right")  # the document of each number
    with np.errstate(over="ignore"):
        ctx = _fmix(hb * _Q + _fmix(ha))
        pair = _fmix(ctx ^ _fmix(value + _Q))
    # a date or time stamp (3 or more runs of digits only, one a year: 2026-03-18, 18.03.2026
    # 10:55; or a day's, an hour's or a year's digits beside a month's name: 11 October 2026)
    # on a line with few words (a dateline, "printed on ...") at an edge of its document is
    # the frame's: left out
    parts = np.diff(np.r_[heads, len(runs)])
    digits_only = np.minimum.reduceat(only_digits, heads)
    stamp = digits_only & (
        ((parts >= 3) & np.maximum.reduceat(year, heads))
        | (
            month
            & (parts <= 2)
            & np.minimum.reduceat(dated, heads)
            & ~_worded(a, bounds[first], bounds[last + 1])
        )
    )
    starts = np.concatenate(([0], ends[:-1]))
    if stamp.any():
        # the runs of the texts holding a stamp (a text's bytes are starts:ends - 1)
        holding = np.unique(doc[stamp])
        lo = np.searchsorted(bounds, starts[holding])
        hi = np.searchsorted(bounds, ends[holding] - 1)
        stamp[stamp] = _frame_lines(kind, bounds, runs, first[stamp], lo, hi)
        if sides is not None:
            stamp &= ~sides[doc]  # a short document's dates are its own
    if stamps is not None and stamp.any():
        breaks = np.concatenate(([0], np.cumsum(a == _NL)))
        at = bounds[first[stamp]]
        line = breaks[at] - breaks[starts[doc[stamp]]]
        for d, ln in zip(doc[stamp].tolist(), line.tolist(), strict=True):
            stamps[d].append(ln)
    kept = ~stamp
    if sides is not None and sides.any():
        # a short document's number: two more entries, one per neighbour alone as the context
        one = kept & sides[doc]
        with np.errstate(over="ignore"):
            left = _fmix(hb * _Q + _LEFT)
            right = _fmix(_fmix(ha) + _RIGHT)
            value_hash = _fmix(value + _Q)
            entries = (
                np.r_[doc[kept], doc[one], doc[one]],
                np.r_[ctx[kept], left[one], right[one]],
                np.r_[
                    pair[kept],
                    _fmix(left[one] ^ value_hash[one]),
                    _fmix(right[one] ^ value_hash[one]),
                ],
            )
        return _cells(*entries, n)
    return _cells(doc[kept], ctx[kept], pair[kept], n)


def _worded(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per number (its bytes ``lo:hi`` of ``a``), whether it is a number word's digits: set
    apart by :data:`_NUMBER_WORD_PAD` spaces on both sides (:data:`_NUMBER_WORD_DIGITS`). A
    frame writes a date's day in digits: "no one may kill" is no stamp "1 may"."""
    pad = _NUMBER_WORD_PAD
    at = lo[:, None] - np.arange(1, pad + 1)
    after = hi[:, None] + np.arange(pad)
    size = len(a)
    before_ok = (at >= 0).all(axis=1) & (a[np.clip(at, 0, size - 1)] == 32).all(axis=1)
    after_ok = (after < size).all(axis=1) & (a[np.clip(after, 0, size - 1)] == 32).all(axis=1)
    return before_ok & after_ok


@lru_cache(maxsize=1)
def _month_hashes() -> np.ndarray:
    """The context hashes (:func:`_side`) of :data:`_MONTHS`, sorted."""
    buf = np.frombuffer(" ".join(_MONTHS).encode("ascii"), dtype=np.uint8)
    starts = np.r_[0, np.flatnonzero(buf == 32) + 1]
    ends = np.r_[np.flatnonzero(buf == 32), len(buf)]
    return np.sort(_context_hashes(buf, starts, ends, np.ones(len(starts), dtype=bool)))


def _member(x: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """``np.isin(x, ordered)`` for a sorted ``ordered`` (one binary search per value)."""
    if not len(ordered):
        return np.zeros(len(x), dtype=bool)
    pos = np.minimum(np.searchsorted(ordered, x), len(ordered) - 1)
    return ordered[pos] == x


def _key(unit: bytes) -> int:
    """A word of at most 7 bytes as one integer: its bytes little-endian, its length above."""
    return int.from_bytes(unit, "little") | len(unit) << 56


_UNIT_KEYS = np.array(sorted(_key(u.encode()) for u in _UNITS), dtype=np.uint64)
_UNIT_MAX = max(len(u.encode()) for u in _UNITS)
#: Most spaces between a number and its unit of measure that still join them ("120  km", a
#: doubled space, is "120 km" and "120km").
_UNIT_SPACES = 4
# the bytes that continue a word after a unit (a unit must end its word)
_WORD_BYTE = np.array([48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c >= 128 for c in range(256)])
_SHIFTS = np.arange(0, 8 * _UNIT_MAX, 8, dtype=np.uint64)


#: Numbers written as words, as the sketch reads them (folded): English, German and Russian
#: cardinals to nineteen and the tens (Russian in the cases a count takes). Not the articles
#: (``ein``, ``eine``) nor Russian ``семью`` ("family" too); CJK numerals are read by
#: :func:`_cjk_numerals`.
_NUMBER_WORDS_BY_VALUE: tuple[tuple[int, str], ...] = (
    (1, "one eins один одна одно одного одной одному одним одном одну"),
    (2, "two zwei два две двух двум двумя"),
    (3, "three drei три трёх трех трём трем тремя"),
    (4, "four vier четыре четырёх четырех четырём четырем четырьмя"),
    (5, "five fünf пять пяти пятью"),
    (6, "six sechs шесть шести шестью"),
    (7, "seven sieben семь семи"),
    (8, "eight acht восемь восьми восемью"),
    (9, "nine neun девять девяти девятью"),
    (10, "ten zehn десять десяти десятью"),
    (11, "eleven elf одиннадцать одиннадцати"),
    (12, "twelve zwölf двенадцать двенадцати"),
    (13, "thirteen dreizehn тринадцать тринадцати"),
    (14, "fourteen vierzehn четырнадцать четырнадцати"),
    (15, "fifteen fünfzehn пятнадцать пятнадцати"),
    (16, "sixteen sechzehn шестнадцать шестнадцати"),
    (17, "seventeen siebzehn семнадцать семнадцати"),
    (18, "eighteen achtzehn восемнадцать восемнадцати"),
    (19, "nineteen neunzehn девятнадцать девятнадцати"),
    (20, "twenty zwanzig двадцать двадцати"),
    (30, "thirty dreissig тридцать тридцати"),
    (40, "forty vierzig сорок сорока"),
    (50, "fifty fünfzig пятьдесят пятидесяти"),
    (60, "sixty sechzig шестьдесят шестидесяти"),
    (70, "seventy siebzig семьдесят семидесяти"),
    (80, "eighty achtzig восемьдесят восьмидесяти"),
    (90, "ninety neunzig девяносто девяноста"),
)
_NUMBER_WORDS = {word: value for value, words in _NUMBER_WORDS_BY_VALUE for word in words.split()}
#: Each number word's bytes as the sketch reads them: its digits, set apart from the runs around
#: it by more than :data:`_MAX_GAP` spaces, so that a number word never joins a neighbouring
#: number ("zwei drei" is two numbers, as a copy that swapped them reads them).
_NUMBER_WORD_PAD = _MAX_GAP + 1
_NUMBER_WORD_DIGITS = {
    w.encode(): b" " * _NUMBER_WORD_PAD + str(v).encode() + b" " * _NUMBER_WORD_PAD
    for w, v in _NUMBER_WORDS.items()
}
_NUMBER_WORD_MIN = min(map(len, _NUMBER_WORD_DIGITS))
_NUMBER_WORD_MAX = max(map(len, _NUMBER_WORD_DIGITS))
#: The bytes a number word starts with.
_NUMBER_WORD_FIRST = np.zeros(256, dtype=np.bool_)
_NUMBER_WORD_FIRST[[w[0] for w in _NUMBER_WORD_DIGITS]] = True


def _number_words(buf: bytes, ends: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The texts' bytes with each word that writes a number (:data:`_NUMBER_WORDS`) as its
    digits, spaced apart (:data:`_NUMBER_WORD_DIGITS`: "two-year" is "2 year", "in two days" "in
    2 days"), and ``ends`` moved with them.
    A word is a maximal run of word bytes (:data:`_CLASSES`' ASCII and other bytes, common
    non-ASCII punctuation a space, as :func:`_punctuation_is_space` has it)."""
    a = np.frombuffer(buf, dtype=np.uint8)
    cls = np.frombuffer(buf.translate(_CLASSES), dtype=np.uint8).copy()
    if not buf.isascii():
        _punctuation_is_space(buf, cls)
    word = ((cls == _ASCII) | (cls == _OTHER)).astype(np.int8)
    edges = np.flatnonzero(np.diff(np.r_[np.int8(0), word, np.int8(0)]))
    lo, hi = edges[::2], edges[1::2]
    size = hi - lo
    pick = (size >= _NUMBER_WORD_MIN) & (size <= _NUMBER_WORD_MAX)
    pick[pick] = _NUMBER_WORD_FIRST[a[lo[pick]]]
    found = [
        (s, e, d)
        for s, e in zip(lo[pick].tolist(), hi[pick].tolist(), strict=True)
        if (d := _NUMBER_WORD_DIGITS.get(buf[s:e])) is not None
    ]
    if not found:
        return buf, ends
    pieces = []
    at = 0
    for s, e, d in found:
        pieces += [buf[at:s], d]
        at = e
    pieces.append(buf[at:])
    starts = np.array([s for s, _, _ in found], dtype=np.int64)
    removed = np.cumsum([e - s - len(d) for s, e, d in found])
    before = np.searchsorted(starts, ends)  # the words starting before each end
    return b"".join(pieces), ends - np.r_[0, removed][before]


def _unit_spaces(buf: bytes, digits: np.ndarray) -> np.ndarray:
    """The positions (ascending) of the spaces between a digit and a unit of measure that is a
    word of its own (:data:`_UNITS`) at most :data:`_UNIT_SPACES` spaces after it, found from
    the digits."""
    a = np.frombuffer(buf, dtype=np.uint8)
    d = digits[digits + 2 < len(a)]
    d = d[a[d + 1] == 32]
    if not len(d):
        return d
    # the spaces after each digit (at most _UNIT_SPACES)
    gap = np.ones(len(d), dtype=np.int64)
    going = np.ones(len(d), dtype=bool)
    for g in range(1, _UNIT_SPACES):
        at = d + 1 + g
        going &= (at < len(a)) & (a[np.minimum(at, len(a) - 1)] == 32)
        gap += going
    # the bytes after the spaces, up to one past the longest unit (0, not a word byte, past
    # the end); the word there is a unit if its length and bytes are a unit's
    at = (d + 1 + gap)[:, None] + np.arange(_UNIT_MAX + 1)
    window = a[np.minimum(at, len(a) - 1)] * (at < len(a))
    length = np.argmin(_WORD_BYTE[window], axis=1)  # 0 also when no byte ends the word
    head = window[:, :_UNIT_MAX].astype(np.uint64) << _SHIFTS
    head[np.arange(_UNIT_MAX) >= length[:, None]] = 0
    key = np.bitwise_or.reduce(head, axis=1) | length.astype(np.uint64) << np.uint64(56)
    unit = (length > 0) & _member(key, _UNIT_KEYS)
    d, gap = d[unit], gap[unit]
    return np.repeat(d + 1, gap) + (
        np.arange(int(gap.sum())) - np.repeat(np.cumsum(gap) - gap, gap)
    )


def _frame_lines(
    kind: np.ndarray,
    bounds: np.ndarray,
    numeric: np.ndarray,
    first: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> np.ndarray:
    """Per number starting at run ``first``, whether its line may be the frame's: fewer than
    :data:`_MIN_LINE` weighted bytes of non-numeric words (``numeric``: the numeric runs), in a
    document with other lines of words (a document of one line is all content), among its
    first or last :data:`EDGE_LINES` lines holding a word or a number. ``lo``, ``hi``: the
    runs of the documents holding the numbers, ascending; line breaks end lines."""
    counts = hi - lo
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    idx = np.repeat(lo - offsets, counts) + np.arange(total)  # their runs, in order
    k = kind[idx]
    new = np.zeros(total, dtype=bool)
    new[offsets] = True  # a document's first run
    line = np.cumsum((k == _BREAK) | new)
    doc = np.cumsum(new) - 1
    is_numeric = np.zeros(len(bounds), dtype=bool)
    is_numeric[numeric] = True
    # a word written against its number (koi8) weighs as the number: nothing
    glued = (k == _ASCII) & (kind[idx + 1] == _ASCII)
    wordy = ((k == _ASCII) | (k == _OTHER)) & ~is_numeric[idx] & ~glued
    # a non-ASCII byte weighs 1/2: a Cyrillic or Greek letter 1 like an ASCII one, a CJK
    # character 3/2 (in UTF-8 they are 2 and 3 bytes)
    weight = (bounds[idx + 1] - bounds[idx]).astype(np.float64)
    weight[k == _OTHER] *= 0.5
    lines = int(line[-1]) + 1
    size = np.bincount(line[wordy], weight[wordy], minlength=lines)
    line_doc = np.zeros(lines, dtype=np.int64)
    line_doc[line] = doc
    wordy_lines = np.bincount(line_doc[size > 0], minlength=len(lo))
    # each line's place among its document's lines holding a word or a number
    filled = (np.bincount(line[(k == _ASCII) | (k == _OTHER)], minlength=lines) > 0).astype(
        np.int64
    )
    before: np.ndarray = np.cumsum(filled) - filled  # lines of words before each, from the first
    first_line = np.zeros(len(lo), dtype=np.int64)
    first_line[doc[offsets]] = line[offsets]
    rank: np.ndarray = before - before[first_line[line_doc]]
    filled_lines = np.bincount(line_doc, weights=filled, minlength=len(lo)).astype(np.int64)
    at = np.searchsorted(idx, first)
    ln = line[at]
    edge = (rank[ln] < EDGE_LINES) | (rank[ln] >= filled_lines[doc[at]] - EDGE_LINES)
    return (size[ln] < _MIN_LINE) & (wordy_lines[doc[at]] > 1) & edge


def _side(
    a: np.ndarray, kind: np.ndarray, bounds: np.ndarray, at: np.ndarray, step: int
) -> tuple[np.ndarray, np.ndarray]:
    """The word run nearest run ``at`` in direction ``step``, ``at`` included, over spaces and
    line breaks (-1 where there is none: the text's start or end, or ``at`` is -1), and its
    hash (:data:`_EMPTY` where none), hashed on the bytes nearest ``at`` (:data:`_SIDE` of a
    non-ASCII run, :data:`_MAX_RUN` of an ASCII one). A word and the number written against it
    (``ipv4``), met beyond a space, are read as one run: only a number's own word is split off
    as its context."""
    ok = at >= 0
    idx = np.where(ok, at, 0)
    for _ in range(_MAX_SKIP):  # spaces and line breaks: " __nl__  __nl__ " between paragraphs
        skip = ok & ((kind[idx] == _SPACE) | (kind[idx] == _BREAK))
        if not skip.any():
            break
        idx = np.where(skip, idx + step, idx)
        ok &= idx >= 0
        idx = np.where(ok, idx, 0)
    ok &= (kind[idx] == _ASCII) | (kind[idx] == _OTHER)
    idx = np.where(ok, idx, -1)
    h = np.full(len(at), _EMPTY, dtype=np.uint64)
    r = idx[ok]
    lo, hi = bounds[r], bounds[r + 1]
    width = np.where(kind[r] == _OTHER, _SIDE, _MAX_RUN)
    # a word written against a number beyond a space (ipv4) is read whole, as a context
    if step < 0:
        glued = (r > 0) & (kind[r] == _ASCII) & (kind[np.maximum(r - 1, 0)] == _ASCII)
        lo = np.where(glued, bounds[np.maximum(r - 1, 0)], lo)
        lo = np.maximum(lo, hi - width)
    else:
        glued = (kind[r] == _ASCII) & (kind[r + 1] == _ASCII)
        hi = np.where(glued, bounds[np.minimum(r + 2, len(bounds) - 1)], hi)
        hi = np.minimum(hi, lo + width)
    h[ok] = _context_hashes(a, lo, hi, kind[r] == _ASCII)
    return idx, h


def _punctuation_is_space(buf: bytes, cls: np.ndarray) -> None:
    """Class the UTF-8 of common non-ASCII punctuation as space, in place: Latin-1 signs
    (U+00A0-00BF: « » ¿ ...), general punctuation (U+2000-206F: — “ ” „ …) and CJK
    punctuation (U+3000-303F: 、 。 「 」)."""
    a = np.frombuffer(buf, dtype=np.uint8)
    n = len(a)
    lead = np.flatnonzero(np.frombuffer(buf.translate(_LEADS), dtype=np.bool_)[: n - 1])
    if not len(lead):
        return
    lb, nb = a[lead], a[lead + 1]
    two = lead[(lb == 0xC2) & (nb >= 0xA0) & (nb <= 0xBF)]
    three = lead[((lb == 0xE2) & ((nb == 0x80) | (nb == 0x81)) | (lb == 0xE3) & (nb == 0x80))]
    three = three[three + 2 < n]
    for k in range(2):
        cls[two + k] = _SPACE
    for k in range(3):
        cls[three + k] = _SPACE


def _cells(doc: np.ndarray, ctx: np.ndarray, pair: np.ndarray, n: int) -> np.ndarray:
    """(n, CELLS) sketches from every number occurrence's document, context hash and pair
    hash (:func:`_sums` in the number sketch's cells)."""
    out = np.zeros((n, CELLS), dtype=np.uint32)
    out[:, :NUMBER_CELLS] = _sums(doc, ctx, pair, n, BUCKETS)
    return out


def _sums(
    doc: np.ndarray, ctx: np.ndarray, pair: np.ndarray, n: int, buckets: int, rows: int = ROWS
) -> np.ndarray:
    """(n, rows * buckets) cells from every entry's document, context hash and pair hash: per
    row, a bucket and a 16-bit context sum from a hash of the context of the row's own, an
    8-bit value sum from a hash of the pair of its own."""
    width = rows * buckets
    out = np.zeros((n, width), dtype=np.uint32)
    for r in range(rows):
        with np.errstate(over="ignore"):
            salt = _U64(r) * _Q
            hc, hp = _fmix(ctx + salt), _fmix(pair + salt)
        cell = doc * width + r * buckets + (hc % _U64(buckets)).astype(np.int64)
        csum = np.bincount(cell, (hc >> _U64(48)).astype(np.float64), n * width)
        vsum = np.bincount(cell, (hp & _U64(0xFF)).astype(np.float64), n * width)
        cols = slice(r * buckets, (r + 1) * buckets)
        cells = (csum.astype(np.int64) % 65536) << 8 | (vsum.astype(np.int64) % 256)
        out[:, cols] = cells.reshape(n, width)[:, cols]
    return out


def conflicts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k,) bool: whether the number sketches of k pairs of documents (``a``, ``b``: (k,
    :data:`CELLS`)) conflict: some cell has equal context sums and different value sums."""
    return ~agree(a, b)


def agree(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k,) bool: ``~conflicts(a, b)`` (the verification's hot path): no cell of the number
    sketch and the names inside sentences has an XOR in 1..255 (uint32 wraps 0 - 1 above 254),
    the writing cells agree, and the name cells agree where either has any."""
    if not len(a):
        return np.ones(0, dtype=bool)
    x = np.bitwise_xor(a[:, :SKETCH_CELLS], b[:, :SKETCH_CELLS])
    x -= np.uint32(1)
    ok = np.minimum.reduce(x, axis=-1) >= 255
    ok &= writings_agree(a[:, WRITING_CELL], b[:, WRITING_CELL])
    names_a, names_b = a[:, NAMES_AT:WRITING_CELL], b[:, NAMES_AT:WRITING_CELL]
    if np.count_nonzero(names_a) and np.count_nonzero(names_b):  # most pages have no names
        k = np.flatnonzero(names_a.any(axis=1) & names_b.any(axis=1) & ok)
        ok[k] = names_agree(names_a[k], names_b[k])
    return ok


def cells_to_bytes(cells: np.ndarray) -> np.ndarray:
    """(n, CELLS) sketches -> (n, CELLS, 3) uint8: each cell's 3 little-endian bytes (the
    stored form, in ``collapse_fp.packed``)."""
    return np.ascontiguousarray(cells, dtype="<u4").view(np.uint8).reshape(-1, CELLS, 4)[:, :, :3]


def cells_from_bytes(raw: np.ndarray) -> np.ndarray:
    """Inverse of :func:`cells_to_bytes`: (n, CELLS, 3) uint8 -> (n, CELLS) uint32, each
    cell's 3 bytes copied under a zero fourth and read as one little-endian ``uint32``."""
    n = len(raw)
    wide = np.zeros((n, CELLS, 4), dtype=np.uint8)
    wide[:, :, :3] = raw
    return wide.view("<u4").reshape(n, CELLS).astype(np.uint32, copy=False)
