"""--isolation none: nothing sealed, said plainly."""

import subprocess

from skillassay.isolation import Seal, get_isolation


def test_none_runs_the_command_as_is(tmp_path):
    iso = get_isolation("none")
    assert not iso.sealed and iso.problem() is None
    with iso.open(Seal(phase="agent", writable=[tmp_path], registries=["pypi.org"])) as box:
        out = box.popen(["bash", "-c", "id -u; echo $HTTPS_PROXY"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                        stdout=subprocess.PIPE).communicate()[0].decode()
        assert box.record().isolation == "none" and not box.record().audit
    assert out.splitlines()[0] == str(__import__("os").getuid()) and out.splitlines()[1] == ""
