"""Containers: ``ModuleList`` (registered "0", "1", ...) and ``Sequential``."""

from .module import Module


class ModuleList(Module):
    """A list of Modules, registered under the names "0", "1", ... (``blocks.0.attn``)."""

    def __init__(self, modules=()):
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module):
        """Add ``module`` at the end, under the next index; returns the list."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.append: expected a Module, got "
                            f"{type(module).__name__}")
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Modules applied in order: ``nn.Sequential(nn.Linear(2, 8), nn.ReLU())``."""

    def __init__(self, *modules):
        super().__init__(modules)

    def forward(self, x):
        """Each module on the previous one's output. Shape: the first's input -> the last's."""
        for module in self:
            x = module(x)
        return x
