"""The query-time path stays light: no Elasticsearch client, no ingestion modules."""

from __future__ import annotations

import subprocess
import sys


def test_collapsing_path_does_not_import_the_ingestion_side() -> None:
    code = (
        "import sys\n"
        "import collapse.pipeline, collapse.routes.search, collapse.routes.expander\n"
        "import collapse.routes.documents\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'elasticsearch'\n"
        "               or m in ('indexer.mapping', 'indexer.ingest', 'indexer.bulk'))\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
