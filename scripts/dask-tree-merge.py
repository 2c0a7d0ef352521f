#!/usr/bin/python3
"""dask-tree-merge.py - merge many profiles as a tree on a Dask cluster.

    dask-tree-merge.py [options] -o OUT PROFILE... [-- MERGE-FLAG...]

Splits the input profiles into shards; each shard is one Dask task that
runs `memprof-profdata merge` on it into a temporary file, and the partial
results are merged again, FAN_IN at a time, until one file is left, which
becomes OUT by rename.  memprof-profdata's merge gives the same bytes for
any order and grouping of its inputs, so OUT is the file one
`memprof-profdata merge PROFILE... -o OUT` writes.

Without --scheduler the job runs on a LocalCluster of --workers worker
processes on this machine; with --scheduler ADDRESS on a running cluster
(`dask-scheduler`, and `dask-worker ADDRESS` on each machine).  Every
worker runs the tool (--tool, same path everywhere).  By default the tasks
pass file paths: inputs, the profiled binaries and the work folder (next
to OUT) must have the same paths on every worker, as on a shared
filesystem.  --ship-bytes reads inputs and binaries here and moves their
bytes through Dask instead; each task then works in a local temporary
folder.  Flags after `--` go to every merge (e.g. --memprof-version=4).

A failing merge (a damaged or missing input) stops the job with the tool's
message, which names the input, on stderr and exit status 1; OUT is then
neither created nor changed.  Needs Debian's python3-distributed.
"""
import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="dask-tree-merge.py",
        description="Merge profiles as a tree with memprof-profdata on Dask.")
    p.add_argument("inputs", nargs="+", metavar="PROFILE")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--profiled-binary", action="append", default=[],
                   help="passed to the merges of raw profiles (repeatable)")
    p.add_argument("--tool", default=shutil.which("memprof-profdata") or "memprof-profdata",
                   help="memprof-profdata on the workers")
    p.add_argument("--scheduler", help="address of a running Dask scheduler")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes of the local cluster (default 2)")
    p.add_argument("--shard-size", type=int, default=32,
                   help="input profiles per leaf merge (default 32)")
    p.add_argument("--fan-in", type=int, default=8,
                   help="partial results per inner merge (default 8)")
    p.add_argument("--ship-bytes", action="store_true",
                   help="move file contents through Dask (no shared filesystem)")
    flags = []
    if "--" in argv:
        cut = argv.index("--")
        argv, flags = argv[:cut], argv[cut + 1:]
    args = p.parse_args(argv)
    args.merge_flags = flags
    if os.sep in args.tool:  # a path, relative to here: the workers' may differ
        args.tool = os.path.abspath(args.tool)
    if args.shard_size < 1 or args.fan_in < 2 or args.workers < 1:
        p.error("--shard-size must be >= 1, --fan-in >= 2, --workers >= 1")
    return args


# ---- the tasks (run on the workers) ---------------------------------------

def run_merge(tool, inputs, binaries, flags, out):
    """memprof-profdata merge INPUTS into OUT; RuntimeError with the tool's
    message if it fails."""
    cmd = [tool, "merge", *inputs, *[f"--profiled-binary={b}" for b in binaries],
           *flags, "-o", out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or f"{tool} merge exited {r.returncode}")


def merge_paths(tool, inputs, binaries, flags, out):
    """A task on a shared filesystem: merge the files INPUTS into OUT."""
    run_merge(tool, inputs, binaries, flags, out)
    return out


def merge_bytes(tool, names, datas, binaries, flags):
    """A task without a shared filesystem: the inputs' names and contents,
    and the binaries as (name, bytes) pairs; returns the merged file's
    bytes.  The tool's message names the inputs, not the local copies."""
    with tempfile.TemporaryDirectory(prefix="dask-tree-merge-") as tmp:
        placed = []
        for i, (name, data) in enumerate(list(binaries) + list(zip(names, datas))):
            os.mkdir(os.path.join(tmp, str(i)))
            path = os.path.join(tmp, str(i), os.path.basename(name))
            with open(path, "wb") as f:
                f.write(data)
            placed.append((path, name))
        paths = [path for path, _ in placed]
        out = os.path.join(tmp, "merged.memprofdata")
        try:
            run_merge(tool, paths[len(binaries):], paths[:len(binaries)], flags, out)
        except RuntimeError as e:
            msg = str(e)
            for path, name in placed:
                msg = msg.replace(path, name)
            raise RuntimeError(msg) from None
        with open(out, "rb") as f:
            return f.read()


# ---- the tree (built on the client) ---------------------------------------

def chunks(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


def build_tree(leaves, fan_in, merge):
    """Merge the futures `leaves` FAN_IN at a time, level by level, with
    merge(futures, name) -> future; returns the root's future."""
    level, depth = leaves, 0
    while len(level) > 1:
        depth += 1
        level = [merge(group, f"inner-{depth}-{i}") if len(group) > 1 else group[0]
                 for i, group in enumerate(chunks(level, fan_in))]
    return level[0]


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def submit_by_bytes(client, args, token):
    """The tree with file contents moved through Dask: the root's future
    gives the merged bytes."""
    binaries = client.scatter([(b, read_file(b)) for b in args.profiled_binary],
                              broadcast=True)

    def submit(names, datas, binaries, name):
        return client.submit(merge_bytes, args.tool, names, datas, binaries,
                             args.merge_flags, key=f"{name}-{token}", pure=False)
    leaves = [submit(shard, client.scatter([read_file(p) for p in shard]), binaries,
                     f"leaf-{i}")
              for i, shard in enumerate(chunks(args.inputs, args.shard_size))]
    return build_tree(leaves, args.fan_in, lambda group, name: submit(
        [f"{name}.{j}.memprofdata" for j in range(len(group))], group, [], name))


def submit_by_path(client, args, token, work):
    """The tree on a shared filesystem: each merge writes a file in WORK;
    the root's future gives its path."""
    def submit(inputs, binaries, name):
        return client.submit(merge_paths, args.tool, inputs, binaries, args.merge_flags,
                             os.path.join(work, name + ".memprofdata"),
                             key=f"{name}-{token}", pure=False)
    binaries = [os.path.abspath(b) for b in args.profiled_binary]
    leaves = [submit([os.path.abspath(p) for p in shard], binaries, f"leaf-{i}")
              for i, shard in enumerate(chunks(args.inputs, args.shard_size))]
    return build_tree(leaves, args.fan_in, lambda group, name: submit(group, [], name))


@contextlib.contextmanager
def connect(args, work):
    """A Client of the scheduler at --scheduler, or of a new LocalCluster
    (closed on exit)."""
    from dask.distributed import Client, LocalCluster
    if args.scheduler:
        with Client(args.scheduler) as client:
            yield client
        return
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, local_directory=work) as cluster, \
            Client(cluster) as client:
        yield client


def check_inputs(args):
    """Name every input or binary that cannot be read before any work."""
    bad = [p for p in args.inputs + args.profiled_binary
           if not os.path.isfile(p) or not os.access(p, os.R_OK)]
    for p in bad:
        print(f"dask-tree-merge: error: {p}: not a readable file", file=sys.stderr)
    return not bad


def tree_merge(args):
    """Run the job; the final file appears at args.output by rename only."""
    out = os.path.abspath(args.output)
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.dask-",
                            dir=os.path.dirname(out))
    token = os.path.basename(work)
    try:
        with connect(args, work) as client:
            root = (submit_by_bytes(client, args, token) if args.ship_bytes
                    else submit_by_path(client, args, token, work))
            # On failure, closing the client releases the other tasks.
            result = root.result()
        if args.ship_bytes:
            path = os.path.join(work, "final.memprofdata")
            with open(path, "wb") as f:
                f.write(result)
            result = path
        os.replace(result, out)
    finally:
        remove_work(work)


def remove_work(work):
    """Remove the work folder.  After a failure, merges already running on
    a cluster's workers may still create files in it while it is being
    removed; once it is gone they cannot (the tool does not create the
    folder of its -o), so remove it until it stays gone."""
    for _ in range(50):
        shutil.rmtree(work, ignore_errors=True)
        if not os.path.exists(work):
            return
        time.sleep(0.2)
    print(f"dask-tree-merge: warning: could not remove {work}", file=sys.stderr)


def main(argv):
    args = parse_args(argv)
    if not check_inputs(args):
        return 1
    try:
        tree_merge(args)
    except Exception as e:  # the tool's message from a task, or Dask's
        print(f"dask-tree-merge: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
