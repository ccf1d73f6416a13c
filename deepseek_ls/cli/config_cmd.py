"""`deepseek-ls config show|edit|path`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


from deepseek_ls.cli.common import add_command, exit_with, print_json, resolve_context, resolve_root
from deepseek_ls.config import ConfigError, load_config, user_config_path, workspace_config_path
from deepseek_ls.config_models import Config
from deepseek_ls.workspace import state_dir


def register(subparsers: argparse._SubParsersAction) -> None:
    config = add_command(
        subparsers,
        "config",
        help="show, edit or locate the configuration",
        description=(
            "The effective configuration. Layers, later wins: defaults < user config < workspace\n"
            ".deepseek/config.toml < environment (DEEPSEEK_BASE_URL, DEEPSEEK_LS_<SECTION>__<KEY>)\n"
            "< --config PATH < --profile NAME. See docs/configuration.md."
        ),
    )
    actions = config.add_subparsers(dest="config_command", metavar="ACTION", title="actions")
    add_command(
        actions,
        "show",
        help="print the effective config and where each value came from (API key masked)",
        handler=_show,
    )
    add_command(
        actions,
        "edit",
        help="open the workspace config in $EDITOR (created with commented defaults)",
        handler=_edit,
    )
    add_command(actions, "path", help="print the user and workspace config paths", handler=_path)


def _show(args: argparse.Namespace) -> int:
    from deepseek_ls.cli import show_cache, show_fast
    from deepseek_ls.trust import trust_file

    argv = getattr(args, "argv", None)
    snap = None
    if argv is not None:
        user = user_config_path()
        snap = show_cache.snapshot(argv, root=resolve_root(args), user_config=user, trust_file=trust_file(user))
    ctx = resolve_context(args, create_state=False)
    loaded = ctx.loaded_config
    out = show_fast.render(
        root=str(ctx.root), profile=loaded.profile, api_key_env=loaded.config.llm.api_key_env,
        api_key_status=loaded.api_key_display(), config=loaded.config.model_dump(mode="json"),
        sources=dict(loaded.sources), as_json=bool(args.json),
    )
    sys.stdout.write(out)
    sys.stdout.flush()
    warning = loaded.trust_warning()
    show_cache.store(snap, api_key_env=loaded.config.llm.api_key_env, stdout=out,
                     stderr=f"{warning}\n" if warning else "")
    return 0


def _path(args: argparse.Namespace) -> int:
    # Works with a broken config too: it is how you find the file to fix.
    paths = {"user": user_config_path(), "workspace": workspace_config_path(resolve_root(args))}
    if args.json:
        print_json({name: {"path": p, "exists": p.is_file()} for name, p in paths.items()})
        return 0
    for name, path in paths.items():
        print(f"{name}: {path}{'' if path.is_file() else '  (not created)'}")
    return 0


def _edit(args: argparse.Namespace) -> int:
    # Not loaded first: a workspace config that does not validate is what you edit.
    root = resolve_root(args)
    state_dir(root)
    path = workspace_config_path(root)
    if not path.exists():
        path.write_text(commented_defaults(), encoding="utf-8")
        print(f"created {path}", file=sys.stderr)
    from deepseek_ls.trust import TrustStore, trust_file

    store = TrustStore(trust_file(user_config_path()))
    was_trusted = store.state(root).trusted
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    import shlex
    import subprocess

    result = subprocess.run([*shlex.split(editor), str(path)])
    if result.returncode != 0:
        exit_with(f"editor {editor!r} exited with {result.returncode}; {path} left as it is")
    if was_trusted:
        store.trust(root)  # the person just wrote it: trust follows their own edit
    try:
        loaded = load_config(root)
    except ConfigError as error:
        # The file is kept as edited: the user fixes it and runs `config edit` again.
        exit_with(error)
    print(f"{path}: valid", file=sys.stderr)
    if loaded.trust_warning():
        print(loaded.trust_warning(), file=sys.stderr)
    return 0


def commented_defaults() -> str:
    """The default config as TOML with every line commented out, for a new workspace config."""
    import tomli_w

    body = tomli_w.dumps(_drop_none(Config().model_dump(mode="json")))
    lines = [
        "# deepseek-ls workspace configuration. Uncomment and change what you need;",
        "# see docs/configuration.md. Values here override your user config.",
        "",
    ]
    lines += [f"# {line}" if line.strip() else "" for line in body.splitlines()]
    return "\n".join(lines) + "\n"


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    return value

