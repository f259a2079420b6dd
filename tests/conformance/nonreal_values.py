"""The values the non-Real corpus plays through the Reference Feedthrough FMUs (issue 31
item 2): per FMI type, four values at :data:`TIMES` (the type's extremes where it has them;
an Int64/UInt64 that float64 would round)."""

TIMES = [0.0, 0.25, 0.5, 0.75]

VALUES = {
    "Int8": [-128, 127, 0, -1], "UInt8": [255, 0, 1, 254],
    "Int16": [-32768, 32767, 0, -2], "UInt16": [65535, 0, 7, 65534],
    "Int32": [-2**31, 2**31 - 1, 0, -3], "UInt32": [2**32 - 1, 0, 5, 2**31],
    "Int64": [-2**63, 2**63 - 1, 0, 2**53 + 1], "UInt64": [2**64 - 1, 0, 2**63 + 1, 2**53 + 1],
    "Boolean": [True, False, True, False], "Enumeration": [2, 1, 2, 1],
}
