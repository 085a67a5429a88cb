"""A job's Python files, from the user's paths to importable directories.

Three places handle the same files, with one set of rules here:

* the **client** collects the local entries of ``python.files`` and
  ``python.requirements`` (PyFlink's keys, set by ``--pyFiles`` /
  ``--pyRequirements`` or ``env.add_python_file`` /
  ``set_python_requirements``), zipping directories;
* the **Dispatcher** decides from each entry name what kind of artifact it is
  (:func:`artifact_kind`) when it puts the files into the BlobServer;
* the **TaskExecutor** (and ``flott run`` for the client's own imports) lays
  the files out in a directory and puts its entries on ``sys.path``
  (:func:`materialize`).

The rules follow PyFlink: a ``.py`` file's directory goes on the path; a
``.zip`` is extracted and its root goes on the path; a ``.whl``/``.egg`` is
a zip too and handled the same way (extracted, so C extensions and package
data work). A directory is shipped zipped: a *package* directory (it has an
``__init__.py``) keeps its name, so ``--pyFiles mypkg/`` makes ``import
mypkg`` work; any other directory is a path root, as in PyFlink, so its
modules become importable by their own names. The requirements file travels
under the entry name ``python_requirements_file_<name>`` and PyFlink's
optional cache directory (``requirements.txt#<dir>``, the distributions to
install from without an index) as ``python_requirements_cache_<name>.zip``
— Flink's own cache key prefixes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from flott.errors import JobArtifactError, JobSubmissionError
from flott.runtime.messages.execution import PythonArtifactKind
from flott.runtime.messages.job_artifacts import JobArtifact

PYTHON_FILES = "python.files"
PYTHON_REQUIREMENTS = "python.requirements"
REQUIREMENTS_FILE_PREFIX = "python_requirements_file_"
REQUIREMENTS_CACHE_PREFIX = "python_requirements_cache_"
ARCHIVE_SUFFIXES = (".zip", ".whl", ".egg")
FILES_DIR = "files"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalArtifact:
    """A file on the client's disk that goes with the job, under the entry name the cluster sees."""

    entry_name: str
    path: Path


def is_remote(reference: str) -> bool:
    """A URL with a scheme other than ``file`` (a one-letter scheme is a Windows drive)."""
    scheme = urlparse(reference).scheme
    return len(scheme) > 1 and scheme != "file"


def local_path(reference: str) -> Path:
    parsed = urlparse(reference)
    return Path(parsed.path) if parsed.scheme == "file" else Path(reference).expanduser()


def split_list(value: str) -> list[str]:
    return [r.strip() for r in value.split(",") if r.strip()]


def artifact_kind(entry_name: str) -> PythonArtifactKind:
    """What a TaskExecutor does with a file, decided by its entry name alone."""
    if entry_name.startswith(REQUIREMENTS_FILE_PREFIX):
        return "requirements"
    if entry_name.startswith(REQUIREMENTS_CACHE_PREFIX):
        return "requirements-cache"
    if entry_name.lower().endswith(ARCHIVE_SUFFIXES):
        return "archive"
    return "file"


def zip_directory(src: Path, dest: Path) -> Path:
    """Zip ``src`` into ``dest``: under its own name if it is a package, else its contents at the root."""
    prefix = src.name if (src / "__init__.py").is_file() else ""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for root, dirs, files in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".pyc"):
                    continue
                full = Path(root) / name
                zf.write(full, str(Path(prefix, full.relative_to(src))))
    return dest


def collect_local_artifacts(
    config: Mapping[str, str], extra: Sequence[str], scratch: Path, with_requirements: bool = True
) -> list[LocalArtifact]:
    """The job's local Python files (``python.files`` plus ``extra``) and requirements, ready to ship.

    Remote references (``s3://``, ``http://`` ...) are left out, with a warning; directories are
    zipped into ``scratch`` (the caller deletes it). A missing local file raises
    JobSubmissionError naming it.
    """
    out: list[LocalArtifact] = []
    seen: set[Path] = set()
    names: dict[str, Path] = {}
    for ref in [*split_list(config.get(PYTHON_FILES, "")), *extra]:
        if is_remote(ref):
            log.warning(
                "the job's Python file %s is remote: it is not uploaded, and flott's cluster does not "
                "fetch remote Python files yet, so the TaskExecutors will not have it",
                ref,
            )
            continue
        path = local_path(ref).resolve()
        if path in seen:
            continue
        seen.add(path)
        if path.is_dir():
            artifact = LocalArtifact(
                f"{path.name}.zip", zip_directory(path, scratch / f"{len(out)}-{path.name}.zip")
            )
        elif path.is_file():
            artifact = LocalArtifact(path.name, path)
        else:
            raise JobSubmissionError(f"the job's Python file {ref!r} does not exist")
        if artifact.entry_name in names:
            raise JobSubmissionError(
                f"two of the job's Python files would arrive as {artifact.entry_name!r} "
                f"({names[artifact.entry_name]} and {path}); rename one"
            )
        names[artifact.entry_name] = path
        out.append(artifact)
    requirements = config.get(PYTHON_REQUIREMENTS, "").strip()
    if with_requirements and requirements:
        out += _requirements_artifacts(requirements, scratch)
    return out


def _requirements_artifacts(value: str, scratch: Path) -> list[LocalArtifact]:
    """PyFlink's ``requirements.txt[#cache_dir]``."""
    file_ref, _, cache_ref = value.partition("#")
    if is_remote(file_ref):
        raise JobSubmissionError(f"the requirements file must be a local file, got {file_ref!r}")
    req = local_path(file_ref.strip()).resolve()
    if not req.is_file():
        raise JobSubmissionError(f"the job's requirements file {file_ref!r} does not exist")
    out = [LocalArtifact(REQUIREMENTS_FILE_PREFIX + req.name, req)]
    if cache_ref.strip():
        cache = local_path(cache_ref.strip()).resolve()
        if not cache.is_dir():
            raise JobSubmissionError(
                f"the requirements cache directory {cache_ref!r} (after '#' in python.requirements) "
                "is not a directory"
            )
        zipped = scratch / f"requirements-cache-{cache.name}.zip"
        with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(p for p in cache.rglob("*") if p.is_file()):
                zf.write(f, str(f.relative_to(cache)))
        out.append(LocalArtifact(f"{REQUIREMENTS_CACHE_PREFIX}{cache.name}.zip", zipped))
    return out


def describe_local_artifacts(artifacts: Sequence[LocalArtifact]) -> list[JobArtifact]:
    """JobArtifact records for files on this machine (the embedded cluster reads them in place)."""
    out = []
    for a in artifacts:
        digest = hashlib.sha256()
        size = 0
        with a.path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
        out.append(
            JobArtifact(entry_name=a.entry_name, path=str(a.path), size=size, sha256=digest.hexdigest())
        )
    return out


def materialize(
    kind: PythonArtifactKind, entry_name: str, source: Path, target_dir: Path, index: int
) -> Path:
    """Lay out one ``file`` or ``archive`` under ``target_dir``; the directory that goes on ``sys.path``.

    ``file`` entries share ``target_dir/files`` (two different files with one
    name are an error); each archive is extracted into its own directory.
    """
    if kind == "file":
        files = target_dir / FILES_DIR
        files.mkdir(parents=True, exist_ok=True)
        dest = files / _safe_name(entry_name)
        if dest.exists():
            raise JobArtifactError(f"the job ships two different files named {entry_name!r}")
        shutil.copyfile(source, dest)
        return files
    if kind == "archive":
        stem = _safe_name(entry_name).rsplit(".", 1)[0]
        dest = target_dir / f"archive_{index}_{stem}"
        try:
            with zipfile.ZipFile(source) as zf:
                zf.extractall(dest)  # zipfile drops absolute paths and '..' from member names
        except (zipfile.BadZipFile, OSError) as e:
            raise JobArtifactError(f"the job's archive {entry_name!r} cannot be extracted: {e}") from None
        return dest
    raise JobArtifactError(f"{entry_name!r} ({kind}) is not laid out as a Python path entry")


def _safe_name(entry_name: str) -> str:
    name = Path(entry_name.replace("\\", "/")).name
    if name in ("", ".", ".."):
        raise JobArtifactError(f"illegal file name for a job's Python file: {entry_name!r}")
    return name


def top_level_names(path_entry: Path) -> set[str]:
    """The module and package names importing from ``path_entry`` can find (for conflict checks)."""
    names: set[str] = set()
    if not path_entry.is_dir():
        return names
    for child in path_entry.iterdir():
        name = child.name
        if child.is_dir():
            if name.isidentifier() and name != "__pycache__" and _holds_python(child):
                names.add(name)
        elif name.endswith((".py", ".pyc", ".so", ".pyd")):
            stem = name.split(".", 1)[0]
            if stem.isidentifier():
                names.add(stem)
    return names


def _holds_python(directory: Path) -> bool:
    """A package (regular or namespace) holds Python somewhere; ``bin/`` or ``share/`` of pip do not."""
    return any(p.suffix in (".py", ".so", ".pyd") for p in directory.rglob("*"))
