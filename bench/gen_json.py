#!/usr/bin/env python3
"""bench/gen_json.py: writes the JSON input for the jsoncpp workload.

A deterministic document of nested objects and arrays with short keys and
strings (a few MB by default), so that jsontestrunner's parse / print /
rewrite / re-parse makes millions of small allocations (Json::Value nodes,
std::map nodes, std::string paths).

Usage: gen_json.py OUT.json [--items 2500] [--seed 1]
"""
import argparse
import json
import random


def value(rng, depth):
    k = rng.random()
    if depth > 4 or k < 0.3:
        return rng.choice([rng.randint(-10**6, 10**6), rng.random() * 1000,
                           "s%d" % rng.randint(0, 10**5), True, None])
    if k < 0.65:
        return [value(rng, depth + 1) for _ in range(rng.randint(1, 6))]
    return {"k%d" % rng.randint(0, 50): value(rng, depth + 1)
            for _ in range(rng.randint(1, 6))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--items", type=int, default=2500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    doc = [value(rng, 0) for _ in range(args.items)]
    with open(args.out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
