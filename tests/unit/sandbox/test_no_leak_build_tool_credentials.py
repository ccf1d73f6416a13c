"""Build caches are shown inside the sandbox by default; the credential files beside them never.

The sandbox's home is empty but for the toolchains on PATH, so an offline Maven, Gradle or npm
build found none of its downloaded artifacts unless the person listed `~/.m2` in
`policy.sandbox.readable_paths` — and listing `~/.m2` or `~/.gradle` showed `settings.xml`,
`settings-security.xml` (Maven's master password) or `gradle.properties` with it, whose
registry passwords redaction does not recognise. `policy.sandbox.build_caches` now shows the
caches only (`~/.m2/repository`, `~/.npm/_cacache`, Gradle's `caches/modules-2` as its read-only
dependency cache); the credential files are deny-listed should a wider path be listed.

Each case: a file under a fake home holding a canary word; a sandboxed probe reads it where the
build tool would look for it. The home lies where the sandbox shows it but for the home's hiding
(not under /tmp or /var/tmp, which it hides whole), and the probe also reads a control file beside
the home, which it must see (sandbox_kit.scratch_home).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sandbox_kit import make_workspace, requires_sandbox, scratch_home

from deepseek_ls.config_models import Config, SandboxConfig
from deepseek_ls.policy.sandbox import Sandbox

WIDE = ["~/.m2", "~/.gradle", "~/.npm"]

# (file under the home, whether a build may read it, readable_paths the person added)
FILES = [
    pytest.param(".m2/repository/org/acme/lib/1.0/lib-1.0.pom", True, [], id="maven-artifact-shown"),
    pytest.param(".npm/_cacache/index-v5/ab/cd/0123", True, [], id="npm-cache-shown"),
    pytest.param(".gradle/caches/modules-2/files-2.1/org.acme/lib/1.0/lib.pom", True, [],
                 id="gradle-dependency-cache-shown"),
    pytest.param(".m2/settings.xml", False, [], id="maven-settings-hidden"),
    pytest.param(".m2/settings-security.xml", False, [], id="maven-master-password-hidden"),
    pytest.param(".gradle/gradle.properties", False, [], id="gradle-properties-hidden"),
    pytest.param(".gradle/init.d/repos.gradle", False, [], id="gradle-init-script-hidden"),
    pytest.param(".npmrc", False, [], id="npmrc-hidden"),
    pytest.param(".m2/settings.xml", False, WIDE, id="maven-settings-hidden-with-m2-readable"),
    pytest.param(".m2/settings-security.xml", False, WIDE, id="maven-master-password-hidden-with-m2-readable"),
    pytest.param(".gradle/gradle.properties", False, WIDE, id="gradle-properties-hidden-with-gradle-readable"),
    pytest.param(".m2/repository/org/acme/lib/1.0/lib-1.0.pom", True, WIDE, id="maven-artifact-with-m2-readable"),
]

PROBE = """
import os, sys
rel = sys.argv[1]
if rel.startswith(".gradle/caches/"):  # where Gradle reads a read-only dependency cache
    path = os.path.join(os.environ.get("GRADLE_RO_DEP_CACHE", "/nonexistent"), rel[len(".gradle/caches/"):])
else:
    path = os.path.join(os.path.expanduser("~"), rel)
try:
    with open(path) as fh:
        print("READ", fh.read())
except OSError as exc:
    print("HIDDEN", exc.strerror)
print("CONTROL", open(sys.argv[2]).read())
"""


@requires_sandbox
@pytest.mark.parametrize(("rel", "shown", "readable"), FILES)
def test_no_leak_build_tool_credentials_while_caches_are_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               request: pytest.FixtureRequest, rel: str,
                                                               shown: bool, readable: list[str]) -> None:
    scratch = scratch_home()
    request.addfinalizer(scratch.cleanup)
    home = scratch.home
    canary = "canary" + uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop")) + "zebra"
    for other in {p.values[0] for p in FILES}:  # every file there, as on a real machine
        (home / other).parent.mkdir(parents=True, exist_ok=True)
        (home / other).write_text("<password>other</password>\n")
    (home / rel).write_text(f"<password>{canary}</password>\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GRADLE_RO_DEP_CACHE", raising=False)
    root, canaries = make_workspace(tmp_path)
    probe = root / "probe.py"
    probe.write_text(PROBE)
    sandbox = Sandbox(root, deny_paths=Config().policy.deny_paths, config=SandboxConfig(readable_paths=readable))
    out = subprocess.run(sandbox.wrap([sys.executable, str(probe), rel, str(scratch.control)]), capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    scratch.assert_control_read(out.stdout + out.stderr)
    if shown:
        assert canary in out.stdout, (out.stdout, out.stderr)
    else:
        assert canary not in out.stdout and "HIDDEN" in out.stdout, (out.stdout, out.stderr)
    canaries.assert_intact()


@requires_sandbox
def test_gradle_cache_view_stays_read_only_and_build_caches_can_be_turned_off(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch,
                                                                              request: pytest.FixtureRequest) -> None:
    scratch = scratch_home()
    request.addfinalizer(scratch.cleanup)
    home = scratch.home
    artifact = home / ".m2/repository/org/acme/lib.pom"
    artifact.parent.mkdir(parents=True)
    artifact.write_text("artifact\n")
    (home / ".gradle/caches/modules-2").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GRADLE_RO_DEP_CACHE", raising=False)
    root, _ = make_workspace(tmp_path)
    code = ("import os\ncache = os.environ['GRADLE_RO_DEP_CACHE']\n"
            "try:\n    open(os.path.join(cache, 'modules-2', 'planted'), 'w'); print('WROTE')\n"
            "except OSError:\n    print('REFUSED')\n")
    out = subprocess.run(Sandbox(root).wrap([sys.executable, "-c", code]), capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert out.stdout.strip() == "REFUSED", (out.stdout, out.stderr)
    assert list((home / ".gradle/caches/modules-2").iterdir()) == []
    off = Sandbox(root, config=SandboxConfig(build_caches=[]))
    seen = subprocess.run(off.wrap(["sh", "-c", f"cat {shlex.quote(str(scratch.control))}; cat {shlex.quote(str(artifact))}"]),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    scratch.assert_control_read(seen.stdout)
    assert seen.returncode != 0 and "artifact" not in seen.stdout
    assert os.environ.get("GRADLE_RO_DEP_CACHE") is None
