"""ember.onnx: importable as torch.onnx is, so scripts that import it run;
exporting a model to ONNX is not available yet and says so."""

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """Raised when a model cannot be exported."""


def is_in_onnx_export():
    return False


def export(model, args=(), f=None, **kwargs):
    raise OnnxExporterError("ember.onnx.export: exporting to ONNX is not available in Ember yet")
