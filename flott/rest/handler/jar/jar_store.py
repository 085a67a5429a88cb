"""The programs uploaded through ``POST /jars/upload``: where they live, their ids, what they hold.

As in Flink, uploads live in ``<web.upload.dir>/flink-web-<uuid>/flink-web-upload`` (the
endpoint's own directory, removed when it stops) under the id ``<uuid>_<name>``; the id is the
only name a request can give, and it is checked against that exact shape before any path is
built from it, so no id can name a file outside the directory.

flott runs Python programs, so an upload is a ``.py`` script or a ``.zip`` of modules (an entry
module and the modules it imports; ``__main__.py`` at its root makes it runnable without naming
an entry, as ``python app.zip`` runs it). An archive is checked when it arrives, before anything
extracts it: no symbolic links, no absolute or ``..`` member names, no encrypted members, at
most :data:`MAX_ARCHIVE_MEMBERS` members, and its members' declared sizes (which bound what
extracting them can write) at most :data:`UNCOMPRESSED_FACTOR` times
``rest.server.max-content-length`` in total: a zip bomb is a 400, not a full disk.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from flott.errors import RestRequestError
from flott.rest.handler.job.job_submit_handler import check_file_name

JAR_DIR_NAME = "flink-web-upload"
"""Flink's name for the uploads' directory inside the endpoint's web directory."""
PROGRAM_SUFFIXES = (".py", ".zip")
MAX_ARCHIVE_MEMBERS = 10_000
UNCOMPRESSED_FACTOR = 4
"""An archive may hold at most this many times the largest request body, uncompressed."""
MAIN_MODULE = "__main__"
_NAME_BYTES = 200
_JAR_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}_(.+)$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


@dataclass(frozen=True)
class StoredProgram:
    """One upload: its id, the name it was uploaded under, its file and the modules it runs as."""

    jar_id: str
    name: str
    path: Path
    uploaded_ms: int
    entries: tuple[str, ...]

    @property
    def is_archive(self) -> bool:
        return self.name.lower().endswith(".zip")

    def entry_module(self, requested: str | None) -> str:
        """The module to run: the one requested (it must be one of the entries), else the only
        one, else ``__main__``; a 400 naming the entries otherwise."""
        if requested is not None and requested.strip():
            wanted = requested.strip()
            if wanted not in self.entries:
                raise RestRequestError(
                    f"The entry {wanted!r} is not in {self.name}: its entry modules are "
                    f"{', '.join(self.entries)}."
                )
            return wanted
        if len(self.entries) == 1:
            return self.entries[0]
        if MAIN_MODULE in self.entries:
            return MAIN_MODULE
        raise RestRequestError(
            f"{self.name} holds several modules ({', '.join(self.entries)}) and no __main__.py: name the "
            "entry module with entryClass (or the entry-class query parameter)."
        )


def _refuse_archive(name: str, why: str) -> RestRequestError:
    return RestRequestError(f"The archive {name!r} is refused: {why}.")


def archive_entries(path: Path, name: str, max_uncompressed: int) -> tuple[str, ...]:
    """The modules an uploaded zip can be run as, after checking it is safe to extract."""
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
        raise _refuse_archive(name, f"it is not a readable zip archive ({e})") from None
    if len(members) > MAX_ARCHIVE_MEMBERS:
        raise _refuse_archive(name, f"it has {len(members)} members, more than {MAX_ARCHIVE_MEMBERS}")
    total = 0
    seen: set[str] = set()
    modules: set[str] = set()
    for info in members:
        member = info.filename
        parts = PurePosixPath(member).parts
        if (
            not member
            or member.startswith("/")
            or "\\" in member
            or ".." in parts
            or (len(member) > 1 and member[1] == ":")
            or any(ord(c) < 32 for c in member)
        ):
            raise _refuse_archive(
                name, f"the member name {member[:80]!r} would be written outside its directory"
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise _refuse_archive(name, f"the member {member[:80]!r} is a symbolic link")
        if info.flag_bits & 0x1:
            raise _refuse_archive(name, f"the member {member[:80]!r} is encrypted")
        if info.compress_type not in _COMPRESSIONS:
            raise _refuse_archive(name, f"the member {member[:80]!r} uses an unknown compression")
        if member.rstrip("/") in seen:
            raise _refuse_archive(name, f"the member {member[:80]!r} is in it more than once")
        seen.add(member.rstrip("/"))
        total += info.file_size
        if total > max_uncompressed:
            raise _refuse_archive(
                name,
                f"its members hold more than {max_uncompressed} bytes uncompressed ({UNCOMPRESSED_FACTOR} "
                "times rest.server.max-content-length)",
            )
        if len(parts) == 1 and member.endswith(".py") and _MODULE.match(member[:-3]):
            if member != "__init__.py":
                modules.add(member[:-3])
        elif len(parts) == 2 and parts[1] == "__main__.py" and _MODULE.match(parts[0]):
            modules.add(parts[0])
    if not modules:
        raise _refuse_archive(
            name,
            "it holds no module to run at its root (a <name>.py, a package with __main__.py, or "
            "__main__.py)",
        )
    return (*([MAIN_MODULE] if MAIN_MODULE in modules else []), *sorted(modules - {MAIN_MODULE}))


class JarStore:
    """The uploads' directory. Synchronous (file system calls): handlers run it off the event loop."""

    def __init__(self, directory: Path, max_upload_bytes: int) -> None:
        self.directory = directory
        self.max_uncompressed = UNCOMPRESSED_FACTOR * max_upload_bytes

    def add(self, uploaded: Path, client_name: str) -> StoredProgram:
        """Check ``uploaded`` (sent as ``client_name``) and keep it; the stored program."""
        check_file_name(client_name, _NAME_BYTES, "the uploaded program's name")
        if not client_name.lower().endswith(PROGRAM_SUFFIXES):
            raise RestRequestError(
                "Only Python programs are allowed: a .py script, or a .zip of the program's modules "
                f"(got {client_name!r})."
            )
        if client_name.lower().endswith(".zip"):
            entries = archive_entries(uploaded, client_name, self.max_uncompressed)
        else:
            entries = (_script_module(client_name),)
        self.directory.mkdir(parents=True, exist_ok=True)
        jar_id = f"{uuid.uuid4()}_{client_name}"
        target = self.directory / jar_id
        shutil.move(uploaded, target)
        return StoredProgram(jar_id, client_name, target, _mtime_ms(target), entries)

    def get(self, jar_id: str) -> StoredProgram:
        """The upload named ``jar_id``; a 400 as Flink's when there is none."""
        path = self._path(jar_id)
        if path is None or not path.is_file() or path.is_symlink():
            raise RestRequestError(f"Jar file {jar_id[:120]!r} does not exist.")
        name = _name_of(jar_id)
        if name.lower().endswith(".zip"):
            entries = archive_entries(path, name, self.max_uncompressed)
        else:
            entries = (_script_module(name),)
        return StoredProgram(jar_id, name, path, _mtime_ms(path), entries)

    def all(self) -> list[StoredProgram]:
        """Every upload, newest first (Flink's order)."""
        if not self.directory.is_dir():
            return []
        out = []
        for child in self.directory.iterdir():
            if self._path(child.name) is None or not child.is_file():
                continue
            try:
                out.append(self.get(child.name))
            except (RestRequestError, OSError):
                continue  # deleted meanwhile
        return sorted(out, key=lambda p: p.uploaded_ms, reverse=True)

    def delete(self, jar_id: str) -> None:
        path = self._path(jar_id)
        if path is None or not path.is_file():
            raise RestRequestError(f"File {jar_id[:120]!r} does not exist in the uploads' directory.")
        path.unlink()

    def _path(self, jar_id: str) -> Path | None:
        match = _JAR_ID.match(jar_id)
        if match is None or not match.group(1).lower().endswith(PROGRAM_SUFFIXES):
            return None
        try:
            check_file_name(jar_id, _NAME_BYTES + 37)
        except RestRequestError:
            return None
        return self.directory / jar_id


def _name_of(jar_id: str) -> str:
    match = _JAR_ID.match(jar_id)
    assert match is not None
    return match.group(1)


def _script_module(name: str) -> str:
    return name[: -len(".py")]


def _mtime_ms(path: Path) -> int:
    return int(os.stat(path).st_mtime * 1000)
