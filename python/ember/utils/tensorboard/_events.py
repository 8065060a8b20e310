"""TensorBoard's event files written directly: records framed as TFRecords
(length, masked CRC-32C, data, masked CRC-32C) holding Event protocol
buffers, encoded here for the few message types the writer needs."""

import os
import socket
import struct
import time

# ---- CRC-32C (Castagnoli), as TFRecord framing uses it ----------------------------------

_CRC_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data))


# ---- protocol-buffer encoding ------------------------------------------------------------


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_bytes(number, payload):
    return _varint((number << 3) | 2) + _varint(len(payload)) + payload


def field_varint(number, value):
    return _varint(number << 3) + _varint(int(value))


def field_double(number, value):
    return _varint((number << 3) | 1) + struct.pack("<d", value)


def field_float(number, value):
    return _varint((number << 3) | 5) + struct.pack("<f", value)


def packed_doubles(number, values):
    return field_bytes(number, b"".join(struct.pack("<d", v) for v in values))


def event(wall_time, step=0, summary=None, file_version=None):
    """An Event: wall_time (1), step (2), file_version (3), summary (5)."""
    out = field_double(1, wall_time)
    if step:
        out += field_varint(2, step)
    if file_version is not None:
        out += field_bytes(3, file_version.encode())
    if summary is not None:
        out += field_bytes(5, summary)
    return out


def summary(*values):
    """A Summary of Summary.Value messages (field 1)."""
    return b"".join(field_bytes(1, v) for v in values)


def scalar_value(tag, value):
    return field_bytes(1, tag.encode()) + field_float(2, value)


def histogram_value(tag, minimum, maximum, num, total, sum_squares, limits, counts):
    histo = (field_double(1, minimum) + field_double(2, maximum) + field_double(3, num) + field_double(4, total)
             + field_double(5, sum_squares) + packed_doubles(6, limits) + packed_doubles(7, counts))
    return field_bytes(1, tag.encode()) + field_bytes(5, histo)


def image_value(tag, height, width, channels, png):
    image = field_varint(1, height) + field_varint(2, width) + field_varint(3, channels) + field_bytes(4, png)
    return field_bytes(1, tag.encode()) + field_bytes(4, image)


def text_value(tag, text):
    """A string tensor with the text plugin's metadata, as TensorBoard reads text."""
    plugin = field_bytes(1, b"text")  # PluginData.plugin_name
    metadata = field_bytes(1, plugin)  # SummaryMetadata.plugin_data
    shape = field_bytes(2, field_varint(1, 1))  # TensorShapeProto: one dim of size 1
    tensor = field_varint(1, 7) + field_bytes(2, shape) + field_bytes(8, text.encode())  # DT_STRING
    return field_bytes(1, tag.encode()) + field_bytes(8, tensor) + field_bytes(9, metadata)


# ---- the file ------------------------------------------------------------------------------

_uid = 0


class EventFileWriter:
    """Appends framed events to events.out.tfevents.<time>.<host>.<pid>.<n>."""

    def __init__(self, log_dir, filename_suffix=""):
        global _uid
        os.makedirs(log_dir, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.{_uid}"
        _uid += 1
        self.path = os.path.join(log_dir, name + filename_suffix)
        self._file = open(self.path, "ab")
        self.write(event(time.time(), file_version="brain.Event:2"))
        self.flush()

    def write(self, data):
        self._file.write(frame(data))

    def flush(self):
        if not self._file.closed:
            self._file.flush()

    def close(self):
        if not self._file.closed:
            self._file.close()
