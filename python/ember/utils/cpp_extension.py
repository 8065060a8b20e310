"""Users' own C++ operators, built against Ember (PyTorch's torch.utils.cpp_extension).

`load` and `load_inline` compile sources with ninja into a Python extension
module and import it; `CppExtension` and `BuildExtension` do the same from a
setup.py. Sources may be written for PyTorch: `#include <torch/extension.h>`
maps PyTorch's C++ names (at::, torch::, c10::) onto Ember's C++ API and
binds tensors through pybind11 (docs/cpp_extensions.md lists what is covered).

Builds go to `<root>/<name>`, where root is EMBER_EXTENSIONS_DIR (or
TORCH_EXTENSIONS_DIR) if set, else ~/.cache/ember_extensions/py3X_cpu. A
build directory is locked while it is built, so processes that load the same
extension at once build it once; ninja rebuilds only what changed.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

import setuptools
from setuptools.command.build_ext import build_ext

__all__ = [
    "BuildExtension",
    "CUDA_HOME",
    "CppExtension",
    "CUDAExtension",
    "get_default_build_root",
    "include_paths",
    "is_ninja_available",
    "library_paths",
    "load",
    "load_inline",
    "verify_ninja_availability",
]

IS_LINUX = sys.platform.startswith("linux")
IS_MACOS = sys.platform.startswith("darwin")
IS_WINDOWS = sys.platform == "win32"
LIB_EXT = ".so"
SHARED_FLAG = "-shared"


def _find_cuda_home():
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        return home
    nvcc = shutil.which("nvcc")
    if nvcc:
        home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        # nvcc may be a wrapper outside the toolkit (/usr/local/bin/nvcc).
        if os.path.exists(os.path.join(home, "include", "cuda_runtime.h")):
            return home
    return "/usr/local/cuda" if os.path.exists("/usr/local/cuda") else None


CUDA_HOME = _find_cuda_home()
ROCM_HOME = None
HIP_HOME = None
SYCL_HOME = None
IS_HIP_EXTENSION = False

_LIBRARIES = ["ember_core", "ember_cpu"]
_CXX_FLAGS = ["-fPIC", "-std=c++17", "-O2", "-fvisibility=hidden"]


def _package_dir():
    import ember._C as compiled

    return os.path.dirname(os.path.abspath(compiled.__file__))


def include_paths(device_type: str = "cpu", torch_include_dirs=True) -> list[str]:
    """The include folders an extension is compiled with: Ember's headers, the
    PyTorch-compatible headers (torch/extension.h) and pybind11's."""
    if not torch_include_dirs:
        return []
    include = os.path.join(_package_dir(), "include")
    paths = [include, os.path.join(include, "ember", "extension", "include")]
    if not os.path.isdir(os.path.join(include, "pybind11")):
        with contextlib.suppress(ImportError):
            import pybind11

            paths.append(pybind11.get_include())
    if device_type == "cuda" and CUDA_HOME:
        paths.append(os.path.join(CUDA_HOME, "include"))
    return paths


def library_paths(device_type: str = "cpu", torch_include_dirs: bool = True, cross_target_platform=None) -> list[str]:
    """The folders holding the libraries an extension links against."""
    paths = [os.path.join(_package_dir(), "lib")] if torch_include_dirs else []
    if device_type == "cuda" and CUDA_HOME:
        paths.append(os.path.join(CUDA_HOME, "lib64"))
    return paths


def get_default_build_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(os.path.join(base, "ember_extensions"))


def is_ninja_available() -> bool:
    return _ninja_command() is not None


def verify_ninja_availability() -> None:
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")


def _ninja_command():
    found = shutil.which("ninja")
    if found:
        return found
    try:
        import ninja
    except ImportError:
        return None
    candidate = os.path.join(ninja.BIN_DIR, "ninja")
    return candidate if os.path.exists(candidate) else None


def _cxx():
    return os.environ.get("CXX", "c++")


def _python_include():
    return sysconfig.get_paths()["include"]


def _check_cuda_home():
    if CUDA_HOME is None or not os.path.exists(_nvcc()):
        raise OSError("CUDA_HOME environment variable is not set. Please set it to your CUDA install root.")


def _nvcc():
    return os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else "nvcc"


def _cuda_arch_flags():
    """-gencode flags: TORCH_CUDA_ARCH_LIST ("8.0;9.0+PTX"), else the visible
    GPUs' capabilities, else Ampere and Hopper with PTX for newer GPUs."""
    arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if arch_list:
        archs = arch_list.replace(",", ";").replace(" ", ";").split(";")
    else:
        archs = []
        with contextlib.suppress(Exception):
            import ember

            if ember.cuda.is_available():
                for index in range(ember.cuda.device_count()):
                    major, minor = ember.cuda.get_device_capability(index)
                    archs.append(f"{major}.{minor}")
        archs = sorted(set(archs)) or ["8.0", "9.0"]
        archs[-1] += "+PTX"
    flags = []
    for arch in filter(None, archs):
        number = arch.split("+")[0].replace(".", "")
        flags.append(f"-gencode=arch=compute_{number},code=sm_{number}")
        if arch.endswith("+PTX"):
            flags.append(f"-gencode=arch=compute_{number},code=compute_{number}")
    return flags


def _nvcc_flags():
    return [
        "-std=c++17",
        "--compiler-options",
        "-fPIC",
        "-O2",
        "--expt-relaxed-constexpr",
        "-D__CUDA_NO_HALF_OPERATORS__",
        "-D__CUDA_NO_HALF_CONVERSIONS__",
        "-D__CUDA_NO_HALF2_OPERATORS__",
        *_cuda_arch_flags(),
    ]


def _cuda_ldflags(libdir):
    """The CUDA runtime (static, as Ember links it) and Ember's CUDA library
    when this build has one."""
    flags = [f"-L{os.path.join(CUDA_HOME, 'lib64')}", "-lcudart_static", "-ldl", "-lrt", "-lpthread"]
    if os.path.exists(os.path.join(libdir, "libember_cuda.so")):
        # Kept even where nothing refers to it, so that loading the extension loads Ember's CUDA backend.
        flags[:0] = ["-Wl,--no-as-needed", "-lember_cuda", "-Wl,--as-needed"]
    return flags


# ---- setuptools ----------------------------------------------------------------


def CppExtension(name, sources, *args, **kwargs):
    """A setuptools.Extension with Ember's include folders and libraries."""
    kwargs["include_dirs"] = list(kwargs.get("include_dirs", [])) + include_paths()
    kwargs["library_dirs"] = list(kwargs.get("library_dirs", [])) + library_paths()
    kwargs["runtime_library_dirs"] = list(kwargs.get("runtime_library_dirs", [])) + library_paths()
    kwargs["libraries"] = list(kwargs.get("libraries", [])) + _LIBRARIES
    kwargs["language"] = "c++"
    return setuptools.Extension(name, sources, *args, **kwargs)


def CUDAExtension(name, sources, *args, **kwargs):
    """A CppExtension that also links Ember's CUDA library (when built) and the
    CUDA runtime; .cu sources are compiled by BuildExtension with nvcc."""
    _check_cuda_home()
    kwargs["include_dirs"] = list(kwargs.get("include_dirs", [])) + include_paths("cuda")[len(include_paths()) :]
    kwargs["library_dirs"] = list(kwargs.get("library_dirs", [])) + library_paths("cuda")[1:]
    kwargs["libraries"] = list(kwargs.get("libraries", [])) + ["cudart_static", "dl", "rt", "pthread"]
    if os.path.exists(os.path.join(library_paths()[0], "libember_cuda.so")):
        link = ["-Wl,--no-as-needed", "-lember_cuda", "-Wl,--as-needed"]
        kwargs["extra_link_args"] = link + list(kwargs.get("extra_link_args", []))
    return CppExtension(name, sources, *args, **kwargs)


class BuildExtension(build_ext):
    """setuptools' build_ext with the flags Ember extensions need: C++17, the
    TORCH_EXTENSION_NAME macro, and nvcc for .cu sources."""

    @classmethod
    def with_options(cls, **options):
        class WithOptions(cls):
            def __init__(self, *args, **kwargs):
                kwargs.update(options)
                super().__init__(*args, **kwargs)

        return WithOptions

    def __init__(self, *args, **kwargs):
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        self.use_ninja = kwargs.pop("use_ninja", True)
        super().__init__(*args, **kwargs)

    def build_extensions(self):
        compiler = self.compiler
        if ".cu" not in compiler.src_extensions:
            compiler.src_extensions += [".cu", ".cuh"]
        original_compile = compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            cflags = copy.deepcopy(extra_postargs)
            if isinstance(cflags, dict):
                cflags = cflags.get("nvcc" if src.endswith(".cu") else "cxx", [])
            if src.endswith(".cu"):
                nvcc = os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else "nvcc"
                command = [nvcc, "-c", src, "-o", obj, *_nvcc_flags(), *pp_opts, *cflags]
                self.spawn(command)
                return
            original_compile(obj, src, ext, cc_args, ["-std=c++17", "-fPIC", *cflags], pp_opts)

        compiler._compile = compile_one
        for extension in self.extensions:
            define = f"-DTORCH_EXTENSION_NAME={extension.name.split('.')[-1]}"
            if isinstance(extension.extra_compile_args, dict):
                for key in ("cxx", "nvcc"):
                    extension.extra_compile_args.setdefault(key, []).append(define)
            else:
                extension.extra_compile_args = list(extension.extra_compile_args or []) + [define]
        super().build_extensions()

    def get_ext_filename(self, ext_name):
        name = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            parts = name.split(".")
            name = ".".join(parts[:-2] + parts[-1:]) if len(parts) > 2 else name
        return name


# ---- just-in-time builds ------------------------------------------------------


class _Versioner:
    """A module cannot be imported twice under one name: loading changed sources
    under the same name in one process gives name_v1, name_v2, ..."""

    def __init__(self):
        self.entries = {}

    def bump_if_changed(self, name, digest):
        old = self.entries.get(name)
        if old is None:
            self.entries[name] = (digest, 0)
        elif old[0] != digest:
            self.entries[name] = (digest, old[1] + 1)
        return self.entries[name][1]


_VERSIONER = _Versioner()


def _get_build_directory(name: str, verbose: bool) -> str:
    root = os.environ.get("EMBER_EXTENSIONS_DIR") or os.environ.get("TORCH_EXTENSIONS_DIR")
    if root is None:
        root = os.path.join(get_default_build_root(), f"py{sys.version_info.major}{sys.version_info.minor}_cpu")
    if verbose:
        print(f"Using {root} as Ember extensions root...", file=sys.stderr)
    directory = os.path.join(root, name)
    if not os.path.exists(directory):
        if verbose:
            print(f"Creating extension directory {directory}...", file=sys.stderr)
        os.makedirs(directory, exist_ok=True)
    return directory


@contextlib.contextmanager
def _build_lock(directory):
    with open(os.path.join(directory, "lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _flat(flags):
    return list(flags or [])


def _ninja_escape(path):
    return path.replace(" ", "$ ").replace(":", "$:")


def _write_ninja_file(path, name, sources, cflags, ldflags, output, cuda_cflags=None):
    def joined(flags):
        return " ".join(shlex.quote(f) for f in flags)

    lines = [
        "ninja_required_version = 1.3",
        f"cxx = {_cxx()}",
        f"cflags = {joined(cflags)}",
        f"ldflags = {joined(ldflags)}",
        "",
        # -MD, not -MMD: Ember's headers are -isystem paths, and a changed header
        # (a new Ember) must rebuild the extension.
        "rule compile",
        "  command = $cxx -MD -MF $out.d $cflags -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
        "",
        "rule link",
        "  command = $cxx $in $ldflags -o $out",
        "",
    ]
    if cuda_cflags is not None:
        lines[4:4] = [f"nvcc = {_nvcc()}", f"cuda_cflags = {joined(cuda_cflags)}"]
        lines += [
            "rule cuda_compile",
            "  command = $nvcc --generate-dependencies-with-compile --dependency-output $out.d "
            "$cuda_cflags -c $in -o $out",
            "  depfile = $out.d",
            "  deps = gcc",
            "",
        ]
    objects = []
    for source in sources:
        stem, suffix = os.path.splitext(os.path.basename(source))
        obj = f"{stem}.cuda.o" if suffix == ".cu" else f"{stem}.o"
        while obj in objects:
            obj = f"{stem}_{len(objects)}.o"
        objects.append(obj)
        rule = "cuda_compile" if suffix == ".cu" else "compile"
        lines.append(f"build {obj}: {rule} {_ninja_escape(os.path.abspath(source))}")
    lines += ["", f"build {output}: link {' '.join(objects)}", "", f"default {output}", ""]
    text = "\n".join(lines)
    # Rewriting an unchanged file would make ninja rebuild everything.
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as handle:
            handle.write(text)


def _digest(sources, *flag_lists):
    h = hashlib.sha256()
    for source in sources:
        with open(source, "rb") as handle:
            h.update(handle.read())
    for flags in flag_lists:
        h.update(repr(flags).encode())
    return h.hexdigest()


def _jit_compile(
    name,
    sources,
    build_directory,
    *,
    extra_cflags,
    extra_cuda_cflags,
    extra_ldflags,
    extra_include_paths,
    verbose,
    with_cuda,
    is_python_module,
    is_standalone,
):
    if is_python_module and is_standalone:
        raise ValueError("`is_python_module` and `is_standalone` are mutually exclusive.")
    if with_cuda is None:
        with_cuda = any(s.endswith((".cu", ".cuh")) for s in sources)
    if with_cuda:
        _check_cuda_home()
    verify_ninja_availability()
    version = _VERSIONER.bump_if_changed(
        name, _digest(sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths)
    )
    module_name = name if version == 0 else f"{name}_v{version}"

    device = "cuda" if with_cuda else "cpu"
    includes = [*_flat(extra_include_paths), *include_paths(device), _python_include()]
    defines = [f"-DTORCH_EXTENSION_NAME={module_name}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
    include_flags = [flag for path in includes for flag in ("-isystem", path)]
    cflags = defines + include_flags + _CXX_FLAGS + _flat(extra_cflags)
    cuda_cflags = None
    if with_cuda:
        cuda_cflags = defines + include_flags + _nvcc_flags() + _flat(extra_cuda_cflags)
    libdir = library_paths()[0]
    ldflags = [] if is_standalone else [SHARED_FLAG]
    ldflags += [f"-L{libdir}", *(f"-l{lib}" for lib in _LIBRARIES), f"-Wl,-rpath,{libdir}"]
    if with_cuda:
        ldflags += _cuda_ldflags(libdir)
    ldflags += _flat(extra_ldflags)
    output = module_name if is_standalone else f"{module_name}{LIB_EXT}"

    with _build_lock(build_directory):
        _write_ninja_file(
            os.path.join(build_directory, "build.ninja"), module_name, sources, cflags, ldflags, output, cuda_cflags
        )
        if verbose:
            print(f"Building extension module {module_name}...", file=sys.stderr)
        env = dict(os.environ)
        command = [_ninja_command(), "-v"]
        if "MAX_JOBS" in env:
            command += ["-j", env["MAX_JOBS"]]
        result = subprocess.run(command, cwd=build_directory, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = result.stdout.decode(errors="replace")
        if verbose:
            print(text, file=sys.stderr, end="")
        if result.returncode != 0:
            raise RuntimeError(f"Error building extension '{module_name}': {text}")
    path = os.path.join(build_directory, output)
    if verbose:
        print(f"Loading extension module {module_name}...", file=sys.stderr)
    if is_standalone:
        return path
    if not is_python_module:
        import ember

        ember.ops.load_library(path)
        return path
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from ember._ops import _collect_registrations

    _collect_registrations(path)  # its TORCH_LIBRARY blocks, if any
    return module


def load(
    name,
    sources,
    extra_cflags=None,
    extra_cuda_cflags=None,
    extra_sycl_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose=False,
    with_cuda=None,
    with_sycl=None,
    is_python_module=True,
    is_standalone=False,
    keep_intermediates=True,
):
    """Compiles the C++ source files into an extension module and imports it."""
    if isinstance(sources, str):
        sources = [sources]
    sources = [os.path.abspath(s) for s in sources]
    build_directory = build_directory or _get_build_directory(name, verbose)
    return _jit_compile(
        name,
        sources,
        build_directory,
        extra_cflags=extra_cflags,
        extra_cuda_cflags=extra_cuda_cflags,
        extra_ldflags=extra_ldflags,
        extra_include_paths=extra_include_paths,
        verbose=verbose,
        with_cuda=with_cuda,
        is_python_module=is_python_module,
        is_standalone=is_standalone,
    )


def load_inline(
    name,
    cpp_sources,
    cuda_sources=None,
    sycl_sources=None,
    functions=None,
    extra_cflags=None,
    extra_cuda_cflags=None,
    extra_sycl_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose=False,
    with_cuda=None,
    with_sycl=None,
    is_python_module=True,
    with_pytorch_error_handling=True,
    keep_intermediates=True,
    use_pch=False,
    no_implicit_headers=False,
):
    """Compiles C++ source strings into an extension module and imports it.

    `functions` (a name, a list of names or a dict of name -> docstring) are
    bound into the module; otherwise the sources bind their own functions
    with PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)."""
    build_directory = build_directory or _get_build_directory(name, verbose)
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    if isinstance(cuda_sources, str):
        cuda_sources = [cuda_sources]
    text = [] if no_implicit_headers else ["#include <torch/extension.h>"]
    text += list(cpp_sources)
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f"{f}" for f in functions}
        elif not isinstance(functions, dict):
            raise ValueError(f"Expected 'functions' to be a list or dict, but was {type(functions)}")
        text.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for function, doc in functions.items():
            bound = f"torch::wrap_pybind_function({function})" if with_pytorch_error_handling else function
            text.append(f'm.def("{function}", {bound}, "{doc}");')
        text.append("}")
    files = {"main.cpp": "\n".join(text) + "\n"}
    if cuda_sources:
        header = (
            []
            if no_implicit_headers
            else ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
        )
        files["cuda.cu"] = "\n".join(header + list(cuda_sources)) + "\n"
    with _build_lock(build_directory):  # another process may be building these sources
        for file_name, source in files.items():
            source_path = os.path.join(build_directory, file_name)
            if not os.path.exists(source_path) or open(source_path).read() != source:
                with open(source_path, "w") as handle:
                    handle.write(source)
    return load(
        name,
        [os.path.join(build_directory, f) for f in files],
        extra_cflags=extra_cflags,
        extra_cuda_cflags=extra_cuda_cflags,
        extra_ldflags=extra_ldflags,
        extra_include_paths=extra_include_paths,
        build_directory=build_directory,
        verbose=verbose,
        with_cuda=with_cuda if with_cuda is not None else bool(cuda_sources),
        is_python_module=is_python_module,
    )
