"""The quality benchmark's scoring (bench/quality/scoring.py) on small hand-made windows."""

from __future__ import annotations

import pytest

from bench.quality.scoring import (
    Counts,
    DocLabel,
    Score,
    fold_map,
    lost_results,
    negative_types,
    prf,
    representative_violations,
    score_window,
)

# Two true groups on one host (A: original + syndicated elsewhere + corrected; B: original),
# a printer copy of B and a man-page family look-alike C.
LABELS = {
    "a0": DocLabel("A", "original", "h1.example", "man:git"),
    "a1": DocLabel("A", "syndicated", "h2.example", "man:git"),
    "a2": DocLabel("A", "corrected", "h1.example", "man:git"),
    "b0": DocLabel("B", "original", "h1.example", "doc"),
    "b1": DocLabel("B", "printer", "h1.example", "doc"),
    "c0": DocLabel("C", "original", "h3.example", "man:git"),
}


def test_prf_math_and_empty_conventions() -> None:
    assert prf(3, 1, 2) == pytest.approx((0.75, 0.6, 2 * 0.75 * 0.6 / 1.35))
    assert prf(0, 0, 0) == (1.0, 1.0, 1.0)  # nothing to fold, nothing folded
    assert prf(0, 0, 4) == (1.0, 0.0, 0.0)  # folded nothing: precise, no recall
    assert prf(0, 2, 0) == (0.0, 1.0, 0.0)


def test_counts_add_and_sum() -> None:
    c = Counts()
    for true, folded in [(True, True), (True, False), (False, True), (False, False)]:
        c.add(true, folded)
    assert (c.tp, c.fn, c.fp, c.tn) == (1, 1, 1, 1)
    c += Counts(tp=2)
    assert c.tp == 3 and c.precision == 0.75 and c.recall == 0.75


def test_perfect_collapse_scores_one() -> None:
    window = ["a0", "b0", "a1", "c0", "b1", "a2"]
    collapsed = [("a0", ["a1", "a2"]), ("b0", ["b1"]), ("c0", [])]
    s = score_window(window, collapsed, LABELS)
    # 15 pairs: true pairs are a0a1 a0a2 a1a2 b0b1 = 4
    assert s.overall.as_dict() == {
        "tp": 4,
        "fp": 0,
        "fn": 0,
        "tn": 11,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    assert s.lost == 0 and s.violations == 0
    assert s.by_kind["printer"].tp == 1 and s.by_kind["printer"].tn == 4
    # pairs with a syndicated hit: a1 with a0, b0, c0, b1, a2 -> 2 true, 3 not
    assert (s.by_kind["syndicated"].tp, s.by_kind["syndicated"].tn) == (2, 3)


def test_no_collapse_gives_zero_recall_full_precision() -> None:
    window = ["a0", "a1", "b0"]
    s = score_window(window, [(h, []) for h in window], LABELS)
    assert (s.overall.tp, s.overall.fn, s.overall.fp) == (0, 1, 0)
    assert s.overall.precision == 1.0 and s.overall.recall == 0.0


def test_wrong_fold_counts_precision_and_negative_type() -> None:
    window = ["a0", "b0", "c0"]
    collapsed = [("a0", ["b0", "c0"])]  # everything folded
    s = score_window(window, collapsed, LABELS)
    assert s.overall.fp == 3 and s.overall.tp == 0 and s.overall.precision == 0.0
    # a0-b0 share host h1 (site template), a0-c0 same man family, b0-c0 nothing
    assert s.negatives["site_template"] == [1, 1]
    assert s.negatives["family"] == [1, 1]
    assert s.negatives["other"] == [1, 1]
    assert s.wrong_fold_rate("site_template") == 1.0


def test_negative_types() -> None:
    assert negative_types(LABELS["a0"], LABELS["b0"]) == ("site_template",)
    assert negative_types(LABELS["a2"], LABELS["b1"]) == ("other",)  # printer: no template
    assert negative_types(LABELS["a1"], LABELS["c0"]) == ("family",)
    lic = DocLabel("L1", family="license", host="x")
    assert negative_types(lic, DocLabel("L2", family="license", host="x")) == (
        "site_template",
        "license",
    )


def test_lost_results() -> None:
    window = ["a0", "a1", "b0", "c0"]
    collapsed = [("a0", ["a1"]), ("c0", [])]
    assert lost_results(window, collapsed) == ["b0"]
    s = score_window(window, collapsed, LABELS)
    assert s.lost == 1 and s.examples["lost"] == ["b0"]
    # a lost hit folds with nothing, so its true pairs are misses
    s2 = score_window(["a0", "a1"], [("a0", [])], LABELS)
    assert s2.lost == 1 and s2.overall.fn == 1


def test_representative_violations() -> None:
    window = ["a1", "a0", "a2", "b0"]
    collapsed = [("a0", ["a1", "a2"]), ("b0", [])]  # a1 ranks above its representative a0
    assert representative_violations(window, collapsed) == [("a0", "a1")]
    assert score_window(window, collapsed, LABELS).violations == 1
    # a representative from beyond the window is ranked below every member inside it
    assert representative_violations(["a1"], [("a0", ["a1"])]) == [("a0", "a1")]


def test_members_outside_window_are_not_scored() -> None:
    window = ["a0", "b0"]
    collapsed = [("a0", ["a1", "a2"]), ("b0", ["b1"])]
    s = score_window(window, collapsed, LABELS)
    assert s.members_outside_window == 3
    assert s.overall.tp + s.overall.fp + s.overall.fn + s.overall.tn == 1


def test_fold_map_and_score_sum() -> None:
    assert fold_map([("a0", ["a1"]), ("b0", [])]) == {"a0": 0, "a1": 0, "b0": 1}
    total = Score()
    total += score_window(["a0", "a1"], [("a0", ["a1"])], LABELS)
    total += score_window(["a0", "a1"], [("a0", []), ("a1", [])], LABELS)
    assert (total.overall.tp, total.overall.fn, total.windows, total.hits) == (1, 1, 2, 4)
    assert total.as_dict()["overall"]["recall"] == 0.5


def _row(d: int, s: float, p: float, r: float, lost: int = 0) -> dict:
    kinds = {k: {"precision": p, "recall": r} for k in ("syndicated", "corrected")}
    f = 2 * p * r / (p + r)
    return {
        "index": "bp",
        "method": "simhash+minhash",
        "max_distance": d,
        "min_similarity": s,
        "overall": {"precision": p, "recall": r, "f1": f},
        "by_kind": kinds,
        "wrong_folds": {"site_template": {"rate": 0.0}},
        "lost": lost,
        "violations": 0,
    }


def test_default_is_the_most_precise_setting_that_meets_every_goal() -> None:
    from bench.report import choose_default, meets

    rows = [
        _row(24, 0.40, 0.9978, 0.9926),  # meets the goals, more wrong folds
        _row(24, 0.45, 0.9999, 0.9842),  # meets the goals, fewest wrong folds
        _row(32, 0.45, 0.9999, 0.9846),  # same within 0.001 recall: the smaller distance wins
        _row(24, 0.50, 1.0000, 0.9600),  # misses recall
        _row(64, 0.45, 0.9999, 0.9900, lost=1),  # loses a result
    ]
    assert meets(rows[3]) and meets(rows[4]) and not meets(rows[1])
    best = choose_default(rows)
    assert (best["max_distance"], best["min_similarity"]) == (24, 0.45)
    # nothing meets the goals: the best F1
    assert choose_default([rows[3], _row(7, 0.5, 1.0, 0.5)])["max_distance"] == 24
