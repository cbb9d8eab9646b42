# Type stubs of the tapelab package (tapelab/__init__.py), for editors and type checkers; the classes are
# the compiled module's (_tapelab.pyi). python/tests/test_package.py checks that they name every public name
# and every argument.
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._tapelab import EngineUnavailable as EngineUnavailable
from ._tapelab import Kernel as Kernel
from ._tapelab import KernelStats as KernelStats
from ._tapelab import Metrics as Metrics
from ._tapelab import Plan as Plan
from ._tapelab import Result as Result
from ._tapelab import Tape as Tape
from ._tapelab import engines as engines
from ._tapelab import op_names as op_names
from ._tapelab import parse_plan as parse_plan
from ._tapelab import parse_tape as parse_tape
from ._tapelab import read_plan as read_plan
from ._tapelab import read_tape as read_tape
from ._tapelab import strategies as strategies
from .record import Recorder as Recorder

__version__: str
__all__: List[str]
OPS: Tuple[str, ...]
PLAN_FORMAT: str

# A strategy function: strategy(tape, segments) -> cuts, or {"cuts": [...], "inner": [...]}.
Cuts = Union[Sequence[int], npt.NDArray[np.integer]]
StrategyFunction = Callable[[Tape, int], Union[Cuts, Mapping[str, Any]]]
Inputs = Union[None, Mapping[str, float], Sequence[Mapping[str, float]]]

def product(name: str, steps: Optional[int] = None, assets: Optional[int] = None, max_nodes: Optional[int] = None,
            **params: float) -> Tape: ...
def draws(seed: int, paths: int, count: int, first_path: int = 0) -> npt.NDArray[np.float64]: ...
def products() -> List[Dict[str, Any]]: ...
def from_jax(f: Callable[..., Any], inputs: Mapping[str, float], draws: int, *, name: str = "jax",
             out: Optional[str] = None) -> Tape: ...
def plan(tape: Tape, strategy: Union[None, str, StrategyFunction] = None, *, segments: int = 16,
         seglen: Optional[int] = None, inner: Union[None, int, Sequence[Any]] = None, budget: Optional[int] = None,
         cuts: Optional[Cuts] = None, name: Optional[str] = None) -> Plan: ...
def compile(tape: Tape, engine: Optional[str] = None, *, plan: Optional[Plan] = None,
            strategy: Union[None, str, StrategyFunction, Cuts] = None, segments: Optional[int] = None,
            checkpoint: Union[None, str, int] = None, ckpt_nodes: Optional[int] = None, seglen: Optional[int] = None,
            inner: Optional[int] = None, budget: Optional[int] = None, kernel: Optional[str] = None,
            layout: Optional[str] = None, precision: Optional[str] = None, greeks: bool = True,
            markets: Optional[int] = None, dump: Optional[str] = None, config: Optional[str] = None,
            knobs: Optional[Mapping[str, Any]] = None, inputs: Inputs = None,
            ladder: Optional[Mapping[str, Sequence[float]]] = None) -> Kernel: ...
def tune(tape: Tape, engine: str, *, markets: int = 1, paths: Optional[int] = None, seed: int = 42,
         budget_seconds: float = 300.0, repeats: int = 3, strategies: Optional[Sequence[str]] = None,
         segments: Optional[Sequence[int]] = None, plans: int = 4, compile_only: bool = False, store: bool = True,
         precision: Optional[str] = None, greeks: bool = True, config: Optional[str] = None,
         knobs: Optional[Mapping[str, Any]] = None,
         progress: Optional[Callable[[str], None]] = None) -> Dict[str, Any]: ...
def price(tape: Tape, engine: Optional[str] = None, *, paths: Optional[int] = None, seed: Optional[int] = None,
          inputs: Inputs = None, ladder: Optional[Mapping[str, Sequence[float]]] = None,
          markets: Optional[int] = None, **options: Any) -> Result: ...
