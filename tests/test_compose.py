"""The Docker files' structure (our machines cannot run containers, so this is all we check).

docker-compose.yml must start Elasticsearch 9.5.4 as a single node with security off (local use),
a one-shot job loading the demo corpus, and the proxy, with health checks, the loader and the
proxy waiting for a healthy Elasticsearch, and the proxy's environment pointing at it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ES_IMAGE = "docker.elastic.co/elasticsearch/elasticsearch:9.5.4"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def _ports(service: dict[str, Any]) -> list[tuple[str, str]]:
    """(published, target) pairs of a service's short-syntax ports."""
    pairs = []
    for port in service.get("ports", []):
        parts = str(port).split(":")
        pairs.append((parts[-2], parts[-1]))
    return pairs


def test_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"elasticsearch", "load-demo", "proxy"}
    assert "esdata" in compose.get("volumes", {})


def test_elasticsearch_is_a_local_single_node_without_security(compose: dict[str, Any]) -> None:
    es = compose["services"]["elasticsearch"]
    assert es["image"] == ES_IMAGE
    env = _env(es)
    assert env["discovery.type"] == "single-node"
    assert env["xpack.security.enabled"] == "false"
    assert ("9200", "9200") in _ports(es)
    assert all(str(p).startswith("127.0.0.1:") for p in es["ports"]), "bind to loopback only"


def test_every_long_running_service_has_a_health_check(compose: dict[str, Any]) -> None:
    for name in ("elasticsearch", "proxy"):
        check = compose["services"][name]["healthcheck"]
        test = check["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and len(test) >= 2, name
        assert {"interval", "timeout", "retries"} <= set(check), name
    services = compose["services"]
    assert "_cluster/health" in " ".join(services["elasticsearch"]["healthcheck"]["test"])
    assert "/health" in " ".join(services["proxy"]["healthcheck"]["test"])


def test_proxy_points_at_the_elasticsearch_service_and_waits_for_it(
    compose: dict[str, Any],
) -> None:
    proxy = compose["services"]["proxy"]
    assert _env(proxy)["ES_URL"] == "http://elasticsearch:9200"
    assert proxy["depends_on"]["elasticsearch"]["condition"] == "service_healthy"
    assert proxy["depends_on"]["load-demo"]["condition"] == "service_completed_successfully"
    assert ("8000", "8000") in _ports(proxy)
    assert proxy["build"] == "."


def test_loader_is_a_one_shot_job_of_the_real_indexer(compose: dict[str, Any]) -> None:
    loader = compose["services"]["load-demo"]
    assert loader["command"] == ["scripts/load-demo"]
    assert loader.get("restart", "no") == "no"
    assert _env(loader)["ES_URL"] == "http://elasticsearch:9200"
    assert loader["depends_on"]["elasticsearch"]["condition"] == "service_healthy"
    assert (ROOT / "scripts" / "load-demo").is_file()


def test_dockerfile_installs_the_project_and_serves_the_proxy() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.1[1-9]", text, re.M)
    assert re.search(r"^RUN pip install \.", text, re.M)
    for path in ("indexer", "collapse", "scripts/load-demo", "data/demo"):
        assert re.search(rf"^COPY {re.escape(path)} ", text, re.M), path
        assert (ROOT / path).exists(), path
    assert re.search(r"^USER (?!root)\w+", text, re.M), "the proxy does not run as root"
    assert '"-m", "collapse", "--host", "0.0.0.0", "--port", "8000"' in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored
