"""Files written whole or not at all: a temporary name in the same folder, then a rename."""

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def _umask():
    """The process umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: the classic read-and-restore
    os.umask(mask)
    return mask


def write_atomically(path, write):
    """Write a file through a temporary name in its folder, then rename it.

    Every file kernlearn writes (models, predictions, reports, plots) goes
    through here: a full disk, a refused write or an interrupt leaves the old
    file (or none) and no temporary file, never a truncated or empty one.

    Parameters
    ----------
    path : str or path-like
        Destination file.
    write : callable
        ``write(tmp)`` writes the whole content to the path ``tmp`` (a
        ``.tmp`` file beside ``path``).  A symbolic link is followed (the
        file it names is replaced, the link stays); a device or a pipe such
        as ``/dev/stdout`` is written directly.  A file replaced keeps its
        permission bits; a new one has those ``open`` gives.

    Returns
    -------
    path : str

    Raises
    ------
    OSError
        If the temporary file cannot be created, written or renamed (the
        temporary file is removed first); the error names ``path``.
    """
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        # a device or a pipe (/dev/null, /dev/stdout, a FIFO): written into,
        # never replaced by a regular file (as root, a rename would replace
        # /dev/null itself)
        write(str(path))
        return str(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))  # write the file the link names
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.",
            suffix=".tmp",
            dir=path.parent if str(path.parent) else ".",
        )
    except OSError as exc:  # (a missing or read-only folder) it named the temporary file
        raise _naming(exc, path) from None
    try:
        os.close(fd)
        # mkstemp makes the file private (0600): give it the mode open() would,
        # or the mode of the file it replaces (a rewrite made a file its owner
        # had made private, 0600, readable by all: 0644)
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
        write(tmp)
        # on disk before the rename, so that a crash cannot leave an empty
        # file under the final name
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)  # (last: a read-only mode would refuse the writes)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.filename in (None, tmp):
            # a full disk named no file ("[Errno 28] No space left on device"),
            # a refused write the temporary file, removed and never asked for
            raise _naming(exc, path) from None
        raise
    return str(path)


def _naming(exc, path):
    """``exc`` naming ``path``, the file the caller asked for (its traceback kept)."""
    if exc.errno is None:  # (an OSError raised with a message of its own)
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path)).with_traceback(exc.__traceback__)
