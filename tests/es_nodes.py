"""Extra local Elasticsearch nodes for fault and cluster tests, on their own ports and state.

The shared node (``scripts/elasticsearch``, port 9200) is never stopped by these tests: each
``LocalNode`` runs ``scripts/elasticsearch`` with its own ``ES_PORT``, transport port and a fresh
state folder, and is stopped and wiped afterwards. ``ES_URL`` is removed from the script's
environment, since it would make the script use that cluster instead of starting a node.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "elasticsearch"
STATE_ROOT = Path(os.environ.get("NEARDUP_STATE", "/var/lib/neardup"))


def fresh_state_dir() -> Path:
    """A new, empty state folder that the unprivileged node user can enter."""
    path = STATE_ROOT / f"test-{uuid.uuid4().hex[:10]}"
    path.mkdir(parents=True)
    path.chmod(0o755)
    return path


class FileRealm:
    """Users and roles of a node with security on, as file-realm files in ``folder``
    (``roles.yml``, ``users``, ``users_roles``; the minimal distribution has no native realm).

    ``admin`` (a superuser) is what the start script's health checks log in as.
    """

    def __init__(
        self,
        folder: Path,
        roles: dict[str, dict[str, Any]],
        users: dict[str, tuple[str, list[str]]],
        admin: tuple[str, str] = ("neardup-admin", "admin-password-0123"),
    ) -> None:
        self.folder = folder
        self.admin = admin
        users = {**users, admin[0]: (admin[1], ["superuser"])}
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "roles.yml").write_text(json.dumps(roles))  # JSON is YAML
        (folder / "users").write_text(
            "".join(f"{name}:{_sha1_hash(password)}\n" for name, (password, _) in users.items())
        )
        by_role: dict[str, list[str]] = {}
        for name, (_, user_roles) in users.items():
            for role in user_roles:
                by_role.setdefault(role, []).append(name)
        (folder / "users_roles").write_text(
            "".join(f"{role}:{','.join(names)}\n" for role, names in by_role.items())
        )
        for path in folder.iterdir():
            path.chmod(0o644)
        folder.chmod(0o755)


def _sha1_hash(password: str) -> str:
    """A password hash the file realm reads (``{SHA}`` + base64 of SHA-1): no bcrypt needed."""
    digest = hashlib.sha1(password.encode("utf-8")).digest()
    return "{SHA}" + base64.b64encode(digest).decode("ascii")


class LocalNode:
    """One node started and stopped with ``scripts/elasticsearch`` on loopback ports."""

    def __init__(
        self,
        http_port: int,
        transport_port: int,
        *,
        state: Path,
        cluster_name: str | None = None,
        node_name: str | None = None,
        seed_hosts: str | None = None,
        initial_masters: str | None = None,
        heap: str = "384m",
        realm: FileRealm | None = None,
    ) -> None:
        self.port = http_port
        self.url = f"http://127.0.0.1:{http_port}"
        self.auth = realm.admin if realm is not None else None
        self.env = {k: v for k, v in os.environ.items() if k != "ES_URL"}
        self.env.update(
            ES_PORT=str(http_port),
            ES_TRANSPORT_PORT=str(transport_port),
            ES_HEAP=heap,
            NEARDUP_STATE=str(state),
            ES_CLUSTER_NAME=cluster_name or f"neardup-test-{uuid.uuid4().hex[:8]}",
            ES_NODE_NAME=node_name or f"node-{http_port}",
            ES_START_TIMEOUT="240",
        )
        if realm is not None:
            self.env["ES_SECURITY_FILES"] = str(realm.folder)
            self.env["ES_AUTH"] = ":".join(realm.admin)
        if seed_hosts:
            self.env["ES_SEED_HOSTS"] = seed_hosts
            self.env["ES_INITIAL_MASTERS"] = initial_masters or ""

    def _run(self, command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(SCRIPT), command],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def start_async(self) -> subprocess.Popen[str]:
        return self._run("start")

    def start(self) -> None:
        wait(self.start_async(), f"start node on {self.port}")

    def stop(self) -> None:
        wait(self._run("stop"), f"stop node on {self.port}")

    def answers(self) -> bool:
        try:
            answer = httpx.get(f"{self.url}/_cluster/health", auth=self.auth, timeout=2)
            return answer.status_code == 200
        except httpx.HTTPError:
            return False


def wait(process: subprocess.Popen[str], what: str, timeout: float = 300) -> None:
    out, _ = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"could not {what}:\n{out}")


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def remove_state(state: Path) -> None:
    shutil.rmtree(state, ignore_errors=True)
