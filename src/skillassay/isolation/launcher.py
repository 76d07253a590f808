"""The forwarder that runs INSIDE a sandbox, in front of the sealed command.

It is a standalone script: the sandbox does not see skillassay's sources, so it imports only the standard
library and is run as ``python -I -S launcher.py [--forward PORT=SOCKET]... [--expose FD:PORT]... --
COMMAND...``.

- ``--forward PORT=SOCKET``: listen on ``127.0.0.1:PORT`` (and ``[::1]:PORT``) inside the sandbox's private
  network and carry each connection to the Unix socket ``SOCKET``, bind-mounted from the harness, where the
  harness forwards it to the one host-side endpoint it was granted.
- ``--expose FD:PORT``: ``FD`` is a listening TCP socket of the HOST's network, handed in by the harness; each
  connection the harness makes to it is carried to ``127.0.0.1:PORT`` inside (the app under test).

The listeners are bound before the command starts, so the command never races them. The command runs as this
process's child; signals are passed on to it, and this process exits with its status (128 + n for a signal),
so the sandbox ends when the command does.
"""

import os
import signal
import socket
import sys
import threading

BUFFER = 65536


def pump(src, dst):
    try:
        while True:
            data = src.recv(BUFFER)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:  # noqa: SIM105 - no contextlib: this starts with python -S, in a few milliseconds
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def splice(a, b):
    back = threading.Thread(target=pump, args=(b, a), daemon=True)
    back.start()
    pump(a, b)
    back.join()
    a.close()
    b.close()


def handle(conn, connect):
    try:
        peer = connect()
    except OSError:
        conn.close()
        return
    splice(conn, peer)


def serve(listener, connect):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(conn, connect), daemon=True).start()


def unix_connector(path):
    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
        except OSError:
            s.close()
            raise
        return s

    return connect


def local_connector(port):
    def connect():
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            return socket.create_connection(("::1", port))  # an app that listens on IPv6 loopback only

    return connect


def parse(argv):
    forwards, exposes = [], []
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag, value = argv[i], argv[i + 1]
        if flag == "--forward":
            port, path = value.split("=", 1)
            forwards.append((int(port), path))
        elif flag == "--expose":
            fd, port = value.split(":", 1)
            exposes.append((int(fd), int(port)))
        else:
            raise SystemExit(f"launcher: unknown option {flag}")
        i += 2
    return forwards, exposes, argv[i + 1 :]


def main():
    forwards, exposes, command = parse(sys.argv[1:])
    if not command:
        raise SystemExit("launcher: no command")
    servers = []
    for port, path in forwards:
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            try:
                s = socket.socket(family, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((host, port))
                s.listen(128)
            except OSError:
                if family == socket.AF_INET:
                    raise
                continue  # no IPv6 loopback in this sandbox
            servers.append((s, unix_connector(path)))
    for fd, port in exposes:
        s = socket.socket(fileno=fd)
        s.set_inheritable(False)  # never the command's
        servers.append((s, local_connector(port)))

    pid = os.fork()
    if pid == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"launcher: cannot run {command[0]}: {exc}\n".encode())
        os._exit(127)

    def forward(sig, _frame):
        try:  # noqa: SIM105 - no contextlib: this starts with python -S, in a few milliseconds
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, forward)
    for listener, connect in servers:
        threading.Thread(target=serve, args=(listener, connect), daemon=True).start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            os._exit(1)
        if os.WIFEXITED(status):
            os._exit(os.WEXITSTATUS(status))
        if os.WIFSIGNALED(status):
            os._exit(128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
