"""A client that asks and never reads: one HTTP/2 connection whose stream window is 0 (the server can
never send a byte of the answer), its control frames acknowledged so that the connection stays up."""

from __future__ import annotations

import socket
import threading

import h2.config
import h2.connection
import h2.events
import h2.settings
from google.protobuf.message import Message


class ZeroWindowClient:
    def __init__(self, port: int) -> None:
        self._socket = socket.create_connection(("127.0.0.1", port))
        self._port = port
        self._connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self._connection.initiate_connection()
        self._connection.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        self._lock = threading.Lock()
        self.ended_streams = 0  # reset, or ended by the server's trailers
        self._flush()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def call(self, path: str, request: Message, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        """Starts one call (request sent, half-closed, no deadline); its answer is never read."""
        body = request.SerializeToString()
        with self._lock:
            stream = self._connection.get_next_available_stream_id()
            headers = [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", path),
                (":authority", f"127.0.0.1:{self._port}"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
                *metadata,
            ]
            self._connection.send_headers(stream, headers)
            self._connection.send_data(stream, b"\x00" + len(body).to_bytes(4, "big") + body, end_stream=True)
        self._flush()

    def close(self) -> None:
        self._socket.close()

    def _flush(self) -> None:
        with self._lock:
            data = self._connection.data_to_send()
        if data:
            self._socket.sendall(data)

    def _read(self) -> None:
        """Takes frames (settings, pings, headers acknowledged by h2) but never opens a window."""
        try:
            while data := self._socket.recv(65536):
                with self._lock:
                    events = self._connection.receive_data(data)
                self.ended_streams += sum(
                    isinstance(event, h2.events.StreamReset | h2.events.StreamEnded) for event in events
                )
                self._flush()
        except (OSError, h2.exceptions.ProtocolError):
            return
