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
  permission), before any work is done.

Failures are :class:`~optsched.errors.InvalidOutput` naming the path and the reason, so
the command line reports them on one line with exit code 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from optsched.errors import InvalidOutput

__all__ = ["check_output", "write_text", "write_bytes", "open_atomic", "append_line",
           "same_file"]

PathLike = str | os.PathLike[str]


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name the same file: by inode when both exist (symlinks and hard
    links), else by their resolved absolute spelling."""
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


def check_output(path: PathLike, inputs: Iterable[PathLike | None] = (), *,
                 field: str = "--out", folder: bool = False) -> Path:
    """Check that ``path`` can be written as an output and is none of ``inputs``.

    ``folder=True`` checks an output folder (created later by the caller if missing; its
    parent must exist). Returns the path as a :class:`~pathlib.Path`.

    Raises
    ------
    InvalidOutput
        naming ``field``, the path and the reason: it is an input of the same command,
        its folder does not exist, it is a folder (or, for ``folder=True``, a file), or
        the place is not writable.
    """
    p = Path(path)
    for src in inputs:
        if src is not None and same_file(p, src):
            raise InvalidOutput(field, str(p),
                                f"is the input file {str(src)!r} of this command; "
                                "refusing to write over it")
    if folder:
        if p.exists() and not p.is_dir():
            raise InvalidOutput(field, str(p), "is a file, not a folder")
        parent = p if p.exists() else p.parent
        if not parent.exists():
            raise InvalidOutput(field, str(p), f"the folder {str(parent)!r} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InvalidOutput(field, str(p), f"the folder {str(parent)!r} is not writable")
        return p
    if p.is_dir():
        raise InvalidOutput(field, str(p), "is a folder, not a file")
    parent = p.parent
    if not parent.exists():
        raise InvalidOutput(field, str(p), f"the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise InvalidOutput(field, str(p), f"{str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidOutput(field, str(p), f"the folder {str(parent)!r} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise InvalidOutput(field, str(p), "the file is not writable")
    return p


@contextlib.contextmanager
def open_atomic(path: PathLike, mode: str = "w", *, field: str = "--out",
                **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``.

    ``mode`` is ``"w"`` or ``"wb"`` (``kwargs`` go to :func:`open`, e.g. ``newline``).
    On an exception the temporary file is removed and ``path`` is left as it was; an
    :class:`OSError` becomes :class:`~optsched.errors.InvalidOutput` naming the path.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"open_atomic mode must be 'w' or 'wb', not {mode!r}")
    p = Path(path)
    if p.is_dir():
        raise InvalidOutput(field, str(p), "is a folder, not a file")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=p.parent or ".")
    except OSError as exc:
        raise InvalidOutput(field, str(p), _reason(exc)) from None
    done = False
    try:
        if "b" not in mode:
            kwargs.setdefault("encoding", "utf-8")
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        # keep the permissions an existing file had (mkstemp makes 0600)
        try:
            os.chmod(tmp, os.stat(p).st_mode & 0o7777 if p.exists() else 0o644)
        except OSError:
            pass
        os.replace(tmp, p)
        done = True
    except OSError as exc:
        raise InvalidOutput(field, str(p), _reason(exc)) from None
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
        raise InvalidOutput(field, str(path), _reason(exc)) from None
