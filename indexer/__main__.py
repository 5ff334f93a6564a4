"""``python -m indexer``: the index-time command line."""

import sys

# The indexer talks to Elasticsearch through the synchronous client (urllib3) only. The
# client's transport imports its optional async HTTP backends when they are installed (the
# proxy's dependencies): aiohttp and httpx cost ~0.4 s of start-up, a third of it building an
# SSL context at import. Marking them absent (for this command's process only) skips that.
for _name in ("aiohttp", "httpx"):
    sys.modules.setdefault(_name, None)  # type: ignore[arg-type]

from indexer.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
