"""A TCP proxy in a thread of the test process: forwards to a real server until the test cuts it, after which
open connections are closed and new ones are refused (a store or database that went away mid-command)."""

from __future__ import annotations

import contextlib
import select
import socket
import threading

from tests.redis_server import free_port


class TcpProxy:
    """Listens on a loopback port; forwards to `target`, a (host, port) pair or the path of a Unix socket."""

    def __init__(self, target: tuple[str, int] | str) -> None:
        self.target = target
        self.port = free_port()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._cut = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._cut.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = self._connect()
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _connect(self) -> socket.socket:
        if isinstance(self.target, str):
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            return upstream
        return socket.create_connection(self.target)

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        pair = {client: upstream, upstream: client}
        try:
            while not self._cut.is_set():
                ready, _, _ = select.select(list(pair), [], [], 0.2)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)
        except OSError:
            return
        finally:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.close()

    def cut(self) -> None:
        """Close every connection and stop listening: the server behind the proxy is gone for good."""
        self._cut.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                    sock.close()
