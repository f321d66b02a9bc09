#!/usr/bin/env python3
"""The hiring pipeline's benchmarks (issue 46), beside run.py's tools.

`list`: the employer's application list over 100,000 applications of one company (20 jobs ×
5,000 applicants), `?careers_job_id=&status=active`, against the list of a build from before
the pipeline (`--baseline-dir`, its `?careers_job_id=` list: "today's list" when the issue was
filed), interleaved in slices as run.py measures, with the response cache off (every request
runs its statement) and on (the kept page). The rows are written by SQL straight into each
build's own freshly migrated database.

`webhooks`: 1,000 events for 10 endpoints of one company, one of which hangs (never answers):
the time until the nine others have received every event (target: 30 s), and the p99 of
`GET /identities/user/{id}` during the deliveries against its idle p99 (target: within 2×),
with the server's CPU by scheduling class (the API's normal class, the worker's idle class);
then 2,000 events delivered in turns with the company suspended and not, the reads' p99
compared slice by slice (interleaved, so that a noisy host's jitter falls on both sides).

    python3 crates/bench/pipeline.py list --baseline-dir /work/basetarget/release
    python3 crates/bench/pipeline.py webhooks
    python3 crates/bench/pipeline.py list --smoke --target-dir target/debug   # CI-sized

Pairs: sqlite-memory (the default) and postgres-redis.
"""

import argparse
import http.server
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (run.py's helpers: Pair, http, login, load, measure...)

EMPLOYER = ("employer@acme.example", "employer-password-1")


def sql_runner(pair):
    """A function running SQL statements on the pair's database."""
    if pair.sqlite_file:
        def run(statements):
            db = sqlite3.connect(pair.sqlite_file)
            for sql in statements:
                db.execute(sql)
            db.commit()
            db.close()
        return run

    def run(statements):
        script = f"SET search_path TO {pair.schema};\n" + ";\n".join(statements) + ";\n"
        subprocess.run(["psql", bench.PG_URL, "-qv", "ON_ERROR_STOP=1"], input=script, text=True,
                       check=True, stdout=subprocess.DEVNULL)
    return run


def columns(pair, table):
    if pair.sqlite_file:
        db = sqlite3.connect(pair.sqlite_file)
        names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        db.close()
        return names
    out = subprocess.run(["psql", bench.PG_URL, "-qAtc",
                          f"SELECT column_name FROM information_schema.columns WHERE "
                          f"table_schema = '{pair.schema}' AND table_name = '{table}' AND is_generated = 'NEVER' "
                          f"ORDER BY ordinal_position"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def numbers(n):
    return f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})"


def copy_rows(pair, table, template_where, n, overrides):
    """`n` copies of `table`'s row matching `template_where`, `overrides` giving some columns an
    expression of `n.i` (1..n); the id is left to the database."""
    names = [c for c in columns(pair, table) if c != "id"]
    values = [overrides.get(c, c) for c in names]
    return (f"INSERT INTO {table} ({', '.join(names)}) {numbers(n)} "
            f"SELECT {', '.join(values)} FROM {table}, n WHERE {template_where}")


def fill(pair, jobs, applicants):
    """`jobs` more jobs of Acme (the demo employer's company) and `applicants` users with a talent
    profile, each applying to every one of those jobs (most `active`, every tenth `rejected`
    where the build has the pipeline)."""
    run = sql_runner(pair)
    pipeline = "lock_version" in columns(pair, "careers_job_applications")
    concat = "||"
    statements = [
        copy_rows(pair, "identities_users", "identities_users.email = 'candidate@example.com'",
                  applicants, {"email": f"'bench' {concat} n.i {concat} '@bench.example'"}),
        "INSERT INTO careers_user_profiles (identities_user_id, headline, created_at, updated_at) "
        "SELECT u.id, 'Bench', u.created_at, u.created_at FROM identities_users u "
        "WHERE u.email LIKE 'bench%@bench.example'",
        copy_rows(pair, "careers_jobs",
                  "careers_jobs.id = (SELECT MIN(j.id) FROM careers_jobs j WHERE j.company_id = "
                  "(SELECT p.company_id FROM org_user_profiles p JOIN identities_users u ON "
                  "u.id = p.identities_user_id WHERE u.email = 'employer@acme.example'))",
                  jobs, {"title": f"'Bench job ' {concat} n.i"}),
    ]
    if pipeline:
        statements.append(
            "INSERT INTO careers_job_stages (careers_job_id, name, position, created_at, updated_at) "
            "SELECT j.id, 'Applied', 1, j.created_at, j.created_at FROM careers_jobs j "
            "WHERE j.title LIKE 'Bench job %'")
        extra_cols = ", careers_job_stage_id, rejection_reason, status_changed_at, lock_version"
        status = ("CASE WHEN p.id % 10 = 0 THEN 'rejected' ELSE 'active' END")
        extra_vals = (", (SELECT s.id FROM careers_job_stages s WHERE s.careers_job_id = j.id), "
                      "CASE WHEN p.id % 10 = 0 THEN 'not_a_fit' END, j.created_at, 0")
    else:
        extra_cols, extra_vals, status = "", "", "'submitted'"
    statements.append(
        "INSERT INTO careers_job_applications (careers_job_id, company_id, careers_user_profile_id, "
        f"status, cover_letter, created_at, updated_at{extra_cols}) "
        f"SELECT j.id, j.company_id, p.id, {status}, 'Hello', j.created_at, j.created_at{extra_vals} "
        "FROM careers_jobs j, careers_user_profiles p "
        "WHERE j.title LIKE 'Bench job %' AND p.headline = 'Bench'")
    if not pair.sqlite_file:
        statements.append("ANALYZE")
    run(statements)
    # SQLite: the planner's statistics, as a long-running database has them.
    if pair.sqlite_file:
        run(["ANALYZE"])


def serve(binary, pair, cache_mib, log_path, extra_env=None):
    port = bench.free_port()
    env = dict(pair.env, BIND_ADDR=f"127.0.0.1:{port}", RESPONSE_CACHE_MIB=str(cache_mib),
               **(extra_env or {}))
    process = subprocess.Popen(["taskset", "-c", "0", binary, "serve"], env=env,
                               stderr=open(log_path, "w"), stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    bench.wait_ready(base + "/health/ready")
    return process, port, base


def list_bench(args, work):
    new_bin = os.path.join(bench.TARGET, "careers-api")
    base_bin = os.path.join(args.baseline_dir, "careers-api")
    lines = [f"Host: {bench.cpu_model()}; {args.applicants * args.jobs:,} applications "
             f"({args.jobs} jobs × {args.applicants:,} applicants) of one company; "
             f"{args.duration:.0f} s a scenario in {args.slice:.0f} s slices, {args.repeat} repeats.", "",
             "| pair | cache | scenario | req/s | p50 ms | p99 ms | vs before |",
             "|---|---|---|---:|---:|---:|---:|"]
    for pair_name in args.pairs.split(","):
        builds = {}
        for label, binary in (("new", new_bin), ("before", base_bin)):
            pair = bench.Pair(pair_name, work, label)
            subprocess.run([binary, "seed", "--demo"], env=dict(pair.env, RUST_LOG="warn"),
                           check=True, stdout=subprocess.DEVNULL)
            started = time.time()
            fill(pair, args.jobs, args.applicants)
            print(f"{pair_name} {label}: filled in {time.time() - started:.1f} s", file=sys.stderr)
            builds[label] = (binary, pair)
        for cache in (0, 16):
            servers = {}
            for label, (binary, pair) in builds.items():
                process, port, base = serve(binary, pair, cache, os.path.join(work, f"{label}.log"))
                jar = bench.login(base, *EMPLOYER)
                servers[label] = (process, port, base, jar)
            _, _, base, jar = servers["new"]
            cookie = "jwt_access=" + jar["jwt_access"]
            _, _, jobs = bench.http("GET", base + "/org-user/careers/jobs?per_page=100", cookie=cookie)
            job_id = max(j["id"] for j in jobs["careers_jobs"] if j["title"].startswith("Bench job"))
            paths = {
                "new ?careers_job_id=&status=active": ("new", f"/org-user/careers/job_applications?careers_job_id={job_id}&status=active&per_page=25"),
                "new ?careers_job_id=": ("new", f"/org-user/careers/job_applications?careers_job_id={job_id}&per_page=25"),
                "before ?careers_job_id=": ("before", f"/org-user/careers/job_applications?careers_job_id={job_id}&per_page=25"),
            }
            runs = []
            for scenario, (label, path) in paths.items():
                process, port, base, jar = servers[label]
                status, _, body = bench.http("GET", base + path, cookie="jwt_access=" + jar["jwt_access"])
                assert status == 200 and len(body["careers_job_applications"]) == 25, (scenario, status)
                assert body["meta"]["total"] >= args.applicants * 0.9, body["meta"]
                runs.append((scenario, process.pid, port,
                             dict(path=path, connections=args.connections,
                                  headers=[f"Cookie: jwt_access={jar['jwt_access']}"])))
            repeats = [bench.measure_interleaved(runs, args.duration, args.slice)
                       for _ in range(args.repeat)]
            for scenario in paths:
                rps = statistics.median(r[scenario]["rps"] for r in repeats)
                ratio = statistics.median(r[scenario]["rps"] / r["before ?careers_job_id="]["rps"]
                                          for r in repeats)
                p50 = statistics.median(r[scenario]["p50_ms"] for r in repeats)
                p99 = statistics.median(r[scenario]["p99_ms"] for r in repeats)
                lines.append(f"| {pair_name} | {'on' if cache else 'off'} | {scenario} | {rps:,.0f} | "
                             f"{p50:.2f} | {p99:.2f} | {ratio:.2f}× |")
            for process, *_ in servers.values():
                process.terminate()
                process.wait()
        for _, pair in builds.values():
            pair.cleanup()
    return "\n".join(lines)


class Receiver:
    """An HTTP receiver on a port of its own, counting the `webhook-id`s it got; `hang` never
    answers (it holds the connection until the benchmark ends)."""

    def __init__(self, hang=False):
        self.ids = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # Keep-alive, as a receiver elsewhere would: a new connection per delivery costs
            # both sides (and the receivers share the load generator's core).
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                self.rfile.read(length)
                if hang:
                    receiver.stop.wait()
                    return
                with receiver.lock:
                    receiver.ids.add(self.headers["webhook-id"])
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self):
        with self.lock:
            return len(self.ids)

    def close(self):
        self.stop.set()
        self.server.shutdown()


SCHED_IDLE = 5


def cpu_by_class(pid):
    """The server's CPU seconds so far, (normal class, idle class): the process's user + system
    time, and the part of it spent by its live threads in the idle scheduling class (the webhook
    worker, its connections and the password hashers)."""
    tick = os.sysconf("SC_CLK_TCK")

    def seconds(stat_path):
        # The fields after the command name: state is 0, utime 11, stime 12, policy 38.
        with open(stat_path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick, int(fields[38])

    total, _ = seconds(f"/proc/{pid}/stat")
    idle = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            spent, policy = seconds(f"/proc/{pid}/task/{tid}/stat")
        except OSError:
            continue
        if policy == SCHED_IDLE:
            idle += spent
    return total - idle, idle


def database_cpu():
    """The CPU seconds so far of the machine's PostgreSQL processes (0 when there are none)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                head, tail = f.read().rsplit(")", 1)
        except OSError:
            continue
        if head.split("(", 1)[1] == "postgres":
            fields = tail.split()
            total += int(fields[11]) + int(fields[12])
    return total / tick


def webhooks_bench(args, work):
    """Two phases on one server. Queued, `--hook-repeat` times: the reads' idle p99 (nothing
    due), then the events' deliveries written by SQL as `webhooks::record` writes them (one row
    per event and endpoint, the same body) while the server runs: the worker takes them at its
    next poll, and the reads run from the moment of the insert. Live: the events come from the
    API (a job opened and closed in turn, one event for each endpoint a change) while the reads
    run."""
    binary = os.path.join(bench.TARGET, "careers-api")
    lines = [f"Host: {bench.cpu_model()}; {args.events:,} events for {args.endpoints} endpoints, "
             "one of which never answers; reads: `GET /identities/user/{id}` at 500/s on 4 "
             f"connections, their p99 over the first {args.read_window:.0f} s of the delivery "
             f"against {args.idle_window:.0f} s idle just before it; queued {args.hook_repeat} times.",
             "",
             "The CPU columns are in ms a second: the server's normal class (the API) idle "
             "and during, its idle class (the worker) during, PostgreSQL's processes idle / "
             "during, and the benchmark's receivers during (they share the machine's cores).", "",
             "| pair | phase | nine endpoints had every event after | idle p99 | p99 during | ratio "
             "| normal CPU idle | during | idle-class CPU during | PostgreSQL CPU | receivers' CPU |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for pair_name in args.pairs.split(","):
        pair = bench.Pair(pair_name, work, "hooks")
        pair.env["WEBHOOK_ALLOW_PRIVATE"] = "on"
        run_sql = sql_runner(pair)
        subprocess.run([binary, "seed", "--demo"], env=dict(pair.env, RUST_LOG="warn"), check=True,
                       stdout=subprocess.DEVNULL)
        process, port, base = serve(binary, pair, 16, os.path.join(work, "hooks.log"))
        jar = bench.login(base, *EMPLOYER)
        cookie, csrf = "jwt_access=" + jar["jwt_access"], jar["CSRF_TOKEN"]
        receivers = [Receiver(hang=(i == 0)) for i in range(args.endpoints)]
        for receiver in receivers:
            status, _, body = bench.http("POST", base + "/org/webhook_endpoints", {
                "url": f"http://127.0.0.1:{receiver.port}/hook",
                "events": ["careers_job.status_changed"]}, cookie, csrf)
            assert status == 201, body
        _, _, me = bench.http("GET", base + "/org/user-profiles/current", cookie=cookie)
        user_path = f"/identities/user/{me['identities_user']['id']}"
        read = dict(path=user_path, connections=4, rate=500,
                    headers=[f"Cookie: jwt_access={jar['jwt_access']}"])
        _, _, jobs = bench.http("GET", base + "/org-user/careers/jobs?status=open", cookie=cookie)
        job_id = jobs["careers_jobs"][0]["id"]
        body = json.dumps({"type": "careers_job.status_changed", "timestamp": "2026-11-28T00:00:00Z",
                           "data": jobs["careers_jobs"][0]})
        now = "CURRENT_TIMESTAMP" if not pair.sqlite_file else "strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')"
        payload = body.replace("'", "''")

        def wait_delivered(started, target):
            while time.time() - started < args.window:
                if all(r.count() >= target for r in receivers[1:]):
                    return time.time() - started
                time.sleep(0.05)
            return None

        def queue(events, prefix):
            """`events` events for every endpoint, written as `webhooks::record` writes them."""
            return (f"INSERT INTO org_webhook_deliveries (org_webhook_endpoint_id, event_type, "
                    f"message_id, payload, status, attempts, next_attempt_at, created_at, "
                    f"updated_at) {numbers(events)} SELECT e.id, 'careers_job.status_changed', "
                    f"'{prefix}' || n.i, '{payload}', 'pending', 0, {now}, {now}, {now} "
                    f"FROM org_webhook_endpoints e, n")

        ratios = []

        def row(phase, done, idle, during, cpu, note=""):
            counts = min(r.count() for r in receivers[1:])
            done_text = (f"{done:.1f} s{note}" if done is not None
                         else f"not within {args.window:.0f} s ({counts:,} delivered)")
            ratio = during["p99_ms"] / idle["p99_ms"]
            lines.append(f"| {pair_name} | {phase} | {done_text} | {idle['p99_ms']:.2f} ms | "
                         f"{during['p99_ms']:.2f} ms | {ratio:.2f}× | {cpu[0]:.0f} | {cpu[1]:.0f} | "
                         f"{cpu[2]:.0f} | {cpu[3]:.0f} / {cpu[4]:.0f} | {cpu[5]:.0f} |")
            return ratio

        def mark():
            # The benchmark's own process: its threads are the receivers (and the fill's and
            # the changes' clients, idle while the reads are measured).
            own = os.times()
            return (*cpu_by_class(process.pid), database_cpu(), own.user + own.system), time.time()

        def cpu_since(marked):
            """The server's CPU since `marked`, ms a second by class."""
            (before, at), (after, now_) = marked, mark()
            return [(a - b) / (now_ - at) * 1000 for a, b in zip(after, before)]

        def idle_reads():
            marked = mark()
            idle = bench.measure(process.pid, port, args.idle_window, **read)
            return idle, cpu_since(marked)

        def cpu_columns(idle_cpu, marked):
            """Normal class idle and during, idle class during, PostgreSQL idle and during."""
            spent = cpu_since(marked)
            return [idle_cpu[0], spent[0], spent[1], idle_cpu[2], spent[2], spent[3]]

        for repeat in range(args.hook_repeat):
            already = min(r.count() for r in receivers[1:])
            idle, idle_cpu = idle_reads()
            marked = mark()
            run_sql([queue(args.events, f"msg_bench_{repeat}_")])
            started = time.time()
            loaded = bench.load(port, duration=args.read_window, warmup=0.2, **read)
            out, _ = loaded.communicate()
            cpu = cpu_columns(idle_cpu, marked)
            done = wait_delivered(started, already + args.events)
            ratios.append(row(f"queued {repeat + 1}", done, idle, json.loads(out), cpu))
        if len(ratios) > 1:
            lines.append(f"| {pair_name} | queued, median | | | | {statistics.median(ratios):.2f}× | | | | | |")

        # Interleaved: a larger queue paused and resumed in turn by suspending the company (the
        # worker leaves a suspended company's deliveries waiting), the reads measured in each
        # slice, so that the host's own jitter falls on both sides alike.
        if args.slices:
            company = "(SELECT company_id FROM org_webhook_endpoints LIMIT 1)"
            run_sql([f"UPDATE org_companies SET suspended_at = {now} WHERE id = {company}",
                     queue(args.slice_events, "msg_slices_")])
            p99 = {"paused": [], "delivering": []}
            spent = {"paused": [], "delivering": []}
            for turn in range(args.slices):
                order = ("paused", "delivering") if turn % 2 == 0 else ("delivering", "paused")
                for state in order:
                    value = now if state == "paused" else "NULL"
                    run_sql([f"UPDATE org_companies SET suspended_at = {value} WHERE id = {company}"])
                    # The worker's next round (at most a second) sees it; tries under way end.
                    time.sleep(1.2)
                    marked = mark()
                    p99[state].append(bench.measure(process.pid, port, args.slice, **read)["p99_ms"])
                    spent[state].append(cpu_since(marked))
            run_sql([f"UPDATE org_companies SET suspended_at = NULL WHERE id = {company}"])
            paused, delivering = (statistics.median(p99[k]) for k in ("paused", "delivering"))
            ratio = statistics.median(d / p for d, p in zip(p99["delivering"], p99["paused"]))
            cpu = {k: [statistics.median(c) for c in zip(*spent[k])] for k in spent}
            lines.append(f"| {pair_name} | interleaved, {args.slices} × {args.slice:.0f} s each way "
                         f"(medians) | | {paused:.2f} ms | {delivering:.2f} ms | {ratio:.2f}× | "
                         f"{cpu['paused'][0]:.0f} | {cpu['delivering'][0]:.0f} | "
                         f"{cpu['delivering'][1]:.0f} | {cpu['paused'][2]:.0f} / "
                         f"{cpu['delivering'][2]:.0f} | {cpu['delivering'][3]:.0f} |")

        # Live.
        already = min(r.count() for r in receivers[1:])
        idle, idle_cpu = idle_reads()
        marked = mark()
        started = time.time()
        loaded = bench.load(port, duration=args.read_window, warmup=0.5, **read)
        for i in range(args.events):
            status = "closed" if i % 2 == 0 else "open"
            code, _, answer = bench.http("PATCH", base + f"/org-user/careers/jobs/{job_id}",
                                         {"status": status}, cookie, csrf)
            assert code == 200, answer
        queued = time.time() - started
        out, _ = loaded.communicate()
        cpu = cpu_columns(idle_cpu, marked)
        done = wait_delivered(started, already + args.events)
        row("live", done, idle, json.loads(out), cpu, f" (the API's changes took {queued:.1f} s)")
        for receiver in receivers:
            receiver.close()
        process.terminate()
        process.wait()
        pair.cleanup()
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["list", "webhooks"])
    parser.add_argument("--pairs", default="sqlite-memory,postgres-redis")
    parser.add_argument("--baseline-dir", help="the release directory of a build from before the pipeline")
    parser.add_argument("--target-dir", help="the build under test (default target/release)")
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--applicants", type=int, default=5000)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--slice", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--endpoints", type=int, default=10)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--read-window", type=float, default=8.0,
                        help="seconds of reads measured from the start of the deliveries")
    parser.add_argument("--idle-window", type=float, default=5.0,
                        help="seconds of idle reads measured before each delivery")
    parser.add_argument("--hook-repeat", type=int, default=3,
                        help="how many times the queued deliveries are measured")
    parser.add_argument("--slices", type=int, default=8,
                        help="interleaved turns of paused and resumed deliveries (0: none)")
    parser.add_argument("--slice-events", type=int, default=2000,
                        help="events queued for the interleaved turns")
    parser.add_argument("--smoke", action="store_true", help="CI-sized: small data, short runs")
    parser.add_argument("--out", help="also write the table to this markdown file")
    args = parser.parse_args()
    if args.target_dir:
        bench.TARGET = os.path.abspath(args.target_dir)
    if args.smoke:
        args.jobs, args.applicants, args.duration, args.repeat = 2, 50, 1.0, 1
        args.events, args.window, args.hook_repeat = 20, 30.0, 1
        args.read_window, args.idle_window, args.slices, args.slice_events = 2.0, 1.0, 1, 20
    with tempfile.TemporaryDirectory() as work:
        if args.what == "list":
            if not args.baseline_dir:
                raise SystemExit("list needs --baseline-dir")
            table = list_bench(args, work)
        else:
            table = webhooks_bench(args, work)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
