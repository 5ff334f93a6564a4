"""What ``python -m indexer`` and an ingest worker load at start-up: nothing they do not use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from indexer import workers
from indexer.prepare import PrepareConfig

ROOT = Path(__file__).resolve().parent.parent


def test_the_command_skips_the_clients_unused_http_backends() -> None:
    """The client's optional backends (async nodes, the requests node) and its Arrow
    serializer's pyarrow stay unimported in the command's process; the urllib3 node the
    indexer uses is there, and the tokeniser's fallback without numba still gets pyarrow."""
    code = (
        "import sys\n"
        "import indexer.__main__\n"
        "import elastic_transport, elasticsearch\n"
        "from indexer.fingerprints import compute\n"
        "loaded = sorted(m for m, mod in sys.modules.items() if mod is not None\n"
        "                and m.split('.')[0] in ('requests', 'aiohttp', 'httpx', 'pyarrow'))\n"
        "print(','.join(loaded), elastic_transport.Urllib3HttpNode.__name__)\n"
        "print(compute.enable_arrow(), 'pyarrow.compute' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split("\n")[:2] == [" Urllib3HttpNode", "True True"]


@pytest.mark.parametrize("compiled", [True, False])
def test_a_worker_loads_the_arrow_path_only_without_the_compiled_one(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled tokenisation never reaches the pyarrow path: a worker with the kernels
    does not import it; one without them (no numba) does."""
    calls: list[str] = []

    def kernel() -> bool:
        calls.append("kernel")
        return compiled

    def arrow() -> bool:
        calls.append("arrow")
        return True

    monkeypatch.setattr(workers, "enable_kernel", kernel)
    monkeypatch.setattr(workers, "enable_arrow", arrow)
    monkeypatch.setattr(workers, "warm_number_kernel", lambda: None)
    workers._init_worker(PrepareConfig(), {})
    assert calls == (["kernel"] if compiled else ["kernel", "arrow"])


def test_a_run_that_ends_before_its_pool_leaves_no_process_behind(tmp_path: Path) -> None:
    """``python -m indexer ingest`` forks its workers' parent before parsing its arguments;
    a run refused at once (here: an input that does not exist) ends that process too."""
    token = f"gone-{tmp_path.name}"
    err = tmp_path / "stderr"
    with err.open("wb") as out:  # a file, not a pipe: the run is over when its process is
        run = subprocess.run(
            [sys.executable, "-m", "indexer", "ingest", "--index", token, str(tmp_path / "none")],
            stdout=out,
            stderr=out,
            cwd=ROOT,
            timeout=60,
        )
    assert run.returncode == 2, err.read_text()
    left = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True)
    assert left.stdout == ""
