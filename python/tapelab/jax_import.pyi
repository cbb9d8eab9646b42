# Type stubs of tapelab.jax_import (a tape from a JAX function); python/tests/test_package.py checks them.
from typing import Any, Callable, Mapping, Optional

from ._tapelab import Tape

def from_jax(f: Callable[..., Any], inputs: Mapping[str, float], draws: int, *, name: str = "jax",
             out: Optional[str] = None) -> Tape: ...
