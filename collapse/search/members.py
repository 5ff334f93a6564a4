"""The near-duplicates folded behind a representative: ``_collapse.members`` and the expander.

The window's members come from the grouping, the ones beyond it from the probe (:class:`Found`);
:func:`members` lists both in rank order, and both ``_collapse`` and the expander read it, so
they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collapse.search.grouped import Grouped
from collapse.search.request import Hit
from indexer.grouping import matched_band, matched_block
from indexer.hits import Decoded

__all__ = ["NOTHING_FOUND", "Found", "entry", "members"]


@dataclass(frozen=True)
class Found:
    """Near-duplicates the probe found beyond the window for one representative."""

    entries: tuple[dict[str, Any], ...] = ()

    @property
    def count(self) -> int:
        return len(self.entries)


#: What the probe found for a representative it found nothing for (one, not one per lookup).
NOTHING_FOUND = Found()


def entry(
    hit: Hit,
    ham: int,
    sim: float,
    explain: Grouped | None,
    rep: int,
    prints: Decoded,
    row: int,
    found: str,
) -> dict[str, Any]:
    """One entry of ``_collapse.members``; with ``explain`` (the window's groups) also the
    shared block and band and where it was ``found`` (``rep``, ``row``: rows of the window's
    prints and of ``prints``)."""
    out: dict[str, Any] = {
        "_id": hit.get("_id"),
        "_index": hit.get("_index"),
        "_score": hit.get("_score"),
        "hamming": ham,
        "similarity": round(sim, 4),
    }
    if explain is not None:
        held = explain.decoded
        blocks = held.params.blocks if held.params else 0
        out["block"] = (
            matched_block(int(prints.prints.simhash[row]), int(held.prints.simhash[rep]), blocks)
            if blocks
            else None
        )
        out["band"] = matched_band(prints.prints.minhash[row], held.prints.minhash[rep])
        out["found"] = found
    return out


def members(
    groups: Grouped,
    beyond: Found,
    w: int,
    explain: bool,
    limit: int | None = None,
    behind: dict[int, list[int]] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The entries of the first ``limit`` near-duplicates folded behind the representative at
    window position ``w`` (the window's, then the probe's: rank order), and how many there
    are. ``behind``: every representative's window members, when the caller has them."""
    g, dec, n = groups.grouping, groups.decoded, groups.n_prior
    gi = w + n
    in_window = behind.get(gi, []) if behind is not None else g.members(gi).tolist()
    count = len(in_window) + beyond.count
    limit = count if limit is None else limit
    how = groups if explain else None
    listed = [  # entries only for what is listed: a group may fold hundreds
        entry(
            groups.hits[m - n],
            int(g.hamming[m]),
            float(g.similarity[m]),
            how,
            gi,
            dec,
            m,
            "window",
        )
        for m in in_window[:limit]
    ]
    return (listed + list(beyond.entries))[:limit], count
