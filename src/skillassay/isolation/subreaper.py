"""The small launcher every unsealed process (``--isolation none``) runs under:
``python -I -S subreaper.py COMMAND...``

Without a PID namespace, a process started with ``setsid`` (or a daemon that double-forks) leaves its run's
process group, and killing the group no longer reaches it. So this process makes itself a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``): every orphan among its descendants is reparented to it, not to init, and
stays findable as its descendant in ``/proc``. It runs the command as its child, passes on the signals it
gets, and when the command ends (or the harness ends it: SIGTERM, or this process's parent dying) it kills
every descendant still alive, reaps them, and exits with the command's status (by the same signal when the
command was killed).

Standard library only, and no skillassay import: it starts in a few milliseconds.
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
ENDING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
GRACE = 0.5  # seconds the command has to end on a passed-on signal before everything below is killed


def descendants(root):
    """The live processes below ``root``, from /proc (children before grandchildren)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def reap():
    """Reap every child that has ended; return {pid: wait status}."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended[pid] = status


def kill_below(me, ended):
    """Stop, then kill, whatever is still alive below this process until nothing is (a process forking while
    it is killed is caught by the next round: its children are reparented here)."""
    for _ in range(1000):
        pids = descendants(me)
        if not pids:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:  # noqa: SIM105 - no contextlib: this starts with python -S, in a few milliseconds
                    os.kill(pid, sig)
                except OSError:
                    pass
        time.sleep(0.01)
        ended.update(reap())
    ended.update(reap())


def start(argv, mask):
    pid = os.fork()
    if pid == 0:
        try:
            for sig in ENDING:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"skillassay subreaper: {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    return pid


def main(argv):
    if not argv:
        sys.exit("usage: subreaper.py COMMAND...")
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the harness gone: end the run's processes too
    watched = {signal.SIGCHLD, *ENDING}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    child = start(argv, mask)
    me, status, deadline = os.getpid(), None, None
    if os.getppid() != parent:  # the harness died before PDEATHSIG was set
        deadline = time.monotonic()
    while status is None:
        wait = 1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        got = signal.sigtimedwait(watched, wait)
        if got is not None and got.si_signo in ENDING:
            try:  # noqa: SIM105 - no contextlib: this starts with python -S, in a few milliseconds
                os.kill(child, got.si_signo)
            except OSError:
                pass
            deadline = deadline or time.monotonic() + GRACE
        status = reap().get(child)
        if status is None and deadline is not None and time.monotonic() >= deadline:
            break
    ended: dict[int, int] = {}
    kill_below(me, ended)
    status = ended.get(child, status)
    if status is None or os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status) if status is not None else signal.SIGKILL
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(me, sig)
        time.sleep(1)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main(sys.argv[1:])
