"""Index-time side of near-duplicate collapsing: fingerprints and (later) ingestion.

Importing this package is deliberately cheap: submodules such as ``indexer.fingerprints``
(numpy, pydantic) and ``indexer.cli`` (click) are imported only when used.
"""

__version__ = "0.1.0"
