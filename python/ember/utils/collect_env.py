"""python -m ember.utils.collect_env: the report to attach to a bug."""

from __future__ import annotations

import os
import platform
import subprocess
import sys


def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "Could not collect"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "Could not collect"


def get_env_info() -> dict[str, str]:
    import ember

    gcc = _run(["gcc", "--version"]).splitlines()
    cmake = _run(["cmake", "--version"]).splitlines()
    return {
        "Ember version": ember.__version__,
        "Git version": ember.version.git_version,
        "Is debug build": str(ember.version.debug),
        "CUDA used to build Ember": str(ember.version.cuda),
        "CUDA available": str(ember.cuda.is_available()),
        "OS": platform.platform(),
        "GCC version": gcc[0] if gcc else "Could not collect",
        "CMake version": cmake[0] if cmake else "Could not collect",
        "Python version": sys.version.replace("\n", " "),
        "Python platform": platform.platform(),
        "CPU": _cpu_model(),
        "CPU count": str(os.cpu_count()),
        "CPU capability in use": ember._C._cpu_capability(),
        "BLAS": ember._C._blas_info(),
        "Threads": str(ember.get_num_threads()),
    }


def get_pretty_env_info() -> str:
    info = get_env_info()
    width = max(len(k) for k in info)
    lines = [f"{k + ':':<{width + 1}} {v}" for k, v in info.items()]
    return "\n".join(lines) + "\n\nBuild configuration:\n" + __import__("ember").__config__.show()


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
