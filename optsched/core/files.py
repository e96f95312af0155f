"""Writing files so that nothing a user has is lost: the one writer every output uses.

Two rules, for every file the library or the command line writes:

* **Atomic.** Content goes to a temporary file in the destination's own folder (same file
  system), is flushed to disk, and is then renamed over the destination
  (:func:`os.replace`, atomic on POSIX). An interrupt, a kill or a full disk during the
  write leaves either the old file or the new one whole, never a partial file that looks
  complete; the temporary file is removed on failure.
* **Never over an input.** :func:`check_output` refuses an output path that resolves to
  one of the command's inputs (symlinks, ``./`` and ``..`` spellings, hard links
  included), and a destination that cannot be written (missing folder, a folder, no
  permission, a read-only or full file system), before any work is done. Writability
  is probed by creating (and removing) a file, since :func:`os.access` answers "yes"
  to root for places no one can write (``/sys``, ``/proc``).

A destination that is a symbolic link is written through the link (the link stays). A
destination that exists and is not a regular file (``/dev/null``, ``/dev/stdout``, a
named pipe) is written in place: it cannot be renamed over, and is never replaced by a
regular file.

Failures are :class:`~optsched.errors.InvalidOutput` naming the path and the reason, so
the command line reports them on one line with exit code 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from optsched.errors import InvalidOutput

__all__ = ["check_output", "write_text", "write_bytes", "open_atomic", "append_line",
           "same_file", "ensure_folder", "output_error"]

PathLike = str | os.PathLike[str]


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name the same file: by inode when both exist (symlinks and hard
    links), else by their resolved absolute spelling (``./``, ``..``, symlinked folders)."""
    pa, pb = Path(a), Path(b)
    try:
        if pa.exists() and pb.exists():
            return os.path.samefile(pa, pb)
    except OSError:
        pass
    return pa.resolve() == pb.resolve()


def _reason(exc: OSError) -> str:
    known = {errno.ENOSPC: "no space left on the device",
             errno.EACCES: "permission denied", errno.EPERM: "permission denied",
             errno.EROFS: "read-only file system", errno.ENOENT: "the folder does not exist",
             errno.EISDIR: "it is a folder", errno.ENOTDIR: "a parent is not a folder",
             errno.EDQUOT: "disk quota exceeded", errno.ENAMETOOLONG: "the name is too long"}
    return known.get(exc.errno or 0, exc.strerror or str(exc))


def output_error(field: str, path: PathLike, exc: OSError) -> InvalidOutput:
    """The :class:`~optsched.errors.InvalidOutput` for an :class:`OSError` met while
    writing ``path``: the path and the reason in words, no traceback."""
    return InvalidOutput(field, os.fspath(path), _reason(exc))


def _special(p: Path) -> bool:
    """An existing destination that is neither a regular file nor a folder (a device, a
    named pipe, a socket): written in place, never renamed over."""
    try:
        mode = p.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _probe(folder: Path, field: str, path: str) -> None:
    """Create and remove a file in ``folder``: the only reliable writability test (root
    passes :func:`os.access` for ``/sys``); then refuse a read-only or full file
    system."""
    try:
        fd, tmp = _create_temp(folder, ".optsched-probe")
    except OSError as exc:
        raise InvalidOutput(field, path, f"cannot create a file in {str(folder)!r}: "
                            f"{_reason(exc)}") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs (Windows): the write itself will tell
        return
    if st.f_flag & getattr(os, "ST_RDONLY", 1):
        raise InvalidOutput(field, path, "read-only file system")
    # root may use the blocks reserved for it; virtual file systems report no blocks
    free = st.f_bfree if hasattr(os, "geteuid") and os.geteuid() == 0 else st.f_bavail
    if st.f_blocks > 0 and free == 0:
        raise InvalidOutput(field, path, "no space left on the device")


def check_output(path: PathLike, inputs: Iterable[PathLike | None] = (), *,
                 field: str = "--out", folder: bool = False,
                 names: Iterable[str] = ()) -> Path:
    """Check that ``path`` can be written as an output and is none of ``inputs``.

    ``folder=True`` checks an output folder (created later by the caller if missing; its
    parent must exist); ``names`` are the files the command writes in it, each of which
    must not be an input either. Nothing is left behind by the check. Returns the path
    as a :class:`~pathlib.Path`.

    Raises
    ------
    InvalidOutput
        naming ``field``, the path and the reason: it is an input of the same command,
        its folder does not exist, it is a folder (or, for ``folder=True``, a file), or
        a file cannot be created there (no permission, read-only or full file system).
    """
    p, shown = Path(path), os.fspath(path)  # the message shows the path as given
    _not_an_input(p, shown, [src for src in inputs if src is not None], field, folder,
                  names)
    if folder:
        _check_folder(p, shown, field)
    else:
        _check_file(p, shown, field)
    return p


def _not_an_input(p: Path, shown: str, sources: list[PathLike], field: str, folder: bool,
                  names: Iterable[str]) -> None:
    """:func:`check_output`'s first rule: neither ``p`` nor (in a folder) any of the
    files ``names`` is one of ``sources``."""
    targets = [p / n for n in names] if folder else [p]
    if folder:
        targets.append(p)
    for target in targets:
        for src in sources:
            if same_file(target, src):
                what = "is" if target == p else f"would write {str(target)!r}, which is"
                raise InvalidOutput(field, shown, f"{what} the input file {str(src)!r} of "
                                    "this command; refusing to write over it")


def _check_folder(p: Path, shown: str, field: str) -> None:
    """:func:`check_output` for an output folder."""
    if p.exists() and not p.is_dir():
        raise InvalidOutput(field, shown, "is a file, not a folder")
    parent = p if p.exists() else p.parent
    _writable_folder(parent, shown, field)


def _check_file(p: Path, shown: str, field: str) -> None:
    """:func:`check_output` for an output file."""
    if p.is_dir():
        raise InvalidOutput(field, shown, "is a folder, not a file")
    if _special(p):  # /dev/null, /dev/stdout, a named pipe: written in place
        if not os.access(p, os.W_OK):
            raise InvalidOutput(field, shown, "permission denied")
        return
    parent = Path(os.path.realpath(p)).parent if p.is_symlink() else p.parent
    if not parent.exists():
        raise InvalidOutput(field, shown, f"the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise InvalidOutput(field, shown, f"{str(parent)!r} is not a folder")
    if p.exists() and not os.access(p, os.W_OK):
        raise InvalidOutput(field, shown, "the file is not writable")
    _probe(parent, field, shown)


def _writable_folder(parent: Path, shown: str, field: str) -> None:
    if not parent.exists():
        raise InvalidOutput(field, shown, f"the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise InvalidOutput(field, shown, f"{str(parent)!r} is not a folder")
    _probe(parent, field, shown)


def ensure_folder(path: PathLike, *, field: str = "--out") -> Path:
    """Create the folder ``path`` (and its parents) if missing; a failure is
    :class:`~optsched.errors.InvalidOutput` naming the path and the reason."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InvalidOutput(field, os.fspath(path), "is a file, not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(field, p, exc) from None
    return p


def _create_temp(folder: Path, stem: str) -> tuple[int, str]:
    """A new file ``folder/stem.<random>.part``, created exclusively with mode 0666 less
    the umask (what a plain ``open(..., "w")`` would give; mkstemp gives 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f"{stem}.{secrets.token_hex(4)}.part")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry for the rename to disk (POSIX; best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def open_atomic(path: PathLike, mode: str = "w", *, field: str = "--out",
                **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``.

    ``mode`` is ``"w"`` or ``"wb"`` (``kwargs`` go to :func:`open`, e.g. ``newline``).
    On an exception (an interrupt included) the temporary file is removed and ``path``
    is left as it was; an :class:`OSError` becomes
    :class:`~optsched.errors.InvalidOutput` naming the path. An existing file keeps its
    permission bits; a new one gets 0666 less the umask. A symbolic link is written
    through; a device or named pipe is written in place (see the module docstring).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"open_atomic mode must be 'w' or 'wb', not {mode!r}")
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    p = Path(path)
    if p.is_dir():
        raise InvalidOutput(field, os.fspath(path), "is a folder, not a file")
    if _special(p):
        try:
            with open(p, mode, **kwargs) as fh:
                yield fh
                fh.flush()
        except OSError as exc:
            raise output_error(field, path, exc) from None
        return
    # write through a symlink: replacing the link by a file would cut it from its target
    dest = Path(os.path.realpath(p)) if p.is_symlink() else p
    try:
        fd, tmp = _create_temp(dest.parent, f".{dest.name}")
    except OSError as exc:
        raise output_error(field, path, exc) from None
    done = False
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if dest.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(dest).st_mode & 0o7777)
        os.replace(tmp, dest)
        done = True
        _sync_folder(dest.parent)
    except OSError as exc:
        raise output_error(field, path, exc) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text(path: PathLike, text: str, *, field: str = "--out") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see the module docstring)."""
    with open_atomic(path, "w", field=field) as fh:
        fh.write(text)
    return Path(path)


def write_bytes(path: PathLike, data: bytes, *, field: str = "--out") -> Path:
    """Write ``data`` to ``path`` atomically."""
    with open_atomic(path, "wb", field=field) as fh:
        fh.write(data)
    return Path(path)


def append_line(path: PathLike, line: str, *, field: str = "--out") -> None:
    """Append one line (``line`` without its newline) to a log and flush it to disk.

    A log written this way can end in a torn line only if the process dies inside this
    call; readers of such logs must detect a last line without its newline.
    """
    if "\n" in line:
        raise ValueError("append_line takes one line without a newline")
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise output_error(field, path, exc) from None
