#!/usr/bin/env python3
"""Plot the many-GPU scaling records of gpukit.

Reads JSON-lines records (one JSON object per line) from bench/results/multigpu/:
  --weak    weak scaling: bench_set "weak-mult" (sgdia_mult, "time_ms") and
            "weak-cg" (cacg_bench, ms per iteration)
  --strong  strong scaling: "strong-big-mult" (MatMult 512^3) and "strong-cg"
  --cavity  driven cavity: bench "multigpu_cavity", "snes_solve_s"; ranks in 1 x P
            strips (plus, if present, the "-2x2" file with a 2 x 2 rank grid)
  --aware   weak scaling with -use_gpu_aware_mpi 0 and 1 in the same run ("gpu_aware")
Writes under --img (default docs/img):
  multigpu-weak-<date>.png, multigpu-strong-<date>.png, multigpu-cavity-<date>.png, multigpu-aware-<date>.png
and prints one markdown line per PNG, with paths relative to docs/.
A plot whose file or records are missing is skipped with a message on stderr.
Run from the repository root:  python3 bench/report_multigpu.py
"""
import argparse
import json
import os
import sys
from datetime import datetime

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker

D = "bench/results/multigpu/"
GPUS = [1, 2, 4]


def load(path):
    """Return the list of records in a JSON-lines file ([] with a message if missing)."""
    if not path or not os.path.exists(path):
        print(f"report_multigpu: {path}: no such file, plot skipped", file=sys.stderr)
        return []
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    print(f"report_multigpu: {path}: bad line skipped ({e})", file=sys.stderr)
    return recs


def mtype(r):
    t = r.get("mat_type") or r.get("format") or ""
    for p in ("seq", "mpi"):
        if t.startswith(p):
            return t[len(p):]
    return t


def side_off(r):
    """True only when the record says the side stream was off (false/0)."""
    s = r.get("side_stream")
    return s is not None and not s


def ms(r):
    """Time of one record: time_ms (MatMult) or ms per KSP iteration (CG)."""
    for k in ("time_ms", "ksp_ms_per_it", "time_per_it_ms"):
        if r.get(k) is not None:
            return float(r[k])
    return None


def best(recs, key, tkey=ms):
    """{gpus: smallest time} over the records for which key(r) is true."""
    out = {}
    for r in recs:
        t = tkey(r)
        if key(r) and t is not None:
            g = int(r["gpus"])
            out[g] = min(t, out.get(g, t))
    return out


def day(r):
    s = str(r.get("date", ""))
    if s[:4].isdigit():
        return s[:10]
    try:  # e.g. "Fri Nov 27 00:41:57 2026" in the cacg_bench records
        return datetime.strptime(s, "%a %b %d %H:%M:%S %Y").strftime("%Y-%m-%d")
    except ValueError:
        return s[:10]


def title_tail(recs):
    dev = sorted({r.get("device", "?") for r in recs})
    ng = max(int(r["gpus"]) for r in recs)
    aware = "MPI not CUDA-aware (-use_gpu_aware_mpi 0)" if all(
        not r.get("gpu_aware") for r in recs) else "CUDA-aware MPI"
    commits = ", ".join(dict.fromkeys(str(r.get("commit", "?")) for r in recs))
    return f"{' / '.join(dev)}, {ng} GPUs, {aware}\n{min(day(r) for r in recs)}, commit {commits}"


def line(ax, d, ref=None, label="", **kw):
    """Plot ref/t (ref defaults to the 1-GPU time) against GPUs; return the values."""
    ref = ref if ref is not None else d.get(1)
    if not ref or len(d) < 2:
        print(f"report_multigpu: too few points for '{label}', line skipped", file=sys.stderr)
        return {}
    g = sorted(d)
    ys = {p: ref / d[p] for p in g}
    kw.setdefault("marker", "o")
    ax.plot(g, [ys[p] for p in g], label=label, **kw)
    return ys


def finish(fig, ax_list, path, alt, recs_for_name):
    for ax in ax_list:
        ax.set_xticks(GPUS)
        ax.set_xlabel("GPUs")
        ax.grid(True, alpha=0.4)
        ax.legend(fontsize=8)
    fig.tight_layout()
    name = f"{os.path.basename(path)}-{min(day(r) for r in recs_for_name)}.png"
    out = os.path.join(os.path.dirname(path), name)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"![{alt}](img/{name})")
    return out


def report(label, vals):
    print(f"  {label}: " + ", ".join(f"{p} GPUs {v:.3f}" for p, v in sorted(vals.items())),
          file=sys.stderr)


def weak(path, img):
    recs = [r for r in load(path) if r.get("bench_set") in ("weak-mult", "weak-cg")]
    if not recs:
        return print(f"report_multigpu: no weak-mult/weak-cg records in {path}", file=sys.stderr)
    mult = [r for r in recs if r["bench_set"] == "weak-mult"]
    cg = [r for r in recs if r["bench_set"] == "weak-cg" and not side_off(r)]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    print("weak-scaling efficiency t1/tP:", file=sys.stderr)
    on = best(mult, lambda r: mtype(r) == "sgdiacuda" and not side_off(r))
    report("MatMult sgdiacuda", line(ax, on, label="MatMult sgdiacuda", color="C0"))
    off = best(mult, lambda r: mtype(r) == "sgdiacuda" and side_off(r))
    if off and 1 in on:  # 1-GPU reference: the single-GPU record (no halo, no side stream)
        off.setdefault(1, on[1])
        report("MatMult sgdiacuda, caller's stream", line(
            ax, off, ref=on.get(1), color="C0", ls="--",
            label="MatMult sgdiacuda, copies on the caller's stream"))
    report("MatMult aijcusparse", line(
        ax, best(mult, lambda r: mtype(r) == "aijcusparse" and not side_off(r)),
        label="MatMult aijcusparse", color="C1"))
    for meth, typ, lab, c in [("cg", "sgdiacuda", "CG+Jacobi sgdiacuda", "C2"),
                              ("cg", "aijcusparse", "CG+Jacobi aijcusparse", "C3"),
                              ("cacg4", "sgdiacuda", "CACG s=4 sgdiacuda", "C4"),
                              ("cacg8", "sgdiacuda", "CACG s=8 sgdiacuda", "C5")]:
        d = best(cg, lambda r: r.get("method") == meth and mtype(r) == typ)
        report(lab, line(ax, d, label=lab, color=c, marker="s" if "CACG" not in lab else "^"))
    ax.axhline(0.90, color="k", ls=":", lw=1, label="target (0.90)")
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("weak-scaling efficiency  t(1 GPU) / t(P GPUs)")
    g1 = next((r.get("grid") for r in mult if int(r["gpus"]) == 1 and r.get("grid")), None)
    per = f"{g1} per GPU" if g1 else "fixed size per GPU"
    ax.set_title(f"Weak scaling, {per} (MatMult; CG/CACG ms per iteration)\n"
                 + title_tail(recs), fontsize=9)
    finish(fig, [ax], os.path.join(img, "multigpu-weak"),
           "weak-scaling efficiency on several GPUs", recs)


def strong(path, img):
    recs = [r for r in load(path) if r.get("bench_set") in ("strong-big-mult", "strong-cg")]
    if not recs:
        return print(f"report_multigpu: no strong-big-mult/strong-cg records in {path}",
                     file=sys.stderr)
    mult = [r for r in recs if r["bench_set"] == "strong-big-mult" and not side_off(r)]
    cg = [r for r in recs if r["bench_set"] == "strong-cg" and not side_off(r)]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 4.5))
    print("strong-scaling speed-up t1/tP (MatMult):", file=sys.stderr)
    for typ, c in [("sgdiacuda", "C0"), ("aijcusparse", "C1")]:
        report(f"MatMult {typ}", line(a1, best(mult, lambda r: mtype(r) == typ),
                                      label=f"MatMult {typ}", color=c))
    a1.plot(GPUS, GPUS, "k:", lw=1, label="ideal")
    a1.set_ylabel("speed-up  t(1 GPU) / t(P GPUs)")
    g = next((r.get("grid") for r in mult if r.get("grid")), "512^3")
    a1.set_title(f"MatMult, {g} grid", fontsize=9)
    print("strong-scaling ms per iteration (CG):", file=sys.stderr)
    for meth, typ, lab, c in [("cg", "sgdiacuda", "CG+Jacobi sgdiacuda", "C2"),
                              ("cg", "aijcusparse", "CG+Jacobi aijcusparse", "C3"),
                              ("cacg4", "sgdiacuda", "CACG s=4 sgdiacuda", "C4"),
                              ("cacg8", "sgdiacuda", "CACG s=8 sgdiacuda", "C5")]:
        d = best(cg, lambda r: r.get("method") == meth and mtype(r) == typ)
        if d:
            a2.plot(sorted(d), [d[p] for p in sorted(d)], marker="o", label=lab, color=c)
            report(lab, d)
    a2.set_yscale("log")
    a2.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    a2.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    a2.set_ylabel("time per iteration (ms)")
    n = next((r.get("n") for r in cg if r.get("n")), 128)
    a2.set_title(f"CG / CACG, {n}^3 grid", fontsize=9)
    fig.suptitle("Strong scaling: " + title_tail(recs), fontsize=9)
    finish(fig, [a1, a2], os.path.join(img, "multigpu-strong"),
           "strong scaling on several GPUs", recs)


def cavity(path, img):
    recs = [r for r in load(path) if r.get("bench") == "multigpu_cavity"]
    if not recs:
        return print(f"report_multigpu: no multigpu_cavity records in {path}", file=sys.stderr)
    secs = lambda r: r.get("snes_solve_s")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    print("cavity speed-up t1/tP:", file=sys.stderr)
    for i, meth in enumerate(sorted({r["method"] for r in recs},
                                    key=lambda m: int(m.split("_")[-1]))):
        sub = [r for r in recs if r["method"] == meth]
        lab = f"{sub[0].get('grid', meth.split('_')[-1])}^2, 1 x P strips"
        report(lab, line(ax, best(sub, lambda r: True, secs), label=lab, color=f"C{i}"))
    two = path[:-len(".jsonl")] + "-2x2.jsonl" if path.endswith(".jsonl") else ""
    allrecs = list(recs)
    if two and os.path.exists(two):
        sub = [r for r in load(two) if r.get("bench") == "multigpu_cavity"
               and (r.get("method") == "cavity_4097" or r.get("grid") == 4097)]
        if sub:
            allrecs += sub
            report("4097^2, 2 x 2 rank grid", line(ax, best(sub, lambda r: True, secs),
                                                   label="4097^2, 2 x 2 rank grid",
                                                   color="C2", ls="--"))
    ax.plot(GPUS, GPUS, "k:", lw=1, label="ideal")
    ax.set_ylabel("speed-up  t(1 GPU) / t(P GPUs)  (SNESSolve)")
    ax.set_title("Driven cavity (SNES, FGMRES + MG, sgdiacuda), ranks in strips (1 x P)\n"
                 + title_tail(allrecs), fontsize=9)
    finish(fig, [ax], os.path.join(img, "multigpu-cavity"),
           "driven-cavity speed-up on several GPUs", recs)


def aware(path, img):
    """weak-scaling efficiency with messages staged through the host (solid) and CUDA-aware (dashed), same run"""
    recs = [r for r in load(path) if r.get("bench_set") in ("weak-mult", "weak-cg") and not side_off(r)]
    if not any(r.get("gpu_aware") for r in recs):
        return print(f"report_multigpu: no CUDA-aware weak records in {path}", file=sys.stderr)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    print("weak-scaling efficiency t1/tP, staged / CUDA-aware:", file=sys.stderr)
    for bset, meth, typ, lab, c in [("weak-mult", None, "aijcusparse", "MatMult aijcusparse", "C1"),
                                    ("weak-cg", "cg", "aijcusparse", "CG+Jacobi aijcusparse", "C3"),
                                    ("weak-mult", None, "sgdiacuda", "MatMult sgdiacuda (IPC halos)", "C0"),
                                    ("weak-cg", "cg", "sgdiacuda", "CG+Jacobi sgdiacuda", "C2")]:
        sel = lambda r, aw: (r["bench_set"] == bset and mtype(r) == typ and (meth is None or r.get("method") == meth)
                             and (int(r["gpus"]) == 1 or bool(r.get("gpu_aware")) == aw))
        ref = best(recs, lambda r: sel(r, False) and int(r["gpus"]) == 1).get(1)
        report(lab + ", staged", line(ax, best(recs, lambda r: sel(r, False)), ref=ref, label=lab + ", staged", color=c))
        report(lab + ", CUDA-aware", line(ax, best(recs, lambda r: sel(r, True)), ref=ref, label=lab + ", CUDA-aware",
                                          color=c, ls="--", marker="s"))
    ax.axhline(0.90, color="k", ls=":", lw=1, label="target (0.90)")
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("weak-scaling efficiency  t(1 GPU) / t(P GPUs)")
    ax.set_title("Weak scaling, messages staged through the host (-use_gpu_aware_mpi 0) against CUDA-aware (1)\n"
                 + title_tail(recs), fontsize=9)
    finish(fig, [ax], os.path.join(img, "multigpu-aware"),
           "weak-scaling efficiency, host-staged against CUDA-aware MPI", recs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weak", default=D + "multigpu-h100x4-2026-11-27-s11.jsonl")
    ap.add_argument("--strong", default=D + "multigpu-h100x4-2026-11-27-s11-strong.jsonl")
    ap.add_argument("--cavity", default=D + "multigpu-h100x4-2026-11-27-s12-cavity.jsonl")
    ap.add_argument("--aware", default=D + "multigpu-h200x4-2026-11-27-s17c.jsonl")
    ap.add_argument("--img", default="docs/img")
    a = ap.parse_args()
    os.makedirs(a.img, exist_ok=True)
    weak(a.weak, a.img)
    strong(a.strong, a.img)
    cavity(a.cavity, a.img)
    aware(a.aware, a.img)


if __name__ == "__main__":
    main()
