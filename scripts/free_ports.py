#!/usr/bin/env python3
"""Prints N free TCP ports on 127.0.0.1, one per line (all held open until
every one is chosen, so they are distinct). Each is claimed for every
process of the machine as the C++ test harness claims its ports
(tests/integration/local_cluster.cc: a file /tmp/pst-port-claims/PORT
created exclusively, stale after 10 minutes), so that launchers and tests
running side by side do not start two tasks on one port."""
import os
import socket
import sys
import tempfile
import time

CLAIM_LIFETIME_S = 600
claims = os.path.join(tempfile.gettempdir(), "pst-port-claims")


def claim(port):
    os.makedirs(claims, exist_ok=True)
    path = os.path.join(claims, str(port))
    try:
        if time.time() - os.path.getmtime(path) > CLAIM_LIFETIME_S:
            os.remove(path)
    except OSError:
        pass
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except FileExistsError:
        return False


count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
sockets, ports = [], []
while len(ports) < count:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
    if claim(s.getsockname()[1]):
        ports.append(s.getsockname()[1])
for port in ports:
    print(port)
for s in sockets:
    s.close()
