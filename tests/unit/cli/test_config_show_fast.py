"""`config show`'s fast path (cli/show_fast.py) prints exactly what the pydantic path prints, or steps aside.

Every case runs both: `show_fast.output` (no pydantic) and the real `config show` handler
(load_config + pydantic). When the fast path answers, its output must be byte-identical;
when the config is invalid it must step aside, so the error is the full path's.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from deepseek_ls.cli import build_parser, show_fast, show_spec
from deepseek_ls.config import ConfigError
from deepseek_ls.trust import TrustStore, trust_file

SPEC = json.loads(show_spec.SPEC_PATH.read_text(encoding="utf-8"))


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A workspace, a user config path and an environment like a shell user's (nothing of ours set)."""
    for name in list(os.environ):
        if name.startswith("DEEPSEEK"):
            monkeypatch.delenv(name)
    ws = tmp_path / "ws"
    (ws / ".deepseek").mkdir(parents=True)
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(user))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return ws, user


def _full(argv: list[str], capsys) -> tuple[str, str]:
    """("ok", stdout) or ("error", message) from the real handler (pydantic validation)."""
    args = build_parser(argv).parse_args(argv)
    args.argv = None  # no cache entry
    capsys.readouterr()
    try:
        args.func(args)
    except ConfigError as error:
        return "error", str(error)
    return "ok", capsys.readouterr().out


def _compare(ws: Path, capsys, *, expect_fast: bool | None = None) -> list[str]:
    """Both paths, text and JSON; returns how each was answered ("fast" or "full")."""
    how = []
    for extra in ([], ["--json"]):
        argv = ["config", "show", "--workspace", str(ws), *extra]
        fast = show_fast.output(argv, os.environ)
        kind, full = _full(argv, capsys)
        if fast is not None:
            assert kind == "ok", f"the fast path answered a config pydantic rejects: {full}"
            assert fast[0] == full
        how.append("fast" if fast is not None else "full")
    if expect_fast is not None:
        assert how == ["fast", "fast"] if expect_fast else how == ["full", "full"]
    return how


def test_the_spec_is_derived_from_the_installed_models():
    assert show_spec.generate() == SPEC, "run `python -m deepseek_ls.cli.show_spec` after changing the config model"
    assert show_fast._load_spec() == SPEC


def test_a_stale_spec_steps_aside(monkeypatch, tmp_path):
    stale = json.loads(json.dumps(SPEC))
    stale["stamp"]["config_models.py"] = "0" * 64
    path = tmp_path / "show_spec.json"
    path.write_text(json.dumps(stale))
    monkeypatch.setattr(show_fast, "_SPEC", str(path))
    assert show_fast._load_spec() is None


def test_the_fast_path_knows_the_common_keys():
    for key in ("router.threshold_high", "policy.approval_mode", "policy.allowlist", "index.exclude",
                "agent_loop.max_iterations", "llm.api_key_env", "hetun.helper.memory_mb"):
        assert key in SPEC["leaves"], key
    # Values with validators of their own or inside dict tables are left to pydantic.
    for key in ("llm.base_url", "llm.base_model", "llm.temperature", "llm.profiles.fast.model",
                "models.deepseek-v4-flash.context_window", "mcp.servers", "budget.prices"):
        assert key not in SPEC["leaves"], key


CORPUS = [
    # valid, plain: the fast path answers
    pytest.param("", True, id="empty-file"),
    pytest.param("[router]\nthreshold_high = 0.8\n", True, id="float"),
    pytest.param("[router]\nthreshold_high = 1\n", True, id="int-for-float"),
    pytest.param("[router]\nthreshold_high = 0\n", True, id="float-at-ge-bound"),
    pytest.param("[router]\nthreshold_high = -0.0\n", True, id="negative-zero"),
    pytest.param("[router]\nthreshold_high = 1e308\n", True, id="huge-float"),
    pytest.param("[llm]\nmax_retries = 10\n", True, id="int-at-le-bound"),
    pytest.param("[policy]\napproval_mode = 'auto'\nallowlist = []\n", True, id="enum-and-empty-list"),
    pytest.param("[policy]\nallowlist = ['pytest', 'ünïcode \"quoted\"', '']\n", True, id="list-of-str"),
    pytest.param("[router]\nforce_profile = 'max_think'\n[router.weights]\nambiguity = 0.5\n", True, id="nested-model"),
    pytest.param("router.weights.ambiguity = 0.25\n", True, id="dotted-keys"),
    pytest.param("[policy.sandbox]\nbwrap_path = '/usr/bin/bwrap'\n", True, id="optional-str"),
    pytest.param("[llm]\napi_key_env = 'MY_KEY'\nstream = false\n", True, id="api-key-variable"),
    pytest.param("[hetun]\nmax_cost = 0\n", True, id="optional-float-at-bound"),
    pytest.param("[index]\nmax_file_bytes = 9223372036854775806\n", True, id="big-int"),
    # invalid: pydantic reports it (the fast path steps aside)
    pytest.param("[router]\nthreshold_high = -0.1\n", False, id="below-ge"),
    pytest.param("[llm]\nmax_retries = 11\n", False, id="above-le"),
    pytest.param("[index]\nmax_file_bytes = 0\n", False, id="not-gt"),
    pytest.param("[router]\nthreshold_high = 'high'\n", False, id="str-for-float"),
    pytest.param("[router]\nthreshold_high = nan\n", None, id="nan"),
    pytest.param("[router]\nthreshold_high = inf\n", None, id="inf"),
    pytest.param("[index]\nenabled = 1\n", None, id="int-for-bool"),
    pytest.param("[index]\nmax_file_bytes = 1.0\n", None, id="float-for-int"),
    pytest.param("[index]\nmax_file_bytes = true\n", None, id="bool-for-int"),
    pytest.param("[policy]\napproval_mode = 'Auto'\n", False, id="enum-case"),
    pytest.param("[policy]\nallowlist = ['ok', 1]\n", False, id="list-with-int"),
    pytest.param("[policy]\nallowlist = 'pytest'\n", False, id="str-for-list"),
    pytest.param("[policy]\nallowlist = [['nested']]\n", False, id="nested-list"),
    pytest.param("[router]\nthreshold_hihg = 0.8\n", False, id="typo"),
    pytest.param("router = 1\n", False, id="value-for-table"),
    pytest.param("[router.threshold_high]\nx = 1\n", False, id="table-for-value"),
    pytest.param("[[router]]\nthreshold_high = 0.8\n", False, id="array-of-tables"),
    pytest.param('"router.threshold_high" = 0.8\n', False, id="hostile-quoted-dotted-key"),
    pytest.param('[router]\n"" = 1\n', False, id="hostile-empty-key"),
    pytest.param("[index]\nmax_file_bytes = 99999999999999999999999\n", None, id="hostile-huge-int"),
    pytest.param("[surprise]\nx = 1\n", False, id="unknown-section"),
    pytest.param("[router]\n", True, id="empty-table"),
    pytest.param("[router]\nthreshold_high = 0.8\nthreshold_high = 0.9\n", False, id="not-toml-duplicate"),
    pytest.param(b"\xff\xfe", False, id="not-utf8"),
    # valid but not plain: pydantic decides (the full path runs)
    pytest.param("[router]\nthreshold_high = '0.8'\n", None, id="str-coerced-by-pydantic"),
    pytest.param("[llm]\nbase_url = 'http://localhost:8080/v1'\n", None, id="validated-field"),
    pytest.param("[llm]\nbase_model = 'deepseek-v4-pro'\n", None, id="legacy-alias"),
    pytest.param("[llm.profiles.fast]\nmodel = 'deepseek-v4-pro'\n", True, id="profile-field"),
    pytest.param("[llm.profiles.max_think]\nreasoning_effort = 'max'\nmax_tokens_per_session = 1000\n", True,
                 id="profile-fields"),
    pytest.param("[llm.profiles.cheap]\nmodel = 'deepseek-v4-flash'\ntemperature = 0\n", True, id="new-profile"),
    pytest.param("[llm.profiles.b]\nthinking = true\n[llm.profiles.a]\nthinking = false\n", True, id="new-profiles-order"),
    pytest.param("[llm.profiles.fast]\ntemperature = 2.5\n", False, id="profile-out-of-bounds"),
    pytest.param("[llm.profiles.fast]\nmodle = 'x'\n", False, id="profile-typo"),
    pytest.param("[llm.profiles.fast]\nreasoning_effort = 'huge'\n", False, id="profile-bad-enum"),
    pytest.param("[llm.profiles]\nfast = 'deepseek-v4-pro'\n", False, id="profile-not-a-table"),
    pytest.param("[llm.profiles.fast]\nbase_url = 'http://127.0.0.1:8080/v1'\n", None, id="profile-base-url"),
    pytest.param("[llm.profiles.new]\n", True, id="new-empty-profile"),
    pytest.param("[llm]\nbase_model = 'x'\n[llm.profiles.fast]\ntemperature = 0.1\n", None, id="profile-and-alias"),
    pytest.param("[models.local]\npreset = 'deepseek-v4-flash'\n", None, id="models-table"),
    pytest.param("[mcp.servers.x]\ncommand = 'echo'\n", None, id="dict-of-models"),
    pytest.param("[agent_loop.edit_format_by_model]\nx = 'whole'\n", None, id="dict-of-enum"),
    pytest.param("[mcp.servers]\n[budget.prices]\n[policy.sandbox]\n", True, id="empty-tables-and-dicts"),
    pytest.param("[policy]\nsandbox = 1\n", False, id="value-for-nested-table"),
]


@pytest.mark.parametrize(("text", "fast"), CORPUS)
def test_user_config_both_paths_agree(setup, capsys, text, fast):
    ws, user = setup
    user.write_bytes(text if isinstance(text, bytes) else text.encode())
    _compare(ws, capsys, expect_fast=bool(fast))
    if fast is False:
        assert _full(["config", "show", "--workspace", str(ws)], capsys)[0] == "error"


def test_the_layers_keep_their_order_and_sources(setup, capsys, monkeypatch):
    ws, user = setup
    user.write_text("[router]\nthreshold_high = 0.5\nplanner_bias = 0.2\n")
    (ws / ".deepseek" / "config.toml").write_text("[router]\nthreshold_high = 0.6\n")
    TrustStore(trust_file(user)).trust(ws)
    monkeypatch.setenv("DEEPSEEK_LS_ROUTER__PLANNER_BIAS", "0.3")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-averylongsecret9999")
    _compare(ws, capsys, expect_fast=True)
    text = show_fast.output(["config", "show", "--workspace", str(ws)], os.environ)[0]
    assert "router.threshold_high = 0.6" in text and "router.planner_bias = 0.3" in text
    assert "env DEEPSEEK_LS_ROUTER__PLANNER_BIAS" in text and "set (...9999)" in text
    assert "sk-averylongsecret9999" not in text


@pytest.mark.parametrize(
    ("env", "fast"),
    [
        pytest.param({"DEEPSEEK_LS_ROUTER__THRESHOLD_HIGH": "0.5"}, True, id="plain"),
        pytest.param({"DEEPSEEK_LS_POLICY__ALLOWLIST": "['a', 'b']"}, True, id="list"),
        pytest.param({"DEEPSEEK_LS_POLICY__APPROVAL_MODE": "never"}, True, id="bare-word"),
        pytest.param({"DEEPSEEK_LS_ROUTER__THRESHOLD_HIGH": "abc"}, False, id="bad-value"),
        pytest.param({"DEEPSEEK_LS_ROUTER__NOPE": "1"}, False, id="unknown-key"),
        pytest.param({"DEEPSEEK_LS_ROUTER____X": "1"}, False, id="empty-segment"),
        pytest.param({"DEEPSEEK_BASE_URL": "http://127.0.0.1:1/v1"}, False, id="base-url"),
        pytest.param({"DEEPSEEK_LS_USER_CONFIG_X": "1", "DEEPSEEK_LS_LOG": "1"}, True, id="not-config-vars"),
    ],
)
def test_environment_both_paths_agree(setup, capsys, monkeypatch, env, fast):
    ws, _ = setup
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    _compare(ws, capsys, expect_fast=fast)


UNTRUSTED = [
    pytest.param("[router]\nthreshold_high = 0.6\n", [], id="harmless"),
    pytest.param("[policy]\napproval_mode = 'auto'\n", ["policy.approval_mode"], id="looser-approval"),
    pytest.param("[policy]\napproval_mode = 'never'\n", [], id="tighter-approval"),
    pytest.param("[policy]\nallowlist = ['pytest', 'rm -rf /']\nallow_shell_metacharacters = true\n",
                 ["policy.allowlist", "policy.allow_shell_metacharacters"], id="allowlist-and-metachars"),
    pytest.param("[policy]\ndeny_paths = []\ncommand_timeout_seconds = 5\n", ["policy.deny_paths"], id="deny-list-removed"),
    pytest.param("[policy.sandbox]\nmode = 'off'\n", ["policy.sandbox"], id="sandbox-off"),
    pytest.param("[agent_loop]\nmode = 'yolo'\n[agent_loop.safety_gate]\nmax_loc_without_approval = 99999\n",
                 ["agent_loop.mode", "agent_loop.safety_gate.max_loc_without_approval"], id="yolo-and-gate"),
    pytest.param("[llm]\napi_key_env = 'OTHER_KEY'\n", ["llm.api_key_env"], id="other-key-variable"),
    pytest.param("[llm.profiles.fast]\napi_key_env = 'OTHER_KEY'\nmodel = 'deepseek-v4-pro'\n",
                 ["llm.profiles.fast.api_key_env"], id="profile-key-variable"),
    pytest.param("[llm.profiles.sneaky]\napi_key_env = 'OTHER_KEY'\n", ["llm.profiles.sneaky.api_key_env"], id="new-profile-key-variable"),
    pytest.param("[hetun]\nmax_cost = 100.0\n[mcp]\nmax_restarts = 20\n", ["mcp.max_restarts", "hetun"], id="new-sections"),
    pytest.param("[policy]\n", [], id="empty-table"),
]


@pytest.mark.parametrize(("text", "ignored"), UNTRUSTED)
def test_an_untrusted_workspace_config_both_paths_agree(setup, capsys, text, ignored):
    ws, user = setup
    user.write_text("[policy]\ncommand_timeout_seconds = 60\n")
    (ws / ".deepseek" / "config.toml").write_text(text)
    argv = ["config", "show", "--workspace", str(ws)]
    for state in ("never", "changed", "trusted"):
        if state == "changed":
            (ws / ".deepseek" / "config.toml").write_text("# trusted before this edit\n")
            TrustStore(trust_file(user)).trust(ws)
            (ws / ".deepseek" / "config.toml").write_text(text)
        if state == "trusted":
            TrustStore(trust_file(user)).trust(ws)
        _compare(ws, capsys, expect_fast=True)
        out, _, err = show_fast.output(argv, os.environ)
        expected = ignored if state != "trusted" else []
        if expected:
            assert f"this workspace {'is not trusted' if state == 'never' else 'changed since you trusted it'}" in err
            assert all(key in err for key in expected)
        else:
            assert err == ""
        # The full path's warning is the same line.
        from deepseek_ls.config import load_config

        loaded = load_config(ws)
        assert sorted(loaded.ignored_untrusted) == sorted(expected)
        assert err == (f"{loaded.trust_warning()}\n" if loaded.trust_warning() else "")


def test_other_command_lines_take_the_full_path(setup, tmp_path):
    ws, _ = setup
    extra = tmp_path / "extra.toml"
    extra.write_text("")
    for argv in (["config", "show", "--profile", "max_think"], ["config", "show", "--config", str(extra)],
                 ["config", "show", "-v"], ["config", "show", "--workspace", str(tmp_path / "missing")]):
        assert show_fast.output(argv, os.environ) is None, argv


def _values_for(leaf: dict, default) -> list:
    """Values of every kind around a leaf's type and bounds."""
    out = [default, True, False, 0, 1, -1, 2, 7, 10, 11, 65, 2**53, 2**53 + 1, 2**63, 0.0, 0.5, 1.0, 1.5, -0.5,
           "", "x", "auto", [], ["x"], [1], {"a": 1}]
    for name in ("gt", "ge", "lt", "le"):
        if name in leaf:
            bound = leaf[name]
            out += [bound, bound + 1, bound - 1, float(bound), bound + 0.001, bound - 0.001]
    out += list(leaf.get("enum", [])) + [[e] for e in leaf.get("enum", [])]
    return [v for v in out if v is not None and not (isinstance(v, float) and math.isnan(v))]


def test_every_plain_key_every_kind_of_value_both_paths_agree(setup, capsys):
    """Each plain key set to values of every type and around its bounds: answered fast only when
    pydantic accepts it, and then printed the same."""
    ws, user = setup
    fast_answers = 0
    cases = []
    for key, leaf in SPEC["leaves"].items():
        node = SPEC["defaults"]
        for part in key.split("."):
            node = node[part]
        cases.append((key, leaf, node))
    for field, leaf in SPEC["profile_leaves"].items():  # a default profile and a new one
        cases.append((f"llm.profiles.max_think.{field}", leaf, SPEC["defaults"]["llm"]["profiles"]["max_think"][field]))
        cases.append((f"llm.profiles.extra.{field}", leaf, SPEC["profile_default"][field]))
    for key, leaf, node in cases:
        for i, value in enumerate(_values_for(leaf, node)):
            table: dict = {}
            *parents, last = key.split(".")
            cursor = table
            for part in parents:
                cursor = cursor.setdefault(part, {})
            cursor[last] = value
            user.write_text(tomli_w.dumps(table))
            argv = ["config", "show", "--workspace", str(ws), "--json"]
            fast = show_fast.output(argv, os.environ)
            if fast is None:
                assert i > 0 or node is None, f"{key}: its default value, written out, is answered fast"
                continue
            fast_answers += 1
            kind, full = _full(argv, capsys)
            assert kind == "ok", (key, value, full)
            assert fast[0] == full, (key, value)
    assert fast_answers > 3 * len(cases)


def test_no_pydantic_on_the_fast_path(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
    user = tmp_path / "user.toml"
    user.write_text("[router]\nthreshold_high = 0.8\n")
    env.update(DEEPSEEK_LS_USER_CONFIG=str(user), XDG_CACHE_HOME=str(tmp_path / "cache"))
    probe = ("import sys\nfrom deepseek_ls.cli import main\nrc = main(sys.argv[1:])\n"
             "print(sorted(m for m in ('pydantic', 'argparse', 'logging') if m in sys.modules), file=sys.stderr)\n"
             "sys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", probe, "config", "show"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "router.threshold_high = 0.8" in proc.stdout and str(user) in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "[]"
