"""Reading a documentation folder (a Docusaurus `docs/` directory, or any tree of pages).

Files are read as bytes and decoded here, so a file that is not UTF-8 text becomes a SourceError
for that file alone instead of an exception that ends the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from services.retrieval.ingest.bounded_yaml import YamlRefused, load_bounded_yaml
from services.retrieval.ingest.documents import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    SourceDocument,
    SourceError,
    guess_format,
)
from services.retrieval.ingest.urls import strip_number_prefix

SOURCE_EXTENSIONS = frozenset({".md", ".mdx", ".markdown", ".html", ".htm", ".txt"})
_CATEGORY_FILES = ("_category_.json", "_category_.yml", "_category_.yaml")


def read_folder(
    root: Path | str, *, max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
) -> Iterator[SourceDocument | SourceError]:
    """Every page under `root`, in sorted order of its relative path.

    Skipped like Docusaurus does: hidden files and folders, node_modules, and names starting with
    "_" (partials and category files). source_path is the POSIX path relative to `root`;
    category_labels are the enclosing folders' labels, outermost first: the `label` of their
    _category_.json/.yml, or else the folder name without its number prefix. A file that cannot be
    read, is larger than max_bytes, holds NUL bytes or is not UTF-8 is yielded as a SourceError.
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    labels: dict[Path, str] = {}
    for relative in sorted(_page_paths(root)):
        path = root / relative
        yield _read(
            path, relative, max_bytes, tuple(_label(root / folder, labels) for folder in _folders(relative))
        )


def read_file(
    path: Path | str, *, max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
) -> SourceDocument | SourceError:
    """One page given by itself; its source_path is its file name (no folder to be relative to)."""
    path = Path(path)
    return _read(path, path.name, max_bytes, ())


def is_page(name: str) -> bool:
    """Whether a file of this name is read as a page (by its extension, SOURCE_EXTENSIONS)."""
    return os.path.splitext(name)[1].lower() in SOURCE_EXTENSIONS


def count_pages(root: Path | str) -> int:
    """How many items read_folder(root) yields, from the folder listing alone (a progress total)."""
    return sum(1 for _ in _page_paths(Path(root)))


def other_extensions(root: Path | str) -> dict[str, int]:
    """The extensions of the visible files under `root` that are not read as pages, with how many
    files have each, most first: what a folder without a single page holds instead."""
    counts: dict[str, int] = {}
    for _folder, name in _visible_files(root):
        if not is_page(name):
            extension = os.path.splitext(name)[1].lower() or "(no extension)"
            counts[extension] = counts.get(extension, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _page_paths(root: Path) -> Iterator[str]:
    for folder, name in _visible_files(root):
        if is_page(name):
            yield Path(folder, name).relative_to(root).as_posix()


def _visible_files(root: Path | str) -> Iterator[tuple[str, str]]:
    """(folder, file name) of every file not skipped the way Docusaurus skips them."""
    for folder, directories, files in os.walk(root):
        directories[:] = [name for name in directories if _visible(name) and name != "node_modules"]
        for name in files:
            if _visible(name):
                yield folder, name


def _visible(name: str) -> bool:
    return not name.startswith((".", "_"))


def _folders(relative: str) -> Iterator[str]:
    parts = relative.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        yield "/".join(parts[:depth])


def _read(
    path: Path, relative: str, max_bytes: int, category_labels: tuple[str, ...]
) -> SourceDocument | SourceError:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return SourceError(
                source_path=relative, message=f"file is {size:,} bytes, over the limit of {max_bytes:,}"
            )
        data = path.read_bytes()
    except OSError as error:
        return SourceError(source_path=relative, message=f"cannot read the file: {error.strerror or error}")
    if b"\x00" in data:
        return SourceError(source_path=relative, message="binary file (it holds NUL bytes), not text")
    try:
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return SourceError(
            source_path=relative, message=f"not UTF-8 text: {error.reason} at byte {error.start}"
        )
    return SourceDocument(
        source_path=relative, content=content, format=guess_format(relative), category_labels=category_labels
    )


def _label(folder: Path, cache: dict[Path, str]) -> str:
    if folder not in cache:
        cache[folder] = _category_label(folder) or strip_number_prefix(folder.name)
    return cache[folder]


def _category_label(folder: Path) -> str:
    """The `label` of the folder's _category_ file; "" when there is none or it cannot be read
    (a broken category file only loses its label, never a document)."""
    for name in _CATEGORY_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8-sig")
            data = json.loads(text) if name.endswith(".json") else load_bounded_yaml(text)
        except (OSError, UnicodeDecodeError, ValueError, YamlRefused):
            return ""
        label = data.get("label") if isinstance(data, dict) else None
        return label.strip() if isinstance(label, str) else ""
    return ""
