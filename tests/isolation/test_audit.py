"""Reading strace's output into out-of-bounds entries (the real trace is exercised in test_bubblewrap)."""

from skillassay.isolation.audit import Bounds, parse_trace, transcript_touches
from skillassay.transcripts import ToolCall

BOUNDS = Bounds(
    inside=["/usr", "/ws", "/home/run", "/tmp"],
    protected={"/suite": "suite"},
    ignore={"/etc/ld.so.preload"},
    allowed_ports={8123},
    allowed_sockets=["/run/skillassay/sock"],
)


def test_parse_trace_follows_processes_and_directories(tmp_path):
    # bwrap (setup, not counted) -> bash (pid 11) -> cat (pid 12, forked after a chdir)
    (tmp_path / "t.10").write_text(
        'execve("/usr/bin/bwrap", ["bwrap"], 0x1 /* 3 vars */) = 0\n'
        'mount("/suite", "/newroot/suite", NULL, MS_BIND, NULL) = 0\n'
        "clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 11 in strace's PID NS */\n"
    )
    (tmp_path / "t.11").write_text(
        'execve("/usr/bin/bash", ["bash"], 0x1 /* 3 vars */) = 0\n'
        'access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory)\n'
        'chdir("/ws/sub") = 0\n'
        "vfork() = 3 /* 12 in strace's PID NS */\n"
        'openat(AT_FDCWD</ws/sub>, "../../suite/golden.py", O_RDONLY) = -1 ENOENT (No such file or '
        "directory)\n"
        "connect(3<socket:[1]>, {sa_family=AF_INET, sin_port=htons(8123), "
        'sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
        "connect(3<socket:[1]>, {sa_family=AF_INET, sin_port=htons(5432), "
        'sin_addr=inet_addr("127.0.0.1")}, 16)'
        " = -1 ECONNREFUSED (Connection refused)\n"
        'connect(4<socket:[2]>, {sa_family=AF_UNIX, sun_path="/run/skillassay/sock/8123.sock"}, 33) = 0\n'
    )
    (tmp_path / "t.12").write_text(
        'execve("/usr/bin/cat", ["cat", "x"], 0x1 /* 3 vars */) = 0\n'
        'openat(AT_FDCWD</ws/sub>, "notes.txt", O_RDONLY) = 3</ws/sub/notes.txt>\n'
        'open("../../home/op/.ssh/id_rsa", O_RDONLY) = -1 ENOENT (No such file or directory)\n'
        'openat(AT_FDCWD</ws/sub>, "/usr/lib/x", O_WRONLY|O_CREAT, 0644) = -1 EROFS (Read-only file system)\n'
        'renameat2(AT_FDCWD</ws/sub>, "a", AT_FDCWD</ws/sub>, "/etc/passwd", 0) = -1 ENOENT (No such file)\n'
    )
    report = parse_trace(tmp_path, BOUNDS)
    by_path = {t.path: t for t in report.out_of_bounds}
    assert set(by_path) == {"/suite/golden.py", "/home/op/.ssh/id_rsa", "/usr/lib/x", "/etc/passwd"}
    golden = by_path["/suite/golden.py"]
    assert golden.protected == "suite" and golden.programs == ["bash"] and golden.results == ["ENOENT"]
    assert by_path["/home/op/.ssh/id_rsa"].programs == ["cat"]  # resolved against the cwd cat inherited
    assert by_path["/usr/lib/x"].write and by_path["/usr/lib/x"].results == ["EROFS"]
    assert by_path["/etc/passwd"].write and by_path["/etc/passwd"].ops == ["renameat2"]
    assert report.out_of_bounds[0].path == "/suite/golden.py"  # protected first
    assert [(c.address, c.results) for c in report.connects] == [("127.0.0.1:5432", ["ECONNREFUSED"])]


def test_transcript_paths_outside_the_workspace():
    calls = [
        ToolCall(id="1", name="Read", input={"file_path": "/suite/golden.py"}, kind="read"),
        ToolCall(id="2", name="Read", input={"file_path": "src/app.py"}, kind="read"),
        ToolCall(
            id="3",
            name="Bash",
            input={"command": "cat /etc/shadow && ls /usr/bin"},
            kind="shell",
            command="cat /etc/shadow && ls /usr/bin",
        ),
        ToolCall(id="4", name="Write", input={"file_path": "/ws/ok.txt"}, kind="write"),
        ToolCall(
            id="5",
            name="Bash",
            input={"command": "curl http://127.0.0.1:9/x"},
            kind="shell",
            command="curl http://127.0.0.1:9/x",
            denied=True,
            is_error=True,
        ),
    ]
    got = {t.path: t for t in transcript_touches(calls, "/ws", BOUNDS)}
    assert set(got) == {"/suite/golden.py", "/etc/shadow"}
    assert got["/suite/golden.py"].protected == "suite" and got["/suite/golden.py"].source == ["transcript"]
