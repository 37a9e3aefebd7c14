"""XGBoost's model document in its binary JSON encoding (UBJSON).

``Booster.save_raw("ubj")`` and ``Booster.load_model(bytearray)`` speak the
same document as ``save_raw("json")``, encoded as Universal Binary JSON:
big-endian numbers, and typed arrays (``[$d#L<count>`` followed by raw
float32 data) for every per-node array. Reading those arrays with
``numpy.frombuffer`` and writing them with ``tobytes`` skips formatting and
parsing decimal text, and keeps every float32 bit for bit (no decimal round
trip).

Only the subset XGBoost writes is supported: objects, arrays (typed or not,
with a count), strings, integers, float32/float64 and booleans.
Typed arrays come back as numpy arrays of the matching dtype; ``dumps``
writes numpy arrays as typed arrays of their dtype, so a document read by
``loads`` is written back with the array types XGBoost expects.
"""

import struct

import numpy as np

from ..exceptions import ConversionError

# UBJSON type marker -> numpy dtype (big-endian)
_DTYPES: dict[bytes, np.dtype] = {
    b"i": np.dtype(">i1"),
    b"U": np.dtype(">u1"),
    b"I": np.dtype(">i2"),
    b"l": np.dtype(">i4"),
    b"L": np.dtype(">i8"),
    b"d": np.dtype(">f4"),
    b"D": np.dtype(">f8"),
}
_MARKERS = {dtype.newbyteorder("="): marker for marker, dtype in _DTYPES.items()}
_MARKERS.update({dtype: marker for marker, dtype in _DTYPES.items()})


_STRUCT_CODES = {b"i": ">b", b"U": ">B", b"I": ">h", b"l": ">i", b"L": ">q", b"d": ">f", b"D": ">d"}
_SCALARS = {ord(marker): struct.Struct(code) for marker, code in _STRUCT_CODES.items()}
_TYPED = {ord(marker): dtype for marker, dtype in _DTYPES.items()}
_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY = b"{}[]"
_STRING, _TYPE, _COUNT, _TRUE, _FALSE, _NULL = b"S$#TFZ"


class _Reader:
    """Recursive-descent reader over ``bytes`` (integer indexing and
    ``struct.unpack_from`` keep the per-token cost low; arrays are one
    ``numpy.frombuffer`` each)."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def fail(self, what):
        raise ConversionError(f"cannot read the XGBoost model: {what} at byte {self.pos}")

    def marker(self) -> int:
        if self.pos >= len(self.data):
            self.fail("unexpected end of data")
        marker = self.data[self.pos]
        self.pos += 1
        return marker

    def scalar(self, marker: int):
        try:
            unpacker = _SCALARS[marker]
        except KeyError:
            self.fail(f"unknown value type {chr(marker)!r}")
        (value,) = unpacker.unpack_from(self.data, self.pos)
        self.pos += unpacker.size
        return value

    def length(self) -> int:
        length = self.scalar(self.marker())
        if not isinstance(length, int) or length < 0:
            self.fail(f"invalid length {length!r}")
        return length

    def string(self) -> str:
        length = self.length()
        text = self.data[self.pos : self.pos + length].decode("utf-8")
        self.pos += length
        return text

    def value(self):
        marker = self.marker()
        if marker == _OPEN_OBJECT:
            return self.object()
        if marker == _OPEN_ARRAY:
            return self.array()
        if marker == _STRING:
            return self.string()
        if marker == _TRUE:
            return True
        if marker == _FALSE:
            return False
        if marker == _NULL:
            return None
        return self.scalar(marker)

    def object(self) -> dict:
        out: dict = {}
        data = self.data
        while True:
            if self.pos >= len(data):
                self.fail("unterminated object")
            if data[self.pos] == _CLOSE_OBJECT:
                self.pos += 1
                return out
            key = self.string()
            out[key] = self.value()

    def array(self):
        data = self.data
        if self.pos >= len(data):
            self.fail("unterminated array")
        peek = data[self.pos]
        if peek == _TYPE:
            self.pos += 1
            dtype = _TYPED.get(self.marker())
            if dtype is None or self.marker() != _COUNT:
                self.fail("unsupported typed array")
            count = self.length()
            if self.pos + count * dtype.itemsize > len(data):
                self.fail("truncated array")
            array = np.frombuffer(data, dtype=dtype, count=count, offset=self.pos)
            self.pos += count * dtype.itemsize
            return array.astype(dtype.newbyteorder("="))  # native order, owned copy
        if peek == _COUNT:
            self.pos += 1
            return [self.value() for _ in range(self.length())]
        items = []
        while True:
            if self.pos >= len(data):
                self.fail("unterminated array")
            if data[self.pos] == _CLOSE_ARRAY:
                self.pos += 1
                return items
            items.append(self.value())


def loads(data) -> dict:
    """Parse a UBJSON document written by XGBoost."""
    reader = _Reader(bytes(data))
    document = reader.value()
    if not isinstance(document, dict):
        raise ConversionError("cannot read the XGBoost model: the document is not an object")
    return document


def _length(out: list, length: int) -> None:
    out.append(b"L" + struct.pack(">q", length))


def _integer(value: int) -> bytes:
    if -128 <= value <= 127:
        return b"i" + struct.pack(">b", value)
    if -(2**31) <= value < 2**31:
        return b"l" + struct.pack(">i", value)
    return b"L" + struct.pack(">q", value)


def _write(out: list, value) -> None:
    if isinstance(value, dict):
        out.append(b"{")
        for key, item in value.items():
            encoded = str(key).encode("utf-8")
            _length(out, len(encoded))
            out.append(encoded)
            _write(out, item)
        out.append(b"}")
    elif isinstance(value, np.ndarray):
        marker = _MARKERS.get(value.dtype)
        if marker is None or value.ndim != 1:
            raise ConversionError(f"cannot write a {value.dtype} array of ndim {value.ndim} into an XGBoost model")
        out.append(b"[$" + marker + b"#")
        _length(out, value.shape[0])
        out.append(value.astype(_DTYPES[marker], copy=False).tobytes())
    elif isinstance(value, (list, tuple)):
        out.append(b"[#")
        _length(out, len(value))
        for item in value:
            _write(out, item)
    elif isinstance(value, str):
        encoded = value.encode("utf-8")
        out.append(b"S")
        _length(out, len(encoded))
        out.append(encoded)
    elif isinstance(value, (bool, np.bool_)):
        out.append(b"T" if value else b"F")
    elif isinstance(value, (int, np.integer)):
        out.append(_integer(int(value)))
    elif isinstance(value, (float, np.floating)):
        out.append(b"D" + struct.pack(">d", float(value)))
    elif value is None:
        out.append(b"Z")
    else:
        raise ConversionError(f"cannot write a {type(value).__name__} into an XGBoost model")


def dumps(document: dict) -> bytearray:
    """Encode a document as UBJSON, ready for ``Booster.load_model``."""
    out: list = []
    _write(out, document)
    return bytearray(b"".join(out))
