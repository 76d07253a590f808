"""bubblewrap sandboxes, attacked: what a sealed process can see, write, reach and leave behind."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx

from skillassay.isolation import Endpoint, Mount, Seal


def run(box, script: str, cwd: Path, timeout: float = 60) -> tuple[int, str]:
    proc = box.popen(
        ["bash", "-c", script],
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode()


def agent_seal(dirs, **kw) -> Seal:
    return Seal(
        phase="agent",
        writable=[dirs["ws"], dirs["home"]],
        home=dirs["home"],
        protected={str(dirs["suite"]): "suite", str(dirs["results"]): "results"},
        **kw,
    )


def test_sees_only_its_workspace_home_and_the_system(bubblewrap, run_dirs):
    d = run_dirs
    with bubblewrap.open(agent_seal(d, audit=False), d["scratch"]) as box:
        code, out = run(
            box,
            f"""
            id -u; echo "home=$HOME"
            cat app.py
            echo written > new.txt && echo wrote-workspace
            echo h > "$HOME/h.txt" && echo wrote-home
            cat {d["suite"]}/test_golden/answer.py || echo no-golden
            echo x > {d["suite"]}/test_golden/answer.py || echo no-suite-write
            ls {d["results"]} || echo no-results
            cat {d["other-run"]}/secret.txt || echo no-other-run
            cat /etc/shadow || echo no-shadow
            ls /root || echo no-root-home
            echo x > /usr/bin/evil || echo no-system-write
            echo "pid1=$(tr '\\0' ' ' </proc/1/cmdline)"; echo "procs=$(ls /proc | grep -c '^[0-9]')"
            ls /tmp
        """,
            d["ws"],
        )
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "1000"  # an unprivileged user inside, though the harness runs as root here
    assert f"home={d['home']}" in lines
    for expected in (
        "print('app')",
        "wrote-workspace",
        "wrote-home",
        "no-golden",
        "no-suite-write",
        "no-results",
        "no-other-run",
        "no-shadow",
        "no-root-home",
        "no-system-write",
    ):
        assert expected in lines, (expected, out)
    assert (d["ws"] / "new.txt").read_text() == "written\n"
    assert (d["home"] / "h.txt").exists()
    assert (d["suite"] / "test_golden" / "answer.py").read_text() == "ANSWER = 42\n"
    assert "42" not in out and "other run's work" not in out
    # its own PID namespace: PID 1 is the sandbox's init, never the harness (whose command line names the
    # suite)
    pid1 = next(line for line in lines if line.startswith("pid1="))
    assert pid1.startswith("pid1=") and "bwrap --args" in pid1 and "--bind" not in pid1 and "/tmp" not in pid1
    assert int(next(line for line in lines if line.startswith("procs="))[6:]) <= 5  # bwrap, bash, its pipes


def test_a_setsid_escape_dies_with_the_sandbox(bubblewrap, run_dirs, tmp_path):
    d = run_dirs
    marker = f"skillassay-escape-{os.getpid()}-{time.monotonic_ns()}"
    with bubblewrap.open(agent_seal(d, audit=False), d["scratch"]) as box:
        code, out = run(
            box,
            f"setsid bash -c 'exec -a {marker} sleep 300' & disown; "
            f"nohup bash -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 & echo started",
            d["ws"],
        )
    assert code == 0 and "started" in out
    time.sleep(0.3)
    survivors = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert survivors == []


def test_a_sigkilled_harness_leaves_nothing_running(bubblewrap, run_dirs, listener, tmp_path):
    """The harness runs an app (listening, with a setsid child) sealed, then dies by SIGKILL: nothing
    survives.
    """
    d = run_dirs
    marker = f"skillassay-orphan-{os.getpid()}-{time.monotonic_ns()}"
    harness = tmp_path / "harness.py"
    harness.write_text(
        textwrap.dedent(f"""
        import subprocess, sys, time
        from pathlib import Path
        from skillassay.isolation import Seal, get_isolation
        box = get_isolation("bubblewrap").open(Seal(phase="app", writable=[Path({str(d["ws"])!r})], audit=True),
                                               Path({str(d["scratch"])!r}))
        box.start()
        port = box.expose()
        app = ("setsid bash -c 'exec -a {marker} sleep 300' & "
               "exec -a {marker} python3 -m http.server --bind 127.0.0.1 " + str(port))
        box.popen(["bash", "-c", app], cwd=Path({str(d["ws"])!r}), env={{"PATH": "/usr/bin:/bin"}})
        print(port, flush=True)
        time.sleep(300)
    """)  # noqa: E501 - code inside a string, kept as written
    )
    proc = subprocess.Popen([sys.executable, str(harness)], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    deadline = time.monotonic() + 20
    while True:  # the app answers through the exposed port before the harness dies
        try:
            assert httpx.get(f"http://127.0.0.1:{port}/", trust_env=False).status_code == 200
            break
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "the sealed app never answered"
            time.sleep(0.1)
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout.split()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout.split():
        assert time.monotonic() < deadline, "sandboxed processes outlived the SIGKILLed harness"
        time.sleep(0.1)
    try:
        httpx.get(f"http://127.0.0.1:{port}/", trust_env=False, timeout=2)
        raise AssertionError("the app's port still answers")
    except httpx.HTTPError:
        pass


def test_network_only_its_endpoints(bubblewrap, run_dirs, listener):
    d = run_dirs
    model, seam = listener("model"), listener("other-run-emulator")
    seal = agent_seal(d, endpoints=[Endpoint(name="model", port=model)], audit=True)
    with bubblewrap.open(seal, d["scratch"]) as box:
        _code, out = run(
            box,
            f"""
            curl -s -m 5 http://127.0.0.1:{model}/; echo
            curl -s -m 5 http://127.0.0.1:{seam}/ || echo refused-other
            curl -s -m 5 http://localhost:{model}/; echo
        """,
            d["ws"],
        )
        report = box.report()
    assert out.splitlines() == ["model", "refused-other", "model"], out
    assert any(c.address == f"127.0.0.1:{seam}" for c in report.audit.connects)
    assert not any(c.address == f"127.0.0.1:{model}" for c in report.audit.connects)


def test_registries_through_the_egress_proxy_only(bubblewrap, run_dirs):
    """An allowed registry is reached; another registry (not on this phase's list) is refused and recorded."""
    d = run_dirs
    with bubblewrap.open(agent_seal(d, registries=["pypi.org"], audit=False), d["scratch"]) as box:
        _code, out = run(
            box,
            """
            curl -s -m 20 -o /dev/null -w '%{http_code}\\n' https://pypi.org/simple/pip/
            curl -s -m 20 -o /dev/null -w '%{http_code}\\n' https://registry.npmjs.org/left-pad || echo refused
            curl -s -m 5 --noproxy '*' https://pypi.org/simple/pip/ || echo no-direct-route
        """,  # noqa: E501 - code inside a string, kept as written
            d["ws"],
        )
        report = box.report()
    assert out.splitlines()[0] == "200", out
    assert "refused" in out or out.splitlines()[1] == "000"
    assert "no-direct-route" in out
    assert report.registries_reached.get("pypi.org:443", 0) >= 1
    assert [(r.host, r.reason) for r in report.refused] == [("registry.npmjs.org", "not on the allow-list")]


def test_the_app_port_is_reached_from_the_harness_only(bubblewrap, run_dirs, listener):
    d = run_dirs
    emulator = listener("emulator")
    seal = Seal(
        phase="app", writable=[d["ws"]], endpoints=[Endpoint(name="seam", port=emulator)], audit=False
    )
    with bubblewrap.open(seal, d["scratch"]) as box:
        port = box.expose()
        proc = box.popen(
            ["python3", "-m", "http.server", "--bind", "127.0.0.1", str(port)],
            cwd=d["ws"],
            env={"PATH": "/usr/bin:/bin"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    r = httpx.get(f"http://127.0.0.1:{port}/app.py", trust_env=False)
                    break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
            assert r.text == "print('app')\n"
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_the_audit_lists_reaching_for_the_suite(bubblewrap, strace, run_dirs):
    d = run_dirs
    with bubblewrap.open(agent_seal(d, audit=True), d["scratch"]) as box:
        run(
            box,
            f"cat {d['suite']}/test_golden/answer.py; cat app.py; echo x > /usr/evil; ls {d['results']}",
            d["ws"],
        )
        audit = box.report().audit
    assert audit.traced
    by_path = {t.path: t for t in audit.out_of_bounds}
    golden = by_path[f"{d['suite']}/test_golden/answer.py"]
    assert golden.protected == "suite" and golden.results == ["ENOENT"] and golden.programs == ["cat"]
    assert by_path[str(d["results"])].protected == "results"
    assert by_path["/usr/evil"].write and by_path["/usr/evil"].results == ["EROFS"]
    assert not any(p.startswith(str(d["ws"])) for p in by_path)  # the workspace is in bounds


def test_a_missing_program_is_an_error_of_the_set_up(bubblewrap, run_dirs):
    d = run_dirs
    with bubblewrap.open(agent_seal(d, audit=False), d["scratch"]) as box:
        try:
            box.popen(["no-such-program-xyz"], cwd=d["ws"], env={"PATH": "/usr/bin"})
            raise AssertionError("expected FileNotFoundError")
        except FileNotFoundError:
            pass


def test_a_sandbox_that_cannot_start_is_told_from_a_command_that_fails(bubblewrap, run_dirs):
    """bwrap's own failure (here: a mount whose source is gone) is the harness's; a command that prints what
    bwrap would print and exits 1 is still the command's own failure."""
    d = run_dirs
    broken = Seal(phase="agent", writable=[d["ws"]], readable=[Mount(src=d["scratch"] / "gone")], audit=False)
    with bubblewrap.open(broken, d["scratch"] / "b") as box:
        proc = box.popen(["true"], cwd=d["ws"], env={"PATH": "/usr/bin:/bin"}, stderr=subprocess.PIPE)
        proc.wait()
        assert proc.returncode != 0 and "could not start" in box.setup_error(proc)
    with bubblewrap.open(agent_seal(d, audit=False), d["scratch"] / "c") as box:
        proc = box.popen(
            ["bash", "-c", "echo 'bwrap: Can not mount' >&2; exit 1"],
            cwd=d["ws"],
            env={"PATH": "/usr/bin:/bin"},
            stderr=subprocess.PIPE,
        )
        proc.wait()
        assert proc.returncode == 1 and box.setup_error(proc) is None


def test_endpoints_work_from_a_long_scratch_path(bubblewrap, run_dirs, listener, tmp_path):
    """A Unix socket's path holds at most 107 bytes: the bridge's sockets never live under a long work
    folder.
    """
    d = run_dirs
    model = listener("model")
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    with bubblewrap.open(
        agent_seal(d, endpoints=[Endpoint(name="model", port=model)], audit=False), deep
    ) as box:
        code, out = run(box, f"curl -s -m 5 http://127.0.0.1:{model}/", d["ws"])
    assert (code, out) == (0, "model")


def test_a_closed_sandbox_leaves_no_socket_folder(bubblewrap, run_dirs, listener, tmp_path, monkeypatch):
    from skillassay.isolation import bubblewrap as bw

    short = tmp_path / "short"
    short.mkdir()
    monkeypatch.setattr(bw, "_short_tmp", lambda: str(short))
    d = run_dirs
    model = listener("model")
    seal = agent_seal(d, endpoints=[Endpoint(name="model", port=model)], registries=["pypi.org"], audit=True)
    for _ in range(2):
        with bubblewrap.open(seal, d["scratch"]) as box:
            assert list(short.iterdir())  # the bridge's sockets, while it is open
            box.expose()
            run(box, f"curl -s -m 5 http://127.0.0.1:{model}/", d["ws"])
    never_started = bubblewrap.open(seal, d["scratch"])
    never_started.close()
    assert list(short.iterdir()) == []
