"""Text to features: normalisation, tokens for every script, word shingles and exact Jaccard.

Every fingerprint is computed from the token sequence produced here, so this module defines
what "the same text" means. The text is NFKC-normalised and case-folded (full-width and
half-width forms, ligatures and case disappear); every character that is neither a word
character (``str.isalnum()``, ``_``) nor a combining mark separates tokens (punctuation and
spaces of every script). Then:

* scripts written with spaces give **words**: maximal runs of word characters and marks
  (marks keep Devanagari, Bengali, ... words whole);
* a URL (``scheme://`` up to the next space) is one token, its word characters run together:
  an address is one identifier, not a dozen words;
* scripts written without spaces (:data:`DENSE_RANGES`: Han, Hiragana, Katakana, Bopomofo,
  Hangul; Thai, Lao, Khmer, Myanmar) give **character bigrams**, as Lucene's ``CJKBigramFilter``
  does: each character with the next one of its run, a run of one character its unigram. A run
  is a maximal sequence of such characters with only separators between them (spaces and
  punctuation inside it are ignored, so adding or removing them changes nothing); a word
  character of another script (Latin, a digit) or a line break ends it (lines are what the
  per-host boilerplate model recognises, ``indexer.boilerplate``).

Each token carries a **content weight** (:func:`token_weight`, in eighths of a word) so that a
count of tokens means the same amount of text in every script (docs/fingerprints.md).
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "DENSE_RANGES",
    "LINE",
    "WEIGHT_UNIT",
    "ascii_word_bytes",
    "fold",
    "jaccard",
    "kind_table",
    "learn_kinds",
    "normalize",
    "shingle_set",
    "shingles",
    "sub_urls",
    "token_bytes",
    "token_weight",
    "token_weights",
    "tokenize",
    "top_code_points",
    "with_url_tokens",
    "word_bytes",
    "word_bytes_many",
]

#: Content weight of one word token; bigram weights are in the same unit (:func:`token_weight`).
WEIGHT_UNIT = 8

#: Code point ranges (inclusive) of the scripts written without spaces, with the content weight
#: of one character in eighths of a word: two CJK characters (Han, kana, Hangul) make a word,
#: four of Thai, Lao, Khmer or Myanmar (docs/fingerprints.md has the measurements).
DENSE_RANGES: tuple[tuple[int, int, int], ...] = (
    (0x0E00, 0x0E7F, 2),  # Thai
    (0x0E80, 0x0EFF, 2),  # Lao
    (0x1000, 0x109F, 2),  # Myanmar
    (0x1100, 0x11FF, 4),  # Hangul Jamo
    (0x1780, 0x17FF, 2),  # Khmer
    (0x19E0, 0x19FF, 2),  # Khmer symbols
    (0x2E80, 0x2FDF, 4),  # CJK and Kangxi radicals
    (0x3005, 0x3007, 4),  # 々 〆 〇
    (0x3021, 0x3029, 4),  # Hangzhou numerals
    (0x3031, 0x3035, 4),  # kana repeat marks
    (0x3038, 0x303C, 4),  # Han repeat marks
    (0x3040, 0x30FF, 4),  # Hiragana, Katakana
    (0x3100, 0x312F, 4),  # Bopomofo
    (0x3130, 0x318F, 4),  # Hangul compatibility Jamo
    (0x31A0, 0x31BF, 4),  # Bopomofo extended
    (0x31F0, 0x31FF, 4),  # Katakana phonetic extensions
    (0x3400, 0x4DBF, 4),  # CJK extension A
    (0x4E00, 0x9FFF, 4),  # CJK unified ideographs
    (0xA960, 0xA97F, 4),  # Hangul Jamo extended A
    (0xA9E0, 0xA9FF, 2),  # Myanmar extended B
    (0xAA60, 0xAA7F, 2),  # Myanmar extended A
    (0xAC00, 0xD7FF, 4),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF, 4),  # CJK compatibility ideographs
    (0x1B000, 0x1B16F, 4),  # kana supplement and extensions
    (0x20000, 0x3FFFF, 4),  # CJK extensions B to I
)
_STARTS = [lo for lo, _, _ in DENSE_RANGES]


def _dense_weight(ch: str) -> int:
    """Content weight of a character of a dense script (eighths of a word), 0 for any other."""
    c = ord(ch)
    i = bisect.bisect_right(_STARTS, c) - 1
    if i >= 0 and c <= DENSE_RANGES[i][1]:
        return DENSE_RANGES[i][2]
    return 0


def _class_of(ch: str) -> str:
    r"""``"w"`` word character, ``"m"`` combining mark, ``"d"`` dense script, ``" "`` separator."""
    if _dense_weight(ch):
        return "d" if ch.isalnum() or unicodedata.category(ch)[0] == "M" else " "
    if ch.isalnum():
        return "w"
    return "m" if unicodedata.category(ch)[0] == "M" else " "


_class = functools.lru_cache(maxsize=1 << 16)(_class_of)

# ASCII fast path: lower-case letters, keep [0-9_a-z] and line breaks, every other byte becomes
# a space (a line break separates tokens too, and ends a dense run).
_ASCII_WORDS = bytes(
    (c | 0x20)
    if 65 <= c <= 90
    else c
    if (48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c == 10)
    else 32
    for c in range(256)
)
#: The token :func:`word_bytes` puts where a line breaks when asked (``lines=True``).
LINE = b"\x01"
_UTF8_WORDS = _ASCII_WORDS[:128] + bytes(range(128, 256))  # non-ASCII bytes kept as they are
_ASCII_BYTES = bytes(range(128))
_DENSE_CLASS = "".join(
    f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in DENSE_RANGES
)  # no range starts with a character special inside [...]
_NUMPY_BYTES = 1500  # texts from this size (UTF-8) find their bigrams with numpy (faster there)
_DENSE_RUN = re.compile(f"[{_DENSE_CLASS}](?: *[{_DENSE_CLASS}])*")


def normalize(text: str) -> str:
    """Return ``text`` NFKC-normalised and case-folded, so trivial variants compare equal."""
    if text.isascii():
        # NFKC is the identity on ASCII and casefold() equals lower() there; skip the work.
        return text.lower()
    if not unicodedata.is_normalized("NFKC", text):  # a fast check: most text already is
        text = unicodedata.normalize("NFKC", text)
    return text.casefold()


def top_code_points(texts: Sequence[str]) -> np.ndarray:
    """(n,) uint32: each text's largest code point (0 for an empty text), in one pass over the
    batch: a text below a script's first code point holds none of it, so the steps that search
    for that script (by regular expression, character by character) can skip the text."""
    out = np.zeros(len(texts), dtype=np.uint32)
    ascii_text = np.fromiter(map(str.isascii, texts), dtype=np.bool_, count=len(texts))
    # ASCII texts as one byte a character, the others as four: most batches are mostly ASCII
    for mine, codec, dtype in (
        (ascii_text, "ascii", np.uint8),
        (~ascii_text, "utf-32-le", np.uint32),
    ):
        picked = [texts[i] for i in np.flatnonzero(mine).tolist()] if not mine.all() else texts
        lengths = np.fromiter(map(len, picked), dtype=np.int64, count=len(picked))
        full = lengths > 0
        if not full.any():
            continue
        points = np.frombuffer("".join(picked).encode(codec, "surrogatepass"), dtype=dtype)
        starts = (np.cumsum(lengths) - lengths)[full]
        out[np.flatnonzero(mine)[full]] = np.maximum.reduceat(points, starts)
    return out


def fold(text: str) -> str:
    """:func:`normalize` for text outside ASCII, ASCII text as it is (its case is folded by
    the byte tables that read it): the form :func:`word_bytes` and the number sketch share."""
    return text if text.isascii() else normalize(text)


def tokenize(text: str) -> list[str]:
    """Return the tokens of the normalised text (module docstring) as strings."""
    return word_bytes(text).decode("utf-8").split()


def token_bytes(text: str) -> list[bytes]:
    """Return the tokens of :func:`tokenize` as UTF-8 bytes (the hot-path form)."""
    return word_bytes(text).split()


def _bigrams(m: re.Match[str]) -> str:
    """The tokens of one dense run: its characters' bigrams, or its lone character."""
    s = m.group().replace(" ", "")
    if len(s) == 1:
        return f" {s} "
    return " " + " ".join(map(operator.add, s, s[1:])) + " "


@functools.cache
def _dense_table() -> np.ndarray:
    """Bool per code point up to the last dense range (and one False beyond): dense or not."""
    table = np.zeros(DENSE_RANGES[-1][1] + 2, dtype=bool)
    for lo, hi, _ in DENSE_RANGES:
        table[lo : hi + 1] = True
    return table


def _dense_tokens(text: str) -> str:
    """``_DENSE_RUN.sub(_bigrams, text)`` with numpy (text: separators already spaces).

    Per code point: spaces inside a dense run are dropped, then each character writes up to
    four code points: a word character itself, a separator a space, a dense character its
    bigram with the next one between spaces (its unigram if alone, nothing if last of its
    run). One pass of array operations instead of a regex callback per run.
    """
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    table = _dense_table()
    dense = table[np.minimum(cp, len(table) - 1)]
    # spaces between two dense characters (nothing else between them) are dropped
    solid = np.flatnonzero(cp != 32)
    gap = dense[solid[:-1]] & dense[solid[1:]] & (np.diff(solid) > 1)
    if gap.any():
        step = np.zeros(len(cp) + 1, dtype=np.int8)
        step[solid[:-1][gap] + 1] = 1
        step[solid[1:][gap]] = -1
        keep = np.cumsum(step[:-1], dtype=np.int8) == 0
        cp, dense = cp[keep], dense[keep]
    nxt = np.append(dense[1:], False)  # the next character is dense too
    prv = np.insert(dense[:-1], 0, False)
    pair = dense & nxt
    first = dense & ~prv  # the first character of a run
    columns = (
        np.where(dense, 32, cp),
        np.where(pair | first, cp, 0),  # a bigram's first character, or a lone one
        np.where(pair, np.append(cp[1:], 0), first * np.uint32(32)),
        pair * np.uint32(32),
    )
    flat = np.stack(columns, axis=1).astype(np.uint32, copy=False).ravel()
    return flat[flat != 0].tobytes().decode("utf-32-le")


_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\W_]+")


def _url_token(m: re.Match[str]) -> str:
    return " " + _NOT_WORD.sub("", m.group()) + " "


_SPACE = re.compile(r"\s")
#: What ends a URL: whitespace, or a character of a script written without spaces or a CJK
#: punctuation mark (CJK text goes on right after a link: ``见https://a.example/x。下文``).
_URL_END = re.compile(f"[\\s{_DENSE_CLASS}\u3000-\u303f\uff00-\uffef]")


def with_url_tokens(text: str) -> str:
    """``text`` with each URL replaced by its token between spaces (the first step of
    :func:`word_bytes`, for tokenisers that take it from there)."""
    return sub_urls(_url_token, text)


def sub_urls(
    repl: str | Callable[[re.Match[str]], str],
    text: str,
    at_line_end: str | Callable[[re.Match[str]], str] | None = None,
) -> str:
    """``re.sub`` of the URL pattern (``scheme://`` up to the next space, or to the next
    character of a script written without spaces or CJK punctuation mark) in ``text``;
    ``at_line_end``: the replacement of a URL with nothing but spaces after it on its line
    (``repl`` when None).

    A match holds no whitespace and runs to the end of its word, so only the words around
    each ``://`` are searched: the pattern scanned over a whole text tries every letter of
    every word as a scheme's start.
    """
    q = text.find("://")
    if q < 0:
        return text
    parts: list[str] = []
    last = 0
    while q >= 0:
        start = max(last, text.rfind(" ", last, q) + 1, text.rfind("\n", last, q) + 1)
        while (m := _SPACE.search(text, start, q)) is not None:  # rarer whitespace
            start = m.end()
        m = _URL_END.search(text, q + 3)
        end = m.start() if m is not None else len(text)
        here = repl if at_line_end is None or not _ends_line(text, end) else at_line_end
        parts += (text[last:start], _URL.sub(here, text[start:end]))
        last = end
        q = text.find("://", end)
    parts.append(text[last:])
    return "".join(parts)


def _ends_line(text: str, at: int) -> bool:
    """Whether ``text`` holds nothing but spaces from ``at`` to its next line break or end."""
    nl = text.find("\n", at)
    rest = text[at:] if nl < 0 else text[at:nl]
    return not rest or rest.isspace()


def word_bytes(text: str, lines: bool = False, folded: bool = False) -> bytes:
    """The tokens of :func:`tokenize` as UTF-8, separated by runs of whitespace (``split()``
    them); with ``lines``, each line break is the token :data:`LINE` between spaces instead;
    ``folded``: ``text`` is already :func:`fold`-ed.

    Every byte that is not part of a token is a space, so a byte never in any token (such as
    ``\\x00``) can be put between the outputs of several texts to tokenise them in one go.
    ASCII text (NFKC is the identity there, case folding lower-casing, word characters
    ``[0-9A-Za-z_]``) takes one ``bytes.translate``. Other text: ASCII bytes the same way,
    then each distinct non-ASCII character that is a separator becomes a space, and dense
    runs, if any, become their bigrams (one regex substitution).
    """
    out, dense = _separated_bytes(text, folded)
    if dense:
        if len(out) < _NUMPY_BYTES:
            out = _DENSE_RUN.sub(_bigrams, out.decode("utf-8")).encode("utf-8")
        else:
            out = _dense_tokens(out.decode("utf-8")).encode("utf-8")
    return out.replace(b"\n", _SPACED_LINE) if lines else out


def word_bytes_many(texts: Sequence[str], lines: bool = False, folded: bool = False) -> list[bytes]:
    """``[word_bytes(t, lines, folded) for t in texts]``, in numpy passes over the batch: the
    separators of the texts with many non-ASCII bytes found per code point in one pass for
    all of them, and the bigrams of the longer texts with dense runs in one more (joined by
    ``\\x01``, a byte that is a space in every output and not dense: a run never spans two
    texts)."""
    outs: list[bytes] = []
    big: list[int] = []  # the texts whose separators are found per code point
    norms: list[str] = []
    pending: list[int] = []  # the texts whose bigrams are found in numpy
    pending_text: list[str] = []
    for i, text in enumerate(texts):
        text = sub_urls(_url_token, text)  # as in _separated_bytes
        if text.isascii():
            outs.append(text.encode("ascii").translate(_ASCII_WORDS))
            continue
        norm = text if folded else normalize(text)
        data = norm.encode("utf-8", "replace")
        rest = data.translate(None, _ASCII_BYTES)
        if len(rest) >= _TABLE_BYTES:
            big.append(i)
            norms.append(norm)
            outs.append(b"")
            continue
        out, dense = _replaced(data, rest)
        if dense:
            if len(out) < _NUMPY_BYTES:
                out = _DENSE_RUN.sub(_bigrams, out.decode("utf-8")).encode("utf-8")
            else:
                pending.append(i)
                pending_text.append(out.decode("utf-8"))
        outs.append(out)
    for i, (sep, dense) in zip(big, _separated_many(norms), strict=True):
        out = sep.encode("utf-8")
        if dense:
            if len(out) < _NUMPY_BYTES:
                out = _DENSE_RUN.sub(_bigrams, sep).encode("utf-8")
            else:
                pending.append(i)
                pending_text.append(sep)
        outs[i] = out
    if pending:
        joined = _dense_tokens("\x01".join(pending_text))
        for i, piece in zip(pending, joined.split("\x01"), strict=True):
            outs[i] = piece.encode("utf-8")
    return [out.replace(b"\n", _SPACED_LINE) for out in outs] if lines else outs


def _separated_bytes(text: str, folded: bool) -> tuple[bytes, bool]:
    """:func:`word_bytes` before the bigrams: its bytes with every separator a space, and
    whether a dense-script character is left."""
    text = sub_urls(_url_token, text)  # a URL is one identifier, not a dozen words
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS), False
    norm = text if folded else normalize(text)
    # lone surrogates become "?", a separator, as they would be in the text itself
    data = norm.encode("utf-8", "replace")
    rest = data.translate(None, _ASCII_BYTES)
    if len(rest) >= _TABLE_BYTES:
        return _separated(norm)
    return _replaced(data, rest)


def _replaced(data: bytes, rest: bytes) -> tuple[bytes, bool]:
    """:func:`_separated_bytes` of a text with few non-ASCII bytes (``data``: its UTF-8,
    ``rest``: its non-ASCII bytes): each distinct separator character replaced by a space."""
    # UTF-8 is self-synchronising: replacing one character's bytes never touches another's
    out = data.translate(_UTF8_WORDS)
    dense = False
    for ch in set(rest.decode("utf-8")):
        kind = _class(ch)
        if kind == " ":
            out = out.replace(ch.encode("utf-8"), b" ")
        elif kind == "d":
            dense = True
    return out, dense


_SPACED_LINE = b" " + LINE + b" "

_TABLE_BYTES = 600  # from this many non-ASCII bytes: separators found per code point (numpy)
_KINDS = {"w": 0, "m": 1, "d": 2, " ": 3}
_SEPARATOR, _DENSE = _KINDS[" "], _KINDS["d"]
_UNKNOWN = 255
_ASCII_OUT = np.frombuffer(_ASCII_WORDS[:128], dtype=np.uint8).astype(np.uint32)


@functools.cache
def _kind_table() -> np.ndarray:
    """Per code point its :func:`_class_of` kind (:data:`_KINDS`), filled as characters are
    met (:data:`_UNKNOWN` until then)."""
    return np.full(0x110000, _UNKNOWN, dtype=np.uint8)


def kind_table() -> np.ndarray:
    """The process's table of code point kinds (uint8 per code point: 0 word character, 1
    combining mark, 2 dense-script character, 3 separator, 255 not yet known): the module
    docstring's classes, for compiled tokenisers (:func:`learn_kinds` fills it)."""
    return _kind_table()


def learn_kinds(code_points: Sequence[int]) -> np.ndarray:
    """:func:`kind_table` with the kinds of ``code_points`` filled in."""
    table = _kind_table()
    for c in code_points:
        table[c] = _KINDS[_class_of(chr(c))]
    return table


def ascii_word_bytes() -> bytes:
    """Per byte value below 128 what :func:`word_bytes` makes of it: a word character
    itself, lower-cased; a line break ``\\n``; any other a space."""
    return _ASCII_WORDS[:128]


def _separated(text: str) -> tuple[bytes, bool]:
    """The bytes of ``text`` (not ASCII, folded) with ASCII bytes as :data:`_ASCII_WORDS` has
    them and every other separator a space (lone surrogates too), and whether it holds a
    dense-script character: per code point in numpy rather than per distinct character."""
    out, dense = _separated_many([text])[0]
    return out.encode("utf-8"), dense


def _separated_many(texts: list[str]) -> list[tuple[str, bool]]:
    """:func:`_separated` of each text (as text, before its UTF-8), in one pass for all."""
    if not texts:
        return []
    cp = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table = _kind_table()
    kind = table[cp]
    unknown = kind == _UNKNOWN
    if unknown.any():
        for c in np.unique(cp[unknown]).tolist():
            table[c] = _KINDS[_class_of(chr(c))]
        kind = table[cp]
    out = np.where(cp < 128, _ASCII_OUT[cp & 127], np.where(kind == _SEPARATOR, np.uint32(32), cp))
    sizes = [len(t) for t in texts]  # a code point is one character of a str
    ends = np.cumsum(sizes)
    starts = ends - sizes
    seen = np.r_[0, np.cumsum(kind == _DENSE)]
    dense = (seen[ends] > seen[starts]).tolist()
    joined = out.tobytes().decode("utf-32-le")
    return [
        (joined[a:b], bool(d))
        for a, b, d in zip(starts.tolist(), ends.tolist(), dense, strict=True)
    ]


def _weight_of(token: bytes) -> int:
    first = token.decode("utf-8", "replace")[:2]
    w = _dense_weight(first[0]) if first else 0
    if not w:
        return WEIGHT_UNIT
    if len(first) == 1:
        return w
    return (w + _dense_weight(first[1])) // 2


def token_weights(tokens: Sequence[bytes]) -> np.ndarray:
    """``[token_weight(t) for t in tokens]`` as int64, the first two characters of every token
    decoded at once in numpy (a token whose first bytes are not well-formed UTF-8, such as a
    lone surrogate's, goes through :func:`token_weight` itself)."""
    n = len(tokens)
    out = np.full(n, WEIGHT_UNIT, dtype=np.int64)
    if n == 0:
        return out
    lens = np.fromiter(map(len, tokens), np.int64, count=n)
    buf = np.frombuffer(b"".join(tokens) + bytes(8), dtype=np.uint8)
    head = buf[(np.cumsum(lens) - lens)[:, None] + _EIGHT].astype(np.int64)  # first 8 bytes
    first, size, ok = _code_points(head, np.zeros(n, dtype=np.int64))
    ok &= size <= lens
    two = lens > size
    second, size2, ok2 = _code_points(head, np.where(two, size, 0))
    ok &= ~two | (ok2 & (size + size2 <= lens))
    table = _dense_weights()
    top = len(table) - 1
    w1 = table[np.minimum(first, top)]
    w2 = table[np.minimum(second, top)]
    out[:] = np.where(w1 == 0, WEIGHT_UNIT, np.where(two, (w1 + w2) // 2, w1))
    for i in np.flatnonzero(~ok).tolist():
        out[i] = token_weight(tokens[i])
    return out


_EIGHT = np.arange(8)


def _code_points(head: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The code point starting at byte ``at[i]`` (at most 4) of each row of ``head`` ((n, 8)
    bytes), its UTF-8 size and whether it is well-formed (shortest form, no surrogate)."""
    rows = np.arange(len(head))
    b0, b1, b2, b3 = (head[rows, at + j] for j in range(4))
    size = np.where(b0 < 0x80, 1, np.where(b0 < 0xE0, 2, np.where(b0 < 0xF0, 3, 4)))
    cp = np.where(
        size == 1,
        b0,
        np.where(
            size == 2,
            (b0 & 0x1F) << 6 | (b1 & 0x3F),
            np.where(
                size == 3,
                (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F),
                (b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F),
            ),
        ),
    )
    ok = (b0 < 0x80) | ((b0 >= 0xC2) & (b0 <= 0xF4))
    ok &= (size < 2) | ((b1 & 0xC0) == 0x80)  # continuation bytes
    ok &= (size < 3) | ((b2 & 0xC0) == 0x80)
    ok &= (size < 4) | ((b3 & 0xC0) == 0x80)
    ok &= ~((size == 3) & ((cp < 0x800) | ((cp >= 0xD800) & (cp <= 0xDFFF))))
    ok &= ~((size == 4) & ((cp < 0x10000) | (cp > 0x10FFFF)))
    return cp, size, ok


@functools.cache
def _dense_weights() -> np.ndarray:
    """Per code point up to the last dense range (and one 0 beyond): its dense weight."""
    table = np.zeros(DENSE_RANGES[-1][1] + 2, dtype=np.int64)
    for lo, hi, weight in DENSE_RANGES:
        table[lo : hi + 1] = weight
    return table


def token_weight(token: bytes) -> int:
    """Content of one token in eighths of a word (:data:`WEIGHT_UNIT` = one word).

    A word of a spaced script weighs a word; a dense-script token weighs its characters'
    mean weight (a run of n characters gives n - 1 bigrams, together about the weight of its
    n characters): a Han, kana or Hangul character 4 (half a word), a Thai, Lao, Khmer or
    Myanmar character 2.
    """
    if token[:1].isascii():
        return WEIGHT_UNIT
    return _weight_of(token)


def shingles(tokens: Sequence[str], k: int) -> list[str]:
    """Return the word k-shingles of ``tokens`` (k words joined by one space), in order.

    Fewer than ``k`` tokens give a single shingle of all tokens; no tokens give none.
    """
    if k < 1:
        raise ValueError(f"shingle length must be >= 1, got {k}")
    n = len(tokens)
    if n == 0:
        return []
    if n < k:
        return [" ".join(tokens)]
    return [" ".join(tokens[i : i + k]) for i in range(n - k + 1)]


def shingle_set(text: str, k: int) -> set[str]:
    """Return the set of word k-shingles of a raw text."""
    return set(shingles(tokenize(text), k))


def jaccard(a_text: str, b_text: str, k: int) -> float:
    """Exact Jaccard similarity of the k-shingle sets of two texts (1.0 if both are empty)."""
    a, b = shingle_set(a_text, k), shingle_set(b_text, k)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
