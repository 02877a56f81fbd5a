"""berth's tensor dtypes and their numpy counterparts."""
import numpy as np

F32, F16, I32, U32, I64, U64, I8, U8, I4, U4 = range(1, 11)

NAMES = {F32: "float32", F16: "float16", I32: "int32", U32: "uint32", I64: "int64", U64: "uint64",
         I8: "int8", U8: "uint8", I4: "int4", U4: "uint4"}

TO_NUMPY = {F32: np.dtype(np.float32), F16: np.dtype(np.float16), I32: np.dtype(np.int32),
            U32: np.dtype(np.uint32), I64: np.dtype(np.int64), U64: np.dtype(np.uint64),
            I8: np.dtype(np.int8), U8: np.dtype(np.uint8)}


def name(code):
    return NAMES.get(code, "dtype %d" % code)


def is_bfloat16(dt):
    """ml_dtypes' bfloat16, when that package is installed."""
    return dt.name == "bfloat16"


def widen_bfloat16(a):
    """bfloat16 (ml_dtypes' type, or its bits as uint16) to float32, as
    berth.from_bfloat16: the bits shifted into the high half, so every
    value is exact. berth has no bfloat16 tensors: widen, then feed."""
    bits = np.ascontiguousarray(a).view(np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32)
