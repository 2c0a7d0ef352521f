"""pool_work.py - what test_real_programs.py runs for multiprocessing: a
Pool of two forked workers (which end with os._exit) building dicts and
JSON, closed and joined; a deterministic sum on stdout."""
import json
import multiprocessing


def work(n):
    d = {f"k{i}": [i, str(i) * 3] for i in range(n)}
    return len(json.dumps(d))


if __name__ == "__main__":
    pool = multiprocessing.get_context("fork").Pool(2)
    print(sum(pool.map(work, [20000] * 4)))
    pool.close()
    pool.join()
