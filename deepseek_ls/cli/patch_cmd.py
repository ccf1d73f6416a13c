"""`deepseek-ls diff|apply`: show, stage, apply and undo patches from the shell.

`apply --diff FILE|-` stages a unified diff and applies it (asking on a
terminal unless `--yes`; `--check` validates only). Any file that fails means
exit status 1 and no file changed. `apply PATCH_ID [--hunk ID ...]` applies a
staged patch; `apply --undo` restores the files of the last apply.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from deepseek_ls.cli.common import add_command, exit_with, print_json, resolve_context
from deepseek_ls.patch import PatchError, PatchSet, PatchStore, SafetyGate
from deepseek_ls.patch.model import LOCATED_LABELS
from deepseek_ls.policy.paths import PathPolicy

if TYPE_CHECKING:
    from deepseek_ls.store.log import EventLog


def register(subparsers: argparse._SubParsersAction) -> None:
    diff = add_command(
        subparsers,
        "diff",
        help="show staged patches (all pending, or one)",
        description="Print the staged patch PATCH_ID as a unified diff with its hunk ids, or list pending patches.",
        handler=_diff,
    )
    diff.add_argument("patch_id", nargs="?", help="the patch to show (default: list pending patches)")
    diff.add_argument("--all", action="store_true", help="list every staged patch, not only pending ones")

    apply = add_command(
        subparsers,
        "apply",
        help="apply a unified diff or a staged patch to disk (whole, per file or per hunk)",
        description=(
            "Apply staged patch PATCH_ID, or a unified diff with --diff FILE|- , to the files on disk.\n"
            "A checkpoint is taken first (`apply --undo` takes the apply back out, keeping edits made since).\n"
            "If any file fails, nothing changes."
        ),
        handler=_apply,
    )
    apply.add_argument("patch_id", nargs="?", help="the staged patch to apply")
    apply.add_argument("--diff", metavar="FILE", help="stage and apply this unified diff ('-' reads stdin)")
    apply.add_argument("--hunk", action="append", metavar="HUNK_ID", help="apply only this hunk (repeatable)")
    apply.add_argument("--file", action="append", metavar="PATH", help="apply only this file's hunks (repeatable)")
    apply.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    apply.add_argument("--check", action="store_true", help="validate only: report what would change, change nothing")
    apply.add_argument(
        "--undo", action="store_true",
        help="take the last apply back out (edits made since are kept; an overlap refuses, changing nothing)",
    )


def _store(args: argparse.Namespace) -> PatchStore:
    ctx = resolve_context(args)
    config = ctx.config
    return PatchStore(
        ctx.root,
        ctx.state_dir,
        policy=PathPolicy(ctx.root, config.policy.deny_paths),
        gate=SafetyGate.from_config(config.agent_loop, config.policy),
    )


def _diff(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.patch_id:
        try:
            ps = store.get(args.patch_id)
        except PatchError as exc:
            exit_with(str(exc))
        if args.json:
            print_json(_public(ps))
        else:
            _print_patch(ps, full=True)
        return 0
    patches = store.list() if args.all else store.pending()
    ignored = store.ignored()  # files in .deepseek/patches/ we did not stage: named, never listed
    if args.json:
        print_json({"patches": [_public(p) for p in patches],
                    "ignored": [{"patch_id": e.patch_id, "reason": e.reason} for e in ignored]})
        return 0
    for exc in ignored:
        print(f"deepseek-ls: {exc}", file=sys.stderr)
    if not patches:
        print("no pending patches", file=sys.stderr)
        return 0
    for ps in patches:
        _print_patch(ps, full=False)
    return 0


def _public(ps: PatchSet) -> dict:
    data = ps.model_dump(mode="json")
    for change in data["changes"].values():
        change.pop("base_text", None)
    return data


def _print_patch(ps: PatchSet, *, full: bool) -> None:
    pending = len(ps.pending_hunks())
    print(f"patch {ps.patch_id}  {ps.created_at}  {pending}/{len(ps.hunks)} hunks pending")
    for change in ps.changes.values():
        what = change.kind if change.kind != "rename" else f"rename from {change.old_path}"
        print(f"  {change.path} ({what})")
        for hunk in ps.hunks_of(change.path):
            header = f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@ {hunk.section}"
            print(f"    {hunk.hunk_id}  [{hunk.status}]  {header}".rstrip())
            how = [LOCATED_LABELS[hunk.located]] if hunk.located != "exact" else []
            how += ["@@ counts recounted"] if hunk.recounted else []
            if how:
                print(f"      (not an exact match: {', '.join(how)})")
            if full:
                for line in hunk.lines:
                    print(f"      {line}")
    if ps.approval_reasons:
        print("  needs explicit approval: " + "; ".join(ps.approval_reasons))


def _apply(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.undo:
        try:
            plan = store.undo_on_disk()  # 3-way against the disk: edits made since stay
        except PatchError as exc:  # edits made after the apply would be lost: nothing was changed
            exit_with(str(exc), code=1)
        if plan is None:
            exit_with("nothing to undo: no apply has been made since the last undo")
        merged = [f.path for f in plan.files if f.merged]
        if args.json:
            print_json({"restored": plan.restored, "merged": merged, "kept": plan.kept})
        else:
            print("restored: " + (", ".join(plan.restored) or "no file"))
            if merged:
                print("edits made since the apply kept in: " + ", ".join(merged))
            if plan.kept:
                print("kept as they are (changed after a mission's checkpoint, not by it): " + ", ".join(plan.kept))
        return 0
    if bool(args.diff) == bool(args.patch_id):
        exit_with("give either PATCH_ID or --diff FILE|- (see `deepseek-ls apply --help`)", code=2)
    try:
        if args.diff:
            ps = store.stage(_read_diff(args.diff), persist=not args.check)
        else:
            ps = store.get(args.patch_id)
    except PatchError as exc:
        exit_with(f"{exc}\nnothing was changed")
    except OSError as exc:
        exit_with(f"cannot read the diff: {exc}")
    if args.check:
        if args.json:
            print_json(_public(ps))
        else:
            _print_patch(ps, full=False)
            print("check passed: the diff applies cleanly (nothing changed)")
        return 0
    if not args.yes and not _confirm(ps, args):
        print(f"not applied; the patch stays staged as {ps.patch_id}", file=sys.stderr)
        return 1
    log = _session_log(store, ps)
    try:
        if log is not None:
            store.sink = log  # the apply goes into the session's history, as the editor's does
        result = store.apply(ps.patch_id, hunk_ids=args.hunk, files=args.file)
    except PatchError as exc:
        exit_with(f"{exc}\nnothing was changed")
    finally:
        if log is not None:
            log.close()
    if args.json:
        print_json(result)
    elif result.ok:
        print(f"{result.message} (patch {ps.patch_id}; undo with `deepseek-ls apply --undo`)")
    if not result.ok:
        exit_with(result.message)
    return 0


def _session_log(store: PatchStore, ps: PatchSet) -> "EventLog | None":
    """The log of the session that proposed `ps` (its applies belong in that session's
    history, which `replay` and the audit read), or None: a diff staged here has none, and
    a session that is gone or not the person's own is not written to (said on stderr)."""
    if not ps.session_id:
        return None
    from deepseek_ls.store.sessions import SessionStore

    try:
        return SessionStore(store.state_dir).open(ps.session_id)
    except Exception as exc:  # noqa: BLE001 - not found, not ours, unreadable: the apply goes on
        print(f"note: the apply is not recorded in session {ps.session_id}: {exc}", file=sys.stderr)
        return None


def _read_diff(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    with open(source, encoding="utf-8", newline="") as fh:
        return fh.read()


def _confirm(ps: PatchSet, args: argparse.Namespace) -> bool:
    """Ask on the terminal (stdin, or /dev/tty when stdin carries the diff); no terminal: refuse."""
    stream = None
    if args.diff != "-" and sys.stdin.isatty():
        stream = sys.stdin
    else:
        try:
            stream = open("/dev/tty", encoding="utf-8")
        except OSError:
            stream = None
    if stream is None:
        print("deepseek-ls: no terminal to confirm on; pass --yes to apply without asking", file=sys.stderr)
        return False
    _print_patch(ps, full=True)
    sys.stderr.write(f"Apply {len(ps.pending_hunks())} hunk(s) to {', '.join(ps.files)}? [y/N] ")
    sys.stderr.flush()
    answer = stream.readline().strip().lower()
    return answer in ("y", "yes")
