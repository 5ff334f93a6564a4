"""A second multilingual near-duplicate corpus, written independently of ``build_multilingual``.

See :mod:`bench.quality.independent.build`; run ``python -m bench.quality.independent``.
"""
