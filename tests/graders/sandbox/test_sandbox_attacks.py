"""A hostile app under test, sealed: it reaches its own run's Seam emulator and nothing else — not a loopback
listener of the host, not another run's emulator, not the internet — and its checks still pass."""

from __future__ import annotations

import pytest

from skillassay.isolation import Policy
from skillassay.seam.behaviour import validate


@pytest.fixture
def other_emulator():
    """Another run's emulator, on this machine's loopback."""
    from skillassay.seam.emulator.emulator import SeamEmulator

    emu = SeamEmulator(async_delay=0.2).start()
    yield emu
    emu.stop()


def test_the_app_reaches_only_its_own_emulator(tiny, emulator, other_emulator, listener, tmp_path):
    targets = [
        f"http://127.0.0.1:{listener.server_address[1]}/",
        other_emulator.base_url.rstrip("/") + "/health",
        "https://pypi.org/simple/",
    ]  # a registry: allowed to the install, never to the running app
    d = tiny("good", run={"env": {"MODE": "good", "ATTACK_URLS": ",".join(targets)}})
    result = validate(d.app_dir, d, "attack1", emulator=emulator, logs_dir=tmp_path / "logs", policy=Policy())
    assert result.total == 100, {n: c.reason for n, c in result.checks.items()}  # its own emulator: reached
    out = (tmp_path / "logs" / "app.stdout.log").read_text()
    for target in targets:
        assert f"ATTACK {target} refused" in out, out
    assert listener.hits == 0


def test_unsealed_the_same_app_reaches_them(tiny, emulator, listener, tmp_path):
    """The control: without isolation the app reaches the host's listener."""
    target = f"http://127.0.0.1:{listener.server_address[1]}/"
    d = tiny("good", run={"env": {"MODE": "good", "ATTACK_URLS": target}})
    validate(
        d.app_dir,
        d,
        "attack2",
        emulator=emulator,
        logs_dir=tmp_path / "logs",
        policy=Policy(isolation="none"),
    )
    assert f"ATTACK {target} reached 200" in (tmp_path / "logs" / "app.stdout.log").read_text()
    assert listener.hits == 1


def test_the_install_reaches_the_registry_through_the_egress_proxy(tmp_path, monkeypatch):
    """PyPI is reached by the sealed install (through the egress proxy, recorded); nothing else is."""
    from skillassay.apps.backends.host import HostBackend
    from skillassay.apps.runplan import InstallSpec, RunPlan
    from skillassay.isolation.record import Sealing

    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))  # an empty cache: a real install
    src = tmp_path / "src"
    src.mkdir()
    (src / "requirements.txt").write_text("six==1.16.0\n")
    plan = RunPlan(
        runtime="python",
        install=InstallSpec(pip_requirements=["requirements.txt"]),
        start=["python", "-c", "import six"],
    )
    policy = Policy(registries=["pypi.org", "files.pythonhosted.org"])
    sealing = Sealing(policy)
    backend = HostBackend(
        plan=plan,
        source_dir=src,
        fixture="reg",
        run_id="reg1",
        logs_dir=tmp_path / "logs",
        fixture_dir=tmp_path,
        policy=policy,
        sealing=sealing,
    )
    with backend:
        backend.prepare()
        assert backend.venv is not None and list(backend.venv.glob("lib/python*/site-packages/six.py"))
    install = sealing.reports["install"]
    reached = install.registries_reached
    assert reached.get("pypi.org:443", 0) >= 1 and reached.get("files.pythonhosted.org:443", 0) >= 1, reached
    assert install.refused == []
    assert sealing.records["install"].registries == ["pypi.org", "files.pythonhosted.org"]


def test_the_node_install_reaches_npm_through_the_egress_proxy(tmp_path, monkeypatch):
    from skillassay.apps.backends.host import HostBackend
    from skillassay.apps.runplan import InstallSpec, RunPlan
    from skillassay.isolation.record import Sealing

    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "package.json").write_text(
        '{"name": "reg", "version": "1.0.0", "dependencies": {"left-pad": "1.3.0"}}'
    )
    plan = RunPlan(
        runtime="node", install=InstallSpec(npm_argv=["npm", "install"]), start=["node", "-e", "1"]
    )
    policy = Policy(registries=["registry.npmjs.org"])
    sealing = Sealing(policy)
    backend = HostBackend(
        plan=plan,
        source_dir=src,
        fixture="regnode",
        run_id="reg2",
        logs_dir=tmp_path / "logs",
        fixture_dir=tmp_path,
        policy=policy,
        sealing=sealing,
    )
    with backend:
        backend.prepare()
        assert (backend.app_dir / "node_modules" / "left-pad" / "package.json").is_file()
    reached = sealing.reports["install"].registries_reached
    assert reached.get("registry.npmjs.org:443", 0) >= 1, reached
