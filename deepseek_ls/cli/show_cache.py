"""`config show` without pydantic when nothing it depends on changed.

Validating the config means importing pydantic and building every model: most
of `config show`'s start-up. The output is a function of a few inputs, so the
validated, rendered output of the last run is kept and printed again as long as
every input is the same:

- the command line (after `config show`: `--json`, `--workspace`, `--config`,
  `--profile` only; anything else takes the slow path), the cwd, the Python
  executable, and every file of the installed `deepseek_ls` package (size and
  mtime: a new version or an edited module is a miss);
- the environment variables config reads (`DEEPSEEK*`) and those that place the
  user config and this cache (`HOME`, `XDG_*`);
- the workspace root it resolved to, and the content (sha256) of every file read:
  the user config, the workspace config, the `--config` file, the trust store and
  the workspace files trust fingerprints;
- the API key variable, compared through its masked form (the only thing shown).

A changed input is a miss (the slow path validates and stores a new entry);
errors are never cached. Entries live in `$XDG_CACHE_HOME/deepseek-ls/config-show/`
(default `~/.cache/...`), one small file per command line and environment, mode 0600.
Stdlib only: this module runs before anything heavy is imported.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
TYPE_CHECKING = False  # (typing is not imported at start-up: `config show` runs from a cache)

if TYPE_CHECKING:
    from pathlib import Path

_VALUE_OPTIONS = ("--workspace", "--config", "--profile")
_FLAGS = ("--json",)
_ENV_PREFIXES = ("DEEPSEEK", "XDG_")
_ENV_NAMES = ("HOME",)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# Workspace files whose content decides trust (deepseek_ls.trust.TRUSTED_FILES; a test keeps them equal).
TRUSTED_FILES = (".deepseek/config.toml", ".mcp.json", ".deepseek/hooks.json", ".claude/settings.json",
                 ".claude/settings.local.json")


def cache_dir(env) -> str:
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "deepseek-ls", "config-show")


def _options(argv: list[str]) -> dict[str, str] | None:
    """The options of a plain `config show` command line, or None for anything else."""
    out: dict[str, str] = {}
    words: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        name, eq, value = token.partition("=")
        if name in _VALUE_OPTIONS:
            value = value if eq else next(tokens, None)
            if value is None:
                return None
            out[name] = value
        elif token in _FLAGS:
            out[token] = ""
        elif token.startswith("-"):
            return None
        else:
            words.append(token)
    return out if words == ["config", "show"] else None


def _sha(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


_stamps: dict[str, list[tuple[str, int, int]]] = {}  # per package dir: one walk per process


def _package_stamp() -> list[tuple[str, int, int]]:
    if _PACKAGE in _stamps:
        return _stamps[_PACKAGE]
    out = []
    skip = len(_PACKAGE) + 1
    for dirpath, dirnames, filenames in os.walk(_PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            st = os.stat(path)
            out.append((path[skip:], st.st_mtime_ns, st.st_size))
    _stamps[_PACKAGE] = out
    return out


def _key(argv_options: dict[str, str], env) -> str:
    material = {
        "argv": sorted(argv_options.items()),
        "cwd": os.getcwd(),
        "python": sys.executable,
        "env": sorted((k, v) for k, v in env.items() if k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES),
        "package": _package_stamp(),
    }
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def _root(options: dict[str, str]) -> str:
    """As `cli.common.resolve_root` (a test keeps them equal), without pathlib."""
    given = options.get("--workspace")
    if given:
        return os.path.realpath(os.path.expanduser(given))
    here = os.path.realpath(os.getcwd())
    candidate = here
    while True:  # as workspace.find_workspace_root: the nearest directory holding .git
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return here
        candidate = parent


def _files_read(root: Path, user_config: Path, trust_file: Path, options: dict[str, str]) -> dict[str, str | None]:
    paths = [str(user_config), str(trust_file), *(os.path.join(root, rel) for rel in TRUSTED_FILES)]
    if "--config" in options:
        paths.append(options["--config"])
    return {p: _sha(p) for p in paths}


def serve(argv: list[str], env=os.environ) -> bool:
    """Print the cached output of `config show` for `argv` if every input is unchanged."""
    options = _options(argv)
    if options is None:
        return False
    try:
        with open(os.path.join(cache_dir(env), f"{_key(options, env)}.json"), encoding="utf-8") as fh:
            entry = json.load(fh)
        if _root(options) != entry["root"]:
            return False
        for path, digest in entry["files"].items():
            if _sha(path) != digest:
                return False
        for name, masked in entry["masked_env"].items():
            if _mask(env.get(name)) != masked:
                return False
        stdout, stderr = entry["stdout"], entry["stderr"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    if stderr:
        sys.stderr.write(stderr)
    sys.stdout.write(stdout)
    sys.stdout.flush()
    return True


def _mask(value: str | None) -> str:
    """As `deepseek_ls.config.mask_secret` (a test keeps them equal), without importing it."""
    if not value:
        return "not set"
    if len(value) < 12:
        return "set"
    return f"set (...{value[-4:]})"


def snapshot(argv: list[str], *, root: Path, user_config: Path, trust_file: Path, env=os.environ) -> dict | None:
    """The inputs of a `config show` run, taken *before* the config is loaded: a file
    changed meanwhile then mismatches next time instead of being served stale."""
    options = _options(argv)
    if options is None:
        return None
    return {"key": _key(options, env), "root": str(root), "files": _files_read(root, user_config, trust_file, options)}


def store(snap: dict | None, *, api_key_env: str, stdout: str, stderr: str, env=os.environ) -> None:
    """Remember a successful `config show` (best effort: a cache that cannot be written is skipped)."""
    if snap is None:
        return
    entry = {
        "root": snap["root"],
        "files": snap["files"],
        "masked_env": {api_key_env: _mask(env.get(api_key_env))},
        "stdout": stdout,
        "stderr": stderr,
    }
    directory = cache_dir(env)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        target = os.path.join(directory, f"{snap['key']}.json")
        tmp = f"{target}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh)
        os.replace(tmp, target)
    except OSError:
        pass
