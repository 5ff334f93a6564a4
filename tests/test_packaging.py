"""The wheel, installed into a fresh virtualenv, runs ``neardup-indexer`` and ``neardup-collapse``
outside the repository: help and version, ``init`` and ``ingest`` against the real node (no
state left in the current folder), the proxy answering a collapsed search and serving its page.

How, and why so:

- **Built from a copy** of what the wheel is made of (``pyproject.toml``, ``README.md``,
  ``indexer/``, ``collapse/``) with ``pip wheel --no-deps`` (PEP 517, isolated: setuptools as
  ``[build-system]`` names it). A copy, because setuptools' ``build/`` folder in the tree keeps
  files deleted since and would hide a module missing from the package; nothing else in the
  copy means nothing else can end up in the wheel.
- **Installed with the project's own pip** (``pip --python``) into a virtualenv made without pip
  (0.1 s instead of 6 s for ``ensurepip``), without system site-packages; dependencies come from
  the package index, pinned to the versions in ``.venv`` (its ``pip freeze`` as constraints), so
  the commands run on what the rest of the suite tests. Measured on our build machine: 8 s from
  the index, 7 s offline from a wheelhouse of the same wheels (plus 3 s to download it): a
  wheelhouse would save a second for a cache to keep fresh, so there is none. This test needs
  the package index as ``scripts/bootstrap`` does; every step is bounded by a timeout.
- **Run from a folder outside the repository**, with ``PYTHONPATH`` cleared: the installed code
  can only read what is inside its own package.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch

from indexer import __version__
from tests.conftest import ROOT, free_port

pytestmark = pytest.mark.slow

#: What the wheel is built from; anything the build needs besides these makes it fail here.
SOURCES = ("pyproject.toml", "README.md", "indexer", "collapse")
PAGE_FILES = ("index.html", "app.js", "style.css")
WORDS = Path("/usr/share/common-licenses/GPL-3").read_text().split()


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    work: Path  # an empty folder outside the repository, the commands' current folder

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def _env() -> dict[str, str]:
    """This environment without what would point Python back at the repository or .venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(args: list[str], *, timeout: float, cwd: Path | None = None) -> str:
    """Run ``args`` to completion within ``timeout`` seconds: its standard output."""
    out = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=_env(), check=False
    )
    assert out.returncode == 0, f"{args}\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _names(requirements: list[str]) -> set[str]:
    """Distribution names of requirement strings, lower-cased."""
    return {re.split(r"[<>=!~\[;\s]", r, maxsplit=1)[0].lower() for r in requirements}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("packaging")
    assert not base.resolve().is_relative_to(ROOT)
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--timeout", "30"]
    _run([*pip, "wheel", "--no-deps", "-q", "-w", str(base / "dist"), str(src)], timeout=90)
    (wheel,) = (base / "dist").glob("neardup_collapse-*-py3-none-any.whl")

    frozen = _run([*pip, "freeze", "--exclude-editable"], timeout=30).splitlines()
    constraints = base / "constraints.txt"
    constraints.write_text(
        "".join(f"{line}\n" for line in frozen if "==" in line and "neardup" not in line)
    )
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=30)
    python = str(venv / "bin" / "python")
    _run(
        [*pip, "--python", python, "install", "-q", "-c", str(constraints), str(wheel)], timeout=180
    )
    work = base / "work"
    work.mkdir()
    return Installed(wheel, venv, work)


def test_the_wheel_holds_the_two_packages_the_page_and_the_runtime_dependencies(
    installed: Installed,
) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        names = whl.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        meta = whl.read(f"{info}/METADATA").decode()
        scripts = whl.read(f"{info}/entry_points.txt").decode()
    assert {n.split("/")[0] for n in names} == {"indexer", "collapse", info}
    assert {f"collapse/static/{page}" for page in PAGE_FILES} <= set(names)
    assert {"indexer/py.typed", "collapse/py.typed"} <= set(names)
    assert "indexer/fingerprints/common_words.bin" in names  # the name sketch's common words
    assert f"\nVersion: {__version__}\n" in meta
    assert "neardup-indexer = indexer.__main__:main" in scripts
    assert "neardup-collapse = collapse.__main__:main" in scripts

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = [
        line.split(":", 1)[1].strip()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert _names(required) == _names(project["dependencies"])
    for extra in ("dev", "bench"):  # extras stay extras
        assert not _names(required) & _names(project["optional-dependencies"][extra])


def test_the_commands_run_from_the_virtualenv_outside_the_repository(
    installed: Installed,
) -> None:
    code = "import collapse, indexer, sys; print(collapse.__file__, indexer.__file__, *sys.path)"
    paths = _run([installed.bin("python"), "-c", code], timeout=30, cwd=installed.work).split()
    venv = installed.venv.resolve()
    assert all(Path(p).resolve().is_relative_to(venv) for p in paths[:2]), paths
    assert not any(Path(p).resolve().is_relative_to(ROOT) for p in paths[2:]), paths

    for command in ("neardup-indexer", "neardup-collapse"):
        out = _run([installed.bin(command), "--version"], timeout=30, cwd=installed.work)
        assert out.strip() == f"{command}, version {__version__}"
    helped = _run([installed.bin("neardup-indexer"), "--help"], timeout=30, cwd=installed.work)
    for command in ("init", "ingest", "backfill", "lookup", "fingerprint"):
        assert f"  {command} " in helped
    helped = _run([installed.bin("neardup-collapse"), "--help"], timeout=30, cwd=installed.work)
    assert "--es-url" in helped


def _prose(seed: int, n: int = 150) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.mark.es
def test_the_installed_indexer_and_proxy_work_against_the_node(
    installed: Installed, es: Elasticsearch, es_url: str, index_name: str
) -> None:
    story = _prose(1).split()
    edited = [*story[:70], "republished", *story[71:]]
    docs = [
        {"id": "story", "title": "A story", "body": " ".join(story), "url": "https://a.example/s"},
        {"id": "copy", "title": "A story", "body": " ".join(story), "url": "https://b.example/s"},
        {"id": "edit", "title": "A story", "body": " ".join(edited), "url": "https://c.example/s"},
    ] + [
        {"id": f"other{i}", "title": f"Other {i}", "body": _prose(10 + i), "url": f"https://d/{i}"}
        for i in range(3)
    ]
    source = installed.work.parent / "docs.jsonl"  # the input lies outside the current folder
    source.write_text("".join(json.dumps(d) + "\n" for d in docs))

    indexer = [installed.bin("neardup-indexer")]
    target = ["--index", index_name, "--es-url", es_url]
    _run([*indexer, "init", *target], timeout=60, cwd=installed.work)
    summary = _run(
        [*indexer, "ingest", *target, "--workers", "1", str(source)], timeout=90, cwd=installed.work
    )
    assert "read 6, indexed 6, rejected 0" in summary
    assert list(installed.work.iterdir()) == []  # no ingest state, no rejects file left here
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == 6

    port = free_port()
    log = installed.work.parent / "proxy.log"
    with log.open("w") as sink:
        proxy = subprocess.Popen(
            [installed.bin("neardup-collapse"), "--port", str(port), "--es-url", es_url],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=installed.work,
            env=_env(),
        )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            _wait_until_healthy(client, proxy, log)
            body = {"query": {"match_all": {}}, "size": 10}
            answer = client.post(f"/{index_name}/_search", json=body).json()
            assert answer["hits"]["total"]["value"] == 6  # Elasticsearch's count, copies included
            folded = {h["_id"]: h["_collapse"]["folded"] for h in answer["hits"]["hits"]}
            assert sorted(folded.values()) == [0, 0, 0, 2], answer

            page = client.get("/", headers={"Accept": "text/html"})
            assert page.status_code == 200, page.text
            assert page.headers["content-type"].startswith("text/html")
            for name in PAGE_FILES:
                asset = client.get(f"/static/{name}")
                assert asset.status_code == 200, name
                assert asset.content == (ROOT / "collapse" / "static" / name).read_bytes()
                assert name == "index.html" or f'"/static/{name}"' in page.text
    finally:
        proxy.send_signal(signal.SIGINT)
        try:
            proxy.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait(timeout=5)
    assert proxy.returncode == 0, log.read_text()
    assert list(installed.work.iterdir()) == []


def _wait_until_healthy(client: httpx.Client, proxy: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proxy.poll() is None, f"neardup-collapse exited:\n{log.read_text()}"
        try:
            if client.get("/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"neardup-collapse did not answer /health in 30 s:\n{log.read_text()}")
