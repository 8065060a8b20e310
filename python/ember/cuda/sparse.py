"""ember.cuda.sparse: the legacy sparse typed tensors (none can be created
without a CUDA device)."""

from ember.cuda._legacy import _tensor_type

_SPARSE_TYPES = {
    "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8", "DoubleTensor": "float64",
    "FloatTensor": "float32", "HalfTensor": "float16", "IntTensor": "int32", "LongTensor": "int64",
    "ShortTensor": "int16",
}  # fmt: skip

for _name, _dtype in _SPARSE_TYPES.items():
    globals()[_name] = _tensor_type(_name, _dtype, "ember.cuda.sparse", sparse=True)
del _name, _dtype
