"""Print the last greedy eval of every eval/ metric of a benchmark run (benchmarks/out/<name>).

python benchmarks/last_eval.py tmaze_h50_transformer
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common.logs import read_scalars  # noqa: E402

for name in sys.argv[1:]:
    scalars = read_scalars(ROOT / "benchmarks" / "out" / name / "runs" / name)
    for tag in sorted(t for t in scalars if t.startswith("eval/")):
        _, step, value = scalars[tag][-1]
        print(f"{name}  {tag:45s} {value:9.3f}  (env step {step})")
