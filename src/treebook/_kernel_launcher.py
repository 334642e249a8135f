"""The command a warm sweep kernel is started with (see :mod:`treebook.forkserver`).

Run as ``python -I -S _kernel_launcher.py SOCKET CMD...`` by jupyter_client in place of the kernel
command ``CMD`` (``python -m ipykernel_launcher -f CONNECTION_FILE ...``). It sends its standard
streams, working directory, environment and ``CMD`` to the fork server listening on ``SOCKET``, which
forks the kernel from its template; the launcher then stands for that kernel towards jupyter_client:
it passes on every signal it receives to the kernel's process group and exits as the kernel exits
(with its exit code, or killed by the same signal). When it is killed itself, the fork server kills
the kernel. When the server cannot be reached or answers that this kernel needs a fresh process,
the launcher becomes ``CMD`` (``exec``): a kernel started the usual way.

Standard library only, so that it starts in a few milliseconds.
"""

import json
import os
import signal
import socket
import sys

#: signals passed on to the kernel (SIGKILL and SIGSTOP cannot be caught: the server handles a
#: launcher killed by SIGKILL)
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")

#: the largest message either side sends (a request holds the environment)
MAX_MESSAGE = 1 << 20


def _ask(address: str, cmd: list) -> tuple:
    """``(connection, reply)``, or ``(None, reason)`` when the server cannot be used."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect(address)
        request = {"argv": cmd, "cwd": os.getcwd(), "env": dict(os.environ)}
        socket.send_fds(sock, [json.dumps(request).encode()], [0, 1, 2])
        data = sock.recv(MAX_MESSAGE)
        reply = json.loads(data) if data else {"fresh": "the fork server closed the connection"}
    except (OSError, ValueError) as exc:
        sock.close()
        return None, {"fresh": f"the fork server cannot be reached ({exc})"}
    if "pid" not in reply:
        sock.close()
        return None, reply
    return sock, reply


def _forward(pid: int):
    def handler(signum, _frame):
        try:
            os.killpg(pid, signum)  # the kernel leads a session of its own, as a kernel started by Popen does
        except OSError:
            try:
                os.kill(pid, signum)
            except OSError:
                pass
    return handler


def main(argv: list) -> None:
    address, cmd = argv[1], argv[2:]
    sock, reply = _ask(address, cmd)
    if sock is None:
        sys.stderr.write(f"treebook: a fresh kernel, not a forked one: {reply.get('fresh')}\n")
        sys.stderr.flush()
        os.execv(cmd[0], cmd)
    pid = int(reply["pid"])
    for name in FORWARDED:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _forward(pid))
    while True:
        try:
            data = sock.recv(MAX_MESSAGE)
            break
        except InterruptedError:  # pragma: no cover - retried by Python itself (PEP 475)
            continue
    code = json.loads(data)["exit"] if data else None
    if code is None:  # the server is gone without reporting: the kernel must not outlive its launcher
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
                break
            except OSError:
                pass
        sys.stderr.write("treebook: the fork server exited while the kernel ran; the kernel was killed\n")
        sys.stderr.flush()
        os._exit(1)
    if code < 0:  # killed by a signal: be killed by the same one, so that the caller sees what the kernel saw
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv)
