from __future__ import annotations

import http.client
import threading

from django.core.management import get_commands, load_command_class
from django.core.servers.basehttp import WSGIRequestHandler

from config.devserver import PooledWSGIServer


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


def serve(app, pool_size):
    server = PooledWSGIServer(("127.0.0.1", 0), QuietHandler, pool_size=pool_size)
    server.set_app(app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def get(server, path="/"):
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, resp.getheader("Connection"), resp.read().decode()


def test_runserver_is_the_pooled_server_with_static_files():
    assert get_commands()["runserver"] == "config"
    command = load_command_class("config", "runserver")
    assert "use_static_handler" in {a.dest for a in command.create_parser("manage.py", "runserver")._actions}


def test_requests_are_served_by_the_same_few_threads_and_close_their_connection():
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [threading.current_thread().name.encode()]

    server = serve(app, pool_size=2)
    try:
        answers = [get(server) for _ in range(10)]
    finally:
        server.shutdown()
    assert {status for status, _, _ in answers} == {200}
    # Connection: close, so an idle keep-alive connection never holds a thread of the pool.
    assert {connection for _, connection, _ in answers} == {"close"}
    assert {name for _, _, name in answers} <= {"runserver-0", "runserver-1"}


def test_a_slow_request_does_not_hold_up_the_next_one():
    started, release = threading.Event(), threading.Event()

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/slow":
            started.set()
            release.wait(10)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ["PATH_INFO"].encode()]

    server = serve(app, pool_size=2)
    slow: list[tuple] = []
    waiting = threading.Thread(target=lambda: slow.append(get(server, "/slow")))
    try:
        waiting.start()
        assert started.wait(10)
        assert get(server, "/fast")[2] == "/fast"  # answered while /slow still waits
        assert not slow
    finally:
        release.set()
        waiting.join(10)
        server.shutdown()
    assert slow and slow[0][2] == "/slow"
