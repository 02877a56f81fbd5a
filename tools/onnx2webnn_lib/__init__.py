"""onnx2webnn: ONNX models to berth's .webnn graphs and .safetensors weights."""
from .convert import ConversionError, Result, convert, host_inputs, load  # noqa: F401
