"""genie.Error and one subclass per genie_status code.

Every failure of the library, and every argument the package refuses before
calling it, raises one of these; str(e) is the library's detailed message
(which file, line, record, value) followed by the status name.
"""


class Error(Exception):
    """A genie failure.  status: the genie_status code (negative);
    message: the detailed message; reason: the short name of the status."""

    status = -30800
    reason = "invalid argument"

    def __init__(self, message, status=None, reason=None):
        if status is not None:
            self.status = status
        if reason is not None:
            self.reason = reason
        self.message = message
        super().__init__(f"{message} ({self.reason})" if message else self.reason)


class InvalidArgumentError(Error, ValueError):
    """GENIE_EINVAL: a bad argument or malformed input."""
    status, reason = -30800, "invalid argument"


class OutOfMemoryError(Error, MemoryError):
    """GENIE_ENOMEM: host memory exhausted."""
    status, reason = -30799, "out of memory"


class FileIOError(Error, OSError):
    """GENIE_EIO: a read, write, open or rename failed."""
    status, reason = -30798, "input/output error"


class CorruptIndexError(Error):
    """GENIE_ECORRUPT: the index file is damaged."""
    status, reason = -30797, "index file corrupt"


class FormatError(Error):
    """GENIE_EFORMAT: not a genie index, or an unknown version."""
    status, reason = -30796, "not a genie index or unknown format version"


class NotSupportedError(Error):
    """GENIE_ENOTSUP: a feature not built in (e.g. CUDA)."""
    status, reason = -30795, "not supported in this build"


class GPUError(Error):
    """GENIE_EGPU: a CUDA error or no usable GPU."""
    status, reason = -30794, "GPU error"


class RangeError(Error, ValueError):
    """GENIE_ERANGE: a value out of the supported range."""
    status, reason = -30793, "value out of range"


class CancelledError(Error):
    """GENIE_ECANCELED: the caller cancelled the search."""
    status, reason = -30792, "cancelled"


_BY_STATUS = {c.status: c for c in (InvalidArgumentError, OutOfMemoryError, FileIOError, CorruptIndexError,
                                    FormatError, NotSupportedError, GPUError, RangeError, CancelledError)}


def from_status(status, message, reason):
    """The exception for a genie_status returned by the library."""
    cls = _BY_STATUS.get(status, Error)
    return cls(message, status=status, reason=reason)
