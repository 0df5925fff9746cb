#!/usr/bin/env python3
"""Where contract-proxy's CPU per call goes at 1 item: the work, or waking up cold.

The proxy (`target/release/contract-proxy`) and the relay that only copies bytes
(`peers relay`) each stand before `peers serve plain` over stdio, and this client makes
1-item `search_tickets_page` calls in three ways:

  sequential    one call in flight, the scheduler places the three processes
  one core      one call in flight, all three processes on one CPU
  in flight     16 calls written at once, then their 16 answers read

The middle process's user and system time per call (from /proc/<pid>/stat over the
counted calls, after 500 warm-up calls) is printed for each, median of the rounds, the
relay and the proxy alternating; then the proxy's time over the relay's. The proxy
executes the same instructions per call in every way (bench/proxy-callgrind.sh counts
them); what differs is how often it starts a call with caches and predictors that the
other processes, or an idle CPU, left cold.

    cargo build --release -p contract-proxy
    cargo build --release -p qe-server --features server --example peers
    python3 bench/proxy-wakeups.py [--calls 20000] [--rounds 5] [--in-flight 16]
"""

import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
PEERS = os.path.join(RELEASE, "examples", "peers")
PROXY = os.path.join(RELEASE, "contract-proxy")
CALL = '{"name":"search_tickets_page","arguments":{"query":"t-","limit":1}}'
TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    """User and system seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


class Middle:
    """The middle process (`proxy` or `relay`) before `peers serve plain`, initialized."""

    def __init__(self, kind):
        upstream = [PEERS, "serve", "plain"]
        command = ([PROXY, "--"] if kind == "proxy" else [PEERS, "relay", "--"]) + upstream
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call("initialize", '{"protocolVersion":"2025-11-25","capabilities":{},'
                  '"clientInfo":{"name":"proxy-wakeups","version":"1"}}')
        self.send_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.call("tools/list", "{}")

    def send_line(self, line):
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        return ('{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}\n' % (self.next_id, method, params)).encode()

    def answered(self):
        """Reads lines up to the answer to the latest request (one carrying its id)."""
        ids = (b'"id":%d,' % self.next_id, b'"id":%d}' % self.next_id)
        while True:
            line = self.process.stdout.readline()
            if not line:
                sys.exit("the middle process closed its stdout")
            if ids[0] in line or ids[1] in line:
                if b'"isError":true' in line or b'"error":' in line:
                    sys.exit(f"a call failed: {line[:300]!r}")
                return

    def call(self, method, params):
        self.send_line(self.request(method, params))
        self.answered()

    def calls(self, count, in_flight):
        """`count` calls, `in_flight` written at a time; every answer is read."""
        for _ in range(count // in_flight):
            batch = b"".join(self.request("tools/call", CALL) for _ in range(in_flight))
            self.send_line(batch)
            lines = 0
            while lines < in_flight:
                line = self.process.stdout.readline()
                if not line:
                    sys.exit("the middle process closed its stdout")
                if b'"result"' in line and b'"isError":false' in line:
                    lines += 1
                elif b'"id"' in line:
                    sys.exit(f"a call failed: {line[:300]!r}")

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def measure(kind, way, calls, in_flight):
    """User and system µs per call of the middle process."""
    cpus = os.sched_getaffinity(0)
    if way == "one core":
        # This client first: the processes it starts inherit the CPU.
        os.sched_setaffinity(0, {min(cpus)})
    try:
        middle = Middle(kind)
        middle.calls(500, 1)
        user, system = cpu(middle.process.pid)
        middle.calls(calls, in_flight if way == "in flight" else 1)
        user_after, system_after = cpu(middle.process.pid)
        middle.close()
    finally:
        os.sched_setaffinity(0, cpus)
    return 1e6 * (user_after - user) / calls, 1e6 * (system_after - system) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000, help="calls counted per run (default 20000)")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each middle process per way (default 5)")
    parser.add_argument("--in-flight", type=int, default=16, help="calls written at once in the third way (16)")
    options = parser.parse_args()
    for path, build in ((PROXY, "cargo build --release -p contract-proxy"),
                        (PEERS, "cargo build --release -p qe-server --features server --example peers")):
        if not os.path.exists(path):
            sys.exit(f"{path} is not built: run `{build}`")
    if options.in_flight < 1 or options.rounds < 1 or options.calls < options.in_flight:
        parser.error("--in-flight and --rounds must be at least 1, and --calls at least --in-flight")
    calls = options.calls - options.calls % options.in_flight
    print(f"{calls} 1-item calls per run, median of {options.rounds} runs; µs per call of the middle process")
    print(f"{'way':<12} {'relay user':>11} {'relay sys':>10} {'proxy user':>11} {'proxy sys':>10} {'proxy over relay':>17}")
    for way in ("sequential", "one core", "in flight"):
        runs = {"relay": [], "proxy": []}
        for _ in range(options.rounds):
            for kind in ("relay", "proxy"):
                runs[kind].append(measure(kind, way, calls, options.in_flight))
        median = {kind: tuple(statistics.median(r[i] for r in runs[kind]) for i in (0, 1)) for kind in runs}
        over = sum(median["proxy"]) - sum(median["relay"])
        print(f"{way:<12} {median['relay'][0]:11.1f} {median['relay'][1]:10.1f} "
              f"{median['proxy'][0]:11.1f} {median['proxy'][1]:10.1f} {over:17.1f}")


if __name__ == "__main__":
    main()
