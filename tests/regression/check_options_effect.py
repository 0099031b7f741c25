#!/usr/bin/env python3
"""Options of the dynamic runtime and its balancer change what runs (none is silently ignored):

- --threads 2: task events come from two workers;
- --task_order_seed: two seeds run the tasks in two different orders (with the padded kernels:
  compact sweeps run their variable groups one after the other, each in the order that its
  deferred faces fix);
- --lb_threshold above any imbalance: no decision moves blocks; --lb none: no block moves at
  all (not even at the refinement steps, which the other strategies cut by the rank speeds);
- --lb_freq 4: decisions only at timesteps divisible by 4 (or right after a refinement step);
- --lb_link_model: the balancer prices a decision's migration with the file's latency and
  bandwidth (a link of 100 s per message takes no decision where a fast one takes some).

  check_options_effect.py --miniamr BIN --deck DECK
"""
import json
import os
import sys
import tempfile

from mpi_env import run_results, script_arguments, verdict


def main():
    a = script_arguments().parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def run(np, *opts):
            return run_results(["mpirun", "-np", np, "--oversubscribe", "--bind-to", "none",
                                os.path.abspath(a.miniamr), os.path.abspath(a.deck), "--runtime",
                                "dynamic", "--report_perf", "1", "--num_vars", "4",
                                "--stages_per_ts", "4", *opts], work)

        def tasks(path):
            with open(os.path.join(work, path)) as f:
                events = json.load(f)["traceEvents"]
            return sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "task"),
                          key=lambda e: e["ts"])

        def log(path):
            with open(os.path.join(work, path)) as f:
                return [json.loads(l) for l in f if l.strip()][1:]

        def decisions(path):
            return [l for l in log(path) if l.get("kind", "decision") == "decision"]

        run(1, "--threads", "2", "--num_tsteps", "30", "--trace", "t2.json")
        workers = {e["tid"] for e in tasks("t2.json")}
        if len(workers) < 2:
            failures.append(f"--threads 2: tasks ran on workers {sorted(workers)} only")

        # Four variable groups, each a graph of its own: one worker interleaves them (and the
        # stages of each) in the seed's order. The padded kernels: with compact sweeps the
        # groups run one after the other, each in the order its deferred faces fix.
        orders = []
        for seed in (1, 2):
            run(1, "--threads", "1", "--num_tsteps", "10", "--comm_vars", "1", "--isa", "x86-64",
                "--task_order_seed", seed, "--trace", f"s{seed}.json")
            orders.append([(e["name"], e["args"]["block"], e["args"]["stage"], e["args"]["var"])
                           for e in tasks(f"s{seed}.json")])
        if orders[0] == orders[1]:
            failures.append("--task_order_seed 1 and 2 ran the tasks in the same order")
        if sorted(orders[0]) != sorted(orders[1]):
            failures.append("--task_order_seed 1 and 2 ran different tasks")

        # Decisions every 2 timesteps: those before the refinement steps (every 5) remain.
        slow = ["--num_tsteps", "24", "--slow_rank", "1:10"]
        r = run(2, *slow, "--lb_freq", "2", "--lb_threshold", "1e9", "--lb_log", "high.jsonl")
        if (r["lb_decisions_taken"] != 0 or not decisions("high.jsonl")
                or any(l["taken"] for l in decisions("high.jsonl"))):
            failures.append("--lb_threshold 1e9 still took a decision")
        r = run(2, *slow, "--lb", "none")
        if r["blocks_migrated"] != 0:
            failures.append(f"--lb none moved {r['blocks_migrated']} blocks")
        run(2, *slow, "--lb_freq", "4", "--lb_log", "freq.jsonl")
        steps = [l["timestep"] for l in decisions("freq.jsonl")]
        # (and the recheck after a refinement step, every 5, that more than doubled the mesh)
        if not steps or any(t % 4 and t % 5 != 1 for t in steps):
            failures.append(f"--lb_freq 4 decided at timesteps {steps}")

        def model(name, latency, bandwidth):
            path = os.path.join(work, name)
            with open(path, "w") as f:
                f.write("model: alpha-beta\npair_classes:\n"
                        f"  same_node: {{latency_s: {latency}, bandwidth_Bps: {bandwidth}}}\n")
            return path
        for name, latency, bandwidth, moves in (("fast.yaml", 1.5e-06, 1.25e+10, True),
                                                ("slow.yaml", 100.0, 1000.0, False)):
            # Whether a fast link moves blocks depends on measured times: a loaded machine can
            # blur a short run, so it gets a second chance.
            for _ in range(2):
                r = run(2, *slow, "--lb_freq", "2", "--lb", "sfc",
                        "--lb_link_model", model(name, latency, bandwidth))
                if (r["lb_decisions_taken"] > 0) == moves:
                    break
            if (r["lb_link_latency_s"], r["lb_link_bandwidth_Bps"]) != (latency, bandwidth):
                failures.append(f"--lb_link_model {name}: the balancer used latency "
                                f"{r['lb_link_latency_s']} s, bandwidth {r['lb_link_bandwidth_Bps']}")
            if (r["lb_decisions_taken"] > 0) != moves:
                failures.append(f"--lb_link_model {name}: {r['lb_decisions_taken']} decisions "
                                "taken")
    return verdict(failures, "--threads, --task_order_seed, --lb_threshold, --lb none, --lb_freq "
                             "and --lb_link_model take effect")


if __name__ == "__main__":
    sys.exit(main())
