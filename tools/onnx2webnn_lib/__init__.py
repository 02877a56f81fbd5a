"""onnx2webnn: ONNX models to berth's .webnn graphs and .safetensors weights."""
from .convert import ConversionError, Result, convert, freeze_values, host_inputs, load

__all__ = ["ConversionError", "Result", "convert", "freeze_values", "host_inputs", "load"]
