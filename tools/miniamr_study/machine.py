"""The machine a study ran on, as its figures must name it: the CPU model, its cores, and the
copy bandwidth measured at the start and the end of the study (bench/stream_copy beside the
miniamr executable, on every usable core)."""
import json
import os
import subprocess


def cpu_model():
    try:
        with open("/proc/cpuinfo", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def copy_bandwidth(miniamr):
    """GB/s of bench/stream_copy beside `miniamr` on every usable core, or None without it."""
    exe = os.path.join(os.path.dirname(os.path.abspath(miniamr)), "bench", "stream_copy")
    if not os.access(exe, os.X_OK):
        return None
    env = dict(os.environ, OMP_NUM_THREADS=str(usable_cores()))
    p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=300)
    parts = p.stdout.split()
    if p.returncode != 0 or len(parts) < 2 or parts[0] != "copy_gbs":
        return None
    return float(parts[1])


def describe(miniamr):
    """The machine's facts, with a first copy measurement."""
    return {"cpu": cpu_model(), "cores": os.cpu_count() or 1, "usable_cores": usable_cores(),
            "copy_threads": usable_cores(), "copy_gbs": [x for x in [copy_bandwidth(miniamr)]
                                                         if x is not None]}


def measure_again(study_json, miniamr):
    """Adds a copy measurement at the study's end to its study.json."""
    with open(study_json) as f:
        info = json.load(f)
    x = copy_bandwidth(miniamr)
    if x is not None and "machine" in info:
        info["machine"]["copy_gbs"].append(x)
        with open(study_json + ".tmp", "w") as f:
            json.dump(info, f, indent=1)
        os.replace(study_json + ".tmp", study_json)
