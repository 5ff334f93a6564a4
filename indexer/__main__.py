"""``python -m indexer``: the index-time command line."""

import os
import sys

# The indexer talks to Elasticsearch through the synchronous client's urllib3 node only. The
# client's transport imports its optional HTTP backends when they are installed (the proxy's
# and the tests' dependencies): aiohttp and httpx for its async nodes (~0.4 s of start-up, a
# third of it building an SSL context at import) and requests for its requests node, none of
# which this command uses; its serializers import pyarrow for Arrow answers (ES|QL), which
# the indexer never asks for. Marking them absent (for this command's process only)
# skips that; the one user of pyarrow here, the tokeniser's fallback without numba
# (``compute.enable_arrow``), imports it anyway.
for _name in ("aiohttp", "httpx", "requests", "pyarrow"):
    sys.modules.setdefault(_name, None)  # type: ignore[arg-type]

# The commands that fingerprint in worker processes fork the workers' parent first: it loads
# the compiled kernels on another core while this process imports the rest (the client, the
# command line), instead of after (``indexer.workers.start_early``).
_early = sys.argv[1:2] in (["ingest"], ["learn"]) and not {"--help", "-h"} & set(sys.argv)
if _early:
    from indexer.workers import start_early

    start_early()

from indexer.cli import main as cli  # noqa: E402


def main() -> None:
    """Run the command, then end the process without the interpreter's teardown.

    A command has closed its files, pools and client by the time it returns or exits; what
    is left is freeing every module's objects (numpy, the Elasticsearch client, numba's
    compiled kernels), which took longer than a small ingest (docs/indexer.md). So the
    streams are flushed and the process exits with the command's code. An exception that
    escapes the command ends the process the ordinary way (its traceback, then teardown).
    """
    try:
        cli()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # sys.exit("message"): the message on stderr, code 1, as Python does
            print(exc.code, file=sys.stderr)
            code = 1
    if _early:  # a run that ended before its pool took the workers' parent: not left behind
        from indexer.workers import end_early

        end_early()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a closed pipe (``| head``): as Python's own exit reports it
            code = code or 120
    os._exit(code)


if __name__ == "__main__":
    main()
