"""Scoring a collapsed result window against the true groups (pure functions, no I/O).

One *window* is the ranked list of hit ids that Elasticsearch returns with collapsing off.
The collapsed answer for the same query is a list of ``(representative, members)`` in the
order shown. Every unordered pair of window hits is one decision:

* *true pair*: both hits belong to the same true group;
* *folded pair*: both hits end up in the same collapsed group (representative or member).

Pairwise precision = folded true pairs / folded pairs, recall = folded true pairs / true
pairs, F1 their harmonic mean (precision is 1.0 when nothing was folded and recall 1.0 when
there was nothing to fold, so empty windows neither help nor hurt). Counts are summed over
windows (micro average); a pair seen in two windows counts twice, as a reader would see it
twice.

*Per kind of variant* ``K``: the pairs in which at least one hit is of kind ``K``
(``original``, ``syndicated``, ``corrected``, ...). A pair of a corrected and a syndicated
copy counts for both kinds.

*Hard negatives*: pairs of different true groups, by type (a pair can have several):
``site_template`` both on one host and both inside its template (printer-friendly copies
carry no template), ``family`` both from one look-alike family of man pages, ``license`` two
different license texts; ``other`` otherwise. The wrong-fold rate of a type is folded pairs /
pairs.

*Lost result*: a window hit that is neither a representative nor a listed member.
*Representative-rule violation*: a member that ranks above (before) its representative in
the uncollapsed window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "NEGATIVE_TYPES",
    "Counts",
    "DocLabel",
    "Score",
    "fold_map",
    "lost_results",
    "negative_types",
    "prf",
    "representative_violations",
    "score_window",
]

NEGATIVE_TYPES = ("site_template", "family", "license", "other")
_NO_TEMPLATE = frozenset({"printer"})


@dataclass(frozen=True)
class DocLabel:
    """The truth about one document (fields of the corpus line)."""

    group: str
    kind: str = "original"
    host: str = ""
    family: str = ""


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 (1.0 for an empty denominator, see module docstring)."""
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


@dataclass
class Counts:
    """Confusion counts of pair decisions."""

    tp: int = 0  # true pair, folded
    fp: int = 0  # different groups, folded
    fn: int = 0  # true pair, not folded
    tn: int = 0  # different groups, not folded

    def add(self, true: bool, folded: bool) -> None:
        if true:
            if folded:
                self.tp += 1
            else:
                self.fn += 1
        elif folded:
            self.fp += 1
        else:
            self.tn += 1

    def __iadd__(self, other: Counts) -> Counts:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn
        return self

    @property
    def precision(self) -> float:
        return prf(self.tp, self.fp, self.fn)[0]

    @property
    def recall(self) -> float:
        return prf(self.tp, self.fp, self.fn)[1]

    @property
    def f1(self) -> float:
        return prf(self.tp, self.fp, self.fn)[2]

    def as_dict(self) -> dict[str, float | int]:
        p, r, f = prf(self.tp, self.fp, self.fn)
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": p,
            "recall": r,
            "f1": f,
        }


@dataclass
class Score:
    """Everything measured on one or more windows; add scores with ``+=``."""

    overall: Counts = field(default_factory=Counts)
    by_kind: dict[str, Counts] = field(default_factory=dict)
    negatives: dict[str, list[int]] = field(default_factory=dict)  # type -> [folded, pairs]
    lost: int = 0
    violations: int = 0
    hits: int = 0
    windows: int = 0
    members_outside_window: int = 0
    examples: dict[str, list] = field(default_factory=dict)  # a few ids for each failure

    def __iadd__(self, other: Score) -> Score:
        self.overall += other.overall
        for k, c in other.by_kind.items():
            self.by_kind.setdefault(k, Counts())
            self.by_kind[k] += c
        for t, (f, n) in other.negatives.items():
            cur = self.negatives.setdefault(t, [0, 0])
            cur[0] += f
            cur[1] += n
        self.lost += other.lost
        self.violations += other.violations
        self.hits += other.hits
        self.windows += other.windows
        self.members_outside_window += other.members_outside_window
        for k, v in other.examples.items():
            have = self.examples.setdefault(k, [])
            have.extend(v[: max(0, 5 - len(have))])
        return self

    def wrong_fold_rate(self, negative_type: str) -> float:
        folded, pairs = self.negatives.get(negative_type, [0, 0])
        return folded / pairs if pairs else 0.0

    def as_dict(self) -> dict:
        return {
            "overall": self.overall.as_dict(),
            "by_kind": {k: c.as_dict() for k, c in sorted(self.by_kind.items())},
            "wrong_folds": {
                t: {"folded": f, "pairs": n, "rate": f / n if n else 0.0}
                for t, (f, n) in sorted(self.negatives.items())
            },
            "lost": self.lost,
            "violations": self.violations,
            "hits": self.hits,
            "windows": self.windows,
            "members_outside_window": self.members_outside_window,
            "examples": self.examples,
        }


def fold_map(collapsed: Iterable[tuple[str, Sequence[str]]]) -> dict[str, int]:
    """Hit id -> index of the collapsed group showing it (representative or member)."""
    out: dict[str, int] = {}
    for gi, (rep, members) in enumerate(collapsed):
        out.setdefault(rep, gi)
        for m in members:
            out.setdefault(m, gi)
    return out


def lost_results(
    window: Sequence[str], collapsed: Iterable[tuple[str, Sequence[str]]]
) -> list[str]:
    """Window hits that appear neither as a representative nor as a member, in rank order."""
    shown = fold_map(collapsed)
    return [h for h in window if h not in shown]


def representative_violations(
    window: Sequence[str], collapsed: Iterable[tuple[str, Sequence[str]]]
) -> list[tuple[str, str]]:
    """``(representative, member)`` pairs where the member ranks above its representative.

    Only hits of the window are compared; a representative outside the window counts as a
    violation for every member inside it (the window's best copy was not chosen).
    """
    rank = {h: i for i, h in enumerate(window)}
    out = []
    for rep, members in collapsed:
        r = rank.get(rep, len(window))
        out.extend((rep, m) for m in members if m in rank and rank[m] < r)
    return out


def negative_types(a: DocLabel, b: DocLabel) -> tuple[str, ...]:
    """Types of hard negative of a pair from different groups (``("other",)`` if none)."""
    types = []
    if a.host and a.host == b.host and a.kind not in _NO_TEMPLATE and b.kind not in _NO_TEMPLATE:
        types.append("site_template")
    if a.family == b.family == "license":
        types.append("license")
    elif a.family and a.family == b.family and a.family.startswith("man:"):
        types.append("family")
    return tuple(types) or ("other",)


def score_window(
    window: Sequence[str],
    collapsed: Sequence[tuple[str, Sequence[str]]],
    labels: Mapping[str, DocLabel],
) -> Score:
    """Score one query: its uncollapsed window and its collapsed answer (module docstring)."""
    s = Score(windows=1, hits=len(window))
    groups = fold_map(collapsed)
    in_window = set(window)
    s.members_outside_window = sum(
        1 for _, members in collapsed for m in members if m not in in_window
    )
    lost = lost_results(window, collapsed)
    viol = representative_violations(window, collapsed)
    s.lost, s.violations = len(lost), len(viol)
    if lost:
        s.examples["lost"] = lost[:5]
    if viol:
        s.examples["violations"] = [list(v) for v in viol[:5]]
    ids = list(window)
    labs = [labels[h] for h in ids]
    gid = [groups.get(h, -1 - i) for i, h in enumerate(ids)]  # lost hits fold with nothing
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            a, b = labs[i], labs[j]
            true = a.group == b.group
            folded = gid[i] == gid[j]
            s.overall.add(true, folded)
            for k in {a.kind, b.kind}:
                s.by_kind.setdefault(k, Counts()).add(true, folded)
            if true:
                if not folded and len(s.examples.get("missed", [])) < 5:
                    s.examples.setdefault("missed", []).append([ids[i], ids[j]])
                continue
            for t in negative_types(a, b):
                cur = s.negatives.setdefault(t, [0, 0])
                cur[0] += folded
                cur[1] += 1
            if folded and len(s.examples.get("wrong", [])) < 5:
                s.examples.setdefault("wrong", []).append([ids[i], ids[j]])
    return s
