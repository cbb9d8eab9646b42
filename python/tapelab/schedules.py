"""Interop with checkpoint_schedules (PyPI): its schedules as tapelab plans over a tape's time steps, and
tapelab's plans as its schedules.

    import checkpoint_schedules as cs, tapelab
    from tapelab.schedules import from_schedule, to_schedule, write_schedule
    tape = tapelab.product("barrier", steps=50)
    plan = from_schedule(tape, cs.Revolve(50, 6))            # Multistage, HRevolve, Mixed, ...: any schedule
    tapelab.price(tape, engine="cpu-jit", plan=plan)         # the plain kernel's bits
    sched = to_schedule(tapelab.plan(tape, "revolve", segments=6))   # a checkpoint_schedules.CheckpointSchedule
    write_schedule(cs.Revolve(50, 6), "revolve.json")        # `tapelab plan --from-schedule revolve.json`

A tape's time steps are planner/nested.h's stepStarts (one step per run of draws); a schedule fits a tape
with as many steps. The conversion (planner/schedules.h) is tapelab's own, shared with the CLI's
--from-schedule and --to-schedule: each state the schedule stores is a bookmark, the states its forward
sweep stores are the top-level cuts, a state stored while advancing from bookmark p cuts p's segment, and
the ranges reversed from p without storing a state are a leaf or a chain. A schedule file is JSON:
{"format": "tapelab-schedule 1", "steps": N, "actions": [repr(action), ...]}.

Errors are ValueError with one line ("tapelab: FILE: actions[K]: why"), as the CLI's exit 2.
"""
import json
import re

from . import _tapelab as _core

__all__ = ["SCHEDULE_FORMAT", "TapelabSchedule", "actions_of", "from_schedule", "read_schedule", "schedule_text",
           "step_evaluations", "to_schedule", "write_schedule"]

SCHEDULE_FORMAT = "tapelab-schedule 1"
MAX_ACTIONS = 1 << 22  # a schedule that never ends (checkpoint_schedules' online ones) stops here with an error


def _cs():
    try:
        import checkpoint_schedules
    except ImportError:
        raise ImportError("tapelab.schedules needs the checkpoint_schedules package "
                          "(/usr/bin/python3 -m pip install checkpoint_schedules; scripts/setup.sh installs it)") from None
    return checkpoint_schedules


def _invalid(message):
    return ValueError("tapelab: " + message)


def actions_of(schedule, label="schedule"):
    """The actions of a checkpoint_schedules schedule (a CheckpointSchedule, or any iterable of its actions)
    up to and including EndReverse, as their text (repr)."""
    cs = _cs()
    if isinstance(schedule, cs.CheckpointSchedule) and schedule.max_n is None:
        raise _invalid(f"{label}: the schedule has no step count (max_n): give it one, or finalize() it")
    out = []
    for action in schedule:
        if not isinstance(action, cs.CheckpointAction):
            raise _invalid(f"{label}: actions[{len(out)}]: not a checkpoint_schedules action: {type(action).__name__}")
        out.append(repr(action))
        if isinstance(action, cs.EndReverse):
            return out
        if len(out) >= MAX_ACTIONS:
            break
    raise _invalid(f"{label}: actions: no EndReverse within {len(out)} actions")


def _steps(schedule, actions):
    n = getattr(schedule, "max_n", None)
    if n is None:  # an iterable of actions: the forward sweep's end
        ends = [int(m.group(1)) for a in actions for m in [re.match(r"Forward\(\d+, (\d+),", a)] if m]
        n = max(ends, default=0)
    return int(n)


def schedule_text(schedule, label="schedule"):
    """A schedule file's text for a checkpoint_schedules schedule (its actions' repr, in order)."""
    actions = actions_of(schedule, label)
    return json.dumps({"format": SCHEDULE_FORMAT, "steps": _steps(schedule, actions), "actions": actions}, indent=1)


def from_schedule(tape, schedule, name="schedule"):
    """The plan that runs `schedule` on `tape`: a checkpoint_schedules schedule (Revolve(steps, snapshots),
    MultistageCheckpointSchedule, HRevolve, MixedCheckpointSchedule, ...), a list of its actions, or the path
    of a schedule file. `name` labels the plan."""
    if isinstance(schedule, str):
        label = schedule
        try:
            with open(schedule, encoding="utf-8") as f:
                text = f.read(64 << 20)
        except OSError as e:
            raise _invalid(f"{schedule}: (file): {e.strerror or e}") from None
    else:
        label = f"schedule {type(schedule).__name__}"
        text = schedule_text(schedule, label)
    return _core._plan_from_schedule(tape, text, label, name)


def to_schedule(plan):
    """`plan` (a segment plan cutting at the tape's step starts) as a checkpoint_schedules schedule: the actions
    tapelab's kernel runs (planner/schedules.h, "Export")."""
    return TapelabSchedule.from_text(_core._schedule_text(plan))


def step_evaluations(plan):
    """The time steps tapelab's reverse sweep evaluates for `plan` (its schedule's Forward steps after
    EndForward: every advance, and the recompute before each step's adjoint): the count Revolve minimises."""
    cs = _cs()
    count, reversing = 0, False
    for action in to_schedule(plan):
        if isinstance(action, cs.EndForward):
            reversing = True
        elif reversing and isinstance(action, cs.Forward):
            count += len(action)
    return count


def write_schedule(schedule, path):
    """Writes a schedule file (a checkpoint_schedules schedule's, or a tapelab Plan's) for --from-schedule, through
    tapelab's careful writer (a temporary file renamed onto `path`; never onto a special file)."""
    text = _core._schedule_text(schedule) if isinstance(schedule, _core.Plan) else schedule_text(schedule) + "\n"
    _core._write_output(path, text, "write_schedule")


_ACTION = re.compile(r"^(Forward|Reverse|Copy|Move|EndForward|EndReverse)\((.*)\)$")


def _action(text):
    cs = _cs()
    m = _ACTION.match(text)
    if not m:
        raise _invalid(f"schedule: not an action: {text[:60]!r}")
    args = []
    for a in filter(None, (x.strip() for x in m.group(2).split(","))):
        if a in ("True", "False"):
            args.append(a == "True")
        elif a.startswith("StorageType."):
            args.append(getattr(cs.StorageType, a.split(".", 1)[1]))
        else:
            args.append(int(a))
    return getattr(cs, m.group(1))(*args)


def read_schedule(path):
    """A schedule file as a checkpoint_schedules schedule (TapelabSchedule)."""
    with open(path, encoding="utf-8") as f:
        return TapelabSchedule.from_text(f.read(64 << 20))


def _schedule_class():
    cs = _cs()

    class _Schedule(cs.CheckpointSchedule):
        """A checkpoint_schedules schedule replaying a fixed list of actions (a tapelab plan's, or a file's)."""

        def __init__(self, steps, actions):
            super().__init__(steps)
            self._actions = [_action(a) for a in actions]
            self._done = False

        @classmethod
        def from_text(cls, text):
            j = json.loads(text)
            if j.get("format") != SCHEDULE_FORMAT:
                raise _invalid(f"schedule: format: expected {SCHEDULE_FORMAT!r}")
            return cls(int(j["steps"]), j["actions"])

        def _iterator(self):
            for a in self._actions:
                if isinstance(a, cs.Forward):
                    self._n = a.n1
                elif isinstance(a, cs.Reverse):
                    self._r += len(a)
                yield a
            self._done = True

        @property
        def is_exhausted(self):
            return self._done

        def uses_storage_type(self, storage_type):
            return storage_type == cs.StorageType.RAM

    return _Schedule


class _Lazy(type):
    """TapelabSchedule is made when first used, so `import tapelab` does not need checkpoint_schedules."""

    def __getattr__(cls, name):
        return getattr(_schedule_class_cached(), name)

    def __call__(cls, *args, **kwargs):
        return _schedule_class_cached()(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _schedule_class_cached())


_cached = []


def _schedule_class_cached():
    if not _cached:
        _cached.append(_schedule_class())
    return _cached[0]


class TapelabSchedule(metaclass=_Lazy):
    """A checkpoint_schedules.CheckpointSchedule replaying a schedule file's actions:
    TapelabSchedule.from_text(text), or TapelabSchedule(steps, [repr(action), ...])."""
