"""The lists test_api_coverage.py checks Ember's public names against.

OUT_OF_SCOPE: torch 2.13 names Ember leaves out on purpose, each with the
reason. KNOWN_GAPS: names still missing, per namespace; the list may only
shrink. `python tools/api_coverage.py --write` rewrites KNOWN_GAPS from the
current build (everything below its line is generated).
"""


def _because(reason, names):
    return dict.fromkeys(names.split(), reason)


_PY_MODULES = "a standard-library module that torch/__init__.py imports, not part of the API"
_JIT = "TorchScript: IR, types and runtime classes of the JIT compiler, which Ember does not have"
_QUANT = "quantized tensors and kernels (quantization is not in Ember's scope)"
_SPARSE = "nested layouts and sparse masks/resizes (Ember has strided, sparse COO and sparse compressed tensors)"
_VENDOR = "another vendor's backend or device (cuDNN, MIOpen, oneDNN internals, Vulkan, MPS, XPU, MTIA, IPU ...)"
_DISPATCH = "dispatcher and operator-registration internals of PyTorch's C++ core"
_BUILD = "facts about how the torch binary was built and loaded"
_IMPORTED = "a module, typing construct or logger that torch's module imports for itself, not part of the API"
_DOC_TEMPLATES = "docstring fragments that torch's module formats into its own documentation"

OUT_OF_SCOPE = {
    "torch": {
        **_because(
            _PY_MODULES,
            "builtins ctypes functools glob importlib inspect math os platform sys textwrap "
            "threading types warnings torch",
        ),
        **_because(
            _BUILD, "TYPE_CHECKING USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH compiled_with_cxx11_abi classproperty"
        ),
        **_because(
            _JIT,
            "AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType BufferDict CallStack Capsule "
            "ClassType Code CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType "
            "ConcreteModuleTypeBuilder DeepCopyMemoTable DeviceObjType DictType EnumType ErrorReport "
            "ExecutionPlan FileCheck FloatType FunctionSchema FutureType Gradient Graph "
            "GraphExecutorState InferredType IntType InterfaceType JITException ListType "
            "LiteScriptModule LockingLogger LoggerBase ModuleDict Node NoneType NoopLogger NumberType "
            "OptionalType ParameterDict PyObjectType RRefType ScriptClass ScriptClassFunction ScriptDict "
            "ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList ScriptListIterator "
            "ScriptMethod ScriptModule ScriptModuleSerializer ScriptObject ScriptObjectProperty "
            "StaticModule StreamObjType StringType SymBoolType SymIntType TensorType TracingState "
            "TupleType Type UnionType Use Value import_ir_module import_ir_module_from_buffer parse_ir "
            "parse_schema parse_type_comment merge_type_from_type_comment unify_type_list classes "
            "IODescriptor OperatorInfo",
        ),
        **_because(
            _QUANT,
            "QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage "
            "choose_qparams_optimized dequantize empty_quantized fake_quantize_per_channel_affine "
            "fake_quantize_per_tensor_affine fbgemm_linear_fp16_weight "
            "fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight "
            "fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight "
            "fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix fused_moving_avg_obs_fake_quant "
            "int_repr per_channel_affine per_channel_affine_float_qparams per_channel_symmetric "
            "per_tensor_affine per_tensor_symmetric q_per_channel_axis q_per_channel_scales "
            "q_per_channel_zero_points q_scale q_zero_point qint32 qint8 qscheme quantize_per_channel "
            "quantize_per_tensor quantize_per_tensor_dynamic quantized_batch_norm quantized_gru "
            "quantized_gru_cell quantized_lstm quantized_lstm_cell quantized_max_pool1d "
            "quantized_max_pool2d quantized_max_pool3d quantized_rnn_relu_cell "
            "quantized_rnn_tanh_cell quint2x4 quint4x2 quint8 ao quantization",
        ),
        **_because(
            _SPARSE,
            "jagged nested",
        ),
        **_because(
            _VENDOR,
            "cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution "
            "cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose "
            "cudnn_grid_sampler cudnn_is_acceptable miopen_batch_norm miopen_convolution "
            "miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose "
            "miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d "
            "mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d "
            "is_vulkan_available get_autocast_ipu_dtype get_autocast_xla_dtype "
            "is_autocast_ipu_enabled is_autocast_xla_enabled set_autocast_ipu_dtype "
            "set_autocast_ipu_enabled set_autocast_xla_dtype set_autocast_xla_enabled "
            "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12",
        ),
        **_because(
            _DISPATCH,
            "DispatchKey DispatchKeySet ExcludeDispatchKeyGuard PRIVATE_OPS Tag "
            "AVG SUM AggregationType PyTorchFileReader PyTorchFileWriter "
            "SerializationStorageContext DeserializationStorageContext",
        ),
    },
    "optim.lr_scheduler": _because(
        "a typing or functools helper that torch's module imports, not part of the API",
        "Any Literal Self SupportsFloat TYPE_CHECKING TypedDict cast inf override partial",
    ),
    "Tensor": {
        **_because(
            _QUANT,
            "dequantize int_repr is_quantized q_per_channel_axis q_per_channel_scales "
            "q_per_channel_zero_points q_scale q_zero_point qscheme",
        ),
        **_because(
            _SPARSE,
            "sparse_mask sparse_resize_ sparse_resize_and_clear_ is_nested to_padded_tensor",
        ),
        **_because(_VENDOR, "is_ipu is_maia is_mkldnn to_mkldnn is_mps is_mtia is_vulkan is_xla is_xpu"),
    },
    "nn.functional": {
        **_because(_IMPORTED, "Callable DType Optional TYPE_CHECKING dataclasses importlib math np torch"),
        **_because(_DOC_TEMPLATES, "reproducibility_notes sparse_support_notes tf32_notes"),
        **_because(_JIT, "BroadcastingList1 BroadcastingList2 BroadcastingList3 boolean_dispatch"),
    },
    "nn.init": _because(_IMPORTED, "Callable Literal ParamSpec TypeVar torch"),
    "nn.utils.rnn": _because(_IMPORTED, "Any Callable NamedTuple Self TypeVar torch warnings"),
    "cuda": _because(_IMPORTED, "platform torch"),
    "autograd": _because(_IMPORTED, "Mapping Sequence cast overload torch warnings"),
    "autograd.functional": _because(_IMPORTED, "fwAD torch"),
    "autograd.forward_ad": _because(_IMPORTED, "Any NamedTuple os torch"),
    "autograd.graph": _because(
        _IMPORTED,
        "Any Callable Generator Iterable Iterator Literal MutableMapping NamedTuple Optional RemovableHandle "
        "Sequence TYPE_CHECKING TorchDispatchMode TypeAlias Union Variable WeakKeyDictionary "
        "WeakValueDictionary abc cast contextlib contextvars defaultdict deque functools log logging "
        "threading torch",
    ),
    "utils.checkpoint": _because(
        _IMPORTED,
        "AbstractSet Annotated Any AnyStr AsyncContextManager AsyncGenerator AsyncIterable AsyncIterator "
        "Awaitable BinaryIO ByteString Callable ChainMap ClassVar Collection Concatenate Container "
        "ContextManager Coroutine Counter DefaultDict Deque Dict Final ForwardRef FrozenSet Generator Generic "
        "Hashable IO ItemsView Iterable Iterator KeysView List Literal LiteralString LoggingTensorMode "
        "Mapping MappingView Match MutableMapping MutableSequence MutableSet NamedTuple Never NewType "
        "NoReturn NotRequired Optional OrderedDict ParamSpec ParamSpecArgs ParamSpecKwargs Pattern Protocol "
        "ReferenceType Required Reversible SavedTensor Self Sequence Set Sized SupportsAbs SupportsBytes "
        "SupportsComplex SupportsFloat SupportsIndex SupportsInt SupportsRound TYPE_CHECKING Text TextIO "
        "TorchDispatchMode Tuple Type TypeAlias TypeGuard TypeVar TypeVarTuple TypedDict Union Unpack "
        "ValuesView annotations assert_never assert_type capture_logs cast clear_overloads contextlib "
        "dataclass_transform defaultdict enum final fx_traceback get_args get_origin get_overloads "
        "get_type_hints is_typeddict itertools no_type_check no_type_check_decorator overload platform "
        "reveal_type runtime_checkable torch tree_map uuid warnings weakref",
    ),
    "fft": {**_because(_IMPORTED, "torch"), **_because(_DOC_TEMPLATES, "common_args factory_common_args")},
    "special": {**_because(_IMPORTED, "torch"), **_because(_DOC_TEMPLATES, "common_args multi_dim_common")},
    "linalg": _because(_DOC_TEMPLATES, "common_notes"),
    "testing": _because(_JIT, "FileCheck"),
    "multiprocessing": _because(_IMPORTED, "torch"),
    "distributed": _because(_IMPORTED, "RankType log logging sys timedelta torch traceback typing"),
}

KNOWN_GAPS = {
    "torch": [
        "BenchmarkConfig",
        "BenchmarkExecutionStats",
        "StorageBase",
        "ThroughputBenchmark",
        "bit",
        "cpp",
        "export",
        "monitor",
        "package",
    ],
    "Tensor": [
        "grad_dtype",
        "index",
        "name",
    ],
    "nn": [
        "factory_kwargs",
        "intrinsic",
        "qat",
        "quantizable",
        "quantized",
    ],
    "nn.functional": [],
    "nn.init": [],
    "nn.utils": [],
    "nn.utils.rnn": [],
    "optim": [],
    "optim.lr_scheduler": [],
    "testing": [],
    "amp": [],
    "cuda": [
        "DEVICE_REQUIREMENT",
        "PYTORCH_RELEASES_CODE_CC",
        "classproperty",
    ],
    "autograd": [],
    "autograd.functional": [],
    "autograd.forward_ad": [],
    "autograd.graph": [
        "region_activation_memory_budget",
        "set_override_stale_capture_stream",
        "set_warn_on_accumulate_grad_stream_mismatch",
    ],
    "linalg": [],
    "fft": [],
    "special": [],
    "distributions": [],
    "utils.data": [
        "DFIterDataPipe",
        "DataChunk",
        "IterDataPipe",
        "MapDataPipe",
        "argument_validation",
        "datapipes",
        "functional_datapipe",
        "graph",
        "graph_settings",
        "guaranteed_datapipes_determinism",
        "non_deterministic",
        "runtime_validation",
        "runtime_validation_disabled",
    ],
    "utils.checkpoint": [],
    "multiprocessing": [],
    "distributed": [
        "BackendConfig",
        "DeviceMesh",
        "GroupName",
        "Logger",
        "QueueEmptyError",
        "Reducer",
        "all_gather_coalesced",
        "autograd",
        "breakpoint",
        "c10d_logger",
        "config",
        "constants",
        "device_mesh",
        "get_backend_config",
        "init_device_mesh",
        "logging_handlers",
        "record_comm",
        "reduce_op",
        "register_rendezvous_handler",
        "remote_device",
        "rendezvous",
        "rpc",
        "shrink_group",
        "split_group",
        "utils",
    ],
    "func": [
        "rearrange",
    ],
}
