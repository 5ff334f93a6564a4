# The collapsing proxy (and, with another command, the demo loader) for docker compose.
# Not exercised on our build machines (they cannot run containers); tests/test_compose.py checks
# the compose file's structure instead.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY indexer ./indexer
COPY collapse ./collapse
RUN pip install . && useradd --system --uid 10001 --home-dir /app neardup && chown neardup /app
# the proxy's compiled passes (decode, grouping) into numba's cache beside the installed
# modules (read-only for the server's user): each worker then loads them instead of compiling
RUN python -c 'from indexer import hits; assert hits.use_compiled()'

COPY scripts/load-demo ./scripts/load-demo
COPY data/demo ./data/demo

USER neardup
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=6 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2)"]
CMD ["python", "-m", "collapse", "--host", "0.0.0.0", "--port", "8000"]
