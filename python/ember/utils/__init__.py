"""ember.utils: helpers for users of the package (cmake_prefix_path, collect_env)."""

import os as _os

def _installed_cmake_prefix_path():
    # The compiled parts (and share/cmake) live next to the _C extension,
    # which an editable install keeps in site-packages.
    from ember import _C

    return _os.path.join(_os.path.dirname(_C.__file__), "share", "cmake")


#: Folder to pass as CMAKE_PREFIX_PATH so that find_package(Ember) finds this install.
cmake_prefix_path = _installed_cmake_prefix_path()



def __getattr__(name):
    # ember.utils.data is imported on first use (as an attribute or by
    # `import ember.utils.data`), not with ember: it is a tenth of the import time.
    if name in ("data", "checkpoint"):
        import importlib

        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
