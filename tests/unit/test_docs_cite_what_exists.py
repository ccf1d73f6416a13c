"""The docs cite only what exists: every repository path in docs/*.md and README.md
(deepseek_ls/..., tests/..., bench/..., scripts/..., docs/..., nvim/..., vscode-client/...,
a glob matching at least one file) and every relative Markdown link is in the checkout;
the code cites only docs that are in it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
# A path from the top of the repository, not the tail of another one (`~/.local/share/nvim/site`).
REPO_PATH = re.compile(r"(?<![\w/.~$-])((?:deepseek_ls|tests|bench|scripts|docs|nvim|vscode-client|seeds)/[\w./*@-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A document the code cites: ours (docs/x.md), or specs that were never in the repository.
DOC_REF = re.compile(r"(?<![\w/.~$-])(docs/[\w-]+\.md|seeds/[\w*./-]*|design\.md)")
SOURCES = ["deepseek_ls", "nvim/lua", "nvim/plugin", "vscode-client/src", "vscode-client/webview", "bench", "scripts"]  # not tests/: fixtures name made-up docs
# Files a documented command makes (`npm run package`), not kept in the repository.
BUILT = {"vscode-client/deepseek-ls.vsix"}


def cited(text: str) -> set[str]:
    return {m.rstrip(".,:;") for m in REPO_PATH.findall(text)} - BUILT


def exists(base: Path, path: str) -> bool:
    return any(base.glob(path)) if "*" in path else (base / path).exists()


def test_the_docs_cite_only_paths_that_exist():
    missing = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        refs = cited(text)
        missing += [f"{doc.relative_to(ROOT)}: {p}" for p in sorted(refs) if not exists(ROOT, p)]
        for link in LINK.findall(text):
            target = link.split("#", 1)[0]
            if target and "://" not in target and not target.startswith("mailto:") and not exists(doc.parent, target):
                missing.append(f"{doc.relative_to(ROOT)}: link {link}")
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)


def test_the_path_reader_finds_what_it_must():
    text = "see `deepseek_ls/agent/state.py`, tests/nvim/*.py and `seeds/000_spec.md`. ~/.local/share/nvim/site/pack"
    assert cited(text) == {"deepseek_ls/agent/state.py", "tests/nvim/*.py", "seeds/000_spec.md"}
    assert exists(ROOT, "tests/nvim/*.py") and not exists(ROOT, "seeds/000_spec.md")


def test_the_code_cites_only_docs_that_exist():
    missing = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".lua", ".ts", ".sh") or path == Path(__file__).resolve():
                continue
            for ref in DOC_REF.findall(path.read_text(encoding="utf-8", errors="replace")):
                if not (ROOT / ref).exists():
                    missing.append(f"{path.relative_to(ROOT)}: {ref}")
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)
