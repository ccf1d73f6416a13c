"""The `WorkspaceEdit` that applies a file's accepted hunks in the editor.

Text changes are the minimal line edits against the text the person sees,
versioned when the client supports `documentChanges`. Files the patch creates,
renames or deletes become `CreateFile` / `RenameFile` / `DeleteFile` operations
when the client supports them; otherwise the edit is refused with what to do
instead (nothing half-applied).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.positions import negotiated
from deepseek_ls.lsp.textedits import apply_edits, minimal_edits
from deepseek_ls.lsp.uris import open_document


class UnsupportedEdit(ValueError):
    """The client cannot express this change; `str()` says what to do instead."""


@dataclass(frozen=True)
class FileTarget:
    """Where a patch's hunks for one file go."""

    file: str  # the path after the change
    source: str  # the path whose text the hunks apply to (the old path of a rename)
    kind: str  # modify | add | delete | rename

    @classmethod
    def of(cls, patch: Any, file: str) -> "FileTarget":
        change = patch.changes.get(file)
        kind = change.kind if change is not None else "modify"
        source = change.old_path if kind == "rename" and change.old_path else file
        return cls(file=file, source=source, kind=kind)


def _resource_ops(ls: DeepSeekServer) -> set[str]:
    edit_caps = getattr(ls.client_capabilities.workspace, "workspace_edit", None)
    ops = getattr(edit_caps, "resource_operations", None) or []
    return {getattr(op, "value", op) for op in ops}


def _text_edits(old: str, new: str, encoding: str) -> list[types.TextEdit]:
    """The line edits turning `old` into `new`, positions in the negotiated `encoding`."""
    edits = minimal_edits(old, new, encoding)
    if apply_edits(old, edits, encoding) != new:  # never send an edit that would not give `new`
        raise UnsupportedEdit("the edit could not be expressed exactly in LSP positions; apply it with `deepseek-ls apply`")
    return [
        types.TextEdit(
            range=types.Range(
                start=types.Position(line=e.start_line, character=e.start_char),
                end=types.Position(line=e.end_line, character=e.end_char),
            ),
            new_text=e.new_text,
        )
        for e in edits
    ]


def _exists(ls: DeepSeekServer, rel: str) -> bool:
    return open_document(ls, ls.uri_of(rel)) is not None or (ls.root / rel).exists()


def build(
    ls: DeepSeekServer, target: FileTarget, version: int | None, old: str, new: str, *, removes_file: bool
) -> types.WorkspaceEdit:
    """The edit turning `old` (the text of `target.source`, at `version`) into `new`."""
    uri = ls.uri_of(target.file)
    edits = _text_edits(old, new, negotiated(ls))
    versioned = ls.client_supports("workspace", "workspace_edit", "document_changes")
    ops = _resource_ops(ls)
    renaming = target.kind == "rename" and target.source != target.file and not _exists(ls, target.file)

    if target.kind == "delete" and removes_file:
        if not (versioned and "delete" in ops):
            raise UnsupportedEdit(
                f"your editor cannot delete {target.file} through LSP; apply this patch with `deepseek-ls apply`"
            )
        source_uri = ls.uri_of(target.source)
        return types.WorkspaceEdit(document_changes=[types.DeleteFile(uri=source_uri)])
    if renaming:
        if not (versioned and "rename" in ops):
            raise UnsupportedEdit(
                f"your editor cannot rename {target.source} to {target.file} through LSP; "
                "apply this patch with `deepseek-ls apply`"
            )
        source_uri = ls.uri_of(target.source)
        return types.WorkspaceEdit(
            document_changes=[
                types.RenameFile(old_uri=source_uri, new_uri=uri),
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=edits
                ),
            ]
        )
    if not versioned:
        return types.WorkspaceEdit(changes={uri: edits})
    changes: list[Any] = []
    if not _exists(ls, target.file):
        if "create" not in ops:
            raise UnsupportedEdit(
                f"your editor cannot create {target.file} through LSP; apply this patch with `deepseek-ls apply`"
            )
        changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)))
    changes.append(
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits
        )
    )
    return types.WorkspaceEdit(document_changes=changes)
