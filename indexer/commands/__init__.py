"""The ``python -m indexer`` commands besides ``fingerprint``, one module each.

Exit codes shared by all of them (:mod:`indexer.commands.common`): 0 ok, 1 some documents
rejected, 2 usage error, 3 cannot proceed (cluster unreachable, index mapped differently).
"""
