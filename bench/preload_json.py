"""bench/preload_json.py: preload.py's python3 workload (run with
PYTHONMALLOC=malloc, so that every object comes from malloc): build a
dict of 120,000 entries, round-trip it through JSON once."""
import json

d = {f"key{i}": {"id": i, "name": f"name{i}", "tags": [i, i * 2, str(i)], "v": i / 3.0}
     for i in range(120000)}
s = json.dumps(d)
d = json.loads(s)
print(len(s), len(d))
