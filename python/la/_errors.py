"""la's exceptions (re-exported by la)."""


class Error(Exception):
    """Every error la raises (bad input is also a ValueError, a file error also an OSError)."""


class InvalidArgument(Error, ValueError):
    """Bad input: a malformed matrix, wrong sizes, an option that does not apply."""


class FileError(Error, OSError):
    """A file that cannot be read, parsed or written (the message names the line)."""


class DeviceError(Error):
    """A CUDA failure (out of device memory included)."""


class NoGpuError(DeviceError):
    """device='gpu' (or CuPy input) where no usable GPU is present."""


class NotSupported(Error):
    """Something la does not do (yet); the message says what to use instead."""


for _c in (Error, InvalidArgument, FileError, DeviceError, NoGpuError, NotSupported):
    _c.__module__ = "la"  # as users see and catch them: la.InvalidArgument
