"""A real Unix socket listener and the probe a sandboxed program runs against it (socket tests)."""

from __future__ import annotations

import socket
import threading

PROBE = """
import socket, sys
path, kind = sys.argv[1], int(sys.argv[2])
address = "\\0" + path[1:] if path.startswith("@") else path
s = socket.socket(socket.AF_UNIX, kind)
try:
    if kind == socket.SOCK_DGRAM:
        s.sendto(b"POST /sign", address)
    else:
        s.connect(address)
        s.sendall(b"POST /sign")
    print("CONNECTED")
except OSError as exc:
    print("BLOCKED", exc.strerror)
"""


class Listener:
    def __init__(self, address: str, kind: int) -> None:
        self.sock = socket.socket(socket.AF_UNIX, kind)
        self.sock.bind(address)
        if kind == socket.SOCK_STREAM:
            self.sock.listen(4)
        self.sock.settimeout(0.1)
        self.kind = kind
        self.received: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                if self.kind == socket.SOCK_DGRAM:
                    self.received.append(self.sock.recv(100))
                    continue
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(2)
            try:
                self.received.append(conn.recv(100))
            except OSError:
                self.received.append(b"<connected>")
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()
