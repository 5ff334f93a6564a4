"""scripts/elasticsearch: reports the running node, and fails with a clear message, not a trace."""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port

SCRIPT = ROOT / "scripts" / "elasticsearch"


def run_script(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "ES_URL"}
    environment.update(env)
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, env=environment, timeout=300
    )


@pytest.fixture
def scratch_state() -> Iterator[str]:
    """A state folder for a throwaway node, readable by the unprivileged node user."""
    path = Path("/var/lib/neardup-test") / uuid.uuid4().hex[:8]
    yield str(path)
    subprocess.run(["rm", "-rf", str(path)], check=False)


def test_status_reports_version_and_url(es_url: str) -> None:
    result = run_script("status", ES_URL=es_url)
    assert result.returncode == 0, result.stderr
    assert "Elasticsearch 9." in result.stdout
    assert es_url in result.stdout


def test_status_of_nothing_says_not_running_and_exits_3() -> None:
    result = run_script("status", ES_PORT=str(free_port()))
    assert result.returncode == 3
    assert "not running" in result.stdout


def test_port_taken_by_another_program_is_refused(scratch_state: str) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        result = run_script("start", ES_PORT=str(port), NEARDUP_STATE=scratch_state)
    assert result.returncode == 1
    assert f"port {port}" in result.stderr and "not our node" in result.stderr
    assert "Traceback" not in result.stderr


def test_too_old_jdk_is_refused_with_the_version_needed(scratch_state: str) -> None:
    old = next(iter(sorted(Path("/usr/lib/jvm").glob("java-17-openjdk-*"))), None)
    if old is None:
        pytest.skip("no JDK 17 on this machine to play the too-old JDK")
    result = run_script(
        "start", ES_PORT=str(free_port()), ES_JAVA_HOME=str(old), NEARDUP_STATE=scratch_state
    )
    assert result.returncode == 1
    assert "needs Java 21 or newer" in result.stderr


def test_unresolvable_version_names_what_maven_could_not_find(
    scratch_state: str, tmp_path: Path
) -> None:
    result = run_script(
        "start",
        ES_PORT=str(free_port()),
        ES_VERSION="9.99.0",
        NEARDUP_CACHE=str(tmp_path / "cache"),
        NEARDUP_STATE=scratch_state,
    )
    assert result.returncode == 1
    assert "Maven could not resolve any of: 9.99.0" in result.stderr


def test_failed_start_shows_the_log_tail(scratch_state: str) -> None:
    result = run_script(
        "start", ES_PORT=str(free_port()), ES_HEAP="1x", NEARDUP_STATE=scratch_state
    )
    assert result.returncode == 1
    assert "failed to start" in result.stderr
    assert "Invalid initial heap size" in result.stderr


def test_start_when_running_is_a_no_op(es_url: str) -> None:
    if os.environ.get("ES_URL"):
        pytest.skip("the tests run against an external cluster")
    port = es_url.rsplit(":", 1)[1]
    result = run_script("start", ES_PORT=port)
    assert result.returncode == 0
    assert "already running" in result.stderr
