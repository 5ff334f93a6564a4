"""The name cells: what a short document is about and whom it quotes, so that a copy with
another product name or another author stays apart.

A short listing whose product name changed, or a quote credited to someone else, differs from
its original in one or two words: to SimHash and MinHash a one-word edit like any other. A
reader sees another document. Three places in a short text say what it is, in every script:

* its *subject*: the longest part of its first line (the title, when the document has one),
  bracketed remarks left out (a headline's "(updated)"), split at the separators titles use
  (``|``, ``:``, `` - ``, ``【】`` ...), whose words start another line ("Apostrophe" of
  "Apostrophe | Shop" starts "Apostrophe 6.0 - a puzzle game") with nothing but spaces and
  punctuation before them (a line after one that ends in a spaced dash or a bar only goes on
  with it: a title's parts wrapped at a width; a line that starts with a year or a symbol,
  ``© 2026 Site``, is a footer naming the site after the title's separator, not the text's
  subject), or else whose
  words but its model codes and quantities (``P9``, ``T15``, ``1024GB``: the number sketch's)
  start one with its own left out: "Aurex P9 smartphone" over "Aurex smartphone 128 GB …";
  a line equal to the first (a heading repeating the title) does not count. A headline's
  additions ("Explained:") or a site's name after the title are parts of their own that no
  line starts with, and a new headline that the text does not repeat gives no subject;
* its *attribution*: the last line that starts with a dash (``-- Mark Twain``, ``—— 苏轼``,
  ``― 夏目漱石``; a dash alone on its line: the next line, a credit wrapped after its dash by
  a copy set at a width), bracketed remarks and what follows a comma left out (a source added
  after the name: ``-- F. D. Roosevelt, first inaugural address``), if its name has at most
  :data:`MAX_ATTRIBUTION` words (a character of a script written without spaces counts half
  a word, as in a document's word count, and a quoted work's title one word:
  ``—— 晏殊《采桑子·时光只解催人老》`` is two), or :data:`MAX_PLAIN_ATTRIBUTION` when it
  holds no sentence's end, comma, colon or dash before more text (a source described: ``--
  Discussion in comp.os.linux.misc on the intuitiveness of interfaces``; a dialogue's line
  holds those); when several lines start with a dash (a list,
  a dialogue), only if no text follows it. Without such a line, a credit at the end of the
  text's last line, after a full stop or a closing quote (``… itself.” — F. D.
  Roosevelt``, ``…之全真。——洪应明``), not itself ending a sentence (``. ! ? 。``, but for an
  initial: a dialogue's next line ``- Why? - Because.`` is none). The only dashed line, too
  long for a name, is a closing remark and gives its last words (a copy that breaks a
  dialogue's line keeps its end on the last line); a list's last item gives none. A
  credit's *source* is a quoted work (``《…》``, ``«…»``, ``“…”``), an address (``<…>``)
  and what follows the name after a comma (``论语，为政篇``, ``Roosevelt, first inaugural
  address``); the name's first words and the source's share the part's cells, the source's
  marked by :data:`SOURCE_BIT`,
  and the name's last word (its *surname*, unless the credit ends a sentence) is among them,
  marked by :data:`LAST_BIT`;
* its *mentions*: the parts of its title (split as for the subject) of at most
  :data:`NAME_WORDS` words each of which is on another of its lines, neither among the first
  nor the last :data:`EDGE_LINES` after the title (blank ones too: where a site's header and
  footer name the site the title names after its separator) nor one equal to the title: the
  command of "mmd - ein MS-DOS-Unterverzeichnis anlegen" that "Der Befehl mmd wird …" names.
  Two pages of sibling commands or products ("mmd"/"mrd … entfernen") differ in the few words
  that name them, and a short text repeats those. A *long* document (:data:`NAMED_BELOW`
  words of content or more) has its mentions alone, and only the parts that *start* one of
  those lines, their words in order (:func:`_long_mentions`): a long text holds nearly every
  common word and character somewhere, a new headline's too ("Update", "更新"), while the
  lines that start with a title's short part are the page's own about what it names ("link -
  …" and "printenv - …", two manual pages of one family under one long shared boilerplate).

Words are maximal runs of letters, case folded, a typographic apostrophe the typewriter's
(``O’Hara`` is ``O'Hara``; digits belong to the number sketch); each
character of a script written without spaces (Han, Kana, Thai, Lao, Khmer, Myanmar) is a word
of its own. The subject and the attribution are stored as the 23-bit hashes of their first
:data:`PER_PART` distinct words (an attribution with a source: the name's first half of the
cells, the source's the rest; 0: none), the mentions as one hash per part (its words together,
the first :data:`PER_PART` parts); the subject and the attribution only for documents under
:data:`NAMED_BELOW` words of content (a long article's reprint under another headline,
credited otherwise, is still a copy).

**Conflict** (:func:`names_agree`): both documents have an attribution and at most half of the
smaller one's words are in the other (a word counted alike as a name's or a source's), or both
have names, or both sources, that share at most half so, or both have surnames and neither is
among the other's words; or both have a subject and the two share no word, or, when both are
names (at most :data:`SUBJECT_WORDS` distinct words, a dense-script character counting
half and a run of Katakana one: "Dconf Editor", "Color Scheme Editor", "Halden T15 固态硬盘",
"Tessa X19 ノートパソコン"; marked by
:data:`NAME_BIT`), at most half of the smaller one's, or neither one's first word is among
the other's ("Anthy for Fcitx 5",
"Keyman support for Fcitx 5": more than half shared, "for" among them). A longer subject is a
headline or a description, which copies cut and reword, and of a title with two parts that
lines start with, a cut copy may take the other
("gcloud builds worker-pools - manage worker pools …" cut after "manage worker"): those
conflict only sharing no word, or when one is a name, neither one's first word is among the
other's and they share one word at most ("Keyboard layout viewer", "Eye of MATE Image
Viewer"; the cut headline above shares two). Both documents have mentions and share no
mention: a conflict.
Guarantees: a part one document lacks never conflicts (a copy that drops the credit, a long
document); a part whose words a copy keeps, whatever it adds after them, never conflicts; a
part replaced by other words (a disjoint subject, a name or an attribution sharing at most
half) always conflicts. So does the same author credited with another work or chapter whose
title shares at most half of its words (江城子 / 南乡子), and another author of the same work.
A copy that keeps the title and the text's words keeps its mentions, and a headline or a
site's name added to the title only adds mentions; titles naming two things the texts mention
("mmd", "mrd") conflict. Not seen: a name inside a sentence, a name of three words with one changed
("GNOME Sound Recorder", "GNOME Sound Juicer"), subjects of more than four words that share a
word, a copy that adds a work to a credit of more than three name words, and sibling titles
whose parts are all longer than :data:`NAME_WORDS` words. Cost: a copy whose headline keeps
none of the original's mentions (cut inside its one short part) and whose own headline is a
word its text uses ("Update:" over a text saying "update") conflicts; in a long document, only
where a line of the text starts with that word. Long pages of one family whose titles' short
parts start none of their lines (a news story's headline) are not told apart here.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Sequence
from itertools import islice

import numpy as np

__all__ = [
    "CREDIT_DASH",
    "EDGE_LINES",
    "LAST_BIT",
    "MAX_ATTRIBUTION",
    "MAX_PLAIN_ATTRIBUTION",
    "NAMED_BELOW",
    "NAME_BIT",
    "NAME_CELLS",
    "NAME_WORDS",
    "PARTS",
    "PER_PART",
    "SOURCE_BIT",
    "SUBJECT_WORDS",
    "WORD_MASK",
    "dashed_lines",
    "name_cells",
    "names_agree",
]

#: Parts: the subject, the attribution, the mentions.
PARTS = 3
#: Hashes kept per part (of its first words).
PER_PART = 6
#: Cells in all, after the number sketch's.
NAME_CELLS = PARTS * PER_PART
#: Documents with fewer words of content than this get name cells.
NAMED_BELOW = 100
#: Most words an attribution line may have (a dense-script character: half a word).
MAX_ATTRIBUTION = 8
#: Most words of an attribution whose text holds no sentence's end, comma, colon or dash before
#: more text (a description of the source); a line of a dialogue holds them.
MAX_PLAIN_ATTRIBUTION = 12
#: Subjects of at most this many words are names (a product's, a program's: "PCManFM-Qt File
#: Manager"): they conflict as attributions do; longer ones (a headline, a description) only
#: when they share no word.
SUBJECT_WORDS = 4
#: Title parts of at most this many words are names that the text may mention.
NAME_WORDS = 3
#: Lines at each end of a text (after its title, blank ones too) whose words give no mention:
#: a site's header and footer, single lines or paragraphs.
EDGE_LINES = 2
#: Most words a first line may have to give a subject (a longer one is text, not a title).
_MAX_TITLE = 24
#: A cell's word hash (22 bits; 0: no word).
WORD_MASK = 0x3FFFFF
#: Set on an attribution's cell whose word belongs to its source (a quoted work's title, or
#: what follows the name after a comma), not to the name: sources are also compared apart.
SOURCE_BIT = 0x800000
#: Set on the cell of an attribution's name's last word (a surname, most often).
LAST_BIT = 0x400000
#: Set on a subject's first cell when the subject is a name: at most :data:`SUBJECT_WORDS`
#: distinct words, a character of a script written without spaces counting half a word (a run
#: of Katakana one), model codes and quantities (the number sketch's) none.
NAME_BIT = SOURCE_BIT

_DENSE = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
)
#: A dense character, or a run of other letters; an apostrophe between letters joins them
#: (O'Malley, d'Arcy: one word, not a particle that every such name shares).
_WORD = re.compile(rf"[{_DENSE}]|[^\W\d_{_DENSE}]+(?:['’][^\W\d_{_DENSE}]+)*")
_DENSE_CHAR = re.compile(f"[{_DENSE}]")
#: A Katakana character (the prolonged sound mark too).
_KATAKANA = re.compile("[\u30a0-\u30ff]")
_DIGIT = re.compile(r"\d")
#: A run of letters (of scripts with spaces) and digits that holds a digit.
_CODE = re.compile(rf"[^\W{_DENSE}]*\d[^\W{_DENSE}]*")
_TITLE_SEPARATORS = re.compile(r"\s-{1,2}\s|\s[\u2012-\u2015]\s|[|｜:：·•【】\[\]「」]")
#: A line's end that a line break only wraps: a spaced dash or a bar ("pthreads -" over
#: "нити POSIX", a title's parts wrapped at a width); the next line starts no part there.
_DANGLING = re.compile(r"\s(?:-{1,2}|[\u2012-\u2015])\s*$|[|｜]\s*$")
_REMARK = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]")
#: A line's start that makes it an attribution (also read by :mod:`.sentence_names`).
CREDIT_DASH = re.compile(r"\s*(?:-{1,2}|[\u2012-\u2015\u2e3a\u2e3b\u301c\uff0d~])")
#: A work's title in an attribution: the quotes and brackets that mark one in each script.
_WORK = re.compile(
    r'《[^《》]*》|〈[^〈〉]*〉|«[^«»]*»|『[^『』]*』|「[^「」]*」|“[^“”]*”|„[^„“”]*[“”]|"[^"]*"'
    r"|<[^<>]*>"  # an address or a message's id: "-- Larry Wall in <…@wall.org>"
)
#: Words that link a credit's name to its source ("Larry Wall in <…>", "из писем в «…»"):
#: not the name's last word.
_LINKS = frozenset({"in", "im", "from", "aus", "в", "во", "из"})
_ANY_DASHED = re.compile(r"(?m)^\s*(?:-|[\u2012-\u2015\u2e3a\u2e3b\u301c\uff0d~])")
#: A credit inside a line: a dash after a sentence's end or a closing quote or bracket.
_INLINE = re.compile(
    r"[.…。”’»」』\"')）]\s*(?:-{1,2}(?=\s)|[\u2012-\u2015\u2e3a\u2e3b\u301c\uff0d]{1,2})\s*"
)
#: Where a credit's name ends and what it says of the source begins (``Mark Twain, 1876``).
_NAME_END = re.compile(r"[,，、;；]")
#: Text after an inline dash that ends a sentence is not a credit (a dialogue's next line),
#: unless its last word is an initial or an abbreviation (``F.``, ``Jr.``).
_SENTENCE = re.compile(r"(?<!\b\w)(?<!\b\w\w)[.!?…。！？]\s*$")


def _starts_with_words(line: str) -> bool:
    """Whether only spaces and punctuation (a quote, a bullet) stand before the line's first
    letter: a digit or a symbol there (``© 2026 Site Name``, a footer naming the site) makes
    the line no subject's."""
    for ch in line:
        if ch.isalpha():
            return True
        if not (ch.isspace() or unicodedata.category(ch)[0] == "P"):
            return False
    return False


def _words(line: str) -> list[str]:
    return _WORD.findall(line.lower())


def _uncoded(line: str) -> str:
    """``line`` without its model codes and quantities (runs of letters and digits holding a
    digit: ``P9``, ``T15``, ``1024GB``), which the number sketch compares."""
    return _CODE.sub(" ", line) if _DIGIT.search(line) else line


def _first_words(line: str, n: int) -> list[str]:
    """``_words(line)[:n]``, without finding the words after them."""
    return [m.group() for m in islice(_WORD.finditer(line.lower()), n)]


def _weight(words: Sequence[str]) -> float:
    """How many distinct words ``words`` (in their order) make: a character of a script
    written without spaces half a word, but a run of Katakana one (``ノートパソコン``: a word
    borrowed, written so)."""
    seen: set[str] = set()
    total = 0.0
    run = ""
    for w in [*words, ""]:
        if w and _KATAKANA.fullmatch(w):
            run += w
            continue
        for word in (run, w):
            if word and word not in seen:
                seen.add(word)
                total += 0.5 if word is w and _DENSE_CHAR.fullmatch(w) else 1.0
        run = ""
    return total


def _hash(word: str) -> int:
    """A word's nonzero hash of :data:`WORD_MASK`'s bits, stable across runs; a typographic
    apostrophe is the typewriter's (``O’Hara`` is ``O'Hara``: a copy's typesetting)."""
    return zlib.crc32(word.replace("’", "'").encode("utf-8")) % WORD_MASK + 1


def _hashes(words: Sequence[str]) -> list[int]:
    """The hashes of the first :data:`PER_PART` distinct ``words``."""
    out: list[int] = []
    for w in words:
        h = _hash(w)
        if h not in out:
            out.append(h)
            if len(out) == PER_PART:
                break
    return out


def _credit_cells(name: Sequence[str], source: Sequence[str], surname: bool) -> list[int]:
    """An attribution's cells: its name's first distinct words (half the cells when it has a
    source), then its source's (marked by :data:`SOURCE_BIT`); with ``surname``, the name's
    last word among them, marked by :data:`LAST_BIT`."""
    words = _distinct(name, PER_PART // 2 if source else PER_PART)
    last = name[-1] if surname and name else None
    if last is not None and last not in words:
        words[-1] = last
    cells = [_hash(w) | (LAST_BIT if w == last else 0) for w in words]
    return cells + [_hash(w) | SOURCE_BIT for w in _distinct(source, PER_PART - len(cells))]


def _subject(lines: list[str], title: str) -> tuple[list[str], float]:
    """The words of the longest part of the title (split at its separators: ``|``, ``:``,
    `` - ``, ``【】`` ...) whose words start one of ``lines`` (other than a line equal to the
    title), or else whose words but its model codes and quantities (:func:`_uncoded`) start
    one with its codes left out: the title's "Aurex P9 smartphone" names what "Aurex
    smartphone 128 GB" names, whereas a name holding a digit ("Smb4K") is read as written
    where lines repeat it. A line after one that ends in a spaced dash or a bar
    (:data:`_DANGLING`) goes on with it and starts no part. A part that starts in a script
    without spaces may have a headline's words glued before the name ("一文读懂Brisa S17
    平板电脑", where other scripts put a colon): its words after any of its first such
    characters count as a part too. And the part's length in words, its codes left out (the
    number sketch's) and a dense-script character counting half, a run of Katakana one
    (:func:`_weight`)."""
    head = title.strip()
    others = [
        line
        for k, line in enumerate(lines)
        if line and line.strip() != head and not (k and _DANGLING.search(lines[k - 1]))
    ]
    pieces = _title_pieces(title)
    whole = [(w, _words(_uncoded(p))) for p in pieces if 0 < len(w := _words(p)) <= _MAX_TITLE]
    if not others or not whole:
        return [], 0.0
    parts = whole + [(w[k:], plain[k:]) for w, plain in whole for k in _glued(w)]
    most = max(len(w) for w, _ in parts)  # only the lines' first words are compared
    starts = [_first_words(line, most) for line in others if _starts_with_words(line)]
    best, plain = _longest(parts, starts)
    if not best:  # without codes: where a glued headline ends is read on those words too
        uncoded = [p[k:] for _, p in whole for k in (0, *_glued(p))]
        starts = [_first_words(_uncoded(line), most) for line in others if _starts_with_words(line)]
        best, plain = _longest([(p, p) for p in uncoded], starts)
    return best, _weight(plain)


def _glued(words: list[str]) -> list[int]:
    """Where a part of a title may start after a headline's words glued before it in a script
    without spaces: after each of the part's first dense-script characters, leaving a word or
    two such characters at least."""
    lead = 0
    while lead < len(words) and _DENSE_CHAR.fullmatch(words[lead]):
        lead += 1
    return [k for k in range(1, lead + 1) if _weight(words[k:]) >= 1]


def _longest(
    parts: list[tuple[list[str], list[str]]], starts: list[list[str]]
) -> tuple[list[str], list[str]]:
    """Of ``parts`` (words, and the words without codes), the one with the most words that
    start one of the lines (``starts``: their first words)."""
    best: tuple[list[str], list[str]] = ([], [])
    for words, plain in parts:
        n = len(words)
        if len(best[0]) < n and any(line[:n] == words for line in starts):
            best = (words, plain)
    return best


def _title_pieces(title: str) -> list[str]:
    """The parts of the title, split at its separators (``|``, ``:``, `` - ``, ``【】`` ...),
    bracketed remarks left out."""
    return _TITLE_SEPARATORS.split(_REMARK.sub(" ", title))


def _title_parts(title: str, most: int) -> list[list[str]]:
    """The words of each part of the title (:func:`_title_pieces`) that has at most ``most``
    words."""
    return [w for w in map(_words, _title_pieces(title)) if 0 < len(w) <= most]


def _mentions(lines: list[str], title: str) -> list[str]:
    """The parts of the title (split as :func:`_subject` splits it) of at most
    :data:`NAME_WORDS` words each of which is on one of ``lines`` other than the first and the
    last :data:`EDGE_LINES` (where a site's header and footer name the site) and a line equal
    to the title, each as its words joined by a space."""
    parts = _title_parts(title, NAME_WORDS)
    if not parts or len(lines) <= 2 * EDGE_LINES:
        return []
    head = title.strip()
    inner = [line for line in lines[EDGE_LINES:-EDGE_LINES] if line and line.strip() != head]
    seen = set(_words("\n".join(inner)))
    return [" ".join(words) for words in parts if seen.issuperset(words)]


def _long_mentions(text: str, title: str) -> list[str]:
    """A long document's mentions: the parts of its title (split as :func:`_subject` splits
    it) of at most :data:`NAME_WORDS` words that *start* one of its lines other than the
    title, the first and the last :data:`EDGE_LINES` after it and a line equal to the title
    (only spaces and punctuation before them, as :func:`_starts_with_words` reads a line),
    each as its words joined by a space. In a long text nearly every common word, and every
    common character of a script without spaces, stands somewhere, and a new headline's word
    ("Update", "更新") with them: a part that starts a line is what the page documents
    ("link - …", "printenv - …" of two pages of one family under one boilerplate)."""
    start = -1  # the inner lines: after the title's and the first EDGE_LINES' line breaks
    for _ in range(EDGE_LINES + 1):
        start = text.find("\n", start + 1)
        if start < 0:
            return []
    end = len(text)  # ... up to the last EDGE_LINES' line breaks
    for _ in range(EDGE_LINES):
        end = text.rfind("\n", start + 1, end)
        if end < 0:
            return []
    parts = _title_parts(title, NAME_WORDS)
    if not parts:
        return []
    inner = text[start + 1 : end]
    if inner.isascii():  # folded text outside ASCII is in lower case already
        inner = inner.lower()
    firsts = {words[0] for words in parts if all(w in inner for w in words)}
    if not firsts:
        return []  # most long pages: a word of each part nowhere
    head = title.strip().lower()
    starts: set[tuple[str, ...]] = set()
    for first in firsts:  # the lines that hold a part's first word: does it start them?
        at = inner.find(first)
        while at >= 0:
            line = inner.rfind("\n", 0, at) + 1
            stop = inner.find("\n", at)
            m = None
            if at == line or (not inner[line].isalnum() and _punctuation_only(inner[line:at])):
                m = _LINE_WORDS.match(inner, line)
            if m is not None and inner[line : None if stop < 0 else stop].strip() != head:
                run = tuple(w for w in m.groups() if w)  # a line equal to the title: none
                starts.update(run[:k] for k in range(1, len(run) + 1))
            at = -1 if stop < 0 else inner.find(first, stop + 1)
    return [" ".join(words) for words in parts if tuple(words) in starts]


def _punctuation_only(text: str) -> bool:
    """Whether ``text`` holds only spaces and punctuation (what may stand before a line's first
    word for the line to start with it, as :func:`_starts_with_words` reads lines)."""
    return all(c.isspace() or unicodedata.category(c)[0] == "P" for c in text)


_WORD_PATTERN = _WORD.pattern
#: The first :data:`NAME_WORDS` words of a line, after what stands before them (which
#: :func:`_long_mentions` checks): words in order with nothing but non-letters between them.
_LINE_WORDS = re.compile(
    rf"(?m)^[^\w\n]*({_WORD_PATTERN})"
    + rf"(?:(?:[^\w\n]|[\d_])*({_WORD_PATTERN}))?" * (NAME_WORDS - 1)
)


def _attribution(lines: list[str], last: str) -> tuple[list[str], list[str], bool]:
    """The name's and the source's words an attribution is compared by, and whether its name
    ends with a surname (:func:`_credit`): of the last of ``lines`` that starts with a dash,
    else of a credit inside ``last`` (the text's last line, the title too when it is the only
    one). When several lines start with a dash (a list, a dialogue), only a last line of the
    text is a credit."""
    dashed = [(i, m.end()) for i, m in enumerate(map(CREDIT_DASH.match, lines)) if m is not None]
    if dashed:
        at, start = dashed[-1]
        credit = lines[at][start:]
        wrapped = not _WORD.search(credit) and at + 1 < len(lines) and lines[at + 1].strip()
        if wrapped:  # "--" alone, the name on the next line: a credit wrapped after its dash
            credit, at = lines[at + 1], at + 1
        if len(dashed) > 1 and any(line.strip() for line in lines[at + 1 :]):
            return [], [], False
        return _credit(credit, line=len(dashed) == 1)
    inline = None
    for inline in _INLINE.finditer(last):  # noqa: B007 (the last one)
        continue
    if inline is None or _SENTENCE.search(last, inline.end()):
        return [], [], False
    return _credit(last[inline.end() :], line=False)


#: What a credit's text holds inside when it is a sentence or a dialogue, not a name or a
#: source: a sentence's end, a comma, colon or semicolon, or a dash, before more text.
_PUNCTUATED = re.compile(r"[.!?…。！？,;:，；：]\s+\S|\s(?:-{1,2}|[\u2012-\u2015])\s")


def _credit(text: str, *, line: bool) -> tuple[list[str], list[str], bool]:
    """An attribution's name and source words (:func:`_attribution`) from the text after its
    dash, bracketed remarks left out, and whether the name's last word is a surname to compare
    (the credit does not end a sentence: a dialogue's line does). The source: quoted works'
    titles (``《…》``, ``«…»``, ``“…”`` ...), addresses in ``<…>`` (a linking word before
    one, :data:`_LINKS`, leaves the name) and what follows the name after a comma
    (``论语，为政篇``, ``Roosevelt, first inaugural address``). Longer than
    :data:`MAX_ATTRIBUTION` words (a dense-script character counting half, a work's title
    one; :data:`MAX_PLAIN_ATTRIBUTION` without punctuation inside), the text is a remark,
    not a name: the text's only dashed ``line`` is still its closing remark and gives its
    last :data:`PER_PART` distinct words as the name (a copy may break a dialogue's line,
    whose last line is then its end); a list's last item, or a dash inside a line, gives
    none."""
    credit = _REMARK.sub(" ", text)
    works = _WORK.findall(credit)
    unquoted = _WORK.sub(" ", credit)
    words = _words(unquoted)
    dense = sum(1 for w in words if _DENSE_CHAR.fullmatch(w))
    most = MAX_ATTRIBUTION if _PUNCTUATED.search(unquoted) else MAX_PLAIN_ATTRIBUTION
    if len(words) - dense / 2 + len(works) > most:
        ends = list(dict.fromkeys(reversed(_words(credit))))[PER_PART - 1 :: -1]
        return (ends if line else []), [], False
    named, *after = _NAME_END.split(unquoted, 1)
    name = _words(named)
    if works and len(name) > 1 and name[-1] in _LINKS:
        name = name[:-1]
    surname = _SENTENCE.search(credit.rstrip()) is None
    if not name:
        return words, _words(" ".join(works)), surname
    return name, _words(" ".join([*works, *after])), surname


def _distinct(words: Sequence[str], n: int) -> list[str]:
    """The first ``n`` distinct ``words``, in order."""
    return list(dict.fromkeys(words))[:n]


def dashed_lines(text: str) -> set[int]:
    """The lines of ``text`` (0-based, by line break) that start with a dash, the form of an
    attribution: ``boilerplate`` learns no template slot from them."""
    if _ANY_DASHED.search(text) is None:  # most texts: no line to look at
        return set()
    return {i for i, line in enumerate(text.split("\n")) if CREDIT_DASH.match(line)}


def name_cells(
    titles: Sequence[str],
    texts: Sequence[str],
    short: np.ndarray,
    long: np.ndarray | None = None,
) -> np.ndarray:
    """(n, :data:`NAME_CELLS`) uint32 name cells of the ``short`` documents, and the mentions
    alone of the ``long`` ones (:func:`_long_mentions`; zeros for the others). ``titles``:
    each document's first line as written; ``texts``: its text as the number sketch reads it
    (folded, frame lines blanked), whose first line is skipped."""
    out = np.zeros((len(texts), NAME_CELLS), dtype=np.uint32)
    for i in [] if long is None else np.flatnonzero(long).tolist():
        hs = _hashes(_long_mentions(texts[i], titles[i]))
        out[i, 2 * PER_PART : 2 * PER_PART + len(hs)] = hs
    for i in np.flatnonzero(short).tolist():
        first, *lines = texts[i].split("\n")
        last = next((line for line in reversed(lines) if line.strip()), first)
        title = titles[i]
        credit = _credit_cells(*_attribution(lines, last))
        subject, length = _subject(lines, title)
        parts = (_hashes(subject), credit, _hashes(_mentions(lines, title)))
        for part, hs in enumerate(parts):
            out[i, part * PER_PART : part * PER_PART + len(hs)] = hs
        if subject and length <= SUBJECT_WORDS:
            out[i, 0] |= NAME_BIT
    return out


def names_agree(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k,) bool: whether k pairs of name cells (``a``, ``b``: (k, :data:`NAME_CELLS`)) do not
    conflict (module docstring)."""
    x = a.reshape(len(a), PARTS, PER_PART)
    y = b.reshape(len(b), PARTS, PER_PART)
    nx = (x > 0).sum(axis=2)
    ny = (y > 0).sum(axis=2)
    equal = ((x & WORD_MASK)[:, :, :, None] == (y & WORD_MASK)[:, :, None, :]) & (x > 0)[
        :, :, :, None
    ]  # a word is a name's or a source's alike
    shared = equal.sum(axis=(2, 3))
    both = (nx > 0) & (ny > 0)
    half = 2 * shared <= np.minimum(nx, ny)  # at most half of the smaller one's words shared
    fx, fy = (x[:, 0, 0] & NAME_BIT) > 0, (y[:, 0, 0] & NAME_BIT) > 0
    named = fx & fy  # two subjects that are names
    firsts = (equal[:, 0, 0, :] | equal[:, 0, :, 0]).any(axis=1)  # a first word in the other
    # a name against a longer subject: other first words and one word shared at most
    renamed = (fx | fy) & ~firsts & (shared[:, 0] <= 1)
    subject = both[:, 0] & ((shared[:, 0] == 0) | (named & (half[:, 0] | ~firsts)) | renamed)
    attribution = both[:, 1] & half[:, 1]
    mentions = both[:, 2] & (shared[:, 2] == 0)
    credits = _apart(x[:, 1], y[:, 1], equal[:, 1]) | _other_last(x[:, 1], y[:, 1], equal[:, 1])
    return ~(subject | attribution | mentions | credits)


def _apart(x: np.ndarray, y: np.ndarray, equal: np.ndarray) -> np.ndarray:
    """(k,) bool: whether two credits' names, or their sources, both present, share at most
    half of the smaller one's words (``x``, ``y``: (k, PER_PART) cells; ``equal``: their
    words' equality, (k, PER_PART, PER_PART))."""
    out = np.zeros(len(x), dtype=bool)
    for source in (True, False):
        sx = (x > 0) & (((x & SOURCE_BIT) > 0) == source)
        sy = (y > 0) & (((y & SOURCE_BIT) > 0) == source)
        both = (equal & sx[:, :, None] & sy[:, None, :]).sum(axis=(1, 2))
        nx, ny = sx.sum(axis=1), sy.sum(axis=1)
        out |= (nx > 0) & (ny > 0) & (2 * both <= np.minimum(nx, ny))
    return out


def _other_last(x: np.ndarray, y: np.ndarray, equal: np.ndarray) -> np.ndarray:
    """(k,) bool: whether both credits' names have a last word and neither is among the
    other's words (arguments as :func:`_apart`'s)."""
    lx: np.ndarray = (x & LAST_BIT) > 0
    ly: np.ndarray = (y & LAST_BIT) > 0
    seen = (equal & lx[:, :, None]).any(axis=(1, 2)) | (equal & ly[:, None, :]).any(axis=(1, 2))
    out: np.ndarray = lx.any(axis=1) & ly.any(axis=1) & ~seen
    return out
