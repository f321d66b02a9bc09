#!/usr/bin/env python3
"""The marketplace search benchmark (issue 45): for each backend and job count, a database
filled by `jobs_gen` (seeded: the same jobs every run), careers-api started on it (pinned to
core 0), and `search_bench` (core 1) answering the same searches with the bare engine in its own
process and through careers-api over HTTP, interleaved. Prints a markdown table: per size, the
mix's median and p99 on each side, careers-api's speed relative to the bare engine's, and the
rare word's medians (a word in under 1 % of the jobs).

    python3 crates/bench/search.py                                 # 10k, 20k, 100k, 1M; both
    python3 crates/bench/search.py --sizes 20000 --backends sqlite --rounds 5      # quick

The databases are kept in `target/bench-search` (SQLite files) and in PostgreSQL schemas
`careers_search_<size>` and reused by later runs; `--fresh` makes them again. Release builds of
careers-api, jobs_gen and search_bench come from `--target-dir` (default target/release).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_URL = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
SECRET = "bench-signing-secret-of-at-least-32-bytes!"


def psql(sql):
    subprocess.run(["psql", PG_URL, "-qc", sql], check=True, stderr=subprocess.DEVNULL)


def prepare(args, backend, size):
    """The database of `size` jobs: its URL, schema and the service's environment."""
    env = dict(os.environ, APP_ENV="test", JWT_SIGNING_SECRET=SECRET, RUST_LOG="warn", LOG_FORMAT="json")
    env.pop("REDIS_URL", None)
    if backend == "sqlite":
        directory = os.path.join(ROOT, "target", "bench-search")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"jobs-{size}.db")
        url, schema = f"sqlite://{path}", None
        exists = os.path.exists(path) and not args.fresh
        if not exists:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
    else:
        url, schema = PG_URL, f"careers_search_{size}"
        found = subprocess.run(["psql", PG_URL, "-qtAc",
                                f"SELECT 1 FROM information_schema.tables WHERE table_schema = '{schema}' "
                                "AND table_name = 'careers_jobs'"],
                               capture_output=True, text=True, check=True).stdout.strip()
        exists = found == "1" and not args.fresh
        if not exists:
            psql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            psql(f"CREATE SCHEMA {schema}")
        env["DATABASE_SCHEMA"] = schema
    env["DATABASE_URL"] = url
    binary = os.path.join(args.target_dir, "careers-api")
    subprocess.run([binary, "migrate"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not exists:
        started = time.time()
        command = [os.path.join(args.target_dir, "jobs_gen"), "--database-url", url, "--jobs", str(size),
                   "--seed", "7"] + (["--schema", schema] if schema else [])
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        print(f"  {backend} {size}: generated in {time.time() - started:.0f} s", file=sys.stderr)
    return url, schema, env


def measure(args, backend, size):
    url, schema, env = prepare(args, backend, size)
    port = 3900 + (size % 97)
    env["BIND_ADDR"] = f"127.0.0.1:{port}"
    server = subprocess.Popen(["taskset", "-c", "0", os.path.join(args.target_dir, "careers-api"), "serve"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=1)
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("careers-api did not start")
                time.sleep(0.1)
        command = ["taskset", "-c", "1", os.path.join(args.target_dir, "search_bench"), "--database-url", url,
                   "--addr", f"127.0.0.1:{port}", "--rounds", str(args.rounds)] + \
                  (["--schema", schema] if schema else [])
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    finally:
        server.terminate()
        server.wait()
    for search in result["searches"]:
        if search["matches"] != search["bare_matches"]:
            print(f"  note: {backend} {size} {search['name']}: careers-api {search['matches']}, "
                  f"bare engine {search['bare_matches']} matches", file=sys.stderr)
    return result


def host():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,20000,100000,1000000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fresh", action="store_true", help="generate the databases again")
    parser.add_argument("--target-dir", default=os.path.join(ROOT, "target", "release"))
    parser.add_argument("--out", help="also write the JSON results to this file")
    args = parser.parse_args()
    results = {}
    for backend in args.backends.split(","):
        for size in [int(s) for s in args.sizes.split(",")]:
            print(f"{backend} {size}...", file=sys.stderr)
            results[f"{backend} {size}"] = measure(args, backend, size)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out, indent=1)
    print(f"Host: {host()}; {args.rounds} rounds of the mix (8 searches) and the rare word (2).\n")
    print("| backend | jobs | mix bare p50 / p99 ms | mix careers-api p50 / p99 ms | speed vs bare | "
          "rare word bare / careers-api p50 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, result in results.items():
        backend, size = name.split()
        mix, rare = result["mix"], result["rare"]
        ratio = mix["bare"]["p50_ms"] / mix["api"]["p50_ms"]
        print(f"| {backend} | {int(size):,} | {mix['bare']['p50_ms']:.1f} / {mix['bare']['p99_ms']:.1f} | "
              f"{mix['api']['p50_ms']:.1f} / {mix['api']['p99_ms']:.1f} | {ratio:.2f}x | "
              f"{rare['bare']['p50_ms']:.1f} / {rare['api']['p50_ms']:.1f} |")


if __name__ == "__main__":
    main()
