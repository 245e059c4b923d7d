import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

# Property tests judge behaviour, not speed: on a loaded 2-core machine a draw can take longer
# than hypothesis's health check allows, which says nothing about the code under test.
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("benchtape", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("benchtape")

# A suite started in the background of a script (`nohup bash .ci/run &`) inherits SIGINT
# ignored (POSIX: a non-interactive shell's asynchronous commands ignore it), and so does every
# benchtape a test starts: Python keeps an ignored SIGINT ignored, so each test that presses
# Ctrl-C waited out its timeout (eight of them, in one such run). The tests' processes get
# SIGINT as a terminal gives it: a handler here is reset to the default in every child.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which turns the marks into the `@group` the scheduler reads
def pytest_collection_modifyitems(items: list) -> None:
    """Keep a module whose tests share a module-scoped fixture on one worker.

    Under `-n 3 --dist loadgroup` the workers split a module's tests, and each builds the
    module's fixture for itself: a validated real repository or a run of every real agent was
    paid twice (the suite's largest cost). A test that already names its group keeps it."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        if info is not None and any(defs and defs[-1].scope == "module" for defs in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
