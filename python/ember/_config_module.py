"""Settings modules (torch._dynamo.config, torch._inductor.config): the names
scripts set and read back, with PyTorch's defaults; an unknown name raises
AttributeError as PyTorch's config modules do. Ember's compile runs code
eagerly (decision 0021), so the settings change nothing it computes."""

from __future__ import annotations

import contextlib
import functools
import sys
import types


def _torch_name(name):
    return "torch" + name[len("ember") :] if name.startswith("ember") else name


class _Group:
    """A group of settings under a dotted prefix (config.triton, config.cpp)."""

    def __init__(self, path, values):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{_torch_name(self._path)}.{name} does not exist")

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"{_torch_name(self._path)}.{name} does not exist")
        self._values[name] = value

    def __dir__(self):
        return sorted(self._values)


class SettingsModule(types.ModuleType):
    def __getattr__(self, name):
        raise AttributeError(f"{_torch_name(self.__name__)}.{name} does not exist")

    def __setattr__(self, name, value):
        if name not in self._settings and not name.startswith("__"):
            raise AttributeError(f"{_torch_name(self.__name__)}.{name} does not exist")
        if name in self._settings and isinstance(self._settings[name], _Group):
            raise AttributeError(f"{_torch_name(self.__name__)}.{name} is a group of settings")
        if name in self._settings:
            self._settings[name] = value
        super().__setattr__(name, value)

    def get_config_copy(self):
        """Every setting by its dotted name."""
        out = {}
        for name, value in self._settings.items():
            if isinstance(value, _Group):
                out.update({f"{name}.{k}": v for k, v in value._values.items()})
            else:
                out[name] = value
        return out

    def _set_dotted(self, dotted, value):
        head, _, rest = dotted.partition(".")
        setattr(getattr(self, head) if rest else self, rest or head, value)

    def patch(self, arg=None, value=None, **changes):
        """Settings changed for a block or a decorated function, then restored."""
        if isinstance(arg, dict):
            changes.update(arg)
        elif arg is not None:
            changes[arg] = value
        module = self

        class _Patch(contextlib.ContextDecorator):
            def __enter__(self):
                current = module.get_config_copy()
                for key in changes:
                    if key not in current:
                        raise AttributeError(f"{_torch_name(module.__name__)}.{key} does not exist")
                self._saved = {key: current[key] for key in changes}
                for key, val in changes.items():
                    module._set_dotted(key, val)
                return self

            def __exit__(self, *exc):
                for key, val in self._saved.items():
                    module._set_dotted(key, val)
                return False

        return _Patch()


def install(module_name, defaults):
    """Makes the module `module_name` a settings module with `defaults`
    (dotted names such as "triton.cudagraphs" form groups)."""
    module = sys.modules[module_name]
    settings = {}
    for name, value in defaults.items():
        head, _, rest = name.partition(".")
        if rest:
            settings.setdefault(head, _Group(f"{module_name}.{head}", {}))._values[rest] = value
        else:
            settings[name] = value
    module.__dict__["_settings"] = settings
    module.__dict__.update(settings)
    module.__class__ = SettingsModule
    module.__dict__["patch"] = functools.partial(SettingsModule.patch, module)
    module.__dict__["get_config_copy"] = functools.partial(SettingsModule.get_config_copy, module)
