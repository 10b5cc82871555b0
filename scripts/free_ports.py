#!/usr/bin/env python3
"""Prints N free TCP ports on 127.0.0.1, one per line (all held open until
every one is chosen, so they are distinct)."""
import socket
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
sockets = []
for _ in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
for s in sockets:
    print(s.getsockname()[1])
    s.close()
