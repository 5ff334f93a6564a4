"""Import hygiene: importing the query-time path stays light (no Elasticsearch client, no numba,
no ingestion modules; the app's start-up loads the compiled grouping pass when configured), the
indexer never imports the proxy, and no imports go round in a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


def test_collapsing_path_does_not_import_the_ingestion_side() -> None:
    code = (
        "import sys\n"
        "import collapse.search, collapse.routes.search, collapse.routes.expander\n"
        "import collapse.routes.documents\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('elasticsearch', 'numba')\n"
        "               or m in ('indexer.mapping', 'indexer.ingest', 'indexer.bulk'))\n"
        "print(','.join(heavy))\n"
    )
    assert _printed(code) == ""


def _printed(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (nothing imported yet)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("indexer", "collapse")


def _modules() -> dict[str, Path]:
    """Every module of our packages, by dotted name."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    """Our modules that ``path`` imports at run time, lazy (in-function) imports included and
    imports under ``if TYPE_CHECKING:`` left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for n in ast.walk(node))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name in known}


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(path, known) - {name} for name, path in known.items()}


def test_no_module_of_indexer_imports_collapse() -> None:
    """The shared pieces (fingerprint contract, grouping rule, candidate query) live on the
    indexer's side; the proxy imports them, never the other way round."""
    offending = {
        name: sorted(dep for dep in deps if dep.split(".")[0] == "collapse")
        for name, deps in _graph().items()
        if name.split(".")[0] == "indexer"
    }
    assert {name: deps for name, deps in offending.items() if deps} == {}


def test_no_import_cycles() -> None:
    """Neither between the packages nor between modules (``TYPE_CHECKING`` imports aside)."""
    graph = _graph()
    packages = {(a.split(".")[0], b.split(".")[0]) for a, deps in graph.items() for b in deps}
    assert {(a, b) for a, b in packages if a != b} <= {("collapse", "indexer")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert cycles == []


def test_fingerprinting_outside_ingest_loads_no_numba() -> None:
    """The proxy's writes, ``lookup`` and ``fingerprint`` take the numpy paths (same output):
    only ``ingest`` loads the compiled kernels, before it forks its workers."""
    code = (
        "import sys\n"
        "from indexer.fingerprints.compute import fingerprint_batch\n"
        "fingerprint_batch(['Release 2.1 of 2026-01-03 fixes 12 bugs in the parser. ' * 5])\n"
        "print('numba' in sys.modules)\n"
    )
    assert _printed(code) == "False"
