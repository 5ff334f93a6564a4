"""Names inside sentences: a sketch of the number sketch's form, so that a short text that names
another person or place ("… met John Smith in London" → "… met Peter Jones in Paris") stays
apart from its original.

A name in running text is, to SimHash and MinHash, one word like any other: a one-word copy
and a text about someone else look alike. Scripts with letter case (Latin, Cyrillic, Greek ...)
mark names: a capitalised word where a sentence does not start. Each is an *entry* as a number
is in the number sketch (:mod:`indexer.fingerprints.numbers`): *its value the name's initial*,
*its context the words around it*, so the sketch's guarantee carries over: the same words
around a name of another initial conflict; a name whose words around it one text only has (a
site's frame, a cut sentence, a name dropped or added) never does.

Definitions, on a text as written (NFKC-normalised, each run of spaces one, not case
folded), for documents under :data:`NAMED_BELOW` words of content:

* a *word* is a run of letters of a script with case (Latin, Greek, Cyrillic, Armenian),
  with inner apostrophes and hyphens (``O'Brien``, ``Jean-Luc``); other characters (a Han
  character, a digit) are no words; a word is *capitalised* when it has two letters or more
  and an upper case one, first or inside (``London``, ``iOS``; ``I`` and initials are not
  names);
* a *name* is a capitalised word that does not start a sentence: it follows a word on its
  line with nothing between them but spaces, commas, quotes, brackets, a slash or numbers
  (``Linux/Unix``, "Section 2.1.4, “Debian …”"; a sentence starts at a line's start, unless
  the line above goes on into it (:func:`_unwrapped`: a copy wrapped elsewhere reads alike), after
  ``. ! ? … : ;``, a dash, a bullet or a character of another script). Each word of a name of
  several words is one (``John``, then ``Smith``). A word of two capitals or more in one of its
  parts (an acronym, a name in camel case: ``GNOME``, ``LibreOffice``, ``macOS``, the ``USB``
  of ``USB-Stick``; no sentence's first word and no German noun is written so) is a name at a
  sentence's start too, when a word follows it there, or after a spaced dash (``GNOME Shell
  is …``, ``OpenOffice – это …``: the sentence's start and ``is``, ``это`` its context; a
  sentence of names alone, ``• KDE Connect:``, gives none);
* an *uncommon word* (:mod:`indexer.fingerprints.lexicon`: common in no text of the text's
  language, told by its words: ``grep``, ``systemd`` in English or Russian text; ``Wayland`` in
  German, whatever its title holds) is a name too, in lower case as well, where a sentence goes
  on, when the words beside it in its sentence are no names (a list of commands, ``fsck, nfs,
  proc``, is a "related pages" line whose items change from copy to copy; a capitalised word
  starting the sentence is none: ``Siehe runit.syntax(7)``, ``Используйте grep``); its contexts
  are the first kind only (the word before and the word after together): a copy that puts one
  common word for another beside it keeps its other contexts;
* its *value* is its initial and the set of its other consonants, case folded (the vowels of
  Latin, Greek and Cyrillic, accents and ``y`` left out): a typo that swaps two letters, doubles
  one or changes a vowel (``Jonh``, ``Хаймяа``) keeps it; another name changes it, of the
  same initial too ("Alex" for "Armanism", "Chen" for "Color"). The text's last word when
  nothing follows it (a copy cut at a character count ends in half a word: ``Springf``) has
  its initial alone;
* its *contexts*, each an entry of its own kind, in a row of cells of its own (so that a name
  changed where nothing else changed is the only difference among its kind's contexts): the
  word before and the word after it together (the word after: on its line, in its sentence;
  for a name's first word, the word after the whole name: ``met John Smith in`` gives ``John``
  the context ``met … in``; at the sentence's end, the two words before it: ``delays in
  London.`` gives ``delays in …``, since "by …." alone is too common; where nothing follows
  the name on its line, not even a full stop (a heading, a list's item, a cut), the same two
  words marked as a line's end, and at the text's end marked as that: a copy cut inside a name
  (``Exitin`` before the site's "related pages") never meets its original's whole name at a
  sentence's end (``Exiting.``); after a capitalised word
  that starts the sentence, the sentence's start: ``John Smith said`` gives ``Smith`` the
  context ``… said``, so a whole name replaced there conflicts); and, in the documents
  given as ``sides`` (the number sketch's shortest, under 50 words), the word before alone (where
  a word stands before the name: a sentence's start is no context) and
  the word after alone. Every word of a name of several words has the whole name's contexts,
  of every kind (``met John Smith in`` gives ``Smith`` the context ``met … in`` too: no word
  of a name is another's context, so one word of it replaced is the only difference among the
  contexts, instead of also making its neighbours' contexts other ones, which could share its
  cells and hide it; and a copy whose punctuation lets a sentence go on, ``yesterday, and Mary
  Jones said`` for ``yesterday. Mary Jones said``, where ``Mary`` starts the sentence and is
  no name, adds ``Mary``'s entries beside ``Jones``'s, whose contexts' sums then differ,
  instead of putting another name in ``Jones``'s place). The text's last word when nothing
  follows it has only the first kind (a copy cut at a character count ends in half a word:
  ``Springf``).
  One word of context is common ("manage", "by"): in longer documents a cut and a correction
  elsewhere could leave one such context as often in both, with names of other initials;
* *every word* inside a sentence of a text written mostly in Latin letters (the words before
  and after it going on in its sentence; not on a line written mostly in capitals) is an entry
  of a fourth kind, :data:`WORD_KIND`, in cells of its own: its context the two neighbours,
  its value 0, or a name's for a word of Latin letters in camel case or uncommon and not a
  common word misspelt or inflected (:func:`_word_entries`), so that a name replaced by a
  word that is none (common: ``Debian`` → ``Ubuntu`` in German text; a code: ``Wayland`` →
  ``X11``) conflicts, while a common word for another is 0 against 0;
* a *term* in a text of a script without spaces (Chinese, Japanese): a run of words of a script
  with case with a character of that script among the characters of its context ("最近は Debian
  サイトの", "使用 vim 和", a command quoted or bracketed: "で \"awk -e", "（synaptic(8) で"),
  each word a name whatever its case (a system, a program, a product there), its context the
  :data:`TERM_CONTEXT` characters before the run and after it, spaces left out (spacing and
  full-width forms are a copy's);
* lines that give no names: the first line when the text has more than one and the next does not
  go on with a lower-case letter on the line right after it (a title or a site's header: the
  name cells' subject, and a new headline is a copy; a text wrapped at a width goes on, a
  title repeated on the next line does not; the
  first line as written, even where the frame's wording blanks it: a copy whose host model
  cut it has no other title), the last line
  when it is a paragraph of its own, no credit, under text with a line that ends a sentence
  (where a site's footer sits: "More news from Lakeside Sentinel every morning."; under
  headings alone it is the story, and a title repeated above the text is a heading, whatever
  it ends with), lines whose words are all capitalised (a heading, a menu, a
  shouting line), or more than three in four of more than six words (a title-case heading), but
  for a line starting with a dash (a credit: ``-- George Bernard Shaw`` gives ``Bernard``, then
  ``Shaw``), and lines of the frame (blank in the content text given beside; in the host models'
  path, lines with any token of the host's frame but a phrase between the page's own words);
  in texts that capitalise nouns (German: :func:`_capitalises_nouns`), where every noun
  would be a name, only the words their title holds too are (a listing's brand, a command)
  and words of two capitals (``GNOME``, ``macOS``), and a text without a title gives none;
* a site's name at both ends: on the last two lines under a title (lines repeating the title
  are the headline above the text, neither among them nor counted), a short line (a footer)
  gives no entry for the names the title line holds capitalised ("More news from Valley
  Tribune every morning." under "Valley Tribune | Local news"), unless it holds more than
  three of them or shares two other words of four letters or more with the title (the
  story's own line repeating its headline).

Not seen: a name of one capital at a sentence's start ("John said …" → "Peter said …") or on a
text's first line, a name replaced by one of the same initial and consonants ("Jon" → "Jan"), a
name changed together with both its neighbours, a name replaced by a word that is none in a
text of another script than Latin, names written in
scripts without case (Chinese, Japanese: only terms in a script with case are read there), a
name of one capital in a German text that its title does not hold.
Costs: a typo that adds or drops a consonant ("Jon" → "John") is another name, and so is an
uncommon word (a German compound) replaced by a common one; a copy that
puts a name at its line's end (a full stop dropped) no longer compares it there; a name in a
text's last paragraph of one line is not seen, nor on a short last line
naming what its title names; a footer naming the site on a line that no blank line sets apart
makes two copies in two sites' frames conflict when no header names the site too, unless a
host model cut the line (measured in docs/fingerprints.md, "Names inside sentences").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence, Set
from hashlib import blake2b

import numpy as np

from indexer.fingerprints.lexicon import (
    misspelt_words,
    read_words,
    uncommon,
)
from indexer.fingerprints.names import CREDIT_DASH, NAMED_BELOW
from indexer.text import DENSE_RANGES

__all__ = ["KINDS", "NAMED_BELOW", "name_entries"]

#: Letters of the scripts with case (Latin, Greek, Cyrillic, Armenian).
_CASED = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0370-\u03ff\u0400-\u052f\u0531-\u058f"
    "\u1e00-\u1fff"
)
_WORD = re.compile(f"[{_CASED}]+(?:['’\\-][{_CASED}]+)*")
_SPACES = re.compile(r"[^\S\n]+")
#: The characters other than a space that :data:`_SPACES` reads in ASCII text.
_ASCII_SPACES = "\t\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _single_spaced(text: str) -> str:
    """Each run of spaces of ``text`` (not line breaks) one space; an ASCII text that holds
    only single spaces as it is, without the regular expression's pass."""
    if text.isascii() and "  " not in text and not any(c in text for c in _ASCII_SPACES):
        return text
    return _SPACES.sub(" ", text)


#: A line that ends a sentence (not an ellipsis: a heading cut short ends in one).
_SENTENCE_END = re.compile(r"(?<!\.)[.!?。！？][\"'”’»)\]]*\s*$")
#: What may stand between a word and the name after it, the sentence going on: spaces
#: (``str.isspace``, as ``\s``), commas, quotes, brackets, a slash (``Linux/Unix``) and
#: numbers (:data:`_GAP_NUMBER`: "Section 2.1.4, “Debian …”", "Plan 9 world").
_GOING_ON_CHARS = ",\"'“”‘’«»„()[]/" + "".join(c for c in map(chr, range(0x3001)) if c.isspace())
#: A number between two words (its inner points, commas, colons and dashes too: no sentence
#: ends inside it).
_GAP_NUMBER = re.compile(r"[0-9]+(?:[.,:/-][0-9]+)*")
#: Words of German (not English) that are among its most frequent: a text holding them
#: capitalises its nouns.
_GERMAN = frozenset(
    re.findall(
        r"\S+",
        "der und ist nicht eine einen einem sich auf für dem des wird sind auch werden oder "
        "wenn nach bei ich wir sie das noch nur wie kann dass daß über zum zur ein vom wurde "
        "sein aber weil dann kein keine sehr immer mein dein alle bin bist habe hast durch "
        "gegen ohne unter zwischen diese dieser jetzt heute gibt muss soll viel mehr nichts "
        "etwas wer warum denn uns euch beim ins nein schon doch",
    )
)


def _capitalises_nouns(words: Sequence[str]) -> bool:
    """Whether a text's words are German's (two of its frequent words and one in twenty of the
    text's, or one in a text of at most twenty words): its nouns are capitalised, and would
    all be names."""
    hits = sum(map(_GERMAN.__contains__, map(str.lower, words)))
    return (hits >= 2 and 20 * hits >= len(words)) or (hits == 1 and len(words) <= 20)


#: :data:`_WORD` as the separator of ``re.split``: a line's gaps and words, alternating.
_WORDS_AND_GAPS = re.compile(f"({_WORD.pattern})")


_Name = tuple[str, str, str | None, bool, bool, bool, bool]

#: A spaced dash after a sentence's first words: what they are follows ("OpenOffice – это …",
#: "GNOME DVB Daemon — служба …").
_DEFINING = re.compile(r"\s+(?:-{1,2}|[\u2012-\u2015])\s+$")
#: What joins the parts of a word (``O'Brien``, ``USB-Stick``).
_JOINS = re.compile("['’\\-]")


def _two_capitals(word: str) -> bool:
    """An acronym or a name written in camel case (``GNOME``, ``LibreOffice``, ``macOS``, the
    ``USB`` of ``USB-Stick``): no sentence's first word and no German noun (``Datei-Manager``
    is two) is written so."""
    if word[1:].islower():  # one capital at most
        return False
    return any(sum(map(str.isupper, part)) > 1 for part in _JOINS.split(word))


#: A site's footer: how many of a text's last lines, and of at most how many words each, give
#: no entry for a name its title line (a site's header) also holds.
FRAME_LINES = 2
FRAME_LINE_WORDS = 16
#: At most how many of such a line's words its title holds capitalised (a site's name).
SITE_NAME_WORDS = 3


def _site_names(names: list[_Name], words: Sequence[str], title: str) -> set[str]:
    """Those of the ``names`` of one of a text's last lines (of ``words``) that its ``title``
    line holds capitalised, when the line is a site's footer naming the site its header (the
    title line) names: short, holding at most :data:`SITE_NAME_WORDS` of those, and sharing
    with the title at most one word of four letters or more besides its names (a line
    repeating the title's words is the story's own)."""
    if len(words) > FRAME_LINE_WORDS:
        return set()
    header = _WORD.findall(title)
    site = {w.casefold() for w in header if w[0].isupper()}
    held = sum(w.casefold() in site for w in words) if site else 0
    if not held or held > SITE_NAME_WORDS:
        return set()
    own = {n[1] for n in names}
    heads = {w.casefold() for w in header}
    shared = {
        f
        for w in words
        if (f := w.casefold()) in heads and len(f) > 3 and (f not in own or not w[0].isupper())
    }
    return set() if len(shared) > 1 else own & site


def _gap_goes_on(gap: str) -> bool:
    """Whether a gap between two words (:data:`_WORDS_AND_GAPS`) keeps one sentence going."""
    if gap == " " or not gap.strip(_GOING_ON_CHARS):
        return True
    return _GAP_NUMBER.search(gap) is not None and not _GAP_NUMBER.sub(" ", gap).strip(
        _GOING_ON_CHARS
    )


def _going_on(parts: list[str]) -> list[bool]:
    """Per word of a line split by :data:`_WORDS_AND_GAPS`: whether it follows the word before
    it in one sentence (the first: never)."""
    if len(parts) < 3:
        return []
    return [False, *(gap == " " or _gap_goes_on(gap) for gap in parts[2:-1:2])]


def _line_names(
    line: str,
    last: bool = False,
    parts: list[str] | None = None,
    rare: Set[str] = frozenset(),
    on: Sequence[bool] | None = None,
) -> list[_Name]:
    """(word before, name, word after, whether the word before is a name too, whether the name
    may be half a word, whether it is one wherever it stands: two capitals, whether it is an
    uncommon word in lower case) of each name on a line (module docstring), folded: every word
    of a
    name of several words has the whole name's words before and after, and where none is after
    (the sentence's end), the word before is the two; where nothing follows the name on its
    line, the word after is ``None`` (a line's end, marked in :func:`name_entries`).
    ``last``: the text's last line, whose last word, if nothing follows it, may be half a
    word. ``parts``: the line split by :data:`_WORDS_AND_GAPS`, when the caller has it, and
    ``on``: its :func:`_going_on`. ``rare``: the text's words in lower case that are uncommon
    in its language."""
    if parts is None:
        parts = _WORDS_AND_GAPS.split(line)
    words = parts[1::2]  # gap 0, word 0, gap 1, word 1, ..., the gap after the last word
    n = len(words)
    # capitalised, or with a capital inside (iOS, eBay, macOS)
    caps = [i for i, w in enumerate(words) if len(w) > 1 and not w.islower()]
    k = len(caps)
    credit = CREDIT_DASH.match(line) is not None  # "-- George Bernard Shaw": names, all of them
    lexical = {i for i, w in enumerate(words) if w in rare} if rare else set()
    if (not k and not lexical) or (k and not credit and (k == n or (4 * k > 3 * n and n > 6))):
        return []  # none, or a heading, a menu, a shouting line

    if on is None:
        on = _going_on(parts)  # word i follows word i - 1 in one sentence

    if lexical:  # an uncommon word beside another name is a list's item ("fsck, nfs, proc")
        # a capitalised word that starts its sentence ("See grep(1)", "Use awk") is none
        near = {i for i in caps if on[i] or _two_capitals(words[i])} | lexical
        lexical = {
            i
            for i in lexical
            if not (i - 1 in near and on[i]) and not (i + 1 in near and on[i + 1])
        }
    capital = set(caps) | lexical
    caps = sorted(capital)
    # names wherever they stand in a sentence: two capitals (GNOME, LibreOffice, macOS)
    always = {i for i in caps if not words[i][1:].islower() and _two_capitals(words[i])}

    # whether word i is a name here (a sentinel past the last word, read as word -1 too)
    named = [False] * (n + 1)
    for i in caps:
        named[i] = on[i] or i in always

    out: list[_Name] = []
    for i in caps:
        if not named[i]:
            continue
        # every word of a name has the whole name's context: the words before its first word
        # and after its last (so no word of it is another's context)
        s = i
        while named[s - 1]:
            s -= 1
        j = s
        while named[j + 1]:
            j += 1
        after: str | None = ""  # the sentence's end
        starts = not on[s]
        defined = starts and _DEFINING.match(parts[2 * j + 2]) is not None
        if j + 1 < n and (on[j + 1] or defined):
            after = words[j + 1].casefold()
        elif j + 1 == n and not parts[-1].strip():
            after = None  # the line's end, without punctuation
        if starts and not after:
            continue  # a sentence of names alone ("• KDE Connect: …"): no context to compare
        if not after:  # the sentence's end: the two words before it are its context
            before = " ".join(words[max(0, s - 2) : s]).casefold()
        elif starts or (s - 1 in capital and not on[s - 1]):
            before = ""  # the sentence's start ("KDE Plasma is", "John Smith said")
        else:
            before = words[s - 1].casefold()
        cut = last and i + 1 == n and not parts[-1].strip()  # the text's end: maybe half a word
        out.append(
            (before, words[i].casefold(), after, named[i - 1], cut, i in always, i in lexical)
        )
    return out


#: A character of a script written without spaces (:data:`indexer.text.DENSE_RANGES`).
_DENSE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in DENSE_RANGES) + "]")
#: A run of words of a script with case, spaces between them (``KDE Crystal``), and the
#: number that ends its name (``Plan 9``, ``Windows 11``: the number sketch's).
_RUN = re.compile(f"{_WORD.pattern}(?: +{_WORD.pattern})*(?: *[0-9]+(?:[.][0-9]+)*(?![0-9]))?")
#: What ends a term's context: a letter of a script with case or a digit (another term).
_TERM_EDGE = re.compile(f"[{_CASED}0-9]")
#: How many characters on each side of a term make its context in dense text.
TERM_CONTEXT = 4


def _context_before(line: str, at: int) -> str:
    """The last :data:`TERM_CONTEXT` characters before ``line[at]`` (spaces left out) that
    follow its last :data:`_TERM_EDGE` character there."""
    taken: list[str] = []
    for c in reversed(line[max(0, at - 4 * TERM_CONTEXT) : at]):
        if c == " ":
            continue
        if _TERM_EDGE.match(c) or len(taken) == TERM_CONTEXT:
            return "".join(reversed(taken))
        taken.append(c)
    if len(taken) < TERM_CONTEXT and at > 4 * TERM_CONTEXT:  # mostly spaces: read it all
        return _TERM_EDGE.split(line[:at].replace(" ", ""))[-1][-TERM_CONTEXT:]
    return "".join(reversed(taken))


def _term_names(line: str, last: bool = False) -> list[_Name]:
    """The terms of a line of text in a script without spaces: runs of words of a script with
    case (``Debian``, ``KDE Crystal``, ``systemd``) with a character of that script in their
    context (spaces left out; beside them, or past a quote or a bracket: ``（synaptic(8) で``,
    ``で "awk -e``), each word a name whatever its case, as :func:`_line_names`
    gives them: its context the :data:`TERM_CONTEXT` characters before the run and after it
    (spaces left out; nothing after on its line: ``None``). ``last``: the text's last line,
    whose last word may be half a word."""
    out: list[_Name] = []
    for m in _RUN.finditer(line):
        before = _context_before(line, m.start())
        rest = line[m.end() :].replace(" ", "")
        after: str | None = _TERM_EDGE.split(rest, 1)[0][:TERM_CONTEXT] or None
        if not _DENSE.search(before) and not (after and _DENSE.search(after)):
            continue  # not inside dense text
        cut = last and not rest
        for word in _WORD.findall(m.group()):
            if len(word) > 1:
                out.append((before.casefold(), word.casefold(), after, False, cut, False, False))
    return out


def _hash(kind: bytes, text: str) -> int:
    # a term's context holds the characters beside it as given, a lone surrogate too
    digest = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, person=kind).digest()
    return int.from_bytes(digest, "little")


@functools.lru_cache(maxsize=4096)
def _initial_hash(initial: str) -> int:
    return _hash(b"name-value", initial)


#: Vowels of Latin, Greek and Cyrillic (and y), unaccented: a name's value leaves them out.
_VOWELS = frozenset("aeiouyаеёиоуыэюяіїєαεηιουω")


@functools.lru_cache(maxsize=16384)
def _name_value(name: str) -> int:
    """A name's value: its initial and the set of its other consonants (module docstring)."""
    rest = {unicodedata.normalize("NFD", c)[0] for c in name[1:] if c.isalpha()}
    return _hash(b"name-value", name[0] + "".join(sorted(rest - _VOWELS)))


#: The kinds of entries (each in cells of its own): a name's by both neighbours, by the word
#: before, by the word after; every word's (:data:`WORD_KIND`).
KINDS = (b"name-both", b"name-left", b"name-right", b"name-word")
#: The kind of the entries of every word inside a sentence (:func:`_word_entries`).
WORD_KIND = 3
#: The last letter of the Latin script (its extensions A and B included).
_LATIN_END = "\u024f"


@functools.lru_cache(maxsize=1 << 14)
def _context_hash(kind: int, context: str) -> int:
    """A name's context's hash in the cells of ``KINDS[kind]`` (contexts repeat: "the is")."""
    return _hash(KINDS[kind], context)


@functools.lru_cache(maxsize=1 << 16)
def _word_code(folded: str) -> int:
    """A word's hash in the word entries' contexts (two of them make one: :data:`_MIX`)."""
    return _hash(KINDS[WORD_KIND], folded)


#: An odd 64-bit multiplier: a context's hash is the word before's code times it plus the word
#: after's (modulo 2**64), mixed again where the sketch places it.
_MIX = 0x9E3779B97F4A7C15
_U64 = (1 << 64) - 1


def _in_latin(words: Sequence[str]) -> list[str] | None:
    """The words of a text written in the Latin script (more than half of ``words`` in its
    letters), those in that script; None for a text of other scripts."""
    latin = [w for w in words if w[0] <= _LATIN_END]
    return latin if 2 * len(latin) > len(words) else None


def _word_entries(
    split: Sequence[list[str]], ons: Sequence[Sequence[bool]], languages: int
) -> tuple[list[int], list[int]]:
    """The context hashes and the values of every word inside a sentence of a text written in
    the Latin script (:func:`_in_latin`; ``split``: its lines of content, each split by
    :data:`_WORDS_AND_GAPS`; ``ons``: their :func:`_going_on`): its context the words before
    and after it, each going on in its sentence, case folded; its value a name's
    (:func:`_name_value`) when it is written in Latin letters, has two letters or more, and is
    written in camel case (``macOS``) or is uncommon (``GTK``, ``grep``) and no common word
    misspelt or inflected (``zreo``, ``deceives``:
    :func:`~indexer.fingerprints.lexicon.misspelt_words`) in ``languages``, those of the
    text's Latin words (:func:`~indexer.fingerprints.lexicon.languages_near`), else 0. None on
    a line whose words are mostly written in capitals (shouting: a copy may write it so)."""
    inside: list[tuple[str, str, str]] = []  # (word before, word, word after)
    for parts, on in zip(split, ons, strict=True):
        line = parts[1::2]
        long = [w for w in line if len(w) > 1]
        if 2 * sum(map(str.isupper, long)) > len(long):
            continue
        inside += [
            (before, word, after)
            for before, word, after, joined, goes_on in zip(
                line[:-2], line[1:-1], line[2:], on[1:-1], on[2:], strict=True
            )
            if joined and goes_on
        ]
    candidates = {w for _, w, _ in inside if len(w) > 1 and w[0] <= _LATIN_END}
    camel = {w for w in candidates if not w.islower() and not w.isupper() and _two_capitals(w)}
    rare = {w for w in candidates - camel if uncommon(w, languages)}
    named = camel | (rare - misspelt_words(rare, languages))
    value = {word: _name_value(word.casefold()) for word in named}
    ends = {w for t in inside for w in t[::2]}
    code = dict(zip(ends, map(_word_code, map(str.casefold, ends)), strict=True))
    return [(code[before] * _MIX + code[after]) & _U64 for before, _, after in inside], [
        value.get(word, 0) for _, word, _ in inside
    ]


#: How a line that a sentence goes on from ends: a letter, a digit, a comma or a closing
#: quote or bracket after one (no full stop, colon or semicolon).
_RUNS_ON = re.compile(r"[\w,，、][\"'”’»)\]）]*$")


def _unwrapped(body: list[str], rows: Sequence[int], title: str) -> list[list[int]]:
    """``body``'s lines (``rows``: their indices in the text) grouped so that each line that a
    sentence goes on to is read joined to the line above it (a group: the indices into
    ``body`` of the lines read as one), and a copy wrapped at another place, or not at all,
    reads the same words beside each other: the two lines stand next to each other in the
    text, the upper one ends where a sentence goes on (:data:`_RUNS_ON`) and is no heading (a
    line of capitalised words alone) unless the lower one starts in lower case, neither
    repeats the title and the lower one does not repeat the upper."""
    groups: list[list[int]] = []
    for k, line in enumerate(body):
        above = body[k - 1] if k else ""
        if (
            k
            and rows[k] == rows[k - 1] + 1
            and _RUNS_ON.search(above.rstrip()) is not None
            and line.strip() not in (title.strip(), above.strip())
            and above.strip() != title.strip()
            and (
                line.lstrip()[:1].islower()
                or any(map(str.islower, _WORD.findall(" ".join(body[i] for i in groups[-1]))))
            )
        ):
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def _joined(lines: Sequence[str]) -> str:
    """Lines read as one (:func:`_unwrapped`): a single space where each broke."""
    text = lines[0]
    for line in lines[1:]:
        text = text.rstrip() + " " + line.lstrip()
    return text


def name_entries(
    written: Sequence[str],
    content: Sequence[str] | None,
    named: Sequence[int],
    sides: Sequence[int] = (),
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The entries (document, kind: an index into :data:`KINDS`, context hash, value hash) of
    the names inside sentences of the documents ``named`` (indices into ``written``, the texts as
    written). ``content``: the texts with frame lines blanked (lines blank there give no
    names when the two have as many lines); None: every line is content. ``sides``: the
    documents whose names are also entered with each neighbour alone (the shortest:
    :data:`~indexer.fingerprints.numbers.NAME_SIDES_BELOW`)."""
    alone_too = set(sides)
    docs: list[int] = []
    kinds: list[int] = []
    ctxs: list[int] = []
    values: list[int] = []
    for d in named:
        text = _single_spaced(unicodedata.normalize("NFKC", written[d]))
        if not text:
            continue
        lines = text.split("\n")
        head = lines[0]  # the title as written, even where the frame's wording blanks it
        if content is not None:
            kept = content[d].split("\n")
            if len(kept) == len(lines):
                lines = [line if k.strip() else "" for line, k in zip(lines, kept, strict=True)]
        filled = [i for i, line in enumerate(lines) if line.strip()]
        body = [lines[i] for i in filled]
        rows = filled  # each body line's index in the text
        # a last paragraph of one line, no credit: where a site's footer sits
        footer = len(filled) > 1 and filled[-1] > filled[-2] + 1 and not CREDIT_DASH.match(body[-1])
        title = ""
        rest = filled[1:] if filled[:1] == [0] else filled
        if (
            head.strip()
            and rest
            and (
                rest[0] > 1
                or not lines[rest[0]].lstrip()[:1].islower()
                or lines[rest[0]].strip() == head.strip()
            )
        ):  # a title: not the first line of a sentence going on in the next (a repeat is not)
            title, body, rows = head, [lines[i] for i in rest], rest
        # A paragraph under headings alone is the story (under a sentence, either may be the
        # frame: both give no names); a title repeated above the text is a heading.
        repeats = {k for k, line in enumerate(body) if title and line.strip() == title.strip()}
        above = [body[k] for k in range(len(body) - 1) if k not in repeats]
        if not repeats:
            above.insert(0, title)
        footer = footer and any(_SENTENCE_END.search(line) for line in above)
        if footer:
            body = body[:-1]
        # where a site's footer may sit: the last lines of the story, the title's repeats
        # (the headline above the text) neither among them nor counted
        story = [k for k in range(len(body)) if k not in repeats]
        footers = set(story[max(1, len(story) - FRAME_LINES) :])
        groups = _unwrapped(body, rows, title)
        broken = body  # the lines as they break in the text
        body = [_joined([broken[i] for i in group]) for group in groups]
        split = [_WORDS_AND_GAPS.split(line) for line in body]
        ons = [_going_on(parts) for parts in split]
        words = [w for parts in split for w in parts[1::2]]
        dense = _DENSE.search(text) is not None
        latin = None if dense else _in_latin(words)
        languages, rare, near = read_words(set(words), None if latin is None else set(latin))
        if latin is not None:
            word_ctxs, word_values = _word_entries(split, ons, near)
            docs += [d] * len(word_ctxs)
            kinds += [WORD_KIND] * len(word_ctxs)
            ctxs += word_ctxs
            values += word_values
        lower = {w for w in rare if w.islower()}
        titled: set[str] | None = None  # (German) the only words that may be names
        if _capitalises_nouns(words):
            # every noun is capitalised: the names are those its title holds too
            titled = {w.casefold() for w in _WORD.findall(title)}
            if not titled:
                continue
        ends = not footer  # the last line left ends the text
        found: list[_Name] = []
        for k, (line, parts, on) in enumerate(zip(body, split, ons, strict=True)):
            at_end = k == len(body) - 1 and ends
            names = _line_names(line, at_end, parts, lower, on)
            if dense:
                names += _term_names(line, at_end)
            if names and footers.intersection(groups[k]):
                # a footer's lines read one by one, as written, though joined above
                site: set[str] = set()
                for i in footers.intersection(groups[k]):
                    piece = _WORD.findall(broken[i])
                    held = {w.casefold() for w in piece}
                    site |= _site_names([t for t in names if t[1] in held], piece, title)
                names = [t for t in names if t[1] not in site]
            found += names
        if titled is not None:
            found = [
                n if n[1] in titled or n[5] else (*n[:6], True)
                for n in found
                if n[1] in titled or n[5] or n[6] or uncommon(n[1], languages)
            ]
        for before, name, after, _, cut, _, lexical in found:
            value = _initial_hash(name[0]) if cut else _name_value(name)
            end = "\x00" if cut else "\n"  # the text's end or a line's, without punctuation
            contexts = [(0, f"{before} {after}" if after is not None else f"{before} {end}")]
            if d in alone_too and not lexical:  # the whole name's neighbours alone
                if not cut and before:  # whole (not the text's last word), after a word
                    contexts.append((1, before.rsplit(" ", 1)[-1]))
                if after:  # not the line's or the sentence's end
                    contexts.append((2, after))
            for kind, context in contexts:
                docs.append(d)
                kinds.append(kind)
                ctxs.append(_context_hash(kind, context))
                values.append(value)
    return (
        np.asarray(docs, dtype=np.int64),
        np.asarray(kinds, dtype=np.int64),
        np.asarray(ctxs, dtype=np.uint64),
        np.asarray(values, dtype=np.uint64),
    )
