#!/bin/bash
# The whole fixed program (so it also holds where the environment's files are absent).
cat > total.py <<'PY'
print(sum(range(1, 11)))
PY
echo "fixed by $FIXED_BY"
