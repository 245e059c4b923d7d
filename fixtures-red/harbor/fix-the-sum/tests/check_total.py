import subprocess
import sys

script, expected = sys.argv[1], sys.argv[2]
try:
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=20).stdout.strip()
except OSError:
    out = ""
print(1 if out == expected else 0)
