"""The example plugin's agent: peeks at calc.py, patches the sign of add(), runs the tests."""

import json
import subprocess
import sys
from pathlib import Path


def say(**event):
    print(json.dumps(event), flush=True)


job = json.loads(sys.stdin.read())
target = Path(job["cwd"]) / "calc.py"
say(type="call", id="c1", name="Peek", args={"target": "calc.py"})
text = target.read_text()
say(type="result", id="c1", text=text)
say(type="call", id="c2", name="Patch", args={"file": "calc.py", "old": "return a - b", "new": "return a + b"})
target.write_text(text.replace("return a - b", "return a + b"))
say(type="result", id="c2", text="patched")
say(type="call", id="c3", name="Sh", args={"line": "python3 -m unittest -q"})
ran = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=job["cwd"], capture_output=True, text=True)
say(type="result", id="c3", text=ran.stderr[-500:], error=ran.returncode != 0)
say(type="usage", **{"in": 120, "out": 30})
say(type="answer", text="Fixed add(); the tests pass." if ran.returncode == 0 else "The tests still fail.")
