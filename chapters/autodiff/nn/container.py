"""Containers (容器): modules that hold other modules or parameters by position
or by key, with ``torch.nn``'s names.

A Python ``list`` of layers stored on a module is invisible to it: its weights
are not in ``parameters()`` (so the optimizer never trains them) nor in
``state_dict()``. A container *registers* every entry in the module's tables
under its position (``"0"``, ``"1"``, ...) or key, so the dotted names are
torch's (``"layers.0.weight"``) and a torch ``state_dict`` loads unchanged.
Containers have no ``forward``: the owner decides how entries are called.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..tensor import Tensor
from .module import Module, Parameter


def _position(index, length: int, kind: str) -> int:
    """``index`` as a position in ``range(length)``, negative ones counted from the end."""
    index = operator.index(index)
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range for a {kind} of length {length}")
    return index % length


def _pairs(kind: str, entries) -> Iterable:
    """The ``(key, value)`` pairs of a mapping, or of an iterable of pairs."""
    if isinstance(entries, Mapping | ModuleDict | ParameterDict):
        return list(entries.items())
    if not isinstance(entries, Iterable):
        raise TypeError(f"{kind}.update should be called with an iterable of key/value pairs, "
                        f"but got {type(entries).__name__}")
    pairs = []
    for i, pair in enumerate(entries):
        if not isinstance(pair, Iterable) or len(pair := tuple(pair)) != 2:
            raise ValueError(f"{kind} update sequence element #{i} should be a (key, value) "
                             "pair")
        pairs.append(pair)
    return pairs


class _ModuleSequence(Module):
    """What ``ModuleList`` and ``Sequential`` share: modules by position, kept
    numbered ``"0"``, ``"1"``, ... after a deletion or an insertion, as torch's."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _renumber(self, modules: list) -> None:
        self._modules.clear()
        for i, module in enumerate(modules):
            self.add_module(str(i), module)

    def _key(self, index) -> str:
        return list(self._modules)[_position(index, len(self), type(self).__name__)]

    def _slice(self, index: slice):
        return type(self)(list(self._modules.values())[index])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._slice(index)
        return self._modules[self._key(index)]

    def __setitem__(self, index, module: Module) -> None:
        self.add_module(self._key(index), module)

    def __delitem__(self, index) -> None:
        modules = list(self._modules.values())
        if isinstance(index, slice):
            del modules[index]
        else:
            del modules[_position(index, len(self), type(self).__name__)]
        self._renumber(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]):
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]):
        return type(self)([*self, *other])

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]):
        if not isinstance(modules, Iterable):
            raise TypeError(f"{type(self).__name__}.extend should be called with an iterable, "
                            f"but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self

    def pop(self, index: int = -1) -> Module:
        module = self[index]
        del self[index]
        return module


class ModuleList(_ModuleSequence):
    """Modules by position: ``self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])``."""


class Sequential(_ModuleSequence):
    """Children called in order, each on the previous one's output.

    ``Sequential(a, b)`` names them ``"0"``, ``"1"``; ``Sequential(OrderedDict(
    [("enc", a), ("dec", b)]))`` keeps the given names (so a torch model built
    that way has the same ``state_dict`` keys). A slice is a ``Sequential`` of
    the same entries under the same names, as torch's."""

    def __init__(self, *modules):
        Module.__init__(self)
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
            return
        self.extend(modules)

    def _slice(self, index: slice) -> Sequential:
        return Sequential(OrderedDict(list(self._modules.items())[index]))

    def __add__(self, other: Sequential) -> Sequential:
        return Sequential(*self, *_only_sequential(other))

    def __iadd__(self, other: Sequential) -> Sequential:
        return self.extend(_only_sequential(other))

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x


def _only_sequential(other):
    """``+`` between containers keeps their kind, so a Sequential adds only a Sequential."""
    if not isinstance(other, Sequential):
        raise ValueError(f"a Sequential can only be added to a Sequential, got "
                         f"{type(other).__name__} (wrap it: nn.Sequential(*modules))")
    return other


class ModuleDict(Module):
    """Modules by name, in insertion order: ``nn.ModuleDict({"enc": ..., "dec": ...})``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules) -> None:
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module


def _as_parameter(value):
    """A plain tensor becomes a ``Parameter`` (as torch's parameter containers do);
    anything else is kept as it is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """Parameters by position; tensors given to it are made ``Parameter``s."""

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)([self[i] for i in range(len(self))[index]])
        return getattr(self, str(_position(index, len(self), "ParameterList")))

    def __setitem__(self, index, value) -> None:
        setattr(self, str(_position(index, len(self), "ParameterList")), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        object.__setattr__(self, "_size", self._size + 1)
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self


class ParameterDict(Module):
    """Parameters by name, in insertion order; tensors given to it are made ``Parameter``s."""

    def __init__(self, parameters=None):
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:  # AttributeError, as torch's (it looks keys up as attributes)
            raise AttributeError(f"ParameterDict has no entry {key!r}; its keys are "
                                 f"{list(self._keys)} (use .get(key) for a default)")
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings (they name the parameter in "
                            f"state_dict), got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        return self[key] if key in self._keys else default

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def update(self, parameters) -> None:
        """From pairs, an ordered mapping, or a plain ``dict`` (taken in sorted key
        order, as torch's, which predates ordered dicts)."""
        pairs = _pairs("ParameterDict", parameters)
        if isinstance(parameters, Mapping) and not isinstance(parameters, OrderedDict):
            pairs = sorted(pairs)
        for key, value in pairs:
            self[key] = value
