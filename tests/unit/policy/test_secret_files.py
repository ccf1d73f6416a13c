"""Files opened as they were checked, credential files known by content, secret arguments,
and the environment commands get."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy import PathPolicy, PolicyViolation, safe_files
from deepseek_ls.policy.command_secrets import guard_command
from deepseek_ls.policy.env import scrubbed_env
from deepseek_ls.policy import secret_files
from deepseek_ls.policy.secret_files import secret_kind


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s3cret\n")
    return ws.resolve()


def test_reads_what_was_checked(root: Path) -> None:
    assert safe_files.read_text(root, "src/app.py") == "print('hi')\n"


def test_no_leak_component_swapped_for_a_symlink_after_the_check(root: Path, monkeypatch) -> None:
    # The race: the path is resolved while src/ is a directory, then src/ becomes a link outside.
    real = safe_files.real_relative(root, "src/app.py")
    monkeypatch.setattr(safe_files, "real_relative", lambda r, rel: real)
    os.rename(root / "src", root / "src.old")
    (root / "src").symlink_to(root.parent / "outside", target_is_directory=True)
    (root.parent / "outside" / "app.py").write_text("outside\n")
    with pytest.raises(PolicyViolation) as caught:
        safe_files.read_text(root, "src/app.py")
    assert caught.value.rule == "link_race"


def test_no_leak_final_component_swapped_for_a_symlink(root: Path, monkeypatch) -> None:
    real = safe_files.real_relative(root, "src/app.py")
    monkeypatch.setattr(safe_files, "real_relative", lambda r, rel: real)
    (root / "src" / "app.py").unlink()
    (root / "src" / "app.py").symlink_to(root.parent / "outside" / "secret.txt")
    with pytest.raises(PolicyViolation, match="link_race"):
        safe_files.read_text(root, "src/app.py")


def test_no_leak_hard_link_to_a_file_outside(root: Path) -> None:
    os.link(root.parent / "outside" / "secret.txt", root / "notes.txt")
    with pytest.raises(PolicyViolation) as caught:
        safe_files.read_text(root, "notes.txt")
    assert caught.value.rule == "hard_link"


def test_fifo_is_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(PolicyViolation, match="not_regular_file"):
        safe_files.read_text(root, "pipe")


def test_never_clobber_write_through_a_swapped_directory(root: Path, monkeypatch) -> None:
    real = safe_files.real_relative(root, "src/app.py")
    monkeypatch.setattr(safe_files, "real_relative", lambda r, rel: real)
    os.rename(root / "src", root / "src.old")
    (root / "src").symlink_to(root.parent / "outside", target_is_directory=True)
    with pytest.raises(PolicyViolation, match="link_race"):
        safe_files.write_bytes(root, "src/app.py", b"x")
    assert sorted(p.name for p in (root.parent / "outside").iterdir()) == ["secret.txt"]


def test_write_keeps_mode_and_replaces_a_hard_link_instead_of_writing_through_it(root: Path) -> None:
    target = root / "run.sh"
    target.write_text("old\n")
    target.chmod(0o755)
    os.link(target, root / "alias.sh")
    safe_files.write_bytes(root, "run.sh", b"new\n")
    assert target.read_text() == "new\n" and (root / "alias.sh").read_text() == "old\n"
    assert target.stat().st_mode & 0o777 == 0o755


SECRET_CONTENT = [
    pytest.param('{"type": "service_account", "private_key_id": "x"}', "gcloud credentials", id="gcloud-service-account"),
    pytest.param('{"type": "authorized_user", "refresh_token": "x"}', "gcloud credentials", id="gcloud-user"),
    pytest.param("apiVersion: v1\nkind: Config\nusers:\n- name: a\n", "kubeconfig", id="kubeconfig"),
    pytest.param('{"auths": {"r.io": {"auth": "dXNlcjpwYXNz"}}}', "docker credentials", id="docker-config"),
    pytest.param("machine example.com login me password hunter2\n", "netrc", id="netrc-one-line"),
    pytest.param("machine example.com\n  login me\n  password hunter2\n", "netrc", id="netrc-lines"),
    pytest.param("-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "private key", id="openssh-key"),
    pytest.param('"-----BEGIN ' + 'PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"', "private key", id="pem-in-json"),
    pytest.param("[default]\naws_secret_access_key = abcdefghijklmnop1234\n", "aws credentials", id="aws-credentials"),
    pytest.param("[prod]\nAWS_SECRET_ACCESS_KEY = abcdefghijklmnop1234\n", "aws credentials", id="aws-credentials-upper-case"),
    pytest.param("//registry.npmjs.org/:_authToken=abcdef123456\n", "npm credentials", id="npmrc"),
]


def _python_gates_on_bytes(text: str) -> str | None:
    with secret_files._GATES.disabled():  # as on a machine without Hyperscan
        return secret_files.secret_kind_of_bytes(text.encode())


def _hyperscan_gates_on_bytes(text: str) -> str | None:
    if secret_files.engine() != "hyperscan":
        pytest.skip("Hyperscan is not installed here")
    return secret_files.secret_kind_of_bytes(text.encode())


# Every way a head is checked: a text (tools), and a file's bytes with the gates found by
# Hyperscan in one pass (the index, line hits, diffs) or by a substring pass per needle.
ENGINES = [
    pytest.param(secret_kind, id="text"),
    pytest.param(_hyperscan_gates_on_bytes, id="bytes-hyperscan"),
    pytest.param(_python_gates_on_bytes, id="bytes-python"),
]


@pytest.mark.parametrize("detect", ENGINES)
@pytest.mark.parametrize(("text", "kind"), SECRET_CONTENT)
def test_credential_files_are_known_by_content(detect, text: str, kind: str) -> None:
    assert detect(text) == kind


def test_only_the_kelvin_sign_lowers_into_an_ascii_letter() -> None:
    # What the aws pattern's letter classes rest on (configparser lowers option names).
    lowers_to_ascii = {chr(c) for c in range(128, 0x110000) if (low := chr(c).lower()).isascii() and low.isalpha()}
    assert lowers_to_ascii == {"\u212a"}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="Hyperscan wheels are for x86_64")
def test_byte_heads_are_gated_by_hyperscan_where_it_installs() -> None:
    assert secret_files.engine() == "hyperscan"


ORDINARY_CONTENT = [
    pytest.param('if data["type"] == "service_account":\n    load(data)\n', id="code-checking-the-type"),
    pytest.param("kind: Deployment\nmetadata:\n  name: web\n", id="kubernetes-manifest"),
    pytest.param("The .netrc file has lines like 'machine HOST login NAME'.\n", id="netrc-prose-without-password"),
    pytest.param("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n", id="public-key"),
    pytest.param('PEM_HEADER = "-----BEGIN PRIVATE KEY-----"\n', id="pem-header-constant"),
    pytest.param("def auth(password):\n    return check(password)\n", id="password-parameter"),
]


@pytest.mark.parametrize("detect", ENGINES)
@pytest.mark.parametrize("text", ORDINARY_CONTENT)
def test_ordinary_files_are_not_taken_for_credentials(detect, text: str) -> None:
    assert detect(text) is None


@pytest.fixture
def policy(root: Path) -> PathPolicy:
    (root / ".env").write_text("A=1\n")
    (root / "ci.json").write_text('{"type": "service_account"}\n')
    return PathPolicy(root, PolicyConfig().deny_paths)


REFUSED_COMMANDS = [
    pytest.param(["rg", "x", ".env"], "deny_list", id="rg-dotenv"),
    pytest.param(["rg", "x", "./.env"], "deny_list", id="rg-dot-slash-dotenv"),
    pytest.param(["rg", "--glob=.envrc", "x"], "deny_list", id="rg-option-value"),
    pytest.param(["rg", "x", "ci.json"], "secret_content", id="rg-service-account"),
    pytest.param(["git", "show", "HEAD:.env"], "deny_list", id="git-rev-path"),
    pytest.param(["git", "diff", "--", ":(literal).env"], "deny_list", id="git-magic-pathspec"),
    pytest.param(["git", "diff", "--", ":!src", ".env"], "deny_list", id="git-exclude-then-dotenv"),
    pytest.param(["git", "diff", "--no-index", "src/app.py", "src/app.py"], "no_index", id="git-no-index"),
    pytest.param(["git", "log", "--", ".git/config"], "reserved_dir", id="git-dir"),
    pytest.param(["pytest", "--junitxml=.deepseek/x.xml"], "reserved_dir", id="write-into-state-dir"),
]


@pytest.mark.parametrize(("argv", "rule"), REFUSED_COMMANDS)
def test_no_leak_secret_arguments_are_refused(policy: PathPolicy, root: Path, argv: list[str], rule: str) -> None:
    with pytest.raises(PolicyViolation) as caught:
        guard_command(argv, cwd=root, paths=policy)
    assert caught.value.rule == rule


def test_rg_gets_deny_list_excludes_after_its_own_globs(policy: PathPolicy, root: Path) -> None:
    argv = guard_command(["rg", "--iglob", "*.py", "x", "--", "src"], cwd=root, paths=policy)
    assert argv[:4] == ["rg", "--iglob", "*.py", "x"]
    assert argv[argv.index("--") :] == ["--", "src"]
    assert "!**/.env" in argv and argv.index("!**/.env") < argv.index("--")


def test_git_diff_gets_exclude_pathspecs_and_keeps_its_paths(policy: PathPolicy, root: Path) -> None:
    argv = guard_command(["git", "diff", "HEAD~1", "src"], cwd=root, paths=policy)
    assert argv[:5] == ["git", "diff", "HEAD~1", "--", "src"]
    assert ":(exclude,icase,glob)**/.env" in argv
    assert guard_command(["git", "status"], cwd=root, paths=policy) == ["git", "status"]


ENV_DROPPED = ["DB_PASS", "MYSQL_PWD", "PGPASSWORD", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DEEPSEEK_API_KEY",
               "SESSION_COOKIE", "PRIVATE_DATA", "SENTRY_DSN", "DATABASE_URL", "AZURE_STORAGE_CONNECTION_STRING",
               "SLACK_WEBHOOK", "NPM_CONFIG__AUTH", "MY_CREDENTIALS"]


def test_environment_scrub_drops_credentials_by_name_and_value() -> None:
    env = {name: "value" for name in ENV_DROPPED}
    env.update({
        "PATH": "/usr/bin", "HOME": "/home/u", "PWD": "/work", "LANG": "C.UTF-8", "VIRTUAL_ENV": "/v",
        "REDIS": "redis://user:hunter2pass@cache:6379/0",  # a password in a URL, any name
        "OPENAI": "sk-" + "Zq8Lm3Np7Rt2Vx6Bw1Ky5Hj9Df4Gs0Ac",  # a key by its shape
    })
    assert set(scrubbed_env(env)) == {"PATH", "HOME", "PWD", "LANG", "VIRTUAL_ENV"}


# Credential files dressed to slip past a word test: the shape glued to punctuation,
# tabs, CRLF, deep inside a larger file, after non-ASCII text, in odd letter case.
SECRET_CONTENT_DRESSED = [
    pytest.param("x = 1\n" * 500 + "machine h.example login me\tpassword\thunter2\r\n", "netrc", id="netrc-tabs-crlf-deep"),
    pytest.param("default login me password hunter2", "netrc", id="netrc-default-no-newline"),
    pytest.param('{"auths":{"r.io":{"auth":"dXNlcjpwYXNz"}}}', "docker credentials", id="docker-no-spaces"),
    pytest.param('{"type":"service_account"}', "gcloud credentials", id="gcloud-no-spaces"),
    pytest.param("clusters:\n- cluster: {}\nkind: 'Config'\n", "kubeconfig", id="kubeconfig-kind-last"),
    pytest.param("-----BEGIN RSA PRIVATE KEY BLOCK-----\r\nMIIEvQIBADANBgkqhkiG9w0B\r\n", "private key", id="rsa-key-block-crlf"),
    pytest.param("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n", "private key", id="putty-key"),
    pytest.param("[x]\nAws_Secret_Access_Key=abcdefghijklmnop1234\n", "aws credentials", id="aws-mixed-case"),
    pytest.param("  _password = abcdefgh12\n", "npm credentials", id="npm-password-indented"),
    pytest.param("//r.example/:_auth=abcdefgh12\n", "npm credentials", id="npm-auth"),
    pytest.param("x = self._auth_token\n" * 3 + "\n  \n  _authToken = abcdefgh12\n", "npm credentials",
                 id="npm-after-mentions-in-code"),
    pytest.param("a_password = 1; _auth = x\n//r.example/:_password=abcdefgh12", "npm credentials",
                 id="npm-last-line-after-a-non-matching-line"),
    pytest.param("https://me:hunter2hunter2@git.example.com\n", "git credentials", id="git-credentials"),
    pytest.param("# café\nmachine h login me password hunter2\n", "netrc", id="netrc-after-non-ascii"),
    # configparser (boto's reader) lowers option names and strips Unicode spaces:
    pytest.param("[x]\naws_secret_access_\u212aey = abcdefghijklmnop1234\n", "aws credentials", id="aws-kelvin-sign-k"),
    pytest.param("[x]\naws_secret_access_key\u00a0=\u2003abcdefghijklmnop1234\n", "aws credentials", id="aws-unicode-spaces"),
    pytest.param("é" * 30_000 + "\nmachine h login me password hunter2\n", "netrc",
                 id="netrc-after-60k-bytes-of-two-byte-text"),
    pytest.param("machine h login é\n password hunter2\n", "netrc", id="netrc-non-ascii-login"),
    pytest.param("x = 1\n  \n\t machine\n h\n login me\n password hunter2\n", "netrc", id="netrc-machine-after-blank-lines"),
    pytest.param("import os\ndefault login me\n\n\npassword hunter2\n", "netrc", id="netrc-default-three-lines-up"),
]


@pytest.mark.parametrize("detect", ENGINES)
@pytest.mark.parametrize(("text", "kind"), SECRET_CONTENT_DRESSED)
def test_no_leak_credential_files_known_by_content_however_dressed(detect, text: str, kind: str) -> None:
    assert detect(text) == kind


_FRAGMENTS = [
    "machine h", "default", " login me", " password ", "hunter2", "aws_secret_access_key", "AWS_SECRET_ACCESS_", "\u212aey",
    " = ", "abcdefghijklmnop1234", "_authToken", "_auth", "_password", "=abcdefgh12", "//r.example/:", '"type"', ": ",
    '"service_account"', "kind:", " Config", "users:", '"auths"', '{"r": {"auth": "dXNlcjpwYXNz"}}', "-----BEGIN ",
    "RSA ", "PRIVATE KEY", "-----", "MIIEvQIBADANBgkqhkiG9w0B", "PuTTY-User-Key-File-", "3:", "https://me:hunter2hunter2@h",
    "http", "\n", "\r\n", "\t", " ", "\u00a0", "é", "\u2028", "\x00", "\ufffd",
]


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=14))
@settings(max_examples=400, deadline=None)
def test_no_leak_every_engine_finds_the_same_credentials(parts: list[str]) -> None:
    text = "".join(parts)
    expected = secret_kind(text)
    assert _python_gates_on_bytes(text) == expected
    if secret_files.engine() == "hyperscan":
        assert secret_files.secret_kind_of_bytes(text.encode()) == expected


_LINE_FRAGMENTS = _FRAGMENTS + ["machine", "default", "defaults", "xmachine h", "  ", "\n\n", " \n ", "\x0b", "password x"]


@given(st.lists(st.sampled_from(_LINE_FRAGMENTS), max_size=16))
@settings(max_examples=1000, deadline=None)
def test_no_leak_a_pattern_tried_only_at_needle_lines_finds_what_a_search_finds(parts: list[str]) -> None:
    """Shapes whose pattern is tried only at the lines holding a needle (netrc, npm) find
    exactly what a search over the whole head finds."""
    text = "".join(parts)
    for shape in secret_files._SHAPES:
        if shape.on_needle_line:
            assert secret_files._matches(shape, text) == (shape.pattern.search(text) is not None), shape.kind
