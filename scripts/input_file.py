"""The inputs of the study scripts (why_counters.py, profile-parts,
compare_images.py, gpu_study_unpack.py, gpu_study_splits.py), read as the
renderer reads its own (renderer/src/io/input_file.rs): regular files only, so
that a FIFO or a device is refused instead of blocking or being read
without end, and of bounded size. Each refusal is a `BadInput` whose message names the file and says
what was expected; the scripts print it on one line and exit non-zero.
"""
import os
import stat

# The most bytes a script reads of one input file: 64 MiB, a hundred times
# the largest the scripts have read (Nsight Compute's rows of a wavefront
# render, under 1 MB; an image of 1024x1024 is 12 MiB).
MAX_INPUT_BYTES = 64 << 20


class BadInput(Exception):
    """An input that cannot be used; the message names the file and says
    what was expected."""


def open_regular(path, what="a file"):
    """`path` opened for reading in binary, refused unless it is a regular
    file. It is checked before it is opened (opening some devices acts) and
    again once open, without blocking (a FIFO would wait for a writer)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise BadInput(f"{path}: not a regular file (a folder, a FIFO or a device); expected {what}")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise BadInput(f"{path}: cannot be read ({e.strerror}); expected {what}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BadInput(f"{path}: not a regular file (a folder, a FIFO or a device); expected {what}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bytes(path, what="a file", limit=MAX_INPUT_BYTES):
    """The bytes of the regular file `path`, refused past `limit`."""
    with open_regular(path, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise BadInput(f"{path}: larger than {limit >> 20} MiB, the most read of {what}")
    return data


def read_text(path, what="a text file", limit=MAX_INPUT_BYTES):
    """The UTF-8 text of the regular file `path`, refused past `limit`."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadInput(f"{path}:{line}: not UTF-8 text; expected {what}") from None
