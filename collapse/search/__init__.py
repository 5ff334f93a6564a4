"""The collapsed search, one step per module, read in order:

``request`` (parsed once, frozen) → ``window`` (first fetch, cursor, refills: ``fetches``,
``grouped``, ``reads``) → ``beyond`` (probe, verification, fill) → ``render`` (the answer;
``members`` is what ``_collapse`` and the expander both list). ``run`` strings them together.
"""

from collapse.search.render import Outcome, render
from collapse.search.request import SearchRequest, key, parse, parse_int
from collapse.search.run import collapse_all, collapsed
from collapse.search.window import total_of

__all__ = [
    "Outcome",
    "SearchRequest",
    "collapse_all",
    "collapsed",
    "key",
    "parse",
    "parse_int",
    "render",
    "total_of",
]
