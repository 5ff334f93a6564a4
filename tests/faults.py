"""Fault injectors on loopback TCP (not Elasticsearch stand-ins): a server that accepts and never
answers, and a TCP relay to the real node that can drop connections."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from tests.conftest import free_port


class StallingServer:
    """Accepts TCP connections, reads what comes, and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                self.connections.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.connections:
            with suppress(OSError):
                conn.close()


class DroppingRelay:
    """Relays TCP to ``target_port``; the first ``drop`` connections are hung up unanswered."""

    def __init__(self, target_port: int, drop: int = 0) -> None:
        self.target_port = target_port
        self.drop = drop
        self.accepted = 0
        self.port = free_port()
        self.sock = socket.create_server(("127.0.0.1", self.port))
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                self.accepted += 1
                if self.drop > 0:
                    # Read the request, then hang up without an answer: a node dying mid-request.
                    self.drop -= 1
                    with suppress(OSError):
                        conn.recv(65536)
                    conn.close()
                    continue
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
                for a, b in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self.sock.close()


class HoldingRelay:
    """Relays TCP to ``target_port``; the first request whose bytes contain ``pattern`` is held
    back until ``release`` is set (``held`` is set when it arrives): a window in which another
    client's write lands first."""

    def __init__(self, target_port: int, pattern: bytes) -> None:
        self.target_port = target_port
        self.pattern = pattern
        self.held = threading.Event()
        self.release = threading.Event()
        self._done = False
        self.port = free_port()
        self.sock = socket.create_server(("127.0.0.1", self.port))
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
                threading.Thread(target=self._requests, args=(conn, upstream), daemon=True).start()
                threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()

    def _requests(self, source: socket.socket, sink: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                if not self._done and self.pattern in data:
                    self._done = True
                    self.held.set()
                    self.release.wait(30)
                sink.sendall(data)
        with suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.release.set()
        self.sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextmanager
def stalling_server() -> Iterator[StallingServer]:
    server = StallingServer()
    try:
        yield server
    finally:
        server.close()
