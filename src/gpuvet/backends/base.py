"""The interface every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

from gpuvet.backends.readings import Inventory
from gpuvet.node.model import Node


class Backend(ABC):
    """A source of readings: ``inventory()`` lists what is there, ``node()`` how it is linked."""

    name: str = "base"
    simulated: bool = False

    @abstractmethod
    def inventory(self) -> Inventory:
        """Modules, host and software as found now."""

    @abstractmethod
    def node(self) -> Node:
        """The detected node: modules, endpoints, links."""

    def close(self) -> None:
        """Release whatever the backend holds (library handles)."""
