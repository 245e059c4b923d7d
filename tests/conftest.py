import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

# Property tests judge behaviour, not speed: on a loaded 2-core machine a draw can take longer
# than hypothesis's health check allows, which says nothing about the code under test.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("benchtape", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("benchtape")
