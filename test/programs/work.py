"""work.py - what test_real_programs.py runs in python3: threads that build
and sort dicts, lists and strings, json and re, then a deterministic
digest of it all on stdout."""
import hashlib
import json
import re
import threading

WORDS = re.compile(r"[a-p]+")


def job(k, out):
    d = {}
    for i in range(20000):
        key = f"k{(i * 7919 + k) % 5003}"
        d.setdefault(key, []).append(i * k)
    text = " ".join(f"{key}:{len(v)}" for key, v in sorted(d.items()))
    doc = json.loads(json.dumps({"k": k, "items": sorted(d)[:200], "text": text}))
    out[k] = hashlib.sha256(doc["text"].encode()).hexdigest()[:16], len(WORDS.findall(text))


def main():
    out = {}
    threads = [threading.Thread(target=job, args=(k, out)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    big = [str(i) * (i % 13) for i in range(50000)]
    big.sort(key=lambda s: (len(s), s))
    print(sorted(out.items()), len(big), big[-1][:20])


main()
