"""Red team: the sandbox's shared caches, keyed by what the agent wrote, are filled and read by the harness
itself (unsealed). An agent's app must not make the harness read a host file into a cache or a log, hang on
a fifo, or write a cached build's outputs through a link into the host.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from skillassay.apps import deps


def test_build_cache_never_writes_through_an_agents_link(tmp_path: Path, monkeypatch) -> None:
    """Run A's app has an empty ``lib/`` its build writes into (cached); run B's app is the same but ``lib``
    is a link to a host folder. B must not get A's key (a link is not an empty folder), and restoring a
    cached build into a tree with a link on the way must stay inside the tree (the link is replaced)."""
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    victim = tmp_path / "victim"
    victim.mkdir()
    build = [["npm", "run", "build"]]

    a = tmp_path / "a"
    (a / "src").mkdir(parents=True)
    (a / "src" / "index.ts").write_text("export const x = 1;\n")
    (a / "lib").mkdir()
    key_a = deps.build_key(a, build, "node-deps")
    before = deps.tree_snapshot(a)
    (a / "lib" / "out.js").write_text("console.log('from the cache')\n")  # what A's build produced
    deps.save_build(a, key_a, before)

    b = tmp_path / "b"
    (b / "src").mkdir(parents=True)
    (b / "src" / "index.ts").write_text("export const x = 1;\n")
    (b / "lib").symlink_to(victim)
    assert deps.build_key(b, build, "node-deps") != key_a

    assert deps.restore_build(b, key_a)
    assert list(victim.iterdir()) == [], "a cached build was written through the agent's link into the host"
    assert not (b / "lib").is_symlink() and (b / "lib" / "out.js").read_text().startswith("console.log")


def test_install_cache_never_copies_what_a_manifest_link_names(tmp_path: Path, monkeypatch) -> None:
    """``package.json`` a link to a host file: the install's cache entry gets the link (which names nothing
    inside the install's sandbox), never a copy of the host file (npm then prints it into install.log, kept
    in results)."""
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    secret = tmp_path / "host-secret.json"
    secret.write_text('{"name": "REDTEAM_HOST_SECRET_5521"}\n')
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").symlink_to(secret)
    log = tmp_path / "install.log"
    deps.ensure_node_modules(app, ["true", "install"], dict(os.environ), log, timeout=30)
    [entry] = [p for p in (tmp_path / "cache" / "deps").iterdir() if p.is_dir()]
    assert (entry / "package.json").is_symlink()
    held = [
        p
        for p in entry.rglob("*")
        if p.is_file() and not p.is_symlink() and b"REDTEAM_HOST_SECRET_5521" in p.read_bytes()
    ]
    assert held == []


def test_cache_keys_never_wait_on_a_fifo(tmp_path: Path) -> None:
    """A fifo where a requirements file, a manifest or a source file should be: computing the keys returns (a
    fifo is never opened), where it used to block the harness for ever."""
    app = tmp_path / "app"
    app.mkdir()
    os.mkfifo(app / "requirements.txt")
    os.mkfifo(app / "package.json")
    os.mkfifo(app / "index.ts")
    code = (
        "import sys; from pathlib import Path; from skillassay.apps import deps; "
        "from skillassay.apps.runplan import InstallSpec; app = Path(sys.argv[1]); "
        "deps._versions['node'] = 'v0'; "
        "print(deps.python_key(app, InstallSpec(pip_requirements=['requirements.txt'])), "
        "deps.node_key(app, ['npm', 'ci']), deps.build_key(app, [['npm', 'run', 'build']], 'k'))"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, str(app)], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("computing a cache key blocked on a fifo") from None
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.split()) == 3


def test_a_venv_is_shared_only_by_apps_that_install_the_same(tmp_path: Path) -> None:
    """The venv cache was keyed by the requirements file's bytes alone. With ``-e .`` (or ``./pkg``) pip
    installs the app's own code, and ``-r base.txt`` reads another file: apps with the same requirements
    file but different code (or base.txt) shared one venv, so a run got another run's package (an agent's
    earlier run could plant code that its later runs, or any run writing the same requirements, then
    imported)."""
    from skillassay.apps.runplan import InstallSpec

    spec = InstallSpec(pip_requirements=["requirements.txt"])

    def key(files: dict[str, str]) -> str:
        app = tmp_path / f"app{len(list(tmp_path.iterdir()))}"
        app.mkdir()
        for rel, text in files.items():
            (app / rel).write_text(text)
        return deps.python_key(app, spec)

    assert key({"requirements.txt": "flask\n-e .\n", "setup.py": "# one"}) != key(
        {"requirements.txt": "flask\n-e .\n", "setup.py": "# two"}
    )
    assert key({"requirements.txt": "-r base.txt\n", "base.txt": "flask==3.1.3\n"}) != key(
        {"requirements.txt": "-r base.txt\n", "base.txt": "flask==3.0.0\n"}
    )
    # an ordinary pinned file is still shared by apps whatever their code
    assert key({"requirements.txt": "flask==3.1.3\n", "app.py": "# one"}) == key(
        {"requirements.txt": "flask==3.1.3\n", "app.py": "# two"}
    )
