"""The server `manage.py runserver` starts (the embedded default of `make run`): Django's
development server, with its requests served by a fixed pool of threads.

Django's own runserver starts a new thread for every request, and that thread opens its own
database connection and runs the scanner and the model cold: a triage through the API took about
a third longer than the same triage in a thread that had served one before (README, *Measured*).
A thread of the pool keeps its connection (CONN_MAX_AGE) and stays warm from one request to the next.
"""

from __future__ import annotations

import queue
import socket
import threading
from typing import Any

from django.core.servers.basehttp import WSGIServer

# Requests served at once; more wait in the queue. On the embedded default an upload is parsed in
# the request (eager Celery), so a few slow requests must not hold every thread.
POOL_SIZE = 8

# What socketserver hands a server for each request (a TCP server's is the accepted socket).
Request = socket.socket | tuple[bytes, socket.socket]


class PooledWSGIServer(WSGIServer):
    """Django's WSGIServer whose requests are handed to POOL_SIZE long-lived threads.

    It is not a ThreadingMixIn, so Django's handler answers every request with `Connection:
    close`: a browser's idle keep-alive connection never holds a thread of the pool.
    """

    def __init__(self, *args: Any, pool_size: int = POOL_SIZE, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._requests: queue.SimpleQueue[tuple[Request, Any]] = queue.SimpleQueue()
        for n in range(pool_size):
            # Daemon threads, as Django's per-request ones: quitting never waits for a request.
            threading.Thread(target=self._serve_requests, name=f"runserver-{n}", daemon=True).start()

    def process_request(self, request: Request, client_address: Any) -> None:
        self._requests.put((request, client_address))

    def _serve_requests(self) -> None:
        while True:
            request, client_address = self._requests.get()
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
