"""``python -m bench.quality.independent --seed N --out DIR [--examples]``: see ``build``."""

from bench.quality.independent.build import main

main()
