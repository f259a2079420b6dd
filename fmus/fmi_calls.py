"""The C calls of one FMI version, resolved once when its binary loads.

:class:`FmiCalls` is the base of :class:`~fmus.fmi2_calls.Fmi2Calls` and
:class:`~fmus.fmi3_calls.Fmi3Calls` (as FMPy's ``fmi2.py`` and ``fmi3.py`` each hold one
version): it loads the binary through fmpy's class for the version and the interface,
resolves the C entry points the hot paths call (:meth:`FmiCalls.fn`), and builds the
:class:`ValueSet` of a registered set of value references with the argument tuple of its
get and set calls, so that a get or a set is one C call with nothing left to decide.

A version class returns statuses (``int``) and raw results; turning a status into an
error that names the FMU is the driver's (:mod:`fmus.driver`).  A subclass registers
itself with ``class FmiNCalls(FmiCalls, major=N)`` and :meth:`FmiCalls.for_version`
finds it.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from typing import Any, ClassVar

from .errors import FMUBinaryError, FMUConfigError

__all__ = ["FmiCalls", "ValueSet"]


class ValueSet:
    """Registered value references of one FMI type: the buffers, and the arguments of
    the get and set calls built once (:meth:`bind` adds the instance)."""

    __slots__ = ("getter", "setter", "type", "vr", "n", "nvals", "buf", "sizes", "keep",
                 "layout", "args", "encode", "decode")

    def __init__(self, getter: Any, setter: Any, typ: str, vrs: list, ctype: Any,
                 nvals: int, with_nvals: bool, bool_as_int: bool) -> None:
        self.getter, self.setter, self.type = getter, setter, typ
        self.vr = (ctypes.c_uint * len(vrs))(*vrs)
        self.n = len(vrs)
        self.nvals = nvals
        self.buf = (ctype * nvals)()
        self.sizes = (ctypes.c_size_t * nvals)() if typ == "Binary" else None
        self.keep: list = []  # the bytes a Binary buffer points into, kept alive
        # the arguments after the instance: FMI 2 (vr, n, values), FMI 3 adds nValues,
        # Binary passes the value sizes before the values
        if typ == "Binary":
            self.layout: tuple = (self.vr, self.n, self.sizes, self.buf, nvals)
        elif with_nvals:
            self.layout = (self.vr, self.n, self.buf, nvals)
        else:
            self.layout = (self.vr, self.n, self.buf)
        self.args: tuple = (None, *self.layout)
        self.encode: Callable[[list], None] | None = {
            "String": self._encode_strings, "Binary": self._encode_binaries}.get(typ)
        self.decode: Callable[[], list] | None = {
            "String": self._decode_strings, "Binary": self._decode_binaries}.get(typ)
        if typ == "Boolean" and bool_as_int:  # fmi2Boolean is an int
            self.decode = self._decode_bools

    def bind(self, component: Any) -> None:
        """Put the instance in front of the call arguments."""
        self.args = (component, *self.layout)

    def _encode_strings(self, values: list) -> None:
        self.buf[:] = [str(v).encode("utf-8") for v in values]

    def _encode_binaries(self, values: list) -> None:
        self.keep = [ctypes.create_string_buffer(bytes(v), max(len(v), 1)) for v in values]
        self.buf[:] = [ctypes.cast(b, ctypes.POINTER(ctypes.c_uint8)) for b in self.keep]
        self.sizes[:] = [len(v) for v in values]

    def _decode_strings(self) -> list:
        return [b.decode("utf-8") if b is not None else "" for b in self.buf]

    def _decode_binaries(self) -> list:
        return [ctypes.string_at(p, n) if p else b"" for p, n in zip(self.buf, self.sizes)]

    def _decode_bools(self) -> list:
        return [bool(b) for b in self.buf]


class FmiCalls:
    """The calls of one FMI version on one loaded binary (see the module docstring).

    Parameters
    ----------
    spec : DriverSpec
        What to load (:class:`fmus.driver.DriverSpec`).
    call_log : callable, optional
        Receives every FMI call (fmpy's call logger); the hot paths then call fmpy's
        logging wrappers instead of the C functions themselves.
    """

    #: the FMI major version, set by ``class ...(FmiCalls, major=N)``
    major: ClassVar[int] = 0
    #: the prefix of the C function names (``"fmi2"``)
    prefix: ClassVar[str] = ""
    #: FMI type name -> (the type in the C function names, its ctypes type)
    types: ClassVar[dict[str, tuple[str, Any]]] = {}
    #: whether the get/set calls take the number of values (FMI 3) after the buffer
    counts_values: ClassVar[bool] = False
    #: whether Booleans travel as C ints (``fmi2Boolean``)
    int_booleans: ClassVar[bool] = False
    #: the names of the calls that save and restore the FMU state, after the prefix (FMI 2
    #: spells them ``GetFMUstate``, ``SetFMUstate``)
    GET_STATE: ClassVar[str] = "GetFMUState"
    SET_STATE: ClassVar[str] = "SetFMUState"
    _versions: ClassVar[dict[int, type[FmiCalls]]] = {}

    def __init_subclass__(cls, major: int = 0, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if major:
            cls.major, cls.prefix = major, f"fmi{major}"
            FmiCalls._versions[major] = cls

    @classmethod
    def for_version(cls, major: int) -> type[FmiCalls]:
        """The calls class of FMI ``major`` (an error naming the versions there are)."""
        try:
            return cls._versions[major]
        except KeyError:
            raise FMUConfigError(f"FMI {major} is not supported (supported: FMI "
                                 f"{', '.join(map(str, sorted(cls._versions)))})") from None

    def __init__(self, spec: Any, call_log: Callable[[str], Any] | None = None) -> None:
        self.spec = spec
        cls = self._fmpy_class(spec.interface)
        kw: dict = dict(guid=spec.token, unzipDirectory=spec.root,
                        modelIdentifier=spec.model_identifier,
                        instanceName=spec.instance_name, fmiCallLogger=call_log,
                        **self._load_options(spec))
        cwd = os.getcwd()
        try:
            self.fmu = cls(**kw)
        except AttributeError as exc:
            raise FMUBinaryError(
                f"FMU '{spec.label}': its binary lacks an FMI {self.major} function ({exc}); "
                "every FMI function must be exported, even unsupported ones: ask the FMU's "
                "supplier for a complete build") from None
        except Exception as exc:  # noqa: BLE001 - fmpy raises bare Exceptions
            text = str(exc)
            hint = "check that the binary matches this platform and its libraries are present"
            if "_Py" in text or "libpython" in text:
                hint = ("this FMU embeds Python (pythonfmu): it needs a compatible CPython in "
                        "the process, e.g. LD_PRELOAD=libpython3.x.so")
            raise FMUBinaryError(f"FMU '{spec.label}': cannot load its binary ({text}); "
                                 f"{hint}") from None
        finally:
            os.chdir(cwd)  # fmpy changes into the binary's folder and not back on failure
        # the C functions themselves (statuses checked by the driver), or fmpy's logging
        # wrappers (which raise on an error status) when a call log is wanted
        self._raw = getattr(self.fmu, "_functions", None) if call_log is None else None

    # ------------------------------------------------ what a version gives
    def _fmpy_class(self, interface: str) -> type:
        """fmpy's class of this version for ``interface`` ("ME", "CS" or "SE")."""
        raise NotImplementedError

    def _load_options(self, spec: Any) -> dict:
        """Extra keyword arguments of the fmpy class."""
        return {}

    # ------------------------------------------------------------ shared
    def fn(self, name: str) -> Any:
        """The C function ``name`` (``"fmi2DoStep"``), resolved once by fmpy at load."""
        if self._raw is not None and name in self._raw:
            return self._raw[name]
        return getattr(self.fmu, name)

    def value_set(self, typ: str, vrs: list, nvals: int) -> ValueSet:
        """Buffers and call arguments for ``vrs`` of FMI type ``typ`` (a key of
        :attr:`types`)."""
        name, ctype = self.types[typ]
        p = self.prefix
        return ValueSet(self.fn(f"{p}Get{name}"), self.fn(f"{p}Set{name}"), name, list(vrs),
                        ctype, nvals, self.counts_values, self.int_booleans)

    def set_input_derivatives(self, component: Any, vr: Any, n: int, order: int,
                              values: list) -> int:
        """Input derivatives of one order (FMI 2's ``fmi2SetRealInputDerivatives``)."""
        raise NotImplementedError(f"FMI {self.major} has no input derivatives (FMI 3 "
                                  "passes inputs inside a step by intermediate update)")

    def free_instance(self, component: Any) -> None:
        self.fn(f"{self.prefix}FreeInstance")(component)
