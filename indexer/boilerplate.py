"""Per-host boilerplate: text on too many of one host's pages is furniture, not content.

A host's *model* is two sorted sets of shingle hashes, one per hash family (the SimHash
features and the MinHash features, see ``indexer.fingerprints.features``), that occur on
more than ``min_share`` of the host's pages, and a set of *slot heads*: the first two tokens
of lines that start alike on many pages and go on differently ("Related pages: ...", a
byline; :func:`line_heads`; a list's heading of one or two tokens, "Related articles" over
"• …" lines, is a head of its own). A token of a page is furniture when a shingle of the
model (SimHash family) covers it or its line starts with a slot head (so does a line longer
than any slot's, ``SLOT_MAX_WORDS``, whose head is on most of the host's pages: a "related
pages" line listing a title of hundreds of words; and so do the bulleted lines of a paragraph
whose first line is cut whole); the page's own content is what is left (its
token count: content in words, so a short text inside a long template is a short document).
A page with at least ``features.NO_WORDS`` words of its own is fingerprinted
from its own shingles: those of the full text that are not the model's (no shingle joins the
text before a template block to the text after it; under ``SLOT_WHOLE_WORDS`` words, or
distinct shingles away from its slot lines, none touching a slot line either; none touching a
line longer than a slot's that was cut). A shorter
page is fingerprinted from its other tokens, in order, as if they were its whole text, so
that it is fingerprinted like the same text without a template (the words it adds,
``features.with_words``); furniture inside a line, with the line's own tokens before and
after it, is kept there (a phrase a host's pages share inside their own sentences, which a
copy on another host keeps). The number sketch reads the page's lines less those mostly cut
whose numbers are all cut too (a listing's line in the host's wording around its own price,
"価格21440円（税込）、送料無料。", keeps the price: its digits are on no other pages) or that
hold a year or a time of day (a page's "edited on" date in the host's footer), and less a
counter under the footer ("Page 27": a number among at most three words after the page's own
text, a line of the frame between them).
The exact key stays that of the full text.

The literal rule removes content too (a host of license texts, where the shared text IS the
content; common wording on a host with few pages), so it is guarded:

* ``min_pages``: a host with fewer pages gets no model (too few to tell its template from
  its content);
* ``min_docs``: a shingle must be on at least this many pages as well as on > ``min_share``;
* ``max_removed`` and ``min_remaining``: a document that would lose more than this share of
  its tokens, or keep less than ``min_remaining`` words of content, is fingerprinted whole:
  there the "template" is the document, or too little own text is left to fingerprint.
  For the cut of every slot line, what a page keeps counts its title once: a line that repeats
  the title (the page's heading) is not counted again (else a one-line story whose start a
  fifth of the host's stories share is cut as a slot, and the title twice is all that is
  left); a page that fails the guard so is cut of the slots on most of its host's pages alone.

:func:`fingerprint_excluding` equals ``fingerprint_arrays`` for documents without a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from indexer.fingerprints import FingerprintArrays, FingerprintParams, fingerprint_arrays
from indexer.fingerprints.compute import (
    document_features,
    features_kernel,
    segment_fingerprints,
    shingles,
    token_fingerprints,
    tokenise,
)
from indexer.fingerprints.features import (
    DIGITS,
    NO_WORDS,
    PHI,
    SAMPLE,
    WEIGHT,
    content_units,
    fmix64,
)
from indexer.fingerprints.names import NAMED_BELOW, dashed_lines
from indexer.fingerprints.numbers import dated_only, frame_stamp_lines, number_sketches

__all__ = [
    "MODEL_KEY",
    "BoilerplateConfig",
    "Features",
    "HostModel",
    "Learner",
    "PageSets",
    "doc_shingle_sets",
    "features",
    "fingerprint_excluding",
    "fingerprint_features",
    "line_heads",
    "model_version",
    "shingle_sets",
]


class BoilerplateConfig(BaseModel):
    """When a shingle counts as a host's furniture, and the guards on removing it."""

    min_share: float = Field(0.5, gt=0, le=1, description="on more than this share of pages")
    min_pages: int = Field(10, ge=1, description="hosts with fewer pages get no model")
    min_docs: int = Field(3, ge=1, description="and on at least this many pages")
    max_removed: float = Field(
        1.0, ge=0, le=1, description="documents losing more of their tokens stay whole"
    )
    min_remaining: int = Field(
        10, ge=0, description="documents keeping less content than this (words) stay whole"
    )
    max_hashes: int = Field(200_000, ge=1, description="cap on a host model's size")
    slot_share: float = Field(
        0.05, gt=0, le=1, description="a short line's head on more than this share is a slot"
    )


@dataclass(frozen=True)
class HostModel:
    """The furniture of one host: sorted unique shingle hashes per hash family."""

    host: str
    pages: int
    simhash_hashes: np.ndarray  # sorted uint64
    minhash_hashes: np.ndarray  # sorted uint64
    slot_heads: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))

    def __len__(self) -> int:
        return len(self.simhash_hashes) + len(self.slot_heads)


@dataclass
class Features:
    """A batch of texts after tokenisation: everything learning and fingerprinting need.

    ``sh``/``mh``: every k-shingle hash of each text (SimHash and MinHash families), what
    models are learnt from and matched against; ``tokens``: each text's token hashes (both
    families), content weights and sample values, what the fingerprint is computed from once
    the furniture is known. A batch can be featurised once, learnt from, and fingerprinted
    later (once the host models are known).
    """

    sh: np.ndarray
    scounts: np.ndarray
    mh: np.ndarray
    mcounts: np.ndarray
    exact_keys: list[str]
    token_count: np.ndarray
    tokens: np.ndarray  # (5, total tokens) uint64: SimHash hash, MinHash hash, weight, sample,
    # holds a digit (features.DIGITS)
    lengths: np.ndarray  # tokens per text
    line_no: np.ndarray  # (total tokens,) int32: the token's line in its text
    texts: list[str]  # the texts, folded (number sketches are read once the furniture is known)
    written: list[str]  # the texts as given (the names inside sentences are read from them)

    @property
    def starts(self) -> np.ndarray:
        """(total tokens,) bool: the token starts a line (its text's first does)."""
        out = np.ones(len(self.line_no), dtype=bool)
        out[1:] = self.line_no[1:] != self.line_no[:-1]
        ends = np.cumsum(self.lengths)
        out[ends[(ends > 0) & (ends < len(out))]] = True
        return out

    def __len__(self) -> int:
        return len(self.scounts)

    def take(self, keep: np.ndarray) -> Features:
        """The features of the texts where ``keep`` (bool per text) is True, in order."""
        return Features(
            self.sh[np.repeat(keep, self.scounts)],
            self.scounts[keep],
            self.mh[np.repeat(keep, self.mcounts)],
            self.mcounts[keep],
            [k for k, ok in zip(self.exact_keys, keep.tolist(), strict=True) if ok],
            self.token_count[keep],
            self.tokens[:, np.repeat(keep, self.lengths)],
            self.lengths[keep],
            self.line_no[np.repeat(keep, self.lengths)],
            [t for t, ok in zip(self.texts, keep.tolist(), strict=True) if ok],
            [t for t, ok in zip(self.written, keep.tolist(), strict=True) if ok],
        )


def features(texts: Sequence[str], p: FingerprintParams) -> Features:
    """The :class:`Features` of ``texts``."""
    names = (p.hash, "minhash", WEIGHT, SAMPLE, DIGITS)
    tokens = tokenise(texts, names)
    (sim_tok, min_tok, weights, sample, digits) = tokens.hashes
    lengths, keys = np.asarray(tokens.lengths, dtype=np.int64), tokens.keys
    sh, scounts = shingles(sim_tok, lengths, p.shingle)
    mh, mcounts = shingles(min_tok, lengths, p.minhash_shingle)
    units = content_units(weights, lengths)
    stacked = np.stack([sim_tok, min_tok, weights, sample, digits]).astype(np.uint64, copy=False)
    return Features(
        sh, scounts, mh, mcounts, keys, units, stacked, lengths, tokens.line_no, tokens.folded,
        list(texts),
    )  # fmt: skip


def _split(h: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    if not len(counts):
        return []
    ends = np.cumsum(counts).tolist()
    return [h[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def _unique_per_doc(h: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """Per document, its unique hashes: in the order first seen, by the compiled kernel once
    loaded (``features_kernel.distinct``), else sorted (:func:`_sorted_unique_per_doc`). The
    learner counts them, so their order does not matter."""
    kernel = features_kernel()
    if kernel is None:
        return _sorted_unique_per_doc(h, counts)
    values, kept = kernel.distinct(h, counts)
    return _split(values, kept)


def _sorted_unique_per_doc(h: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """Per document, its sorted unique hashes (one sort for the whole batch)."""
    n = len(counts)
    if n == 0:
        return []
    doc = np.repeat(np.arange(n, dtype=np.uint16 if n < 1 << 16 else np.int64), counts)
    by_hash = np.argsort(h)
    order = by_hash[np.argsort(doc[by_hash], kind="stable")]  # by doc, then hash (radix)
    hs, ds = h[order], doc[order]
    keep = np.ones(len(hs), dtype=bool)
    keep[1:] = (hs[1:] != hs[:-1]) | (ds[1:] != ds[:-1])
    return _split(hs[keep], np.bincount(ds[keep], minlength=n))


#: A line needs this many tokens for its first two to be a slot's head (a label and a value).
SLOT_MIN_TOKENS = 3
#: A head repeated on more than this share of the pages it is on is wording, not a slot.
SLOT_MAX_REPEATED = 0.2
#: Longer lines (words of content) teach no slot and are never marked as a slot's: a slot is a
#: label and a value (a "related pages" line lists other pages' titles, and a title can be a
#: whole sentence). One whose head is a slot on most of the host's pages is still cut (a
#: title of hundreds of words, a command's whole synopsis, in the "related pages" line).
SLOT_MAX_WORDS = 200
#: Lines of at most this many words are a slot's from ``BoilerplateConfig.slot_share``.
SLOT_SHORT_WORDS = 12
#: Documents with this much content of their own (words, and distinct shingles away from their
#: slot lines) keep their slot lines' shingles.
SLOT_WHOLE_WORDS = 2 * NO_WORDS


#: How many of a page's smallest shingle hashes it keeps to tell its own text from the host's
#: other pages (a copy of a page has the same smallest hash of those few pages share:
#: :meth:`Learner._texts`).
PAGE_SIGNATURE = 8
_NO_SHINGLE = np.uint64(2**64 - 1)


class PageSets(NamedTuple):
    """What pages teach their host's model: per page its unique shingle hashes (both
    families, in no set order), the unique heads of its lines and the heads it has more than
    once (concatenated over the pages for several); for each head, its page (an index into
    ``smallest``), and per page its :data:`PAGE_SIGNATURE` smallest ``sim`` hashes (ascending,
    :data:`_NO_SHINGLE` where it has fewer)."""

    sim: np.ndarray
    mins: np.ndarray
    heads: np.ndarray
    repeated: np.ndarray
    head_pages: np.ndarray = np.zeros(0, dtype=np.int64)
    smallest: np.ndarray = np.zeros((0, PAGE_SIGNATURE), dtype=np.uint64)

    @staticmethod
    def concat(parts: Sequence[PageSets]) -> PageSets:
        offsets = np.cumsum([0, *(len(p.smallest) for p in parts[:-1])])
        return PageSets(
            np.concatenate([p.sim for p in parts]),
            np.concatenate([p.mins for p in parts]),
            np.concatenate([p.heads for p in parts]),
            np.concatenate([p.repeated for p in parts]),
            np.concatenate([p.head_pages + o for p, o in zip(parts, offsets, strict=True)]),
            np.concatenate([p.smallest for p in parts]),
        )


#: Characters that mark the items of a list (typographic bullets: never a hyphen or an
#: asterisk, which also start a man page's options and a text's own lists).
BULLETS = "•·◦‣▪▫▸▹►▻»›●○■□◆◇・"
_BULLET = re.compile(f"[{BULLETS}]")


def line_heads(
    f: Features, longer_than: float = 0, longest: float = SLOT_MAX_WORDS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Line heads: for every line of at least ``SLOT_MIN_TOKENS`` tokens and of more than
    ``longer_than`` and at most ``longest`` words, its document, the hash of its first two
    tokens (its *head*; low bit 0), its first token's position and its token count; and again
    for every such line of at most ``SLOT_SHORT_WORDS`` words, with the low bit 1 (a short
    line's head, which ``BoilerplateConfig.slot_share`` of the pages make a slot)."""
    first = np.flatnonzero(f.starts)
    size = np.diff(np.append(first, len(f.starts)))
    words = content_units(f.tokens[2], size)
    ok = (size >= SLOT_MIN_TOKENS) & (words > longer_than) & (words <= longest)
    first, size, words = first[ok], size[ok], words[ok]
    tok = f.tokens[0]
    heads = fmix64(tok[first] * PHI + tok[first + 1]) & ~np.uint64(1)
    short = words <= SLOT_SHORT_WORDS
    first, size = np.concatenate([first, first[short]]), np.concatenate([size, size[short]])
    heads = np.concatenate([heads, heads[short] | np.uint64(1)])
    if longer_than <= 0:  # a list's heading too short for a head of its own ("Related articles")
        at, n = _list_headings(f)
        if len(at):
            second = np.where(n > 1, tok[np.minimum(at + 1, len(tok) - 1)], _LIST_SALT)
            first, size = np.concatenate([first, at]), np.concatenate([size, n])
            heads = np.concatenate([heads, fmix64(tok[at] * PHI + second) | np.uint64(1)])
    doc = np.searchsorted(np.cumsum(f.lengths), first, side="right")
    return doc, heads, first, size


#: The second "token" of a list's heading of one token, in its head.
_LIST_SALT = np.uint64(0x6C697374)  # b"list"


def _list_headings(f: Features) -> tuple[np.ndarray, np.ndarray]:
    """The first token and the token count of each paragraph's first line of fewer than
    ``SLOT_MIN_TOKENS`` tokens, none a digit's, that heads a list: the paragraph's next line
    starts with one of :data:`BULLETS` (it does not)."""
    at: list[int] = []
    count: list[int] = []
    starts = np.cumsum(f.lengths) - f.lengths
    for d, text in enumerate(f.texts):
        if not _BULLET.search(text):
            continue
        rows = [row.strip() for row in text.split("\n")]
        found = [
            k
            for k in range(len(rows) - 1)
            if rows[k]
            and (k == 0 or not rows[k - 1])  # a paragraph's first line
            and rows[k][0] not in BULLETS
            and rows[k + 1][:1]
            and rows[k + 1][0] in BULLETS
        ]
        if not found:
            continue
        a = int(starts[d])
        line = f.line_no[a : a + int(f.lengths[d])]
        for k in found:
            idx = np.flatnonzero(line == k)
            if 0 < len(idx) < SLOT_MIN_TOKENS and not (f.tokens[4, a + idx] != 0).any():
                at.append(a + int(idx[0]))
                count.append(len(idx))
    return np.asarray(at, dtype=np.int64), np.asarray(count, dtype=np.int64)


def _heads_per_doc(f: Features) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per document: its unique line heads, and those it has more than once.

    Two kinds of short line teach no short head. One holding a digit: a short line with a number
    on a few pages of a host is more likely one page's content repeated (copies of it) than a
    template's (whose slot lines without numbers teach it), and cutting it would hide the number
    it carries; but for a line whose digits are all a date's, a time's or a link's
    (``numbers.dated_only``: "first published at <url> on 28 July 2024" on the pages a host
    syndicates), which carries no number of the page's own. One that starts with a dash: the
    form of a credit (``names``), which a quote site repeats on every page of one author's
    quotes; cut as a slot, it would hide whom a copy credits.
    """
    n = len(f)
    doc, heads, first, size = line_heads(f)
    held = np.r_[0, np.cumsum(f.tokens[4] != 0)]  # tokens holding a digit, up to each token
    short = (heads & np.uint64(1)).astype(bool)
    untaught = short & (held[first + size] > held[first])
    untaught &= ~_dated(f, doc, first, untaught)
    untaught |= _dashed(f, doc, first, short & ~untaught)
    if untaught.any():
        doc, heads = doc[~untaught], heads[~untaught]
    order = np.lexsort((heads, doc))
    d, h = doc[order], heads[order]
    new = np.ones(len(h), dtype=bool)
    new[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    unique = _split(h[new], np.bincount(d[new], minlength=n))
    rd, rh = d[~new], h[~new]  # sorted too: a head's second, third, ... entries on a page
    once = np.ones(len(rh), dtype=bool)
    once[1:] = (rh[1:] != rh[:-1]) | (rd[1:] != rd[:-1])
    repeated = _split(rh[once], np.bincount(rd[once], minlength=n))
    return unique, repeated


def _dated(f: Features, doc: np.ndarray, first: np.ndarray, which: np.ndarray) -> np.ndarray:
    """(k,) bool: of the lines ``which`` (their documents and first tokens), those whose
    digits are all a date's, a time's or a link's (``numbers.dated_only``)."""
    out = np.zeros(len(doc), dtype=bool)
    lines: dict[int, list[str]] = {}
    for i in np.flatnonzero(which).tolist():
        d = int(doc[i])
        text = lines.get(d)
        if text is None:
            text = lines[d] = f.texts[d].split("\n")
        out[i] = dated_only(text[int(f.line_no[first[i]])])
    return out


def _dashed(f: Features, doc: np.ndarray, first: np.ndarray, which: np.ndarray) -> np.ndarray:
    """(k,) bool: of the lines ``which`` (their documents and first tokens), those whose text
    starts with a dash (:func:`~indexer.fingerprints.names.dashed_lines`)."""
    out = np.zeros(len(doc), dtype=bool)
    at = np.flatnonzero(which)
    if not len(at):
        return out
    found = {d: ls for d in np.unique(doc[at]).tolist() if (ls := dashed_lines(f.texts[d]))}
    if not found:  # most batches: no document has a dash line
        return out
    at = at[np.isin(doc[at], list(found))]
    line = f.line_no[first[at]].tolist()
    for j, d, i in zip(at.tolist(), doc[at].tolist(), line, strict=True):
        out[j] = i in found[d]
    return out


def shingle_sets(f: Features) -> list[PageSets]:
    """Per document of ``f``: what it teaches its host's model (:class:`PageSets`)."""
    heads, repeated = _heads_per_doc(f)
    return [
        PageSets(s, m, h, r, np.zeros(len(h), dtype=np.int64), _smallest(s))
        for (s, m), h, r in zip(
            zip(_unique_per_doc(f.sh, f.scounts), _unique_per_doc(f.mh, f.mcounts), strict=True),
            heads,
            repeated,
            strict=True,
        )
    ]


def _smallest(hashes: np.ndarray) -> np.ndarray:
    """(1, :data:`PAGE_SIGNATURE`): a page's smallest distinct hashes, ascending."""
    out = np.full((1, PAGE_SIGNATURE), _NO_SHINGLE, dtype=np.uint64)
    k = min(PAGE_SIGNATURE, len(hashes))
    if k:
        part = np.partition(hashes, k - 1)[:k] if len(hashes) > k else hashes
        out[0, :k] = np.sort(part)
    return out


def doc_shingle_sets(texts: Sequence[str], params: FingerprintParams) -> list[PageSets]:
    """Per text: what it teaches its host's model (learning input)."""
    if not texts:
        return []
    return shingle_sets(features(texts, params))


class Learner:
    """Accumulates per-host page counts and shingle and line-head document frequencies, then
    builds models."""

    def __init__(self, config: BoilerplateConfig) -> None:
        self.config = config
        self._pages: dict[str, int] = {}
        self._sets: dict[str, list[PageSets]] = {}

    def add(self, host: str, sets: PageSets) -> None:
        """Record one page of ``host``."""
        self.add_many(host, 1, sets)

    def add_many(self, host: str, pages: int, sets: PageSets) -> None:
        """Record ``pages`` pages of ``host`` (their :class:`PageSets`, concatenated)."""
        self._pages[host] = self._pages.get(host, 0) + pages
        self._sets.setdefault(host, []).append(sets)

    def pages(self, host: str) -> int:
        return self._pages.get(host, 0)

    def hosts(self) -> set[str]:
        """Every host seen."""
        return set(self._pages)

    def _need(self, pages: int, share: float | None = None) -> int:
        share = self.config.min_share if share is None else share
        return max(self.config.min_docs, int(np.floor(share * pages)) + 1)

    def _frequent(
        self,
        arrays: list[np.ndarray],
        pages: int,
        share: float | None = None,
        counted: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The hashes on more than ``share`` of the ``pages`` (``counted``: the arrays'
        values and their page counts, when already counted)."""
        if not arrays:
            return np.zeros(0, dtype=np.uint64)
        values, df = counted or np.unique(np.concatenate(arrays), return_counts=True)
        need = self._need(pages, share)
        frequent = values[df >= need]
        if len(frequent) > self.config.max_hashes:
            frequent = frequent[np.argsort(-df[df >= need], kind="stable")][
                : self.config.max_hashes
            ]
            frequent.sort()
        return frequent.astype(np.uint64)

    def _slots(
        self, sets: list[PageSets], pages: int, sim: tuple[np.ndarray, np.ndarray]
    ) -> np.ndarray:
        """Heads of lines on more than ``min_share`` of the pages (short lines': more than
        ``slot_share``), mostly once a page, counting a page's copies on the host once
        (:meth:`_texts`; ``sim``: the host's ``sim`` hashes and their page counts)."""
        heads = self._frequent([p.heads for p in sets], pages, self.config.slot_share)
        short = (heads & np.uint64(1)).astype(bool)
        if not short.all():
            heads = heads[short | np.isin(heads, self._frequent([p.heads for p in sets], pages))]
        if not len(heads):
            return heads
        few = self._need(pages, self.config.slot_share)
        texts, distinct = self._texts(sets, pages, heads, few, sim)
        short = (heads & np.uint64(1)).astype(bool)
        need = np.where(short, self._need(distinct, self.config.slot_share), self._need(distinct))
        heads = heads[texts >= need]
        if not len(heads):
            return heads
        values, df = np.unique(np.concatenate([p.heads for p in sets]), return_counts=True)
        repeated = np.concatenate([p.repeated for p in sets])
        rep_values, rep_df = np.unique(repeated, return_counts=True)
        at = np.searchsorted(values, heads)
        rep = np.zeros(len(heads), dtype=np.int64)
        found = np.searchsorted(rep_values, heads)
        hit = found < len(rep_values)
        hit[hit] = rep_values[found[hit]] == heads[hit]
        rep[hit] = rep_df[found[hit]]
        return heads[rep <= SLOT_MAX_REPEATED * df[at]]

    @staticmethod
    def _texts(
        sets: list[PageSets],
        pages: int,
        heads: np.ndarray,
        few: int,
        sim: tuple[np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray, int]:
        """Per head of ``heads`` (sorted), on how many distinct texts of the host it is, and
        how many distinct texts the host has (its pages, each text's copies once): pages
        whose smallest ``sim`` hash on at most ``few`` of the host's pages is the same count
        once. Copies of one page on its host (at most ``few``) would otherwise teach their own
        lines' heads as a template's; by MinHash's argument two pages share that hash with a
        probability of the resemblance of their text away from what many pages share (a
        template's lines, a slot's), so pages of other texts around one template line stay
        apart. A page without such a hash among its smallest, or without them recorded,
        counts on its own."""
        known = all(len(p.head_pages) == len(p.heads) for p in sets)
        every = np.concatenate([p.heads for p in sets])
        if not known:  # heads given without their pages: each entry a page of its own
            page = np.arange(len(every), dtype=np.int64)
            key = np.zeros(len(every), dtype=np.uint64)
            distinct = pages
        else:
            offsets = np.cumsum([0, *(len(p.smallest) for p in sets[:-1])])
            page = np.concatenate(
                [p.head_pages + o for p, o in zip(sets, offsets, strict=True)]
            ).astype(np.int64)
            smallest = np.concatenate([p.smallest for p in sets])
            values, df = sim
            at = np.minimum(np.searchsorted(values, smallest), max(len(values) - 1, 0))
            own = (values[at] == smallest) & (df[at] <= few) if len(values) else smallest < 0
            first = np.argmax(own, axis=1)
            signed = own[np.arange(len(smallest)), first]
            sig = smallest[np.arange(len(smallest)), first]
            # each signature one text; the pages without one (or not recorded) one each
            distinct = pages - int(signed.sum()) + len(np.unique(sig[signed]))
            key = np.where(signed, sig, _NO_SHINGLE)[page]
            page = np.where(signed[page], -1, page)  # a signed page is its signature
        at = np.flatnonzero(np.isin(every, heads))
        rows = np.unique(np.stack([every[at], key[at], page[at].astype(np.uint64)]), axis=1)
        return np.bincount(np.searchsorted(heads, rows[0]), minlength=len(heads)), distinct

    def models(self) -> dict[str, HostModel]:
        """A model per host with at least ``min_pages`` pages and some furniture."""
        out: dict[str, HostModel] = {}
        for host, pages in self._pages.items():
            if pages < self.config.min_pages:
                continue
            sets = self._sets[host]
            arrays = [p.sim for p in sets]
            counted = np.unique(np.concatenate(arrays), return_counts=True)
            sim = self._frequent(arrays, pages, counted=counted)
            slots = self._slots(sets, pages, counted)
            if len(sim) == 0 and len(slots) == 0:
                continue
            mins = self._frequent([p.mins for p in sets], pages)
            out[host] = HostModel(host, pages, sim, mins, slots)
        return out


_FILTERS: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # id -> (set, sorted, bits)


def _filter_of(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A model's hashes sorted, and a table of their low bits (a one-hash Bloom filter).

    Cached per array (models live as long as the run), so each batch pays only lookups.
    """
    hit = _FILTERS.get(id(hashes))
    if hit is not None and hit[0] is hashes:
        return hit[1], hit[2]
    ordered = hashes
    if len(ordered) > 1 and not bool(np.all(ordered[1:] >= ordered[:-1])):
        ordered = np.sort(ordered)
    # >= 8 slots per hash: about one shingle in eight of a non-member passes to the exact test
    size = 1 << max(12, (8 * len(ordered)).bit_length())
    bits = np.zeros(size, dtype=bool)
    bits[(ordered & np.uint64(size - 1)).astype(np.intp)] = True
    if len(_FILTERS) > 64:
        _FILTERS.clear()
    _FILTERS[id(hashes)] = (hashes, ordered, bits)
    return ordered, bits


def _member(x: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_set)``: low-bits table first, exact test for what passes it."""
    out = np.zeros(len(x), dtype=bool)
    if len(sorted_set) == 0 or len(x) == 0:
        return out
    ordered, bits = _filter_of(sorted_set)
    maybe = np.flatnonzero(bits[(x & np.uint64(len(bits) - 1)).astype(np.intp)])
    if len(maybe):
        sub = x[maybe]
        pos = np.searchsorted(ordered, sub)
        out[maybe] = ordered[np.minimum(pos, len(ordered) - 1)] == sub
    return out


def fingerprint_excluding(
    texts: Sequence[str],
    params: FingerprintParams,
    models: Sequence[HostModel | None],
    max_removed: float = 1.0,
    min_remaining: int = 10,
) -> tuple[FingerprintArrays, np.ndarray]:
    """Fingerprint ``texts``, leaving each document's host furniture out (``models[i]``).

    Returns the arrays and, per document, the share of its tokens removed (0 when no model
    applied, including documents kept whole by the ``max_removed`` and ``min_remaining``
    guards).
    """
    if not any(m is not None and len(m) for m in models):
        return fingerprint_arrays(texts, params), np.zeros(len(texts))
    return fingerprint_features(features(texts, params), params, models, max_removed, min_remaining)


def _furniture(
    f: Features, model: HostModel, mine: np.ndarray, k: int, tdoc: np.ndarray
) -> np.ndarray:
    """(total tokens,) bool: the tokens of the documents ``mine`` that a shingle of the model
    covers (shingle ``i`` of a document covers its tokens ``i .. i + k - 1``, or all of them
    when it has fewer than ``k``)."""
    sdoc = np.repeat(np.arange(len(f)), f.scounts)
    pos = np.flatnonzero(mine[sdoc])
    hit = pos[_member(f.sh[pos], model.simhash_hashes)]
    tstart = np.cumsum(f.lengths) - f.lengths
    sstart = np.cumsum(f.scounts) - f.scounts
    d = sdoc[hit]
    first = tstart[d] + hit - sstart[d]  # the first token each furniture shingle covers
    total = len(tdoc)
    edges = np.bincount(first, minlength=total + 1)
    edges -= np.bincount(first + np.minimum(k, f.lengths[d]), minlength=total + 1)
    return np.cumsum(edges[:total]) > 0


def fingerprint_features(
    f: Features,
    params: FingerprintParams,
    models: Sequence[HostModel | None],
    max_removed: float = 1.0,
    min_remaining: int = 10,
) -> tuple[FingerprintArrays, np.ndarray]:
    """:func:`fingerprint_excluding` of already featurised texts (same values)."""
    n = len(f)
    lengths = np.asarray(f.lengths, dtype=np.int64)
    tdoc = np.repeat(np.arange(n), lengths)
    by_model: dict[int, tuple[HostModel, list[int]]] = {}
    for i, model in enumerate(models):
        if model is not None and len(model) and f.scounts[i]:
            by_model.setdefault(id(model), (model, []))[1].append(i)
    weights = f.tokens[2]
    stamped = _stamp_lines(f, [i for _, docs in by_model.values() for i in docs], tdoc)
    if len(by_model) <= 1:
        cut = _cut(f, list(by_model.values()), stamped, params, max_removed, min_remaining)
    else:  # each model's passes over its own pages only, not over the whole batch
        cut = _Cut.none(f)
        tstart = np.cumsum(lengths) - lengths
        sstart = np.cumsum(f.scounts) - f.scounts
        mstart = np.cumsum(f.mcounts) - f.mcounts
        for model, docs in by_model.values():
            d = np.asarray(docs)
            t = _ranges(tstart[d], lengths[d])
            sh, mh = _ranges(sstart[d], f.scounts[d]), _ranges(mstart[d], f.mcounts[d])
            sub = Features(
                f.sh[sh], f.scounts[d], f.mh[mh], f.mcounts[d], [f.exact_keys[i] for i in docs],
                f.token_count[d], f.tokens[:, t], lengths[d], f.line_no[t],
                [f.texts[i] for i in docs], [f.written[i] for i in docs],
            )  # fmt: skip
            part = _cut(sub, [(model, list(range(len(docs))))], stamped[t], params, max_removed,
                        min_remaining)  # fmt: skip
            cut.keep[t], cut.slotted[t], cut.wide[t] = part.keep, part.slotted, part.wide
            cut.removed[d], cut.applied[d] = part.removed, part.applied
            cut.furniture_s[sh], cut.furniture_m[mh] = part.furniture_s, part.furniture_m
    keep, slotted, removed, applied = cut.keep, cut.slotted, cut.removed, cut.applied
    furniture_s, furniture_m = cut.furniture_s, cut.furniture_m
    sdoc = np.repeat(np.arange(n), f.scounts)
    mdoc = np.repeat(np.arange(n), f.mcounts)
    # a page's content in words counts the tokens left; its features and its number sketch
    # also keep the phrases inside its lines that the host's pages share
    units = content_units(np.where(keep, weights, 0), lengths)
    inside, ends = _inside_kept(f, keep)
    # names are read from lines whose tokens no host model cut but inside them (a line of the
    # frame around a slot of the page's own gives none)
    own = keep | inside
    keep = own | ends
    sim_tok, min_tok, _, sample = f.tokens[:4, keep] if not keep.all() else f.tokens[:4]
    new_lengths = np.bincount(tdoc[keep], minlength=n)
    # A document with enough content of its own keeps its own shingles: those of the full
    # text that are not furniture (no shingle joins the text before a template block to the
    # text after it). Cutting tokens is for short ones, whose own words are all they have.
    whole = applied & (units >= NO_WORDS)
    if not whole.any():  # every document's features are those of its tokens kept
        simhash, minhash = token_fingerprints(sim_tok, min_tok, sample, new_lengths, units, params)
    else:
        sh, scounts, mh, mcounts = document_features(
            sim_tok, min_tok, sample, new_lengths, units, params
        )
        own_s = whole[sdoc] & ~furniture_s
        own_m = whole[mdoc] & ~furniture_m
        # a shorter text's slot lines are a large part of it: their shingles go too
        sparse = whole & (units < SLOT_WHOLE_WORDS)
        if slotted.any():
            wordy = whole & ~sparse & (units < 4 * SLOT_WHOLE_WORDS)  # not longer: never so
            sparse |= _repetitive(f, wordy, slotted, own_m, tdoc, mdoc, params)
        if sparse.any() and slotted.any():
            cut_slots = slotted & sparse[tdoc]
            own_s &= ~_touching(cut_slots, f.scounts, lengths, params.shingle)
            own_m &= ~_touching(cut_slots, f.mcounts, lengths, params.minhash_shingle)
        if cut.wide.any():  # a line longer than a slot's, cut as one: its shingles go always
            wide = cut.wide & whole[tdoc]
            own_s &= ~_touching(wide, f.scounts, lengths, params.shingle)
            own_m &= ~_touching(wide, f.mcounts, lengths, params.minhash_shingle)
        sh, scounts = _choose(
            sh, scounts, f.sh[own_s], np.bincount(sdoc[own_s], minlength=n), whole
        )
        mh, mcounts = _choose(
            mh, mcounts, f.mh[own_m], np.bincount(mdoc[own_m], minlength=n), whole
        )
        simhash, minhash = segment_fingerprints(sh, scounts, mh, mcounts, params)
    arrays = FingerprintArrays(
        params=params,
        simhash=simhash,
        minhash=minhash,
        numbers=number_sketches(
            _content_texts(f, keep, applied),
            folded=True,
            units=units,
            titles=[t.split("\n", 1)[0] for t in f.texts],
            written=_content_texts(f, own, applied & (units < NAMED_BELOW), f.written, True),
        ),
        exact_keys=list(f.exact_keys),
        token_count=units,
        present=np.ones(n, dtype=bool),
    )
    return arrays, removed


def _inside_kept(f: Features, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(total tokens,) bool twice: cut tokens that are content where they stand, those with
    tokens kept before and after them in their line, and the others of a line (not a
    document's first) that is then mostly kept.

    A template is whole lines, or a title's end (a site's name after it); a phrase that many
    pages of a host share inside their own sentences ("free shipping", a man page's wording)
    is content there, and a copy on another host keeps it.
    """
    if keep.all():
        return np.zeros(len(keep), dtype=bool), np.zeros(len(keep), dtype=bool)
    line = np.cumsum(f.starts) - 1
    k = keep.astype(np.int64)
    before = np.cumsum(k) - k  # kept tokens before each token, over the whole batch
    first = np.flatnonzero(f.starts)
    before -= before[first][line]  # ... within its line
    total = np.bincount(line, weights=k, minlength=len(first)).astype(np.int64)
    after = total[line] - before - k
    inside = ~keep & (before > 0) & (after > 0)
    # a line mostly kept so keeps its ends too, but for a title (a site's name after it)
    size = np.diff(np.append(first, len(keep)))
    mostly = 2 * (total + np.bincount(line[inside], minlength=len(first))) > size
    lengths = np.asarray(f.lengths, dtype=np.int64)
    mostly[line[(np.cumsum(lengths) - lengths)[lengths > 0]]] = False
    return inside, ~keep & ~inside & mostly[line]


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i] .. starts[i] + counts[i] - 1`` for every i, concatenated."""
    counts = np.asarray(counts, dtype=np.int64)
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))


@dataclass
class _Cut:
    """What the host models cut from a batch: tokens kept, tokens of slot and stamp lines,
    per document the share removed and whether a cut applied, and the shingles (per
    family) that are a model's."""

    keep: np.ndarray
    slotted: np.ndarray
    removed: np.ndarray
    applied: np.ndarray
    furniture_s: np.ndarray
    furniture_m: np.ndarray
    wide: np.ndarray  # tokens of lines longer than a slot's, cut with the slot lines

    @staticmethod
    def none(f: Features) -> _Cut:
        tokens, n = len(f.line_no), len(f)
        return _Cut(
            np.ones(tokens, dtype=bool), np.zeros(tokens, dtype=bool), np.zeros(n),
            np.zeros(n, dtype=bool), np.zeros(len(f.sh), dtype=bool),
            np.zeros(len(f.mh), dtype=bool), np.zeros(tokens, dtype=bool),
        )  # fmt: skip


def _cut(
    f: Features,
    by_model: list[tuple[HostModel, list[int]]],
    stamped: np.ndarray,
    params: FingerprintParams,
    max_removed: float,
    min_remaining: int,
) -> _Cut:
    """The cut of each model's documents (``by_model``) of ``f``; ``stamped``: the tokens of
    their stamp lines. One membership test per model over all of its documents' shingles."""
    n = len(f)
    lengths = np.asarray(f.lengths, dtype=np.int64)
    tdoc = np.repeat(np.arange(n), lengths)
    out = _Cut.none(f)
    keep, slotted, removed, applied = out.keep, out.slotted, out.removed, out.applied
    wide_cut = out.wide
    weights = f.tokens[2]
    sdoc = np.repeat(np.arange(n), f.scounts)
    mdoc = np.repeat(np.arange(n), f.mcounts)
    lines = line_heads(f) if any(len(m.slot_heads) for m, _ in by_model) else None
    longer = None if lines is None else line_heads(f, SLOT_MAX_WORDS, np.inf)
    for model, docs in by_model:
        mine = np.zeros(n, dtype=bool)
        mine[docs] = True
        frame = stamped & mine[tdoc]
        gone = _furniture(f, model, mine, params.shingle, tdoc) | frame
        share, apply = _guarded(gone, mine, tdoc, lengths, weights, max_removed, min_remaining)
        if lines is not None and len(model.slot_heads):
            # the slot lines too, unless that leaves a page too little of its own: then only
            # those of heads on most pages (a short line's head on a few pages may be the
            # page's own, on copies of it), else the template's literal lines alone
            cut_as = np.zeros(n, dtype=bool)
            # every slot line first, counting the title once (what is left must be more
            # than a page's heading); else the lines of heads on most pages alone
            once = np.where(_title_repeats(f, tdoc), 0, weights)
            slot_lines = _slot_lines(model, mine, lines, len(tdoc))
            for slots, w in zip(slot_lines, (once, weights), strict=True):
                share_s, apply_s = _guarded(
                    gone | slots, mine & ~cut_as, tdoc, lengths, w, max_removed,
                    min_remaining,
                )  # fmt: skip
                with_slots = slots & apply_s[tdoc]
                gone |= with_slots
                frame |= with_slots
                share = np.where(apply_s, share_s, share)
                cut_as |= apply_s
            apply |= cut_as
            # lines longer than a slot's whose head is a slot on most pages (a "related
            # pages" line listing a title of hundreds of words): cut too, not marked as slots
            if longer is not None:
                _, wide = _slot_lines(model, mine, longer, len(tdoc))
                share_l, apply_l = _guarded(
                    gone | wide, apply, tdoc, lengths, weights, max_removed, min_remaining
                )
                gone |= wide & apply_l[tdoc]
                wide_cut |= wide & apply_l[tdoc]
                share = np.where(apply_l, share_l, share)
        listed = _listed(f, gone, apply & mine)  # a list under a heading the cut took
        if listed.any():
            share_x, apply_x = _guarded(
                gone | listed, apply & mine, tdoc, lengths, weights, max_removed, min_remaining
            )
            gone |= listed & apply_x[tdoc]
            frame |= listed & apply_x[tdoc]
            share = np.where(apply_x, share_x, share)
        keep &= ~(gone & apply[tdoc])
        slotted |= frame & apply[tdoc]
        removed[apply] = share[apply]
        applied |= apply
        at = np.flatnonzero(apply[sdoc])
        out.furniture_s[at[_member(f.sh[at], model.simhash_hashes)]] = True
        at = np.flatnonzero(apply[mdoc])
        out.furniture_m[at[_member(f.mh[at], model.minhash_hashes)]] = True
    return out


def _listed(f: Features, gone: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """(total tokens,) bool: the tokens of the lists under a heading of the host's frame in the
    documents ``mine``: lines that start with one of :data:`BULLETS`, in a paragraph whose
    first line the model cuts whole (``gone``) and whose other lines are all such items
    ("Related articles" over "• …" lines that change from page to page: a slot whose head
    is on a line of its own)."""
    out = np.zeros(len(gone), dtype=bool)
    starts = np.cumsum(f.lengths) - f.lengths
    for d in np.flatnonzero(mine).tolist():
        text = f.texts[d]
        if not _BULLET.search(text):
            continue
        a, b = int(starts[d]), int(starts[d] + f.lengths[d])
        line = f.line_no[a:b]
        rows = text.split("\n")
        total = np.bincount(line, minlength=len(rows))
        whole = total == np.bincount(line, weights=gone[a:b], minlength=len(rows))
        listed = np.zeros(len(rows), dtype=bool)
        head = -1  # the paragraph's first line while its others are items; -1 a paragraph
        for k, row in enumerate(rows):  # starts, -2 one that is no list under a cut heading
            t = row.strip()
            if not t:
                head = -1
            elif head == -1:
                head = k if total[k] and whole[k] else -2
            elif head >= 0 and t[0] in BULLETS:
                listed[k] = True
            else:
                head = -2
        if listed.any():
            out[a:b] = listed[line]
    return out


def _title_repeats(f: Features, tdoc: np.ndarray) -> np.ndarray:
    """(total tokens,) bool: the tokens of each text's lines after its first that repeat its
    first line (the title) token for token."""
    starts = f.starts
    line = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    size = np.diff(np.append(first, len(starts)))
    pos = np.arange(len(starts)) - first[line]
    mixed = fmix64(f.tokens[0] + pos.astype(np.uint64) * PHI)
    hashes = np.add.reduceat(mixed, first) if len(first) else mixed[:0]
    ldoc = tdoc[first]
    is_first = np.ones(len(first), dtype=bool)
    is_first[1:] = ldoc[1:] != ldoc[:-1]
    head = np.zeros(len(f), dtype=np.int64)
    head[ldoc[is_first]] = np.flatnonzero(is_first)
    h0 = head[ldoc]
    rep = ~is_first & (hashes == hashes[h0]) & (size == size[h0])
    return rep[line]


def _guarded(
    gone: np.ndarray,
    mine: np.ndarray,
    tdoc: np.ndarray,
    lengths: np.ndarray,
    weights: np.ndarray,
    max_removed: float,
    min_remaining: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Per document: the share of its tokens ``gone``, and whether the cut applies (one of
    ``mine``, something cut, within ``max_removed``, ``min_remaining`` words of content left)."""
    n = len(lengths)
    cut = np.bincount(tdoc[gone], minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = cut / lengths
    kept = content_units(np.where(gone, 0, weights), lengths)
    return share, mine & (cut > 0) & (share <= max_removed) & (kept >= min_remaining)


#: A year or a time of day, which in a line mostly of a host's wording is the frame's stamp
#: ("Edited 3 March 2026, at 10:55. Text is available under …").
_DATED = re.compile(r"(?<![0-9])(?:19|20)[0-9]{2}(?![0-9])|[0-9]:[0-5][0-9]")


def _content_texts(
    f: Features,
    keep: np.ndarray,
    applied: np.ndarray,
    texts: Sequence[str] | None = None,
    partly: bool = False,
) -> list[str]:
    """Each text (``texts``, default ``f.texts``), less the lines (of the documents
    ``applied``) whose tokens are mostly cut and whose tokens holding a digit are all cut: what
    the number sketch reads, so that numbers of the host's frame neither block true copies nor
    hide a changed number among their own, while a number of the page's own (its digits on
    few of the host's pages) in a line of the host's wording stays, unless the line holds a
    year or a time of day (:data:`_DATED`: a stamp, a page's "edited on" date).
    ``partly``: less the lines with any token cut (what the names inside sentences are read
    from, ``keep`` then counting a host's phrase between the page's own words as kept: a
    frame's line with the site's name in it, around a slot of the page's own, gives none; a
    quote's line holding a phrase of the host's footer gives its names), but the first, the
    title, which gives no names there whatever the frame shares with it."""
    out = list(f.texts if texts is None else texts)
    docs = np.flatnonzero(applied)
    if not len(docs):
        return out
    starts = np.cumsum(f.lengths) - f.lengths
    for d in docs.tolist():
        a, b = int(starts[d]), int(starts[d] + f.lengths[d])
        line = f.line_no[a:b]
        total = np.bincount(line)
        cut = np.bincount(line, weights=~keep[a:b], minlength=len(total))
        if partly:
            gone = cut > 0
            gone[:1] = False  # the title: it gives no names, and names the site in a footer
        else:
            numeric = f.tokens[4, a:b] != 0
            digit = keep[a:b] & numeric
            held = np.bincount(line, weights=digit, minlength=len(total)) > 0
            mostly = 2 * cut > total
            gone = mostly & ~held
            if (mostly & held).any():  # the host's wording around a number of the page's own
                lines = out[d].split("\n")
                for i in np.flatnonzero(mostly & held).tolist():
                    if i < len(lines) and _DATED.search(lines[i]):
                        gone[i] = True  # a stamp of the frame's, however long its line
            words = np.bincount(line, weights=~numeric, minlength=len(total))
            short = held & (words <= COUNTER_WORDS)
            if short.any():  # a counter under the footer, or a credit ("-- NDR 3")
                short[[k for k in dashed_lines(f.texts[d]) if k < len(total)]] = False
                gone |= _counters(short, (words > 0) & (cut < total), cut == total)
        drop = np.flatnonzero(gone & (total > 0))
        if len(drop):
            lines = out[d].split("\n")
            for i in drop.tolist():
                if i < len(lines):
                    lines[i] = ""
            out[d] = "\n".join(lines)
    return out


#: At most how many words (tokens without a digit) a line of a counter holds: "Page 27",
#: "第 52 页", "Views: 94047", "Page 2 of 5".
COUNTER_WORDS = 3


def _counters(short: np.ndarray, own: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """Per line of a page: the lines ``short`` (a number of the page's own among at most
    :data:`COUNTER_WORDS` words, no credit) that are the frame's counters ("Page 27" under
    the footer): after the page's last line of ``own`` words, with a line the host's model
    ``cut`` whole between them. Above the content, such a line is a title ("GNUSim8085 4.1");
    a price right under a listing's text is the listing's."""
    out = np.zeros(len(short), dtype=bool)
    content = np.flatnonzero(own & ~short)
    if not len(content):
        return out
    last = int(content[-1])
    for i in np.flatnonzero(short).tolist():
        out[i] = i > last and bool(cut[last + 1 : i].any())
    return out


def _stamp_lines(f: Features, docs: list[int], tdoc: np.ndarray) -> np.ndarray:
    """(total tokens,) bool: the tokens of the lines of ``docs`` that hold a stamp of the frame
    (a byline's or a printer's date: ``numbers.frame_stamp_lines``), but for a line that starts
    with the page's title (of 4 characters or more), which is the page's own: a listing's
    "GNOME 2048 4.1 专业版：…" holds what reads as a date (2048-4-1); and for a line that
    starts with a dash, an attribution ("-- May 18" under a quote)."""
    out = np.zeros(len(tdoc), dtype=bool)
    if not docs:
        return out
    found = frame_stamp_lines([f.texts[d] for d in docs], folded=True)
    for d, lines in zip(docs, found, strict=True):
        if lines:  # a line that starts with the page's title, or a dash, is the page's own
            text = f.texts[d].split("\n")
            title = text[0].strip()
            credits = dashed_lines(f.texts[d])
            lines[:] = [
                i
                for i in lines
                if i not in credits
                and (i == 0 or len(title) < 4 or not text[i].lstrip().startswith(title))
            ]
    keys = [d << 32 | line for d, lines in zip(docs, found, strict=True) for line in lines]
    if keys:
        token_keys = (tdoc.astype(np.int64) << 32) | f.line_no.astype(np.int64)
        out = np.isin(token_keys, np.array(keys, dtype=np.int64))
    return out


def _slot_lines(
    model: HostModel,
    mine: np.ndarray,
    lines: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    total: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(total tokens,) bool twice: the tokens of the lines of documents ``mine`` whose head is
    one of the model's template slots; and of those whose head is a slot by
    ``BoilerplateConfig.min_share`` (a line start on most of the host's pages)."""
    doc, heads, first, size = lines
    at = np.flatnonzero(mine[doc])
    at = at[_member(heads[at], model.slot_heads)]
    wide = at[(heads[at] & np.uint64(1)) == 0]

    def tokens(at: np.ndarray) -> np.ndarray:
        edges = np.bincount(first[at], minlength=total + 1)
        edges -= np.bincount(first[at] + size[at], minlength=total + 1)
        return np.cumsum(edges[:total]) > 0

    return tokens(at), tokens(wide)


def _repetitive(
    f: Features,
    docs: np.ndarray,
    slotted: np.ndarray,
    own_m: np.ndarray,
    tdoc: np.ndarray,
    mdoc: np.ndarray,
    params: FingerprintParams,
) -> np.ndarray:
    """(n,) bool: of ``docs`` (with slot lines), those whose own MinHash shingles away from
    their slot lines number fewer distinct values than ``SLOT_WHOLE_WORDS``: a text that
    repeats itself (a man page's long title again as its heading) has fewer distinct
    shingles than words, and a slot line is then as large a part of it as of a short one."""
    n = len(f)
    docs = docs & (np.bincount(tdoc[slotted], minlength=n) > 0)
    if not docs.any():
        return docs
    near = slotted & docs[tdoc]
    rest = own_m & docs[mdoc] & ~_touching(near, f.mcounts, f.lengths, params.minhash_shingle)
    d = mdoc[rest].astype(np.uint64)
    _, first = np.unique(f.mh[rest] ^ fmix64(d + np.uint64(1)), return_index=True)
    return docs & (np.bincount(mdoc[rest][first], minlength=n) < SLOT_WHOLE_WORDS)


def _touching(tokens: np.ndarray, counts: np.ndarray, lengths: np.ndarray, k: int) -> np.ndarray:
    """Per shingle (``counts`` per document, ``k`` tokens each): whether it covers a token
    where ``tokens`` is True."""
    n = len(counts)
    sdoc = np.repeat(np.arange(n), counts)
    tstart = np.cumsum(lengths) - lengths
    sstart = np.cumsum(counts) - counts
    a = tstart[sdoc] + np.arange(len(sdoc)) - sstart[sdoc]
    b = a + np.minimum(k, lengths[sdoc])
    cs = np.concatenate(([0], np.cumsum(tokens)))
    return (cs[b] - cs[a]) > 0


def _choose(
    a: np.ndarray, a_counts: np.ndarray, b: np.ndarray, b_counts: np.ndarray, use_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per document, its segment of ``b`` where ``use_b``, else of ``a`` (both concatenated
    per document, in document order)."""
    n = len(use_b)
    a_doc = np.repeat(np.arange(n), a_counts)
    b_doc = np.repeat(np.arange(n), b_counts)
    from_a, from_b = ~use_b[a_doc], use_b[b_doc]
    docs = np.concatenate([a_doc[from_a], b_doc[from_b]])
    order = np.argsort(docs, kind="stable")
    return np.concatenate([a[from_a], b[from_b]])[order], np.where(use_b, b_counts, a_counts)


def merge_models(*sources: Iterable[HostModel]) -> dict[str, HostModel]:
    """Later sources win per host (e.g. stored models, then freshly learned ones)."""
    out: dict[str, HostModel] = {}
    for models in sources:
        for m in models:
            out[m.host] = m
    return out


#: Key of ``collapse_fp`` naming the host model a document was fingerprinted with (in
#: ``_source`` only: ``collapse_fp`` maps no new sub-fields).
MODEL_KEY = "model"

_VERSIONS: dict[int, tuple[HostModel, str]] = {}  # id(model) -> (model, version)


def model_version(m: HostModel) -> str:
    """The model's version: 16 hex digits of a hash of its host and of the three hash sets,
    so the same model learnt twice has the same version (cached per model object)."""
    hit = _VERSIONS.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    h = hashlib.blake2b(m.host.encode("utf-8"), digest_size=8)
    for part in (m.simhash_hashes, m.minhash_hashes, m.slot_heads):
        a = np.asarray(part, dtype="<u8")
        h.update(len(a).to_bytes(8, "little"))
        h.update(a.tobytes())
    version = h.hexdigest()
    if len(_VERSIONS) > 10_000:  # the proxy's cache replaces models: keep this bounded
        _VERSIONS.clear()
    _VERSIONS[id(m)] = (m, version)
    return version
