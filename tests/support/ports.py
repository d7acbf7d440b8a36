"""A free TCP port on the loopback, for servers the tests start (never a fixed one: two test
workers, or two test runs on one host, must not collide)."""

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
