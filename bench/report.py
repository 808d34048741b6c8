#!/usr/bin/env python3
"""Write docs/performance.md (and docs/img/*.png bar plots) from the benchmark records in bench/results/*.json.

A results file is a JSON list of records (a single record, or one record a line, is accepted too). Records
of one run share device, host, date and commit; each run gets a table and, where matplotlib is importable,
a plot. Fields this script does not know are ignored; missing ones print as '-'; a "note" field is shown under
its run's heading. GPU records (device other
than "cpu", written by bench/gpu.sh) use the same schema plus "baseline" (aijcusparse, the format their speedups
compare against), "gbps", "copy_gbps" and "frac_copy_bw"; they get a table of their own.

    python3 bench/report.py [--results DIR] [--out FILE] [--img DIR]
"""
import argparse
import glob
import json
import math
import os
import re
import sys

IMG_PREFIX = "sgdia_mult-"


def load_records(results_dir):
    records = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            data = json.loads(text)
            data = data if isinstance(data, list) else [data]
        except json.JSONDecodeError:
            try:  # one record a line
                data = [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError as e:
                print(f"report.py: skipping {path}: not JSON ({e})", file=sys.stderr)
                continue
        for order, r in enumerate(data):
            if isinstance(r, dict) and "format" in r and "case" in r:
                r["_file"] = os.path.basename(path)
                r["_order"] = order
                records.append(r)
            else:
                print(f"report.py: {path}: ignoring an entry without 'case' and 'format'", file=sys.stderr)
    return records


def run_key(r):
    return (str(r.get("device", "cpu")), str(r.get("host", "unknown")), str(r.get("date", "unknown")), str(r.get("commit", "unknown")))


def fmt_num(v, spec):
    if isinstance(v, (int, float)) and math.isfinite(v):
        return format(v, spec)
    return "-"


def fmt_ratio(v):
    return fmt_num(v, ".2f") + ("x" if isinstance(v, (int, float)) and math.isfinite(v) else "")


def family(name):
    """0: SGDIA (sgdia, sgdiacuda, ...), 1: AIJ (aij, aijcusparse, ...), 2: BAIJ, 3: anything else"""
    name = name.lower()
    if name.startswith("sgdia"):
        return 0
    if "baij" in name:
        return 2
    if "aij" in name:
        return 1
    return 3


def format_rank(name, seen):
    return (family(name), seen.index(name))


def sort_run(recs):
    cases = []
    formats = []
    for r in sorted(recs, key=lambda r: r["_order"]):
        if r["case"] not in cases:
            cases.append(r["case"])
        if r["format"] not in formats:
            formats.append(r["format"])
    recs = sorted(recs, key=lambda r: (cases.index(r["case"]), r.get("nranks", 0), format_rank(r["format"], formats)))
    return recs, cases, sorted(formats, key=lambda f: format_rank(f, formats))


def geomean(values):
    values = [v for v in values if isinstance(v, (int, float)) and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "", text.replace(":", "").replace("T", "-", 1))


def plot_run(plt, recs, cases, formats, title, path):
    ncol = min(len(cases), 2)
    nrow = (len(cases) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.0 * ncol, 3.6 * nrow), squeeze=False)
    for ax, case in zip(axes.flat, cases):
        rows = [r for r in recs if r["case"] == case]
        ranks = sorted({r.get("nranks", 0) for r in rows})
        width = 0.8 / max(len(formats), 1)
        for fi, f in enumerate(formats):
            xs, ts = [], []
            for ri, nr in enumerate(ranks):
                t = [r.get("time_ms") for r in rows if r["format"] == f and r.get("nranks", 0) == nr]
                if t and isinstance(t[0], (int, float)):
                    xs.append(ri + (fi - (len(formats) - 1) / 2) * width)
                    ts.append(t[0])
            if xs:
                bars = ax.bar(xs, ts, width, label=f)
                ax.bar_label(bars, fmt="%.2f", fontsize=7)
        ax.set_xticks(range(len(ranks)))
        ax.set_xticklabels([f"{nr} rank{'s' if nr != 1 else ''}" for nr in ranks])
        ax.set_ylabel("MatMult time (ms)")
        ax.set_title(case, fontsize=10)
        ax.margins(y=0.15)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(cases):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def lead_format(recs, formats):
    """ours: the record's "ours" field (first of -formats), else the SGDIA format, else the first one"""
    ours = recs[0].get("ours")
    return ours if ours in formats else formats[0]


def memory_ratio(recs, lead, other):
    mem = {}
    for r in recs:
        mem.setdefault((r["case"], r.get("nranks")), {})[r["format"]] = r.get("memory_bytes")
    return geomean([m[lead] / m[other] for m in mem.values() if other and m.get(lead) and m.get(other)])


def cpu_table(L, recs, formats):
    # one-line summary of the SGDIA format (else the first one) against AIJ and BAIJ
    lead = lead_format(recs, formats)
    aij = next((f for f in formats if family(f) == 1), None)
    s_aij = geomean([r.get("speedup_vs_aij") for r in recs if r["format"] == lead])
    s_baij = geomean([r.get("speedup_vs_baij") for r in recs if r["format"] == lead])
    m_aij = memory_ratio(recs, lead, aij)
    L.append(f"- {lead}, geometric mean over the rows below: speedup {fmt_ratio(s_aij)} vs AIJ, {fmt_ratio(s_baij)} vs BAIJ; "
             f"memory {fmt_num(m_aij, '.2f')} of {aij or 'AIJ'}'s")
    L.append("")
    head = ["case", "ranks", "format", "rows", "time (ms)", "GFlop/s", "memory (MiB)", "vs AIJ", "vs BAIJ"]
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "|".join(["---"] * 3 + ["---:"] * 6) + "|")
    for r in recs:
        mb = r.get("memory_bytes")
        row = [str(r["case"]), str(r.get("nranks", "-")), f"**{r['format']}**" if r["format"] == lead else str(r["format"])]
        row += [
            str(r.get("rows", "-")),
            fmt_num(r.get("time_ms"), ".3f"),
            fmt_num(r.get("gflops"), ".2f"),
            fmt_num(mb / 1048576.0 if isinstance(mb, (int, float)) else None, ".1f"),
            fmt_ratio(r.get("speedup_vs_aij")),
            fmt_ratio(r.get("speedup_vs_baij")),
        ]
        L.append("| " + " | ".join(row) + " |")
    L.append("")


def gpu_table(L, recs, formats):
    """GPU records: the copy bandwidth of the run, GB/s and its fraction of it, speedup vs the baseline (aijcusparse)"""
    lead = lead_format(recs, formats)
    base = recs[0].get("baseline", "aijcusparse")

    def speedup(r):
        v = r.get("speedup_vs_baseline")
        return v if v is not None else r.get(f"speedup_vs_{base}")

    copy = sorted(v for v in {r.get("copy_gbps") for r in recs} if isinstance(v, (int, float)))
    span = (fmt_num(copy[0], ".0f") + ("" if len(copy) == 1 else "-" + fmt_num(copy[-1], ".0f")) + " GB/s") if copy else "not measured"
    L.append(f"- device copy bandwidth (`VecCopy` of two `VECCUDA` vectors, read + write, measured in each case's run): {span}")
    frac = {f: geomean([r.get("frac_copy_bw") for r in recs if r["format"] == f]) for f in formats}
    fracs = ", ".join(f"{f} {100 * v:.0f}%" for f, v in frac.items() if math.isfinite(v)) or "not measured"
    L.append(f"- {lead}, geometric mean over the cases below: speedup {fmt_ratio(geomean([speedup(r) for r in recs if r['format'] == lead]))} "
             f"vs {base.upper()}; memory {fmt_num(memory_ratio(recs, lead, base), '.2f')} of {base}'s; fraction of the copy bandwidth: {fracs}")
    L.append("")
    head = ["case", "ranks", "format", "rows", "time (ms)", "GFlop/s", "GB/s", "% of copy bw", "memory (MiB)", f"vs {base.upper()}"]
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "|".join(["---"] * 3 + ["---:"] * 7) + "|")
    for r in recs:
        mb = r.get("memory_bytes")
        fr = r.get("frac_copy_bw")
        row = [str(r["case"]), str(r.get("nranks", "-")), f"**{r['format']}**" if r["format"] == lead else str(r["format"])]
        row += [
            str(r.get("rows", "-")),
            fmt_num(r.get("time_ms"), ".3f"),
            fmt_num(r.get("gflops"), ".1f"),
            fmt_num(r.get("gbps"), ".0f"),
            fmt_num(100 * fr if isinstance(fr, (int, float)) else None, ".1f"),
            fmt_num(mb / 1048576.0 if isinstance(mb, (int, float)) else None, ".1f"),
            fmt_ratio(speedup(r)),
        ]
        L.append("| " + " | ".join(row) + " |")
    L.append("")


def read_any(path):
    """a JSON list, or one record a line"""
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    if not text:
        return []
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def latest_records(folder, pattern):
    """the newest results file in folder matching pattern (by name: the date), and its records"""
    def datekey(f):  # the date in the name (cavity-<device>-<YYYY-MM-DD>.json), then the name
        m = re.search(r"(\d{4}-\d{2}-\d{2})", os.path.basename(f))
        return (m.group(1) if m else "", f)
    files = sorted(glob.glob(os.path.join(folder, pattern)), key=datekey)
    return files, (read_any(files[-1]) if files else [])


def pct(v):
    return f"{100 * v:.0f}%" if isinstance(v, (int, float)) else "-"


def cavity_section(L, folder):
    """bench/cavity.sh records: the driven cavity, whole SNES solves"""
    files, recs = latest_records(folder, "*.json")
    if not recs:
        return
    r0 = recs[0]
    L.append(f"## Driven cavity, whole Newton-Krylov solve ({r0.get('device', '?')}): {r0.get('date', '?')}, commit `{r0.get('commit', '?')}`")
    L.append("")
    L.append(f"- `bench/cavity.sh`, results file `bench/results/cavity/{os.path.basename(files[-1])}`; PETSc {r0.get('petsc_version', '?')}; machine: {r0.get('machine', '?')}")
    L.append("- all runs: `-da_grid_x 9 -da_grid_y 9 -da_refine R`, Grashof 1, `-ksp_type fgmres -pc_type mg -mg_levels_ksp_type chebyshev")
    L.append("  -mg_levels_pc_type jacobi -mg_coarse_pc_type lu` (2-rank CPU runs: redundant LU on the coarsest level). **ours-gpu**:")
    L.append("  `examples/cavity -use_gpu -dm_vec_type cuda -dm_mat_type sgdiacuda` (residual and Jacobian by CUDA kernels on every")
    L.append("  level, device MG interpolation); **ours-gpu-lean**: the same with `-coarse_mat_type densecuda -mg_coarse_pc_factor_mat_solver_type cuda -mg_levels_pc_jacobi_fixdiagonal 0`;")
    L.append("  **ours-gpu-aijcusparse**: our example on PETSc's format, `-use_gpu -dm_vec_type cuda -dm_mat_type aijcusparse` (the same")
    L.append("  kernels, the Jacobian through `MatSetValuesCOO()` with a device array; the COO pattern set once per matrix, rows sorted);")
    L.append("  **ex19-aijcusparse**: stock SNES ex19, `-dm_vec_type cuda -dm_mat_type aijcusparse` (FD-colouring Jacobian on the host);")
    L.append("  **ex19-aij-np2**: stock ex19 on 2 CPU ranks. Speed-up: SNESSolve time of ex19-aijcusparse / the run's; **vs ours-gpu**:")
    L.append("  the run's SNESSolve time / ours-gpu's on the same grid (so ours-gpu-aijcusparse's entry is the format's own share).")
    L.append("- copies: CpuToGpu / GpuToCpu counts inside SNESSolve from `-log_view` (PETSc counts every dot-product result read")
    L.append("  back as one GpuToCpu copy). Shares of SNESSolve time are inclusive events; where a GPU `-log_view` prints n/a")
    L.append("  times they come from its %T column, and runs whose log was not kept show -.")
    L.append("")
    L.append("| grid | run | SNESSolve (s) | Newton | KSP | CpuToGpu | GpuToCpu | Jacobian | residual | PCSetUp | MatMult | PCApply | KSPSolve | speed-up | vs ours-gpu | solution diff |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ours = {r["grid"]: r.get("snes_solve_s") for r in recs if r.get("config") == "ours-gpu"}
    for r in recs:
        t, t0 = r.get("snes_solve_s"), ours.get(r["grid"])
        rel = f"{t / t0:.2f}x" if isinstance(t, (int, float)) and isinstance(t0, (int, float)) and t0 > 0 else "-"
        L.append("| " + " | ".join([
            f"{r['grid']}^2", str(r["config"]), fmt_num(r.get("snes_solve_s"), ".3f"), str(r.get("newton_its", "-")), str(r.get("ksp_its", "-")),
            str(r.get("cpu_to_gpu_count", "-")), str(r.get("gpu_to_cpu_count", "-")),
            pct(r.get("share_jacobian")), pct(r.get("share_residual")), pct(r.get("share_pcsetup")), pct(r.get("share_matmult")),
            pct(r.get("share_pcapply")), pct(r.get("share_kspsolve")), fmt_ratio(r.get("speedup_vs_reference")), rel,
            fmt_num(r.get("solution_rel_diff_vs_reference"), ".1e")]) + " |")
    L.append("")
    steps = [r for r in recs if r.get("copies_by_step")]
    if steps:
        L.append("Copies by Newton step, counted by the example itself (PETSc's copy counters at each Newton step's monitor call):")
        L.append("CpuToGpu/GpuToCpu, and in parentheses how many of the GpuToCpu were `VecMDot` results (a few scalars each; `VecNorm`")
        L.append("and `VecDot` results are counted apart, as scalars, and are not in these numbers). *setup* is SNESSolve before the first")
        L.append("Newton step; the first step includes PCMG's one-time set-up of the hierarchy.")
        L.append("")
        L.append("| grid | run | copies by step |")
        L.append("|---|---|---|")
        for r in steps:
            L.append(f"| {r['grid']}^2 | {r['config']} | {r['copies_by_step']} |")
        L.append("")


def cacg_section(L, folder):
    """bench/cacg_bench.c records on the GPU (bench/gpu.sh): KSPCACG against CG, PIPECG, GROPPCG"""
    files, recs = latest_records(folder, "gpu-*.jsonl")
    if not recs:
        return
    r0 = recs[0]
    L.append(f"## KSPCACG vs KSPCG on the GPU ({r0.get('device', '?')}): {r0.get('date', '?')}, commit `{r0.get('commit', '?')}`")
    L.append("")
    L.append(f"- `bench/cacg_bench.c` (from `bench/gpu.sh`), results file `bench/results/cacg/{os.path.basename(files[-1])}`; Poisson on a DMDA, Jacobi,")
    L.append("  one rank. ms/it: a solve of a fixed number of iterations (no convergence test), fastest of 3. Iterations and time")
    L.append("  to solution: a solve to the case's rtol. KSPCACG with the Newton basis (Leja-ordered Ritz values). cacgN: s = N,")
    L.append("  with a fused matrix powers kernel (sgdiacuda's since e5a4a15, KSPCACG's own CSR kernel for aijcusparse since")
    L.append("  9d11a8c) and, on the GPU, the lean basis (W stored alone, since 9d11a8c); cacg4mult: s = 4 with")
    L.append("  `-ksp_cacg_matrix_powers 0` (s MatMult + update + PCApply per basis vector); cacg4stored: s = 4 with")
    L.append("  `-ksp_cacg_lean_basis 0` (Y = M^-1 W stored as well); cacg8tuned: KSPCACG with its run-time tuner (s up to 8, the kernel or")
    L.append("  products, s-step or plain CG steps; its choice in parentheses; every other KSPCACG method runs untuned).")
    L.append("")
    L.append("| case | mat type | method | ms/it | vs CG | its to rtol | time to solution (ms) | vs CG |")
    L.append("|---|---|---|---:|---:|---:|---:|---:|")
    for r in recs:
        L.append("| " + " | ".join([
            str(r["case"]), str(r.get("mat_type", "-")), str(r.get("method", "-")) + (f" ({r['tuned_choice']})" if r.get("tuned_choice") else ""), fmt_num(r.get("time_per_it_ms"), ".4f"),
            fmt_ratio(r.get("speedup_per_it_vs_baseline")), str(r.get("its_to_solution", "-")), fmt_num(r.get("time_to_solution_ms"), ".2f"),
            fmt_ratio(r.get("speedup_to_solution_vs_baseline"))]) + " |")
    L.append("")


def ex45_section(L, folder):
    """bench/ex45_cacg.sh records: stock KSP ex45 on the GPU, KSPCG against KSPCACG untuned and tuned"""
    files, recs = latest_records(folder, "ex45-*.jsonl")
    if not recs:
        return
    r0 = recs[0]
    L.append(f"## Stock KSP ex45 with KSPCACG on the GPU ({r0.get('device', '?')}): {r0.get('date', '?')}, commit `{r0.get('commit', '?')}`")
    L.append("")
    L.append(f"- `bench/ex45_cacg.sh`, results file `bench/results/cacg/{os.path.basename(files[-1])}`; unmodified ex45 (3-D 7-point")
    L.append(f"  Laplacian) at {r0.get('n', '?')}^3, `-dm_vec_type cuda -pc_type jacobi`, one solve per run: KSPSolve less KSPSetUp from")
    L.append("  `-log_view` of the second of two runs (the first fills the tuning cache). cacg4: `-ksp_cacg_s 4 -ksp_cacg_tune 0`;")
    L.append("  cacg4tuned: `-ksp_cacg_s 4 -ksp_cacg_tune 1`. One solve a run: these single timings vary by about 15% from run to run")
    L.append("  (cacg4 on aijcusparse measured 0.81x, 0.92x, 0.93x and 0.99x KSPCG in four runs), and they include KSPCACG's")
    L.append("  one-time costs (its vectors, the spectrum estimate, the first launches), which a program with many solves pays once.")
    L.append("")
    L.append("| mat type | method | KSPSolve (s) | its | vs KSPCG | tuner's choice |")
    L.append("|---|---|---:|---:|---:|---|")
    for r in recs:
        L.append("| " + " | ".join([str(r.get("mat_type", "-")), str(r.get("method", "-")), fmt_num(r.get("kspsolve_s"), ".3f"), str(r.get("its", "-")),
                                      fmt_ratio(r.get("speedup_vs_cg")), str(r.get("tuned_choice") or "-")]) + " |")
    L.append("")


def tune_section(L, folder):
    """bench/tune_bench.c records on the GPU (bench/gpu.sh): the run-time tuner against an exhaustive search"""
    files, recs = latest_records(folder, "gpu-*.jsonl")
    if not recs:
        return
    r0 = recs[0]
    L.append(f"## The run-time tuner on the GPU ({r0.get('device', '?')}): {r0.get('date', '?')}, commit `{r0.get('commit', '?')}`")
    L.append("")
    L.append(f"- `bench/tune_bench.c` (from `bench/gpu.sh`), results file `bench/results/tune/{os.path.basename(files[-1])}`; one rank.")
    L.append("  Each phase is a fresh copy of the matrix whose tuner starts afresh; MatMult is called until it has chosen. *exhaustive*:")
    L.append("  every candidate timed; *greedy*: the default search (`-gpukit_tune on`), which writes the cache; *cached*: a third")
    L.append("  copy with `-gpukit_tune cached`. Times are medians of `samples` launches of the kernel in the same run; *vs best*:")
    L.append("  the greedy choice's time over the fastest candidate of an exhaustive table measured afterwards. *cost*: the time")
    L.append("  of all timed launches of the greedy search, and beyond as many launches of its choice.")
    L.append("")
    L.append("| case | kernel | greedy calls | greedy choice | ms | vs best | start ms | exhaustive calls | exhaustive choice | cost ms | extra ms | cached calls | cached |")
    L.append("|---|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---|")
    for r in recs:
        L.append("| " + " | ".join([
            str(r.get("case", "-")), str(r.get("kernel", "-")), str(r.get("greedy_calls", "-")), str(r.get("greedy_choice", "-")),
            fmt_num(r.get("greedy_ms"), ".4f"), fmt_num(r.get("greedy_vs_best"), ".3f"), fmt_num(r.get("start_ms"), ".4f"),
            str(r.get("exhaustive_calls", "-")), str(r.get("exhaustive_choice", "-")), fmt_num(r.get("tuning_cost_ms"), ".2f"),
            fmt_num(r.get("tuning_extra_ms"), ".2f"), str(r.get("cached_calls", "-")), "hit" if r.get("cached_hit") else "miss"]) + " |")
    L.append("")


def gsai_section(L, folder):
    """bench/gsai.sh records: PCGSAI set-up (per stage) against ParaSails on one CPU core, and BiCGStab to solution"""
    newest = {}
    for kind in ("gpu", "cpu"):
        files = sorted(glob.glob(os.path.join(folder, f"{kind}-*.jsonl")))
        recs = read_any(files[-1]) if files else []
        recs = [r for r in recs if r.get("bench") == "gsai_bench"]
        if recs:
            newest[kind] = (os.path.basename(files[-1]), recs)
    if not newest:
        return

    def key(r):
        return (r["case"], r.get("gsai_type", "general"), r.get("side", "left"))

    def its(r, k):
        i = r.get(f"its_{k}")
        return "-" if i is None else f"{i}{'' if r.get(f'converged_{k}') else '*'}"

    def adaptive(r):  # bench/gsai.sh's GPUKIT_GSAI_ADAPTIVE cases: -pc_gsai_pattern adaptive -label adaptive
        return r.get("pattern") == "adaptive" or str(r.get("case", "")).endswith(" adaptive")

    gpu = newest.get("gpu", (None, []))[1]
    cpu = newest.get("cpu", (None, []))[1]
    cpu_by = {key(r): r for r in cpu}
    lead = gpu[0] if gpu else cpu[0]
    where = lead.get("device", "?") if gpu else "one CPU core"
    L.append(f"## PCGSAI set-up vs ParaSails, and BiCGStab with GSAI vs Jacobi ({where}): {lead.get('date', '?')}, commit `{lead.get('commit', '?')}`")
    L.append("")
    for kind, (fname, recs) in newest.items():
        r0 = recs[0]
        L.append(f"- {kind.upper()} run: `bench/gsai.sh`{' (GPUKIT_GSAI_GPU=1)' if kind == 'gpu' else ''}, results file `bench/results/gsai/{fname}`; "
                 f"{r0.get('petsc_version', 'PETSc ?').strip()}; {r0.get('host', '?')} ({r0.get('machine', '?')}), load {r0.get('load_avg', '?')}; "
                 f"library sources: {r0.get('source_state', '?')}")
    L.append("- One MPI rank. PCGSAI: general type, pattern of A, left (row-wise M); set-up = `PCSetUp()` on a new PC, fastest of")
    if gpu and gpu[0].get("gpu_stages") == "device-events":
        L.append("  the runs' batches, stages from `PCGSAIGetSetUpTimes()` (on the GPU, *rows*, *pattern* (with the sizes and offsets of the")
        L.append("  local problems) and *solve* are device times, *assemble* the host's time building M from its device CSR structure, which")
        L.append("  runs while the device solves: the stages can add up to more than the set-up). ParaSails: `-pc_type hypre -pc_hypre_type parasails`")
    else:
        L.append("  the runs' batches, stages from `PCGSAIGetSetUpTimes()` (on the GPU, *solve* includes the sizes and offsets, *assemble* the")
        L.append("  host-side COO analysis of `MatSetPreallocationCOO()`). ParaSails: `-pc_type hypre -pc_hypre_type parasails`")
    L.append("  `-pc_hypre_parasails_thresh 0 -pc_hypre_parasails_nlevels 0 -pc_hypre_parasails_filter 0` (the pattern of A), `PCSetUp()`")
    L.append("  including the conversion to a hypre matrix, one core of the CPU run's machine (Debian PETSc 3.18 with hypre). Speed-up: ParaSails")
    L.append("  / GSAI set-up, CPU and GPU records matched by case name (target of issue 6: 30x). Before timing, M is checked (nnz of")
    L.append("  the pattern; ||MA - I||_F at most Jacobi's).")
    ad_recs = [r for r in gpu + cpu if adaptive(r)]
    if ad_recs:
        r0 = ad_recs[0]
        steps = f"{r0['adaptive_steps']} rounds of {r0['adaptive_per_step']} entries, target residual {r0['adaptive_tol']:g}" if "adaptive_steps" in r0 else "its defaults"
        params = sorted({c.get("parasails_params") for c in cpu if adaptive(c) and c.get("parasails_params")})
        L.append(f"- Rows `<case> adaptive`: PCGSAI with the adaptive pattern (`-pc_gsai_pattern adaptive`, {steps};")
        L.append("  docs/gsai.md), general type, left, against ParaSails with its own defaults (nlevels 1, thresh 0.1, filter 0.1"
                 + (f"; the CPU records: {'; '.join(params)}" if params else "") + "),")
        L.append("  not the pattern of A; nnz(M) is GSAI's (ParaSails's own nnz(M) differs). Before timing, ||MA - I||_F at most Jacobi's."
                 + (" No adaptive GPU records yet: see the adaptive table below." if gpu and not any(adaptive(r) for r in gpu) else ""))
    L.append("")
    ratios = []
    ratios_ad = []
    if gpu:
        L.append("| case | rows | nnz(A) | nnz(M) | GPU set-up (ms) | rows | pattern | solve | assemble | ParaSails 1 core (ms) | speed-up | GSAI 1 core (ms) |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in gpu:
            c = cpu_by.get(key(r), {})
            ps = c.get("parasails_setup_ms")
            ratio = ps / r["setup_ms"] if isinstance(ps, (int, float)) and r.get("setup_ms") else None
            if ratio:
                (ratios_ad if adaptive(r) else ratios).append(ratio)
            L.append("| " + " | ".join([
                str(r["case"]), str(r.get("rows", "-")), fmt_num(r.get("nnz"), ".0f"), str(r.get("nnz_M", "-")), fmt_num(r.get("setup_ms"), ".2f"),
                fmt_num(r.get("rows_ms"), ".2f"), fmt_num(r.get("pattern_ms"), ".2f"), fmt_num(r.get("solve_ms"), ".2f"), fmt_num(r.get("assemble_ms"), ".2f"),
                fmt_num(ps, ".1f"), fmt_ratio(ratio), fmt_num(c.get("setup_ms"), ".1f")]) + " |")
    else:
        L.append("No GPU records yet: the CPU run alone, GSAI on one core against ParaSails on one core.")
        L.append("")
        L.append("| case | rows | nnz(A) | nnz(M) | GSAI set-up (ms) | rows | pattern | solve | assemble | ParaSails (ms) | speed-up |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in cpu:
            ps = r.get("parasails_setup_ms")
            ratio = ps / r["setup_ms"] if isinstance(ps, (int, float)) and r.get("setup_ms") else None
            if ratio:
                (ratios_ad if adaptive(r) else ratios).append(ratio)
            L.append("| " + " | ".join([
                str(r["case"]), str(r.get("rows", "-")), fmt_num(r.get("nnz"), ".0f"), str(r.get("nnz_M", "-")), fmt_num(r.get("setup_ms"), ".1f"),
                fmt_num(r.get("rows_ms"), ".1f"), fmt_num(r.get("pattern_ms"), ".1f"), fmt_num(r.get("solve_ms"), ".1f"), fmt_num(r.get("assemble_ms"), ".1f"),
                fmt_num(ps, ".1f"), fmt_ratio(ratio)]) + " |")
    L.append("")
    if ratios and not ratios_ad:
        L.append(f"Set-up speed-up over ParaSails on one core: geometric mean {fmt_ratio(geomean(ratios))} over {len(ratios)} cases, "
                 f"range {fmt_ratio(min(ratios))} to {fmt_ratio(max(ratios))}.")
        L.append("")
    elif ratios_ad:
        L.append("Set-up speed-up over ParaSails on one core, geometric means (issue 18's target: 50x for the GPU set-up):")
        L.append("")
        for what, rs in (("pattern of A against ParaSails with the pattern of A (the original definition)", ratios),
                         ("adaptive pattern against ParaSails's defaults (rows `<case> adaptive`)", ratios_ad),
                         ("all cases", ratios + ratios_ad)):
            if rs:
                L.append(f"- {what}: {fmt_ratio(geomean(rs))} over {len(rs)} cases, range {fmt_ratio(min(rs))} to {fmt_ratio(max(rs))}")
        L.append("")
    if ad_recs:
        # one row a case: the GPU record where there is one, else the CPU record
        gpu_by = {key(r): r for r in gpu}
        rows_ad = {}
        for r in ad_recs:
            rows_ad.setdefault(key(r), r)
        L.append("Adaptive pattern, per case: nnz(M)/nnz(A) of GSAI, rows that met the target residual / stopped at the cap / all, the")
        L.append("largest final residual of a row, the set-ups (ParaSails with its defaults) and BiCGStab iterations (CPU run; `-`: set-up only):")
        L.append("")
        L.append("| case | nnz(M)/nnz(A) | met / capped / rows | largest residual | GSAI 1 core (ms) | ParaSails 1 core (ms) | GPU set-up (ms) | its GSAI | its ParaSails |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k, r in rows_ad.items():
            c, g = cpu_by.get(k, {}), gpu_by.get(k, {})
            nz = r.get("nnz_M") / r["nnz"] if isinstance(r.get("nnz_M"), (int, float)) and r.get("nnz") else None
            sol = c or g
            L.append("| " + " | ".join([
                str(r["case"]), fmt_num(nz, ".2f"), f"{r.get('adaptive_met', '-')} / {r.get('adaptive_capped', '-')} / {r.get('rows', '-')}",
                fmt_num(r.get("adaptive_maxres"), ".3f"), fmt_num(c.get("setup_ms"), ".1f"), fmt_num(c.get("parasails_setup_ms"), ".1f"),
                fmt_num(g.get("setup_ms"), ".2f"), its(sol, "gsai"), its(sol, "parasails")]) + " |")
        L.append("")
    L.append("BiCGStab, rtol 1e-7, x0 = 0, b = A x (x random), at most 10000 iterations (`*`: not converged); solve = `KSPSolve()` after")
    L.append("the set-up, fastest of the batches; set-up + solve adds GSAI's set-up above. Speed-up: Jacobi's solve time / GSAI's.")
    L.append("")
    for kind, recs in (("gpu", gpu), ("cpu", cpu)):
        if not recs or not any("its_gsai" in r for r in recs):
            continue
        mt = recs[0].get("mat_type", "?")
        L.append(f"{'GPU, ' + str(recs[0].get('device', '?')) if kind == 'gpu' else 'CPU, one core'}, `{mt.upper()}`:")
        L.append("")
        L.append("| case | rows | its none | its Jacobi | its GSAI | " + ("its ParaSails | " if kind == "cpu" else "")
                 + "none (ms) | Jacobi (ms) | GSAI (ms) | GSAI set-up + solve (ms) | speed-up | with set-up |")
        L.append("|---|" + "---:|" * (11 if kind == "cpu" else 10))
        for r in recs:
            if "its_gsai" not in r:
                continue
            tj, tg, ts = r.get("time_jacobi_ms"), r.get("time_gsai_ms"), r.get("setup_ms")
            ok = r.get("converged_gsai") and r.get("converged_jacobi")
            sp = tj / tg if ok and isinstance(tj, (int, float)) and tg else None
            tot = tg + ts if isinstance(tg, (int, float)) and isinstance(ts, (int, float)) else None
            spt = tj / tot if ok and isinstance(tj, (int, float)) and tot else None
            row = [str(r["case"]), str(r.get("rows", "-")), its(r, "none"), its(r, "jacobi"), its(r, "gsai")]
            if kind == "cpu":
                row.append(its(r, "parasails"))
            row += [fmt_num(r.get("time_none_ms"), ".2f"), fmt_num(tj, ".2f"), fmt_num(tg, ".2f"), fmt_num(tot, ".2f"), fmt_ratio(sp), fmt_ratio(spt)]
            L.append("| " + " | ".join(row) + " |")
        L.append("")


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(top, "bench", "results"))
    ap.add_argument("--out", default=os.path.join(top, "docs", "performance.md"))
    ap.add_argument("--img", default=os.path.join(top, "docs", "img"))
    args = ap.parse_args()

    records = load_records(args.results)
    runs = {}
    for r in records:
        runs.setdefault(run_key(r), []).append(r)
    # newest run first; CPU before GPU on the same date
    order = sorted(runs, key=lambda k: (k[2], k[0] != "cpu"), reverse=True)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("report.py: matplotlib is not installed (pip install -r bench/requirements.txt); writing the tables without plots")

    out_dir = os.path.dirname(args.out)
    os.makedirs(out_dir, exist_ok=True)
    img_rel = os.path.relpath(args.img, out_dir)
    made = set()

    L = []
    L.append("# Performance")
    L.append("")
    L.append("<!-- Generated by bench/report.py from bench/results/*.json; edit those scripts, not this file. -->")
    L.append("")
    L.append("MATAMB and MATDCSR on the generated large matrices (SpMV against MATAIJCUSPARSE, MATSELLCUDA, cuSPARSE SELL/BSR;")
    L.append("insertion, iterative update, defragmentation, memory): [performance-formats.md](performance-formats.md), written by")
    L.append("`bench/report_formats.py` from `bench/results/amb/` and `bench/results/dcsr/` (`bash bench/amb.sh`, `bash bench/dcsr.sh` on a GPU;")
    L.append("`GPUKIT_AMB_GPUS=all bash bench/amb.sh` deals the 13 generated matrices to every GPU of the machine, so that one call measures them all).")
    L.append("")
    L.append("Many GPUs (weak and strong scaling of MATSGDIACUDA, CG and KSPCACG against MATMPIAIJCUSPARSE) and stock PETSc programs")
    L.append("with PCMG on the GPU (SNES ex19, KSP ex45: aijcusparse against sgdiacuda): [performance-multigpu.md](performance-multigpu.md)")
    L.append("(`bench/multigpu.sh`, `bench/stockmg.sh`; records in `bench/results/multigpu/`, `bench/results/stockmg/`).")
    L.append("")
    L.append("## How to reproduce")
    L.append("")
    L.append("- CPU: `make bench` builds the library and `bench/*.c`, runs `bench/run.sh` (every case on 1 and 2 MPI ranks),")
    L.append("  writes `bench/results/cpu-<date>.json` and regenerates this page with `bench/report.py`.")
    L.append("  The plots need matplotlib (`pip install -r bench/requirements.txt`); without it the tables are written and the plots skipped.")
    L.append("- GPU: on the GPU machine, `bash tests/gpu/run` (build, GPU suite, then `bench/gpu.sh`) or `bash bench/gpu.sh` alone")
    L.append("  runs the GPU cases (MATSGDIACUDA vs MATAIJCUSPARSE, VECCUDA vectors, one rank), writes `bench/results/gpu-<date>.json`")
    L.append("  (also to `$OUT`) and regenerates this page; bring the JSON file back into `bench/results/` and run `python3 bench/report.py`.")
    L.append("- One case by hand: `mpiexec -n 2 build/bench/sgdia_mult -dim 3 -dof 1 -stencil star -n 64 -reps 100` (`-help` lists the options);")
    L.append("  on a GPU: `build/gpu/bench/sgdia_mult -formats sgdiacuda,aijcusparse -use_gpu_aware_mpi 0 -dim 3 -n 256 -reps 100`.")
    L.append("")
    L.append("## What is measured")
    L.append("")
    L.append("`bench/sgdia_mult.c` builds one DMDA operator (width-1 stencil, non-periodic, every component pair of every")
    L.append("stencil coupling nonzero, pseudo-random values) once per format with the same `MatSetValuesStencil()` loop: on the")
    L.append("CPU as `MATSGDIA`, `MATAIJ` and `MATBAIJ` (block size dof), on the GPU as `MATSGDIACUDA` and `MATAIJCUSPARSE` with")
    L.append("`VECCUDA` vectors. Every product must agree with the baseline's (AIJ on the CPU, AIJCUSPARSE on the GPU) to 1e-12")
    L.append("(relative, infinity norm) before anything is timed.")
    L.append("")
    L.append("- **time**: one `MatMult`, from the fastest of several batches of `-reps` calls (after a warm-up), the slowest rank's")
    L.append("  time per batch; the batches cycle through the formats. The JSON records also hold the median batch.")
    L.append("- **GFlop/s**: 2 x (nonzeros of the AIJ matrix) / time, the same useful work for every format.")
    L.append("- **memory**: bytes the matrix stores, all ranks. SGDIA: its `MatGetInfo()` (values, including the zero")
    L.append("  slots of couplings that leave the domain). AIJ/BAIJ: PETSc 3.18's `MatGetInfo()` reports 0, so it is")
    L.append("  counted from the allocation: values + column (block) indices + row offsets (`memory_source` in the JSON).")
    L.append("- **vs AIJ / vs BAIJ**: speedup, time of AIJ (BAIJ) / time of the row's format; above 1 means faster than it.")
    L.append("- GPU runs: the device is synchronised before each clock reading. **GB/s**: the fewest bytes one product moves")
    L.append("  (SGDIA: k x dof x dof values of 8 bytes a grid point; AIJ: nnz x (8 + 4) + (rows + 1) x 4; plus x and y, 8 bytes")
    L.append("  a row each) / time. **copy bandwidth**: `VecCopy` between two `VECCUDA` vectors of 2^25 entries, 2 x 8 bytes an")
    L.append("  entry, fastest of several batches, measured in the same run; **% of copy bw** = GB/s / copy bandwidth.")
    L.append("  **vs AIJCUSPARSE**: time of AIJCUSPARSE / time of the row's format.")
    L.append("")

    if not order:
        L.append("No results yet: run `make bench`.")
        L.append("")
    for key in order:
        device, host, date, commit = key
        recs, cases, formats = sort_run(runs[key])
        first = recs[0]
        machine = first.get("machine", "unknown")
        petsc = first.get("petsc_version", "unknown")
        ranks = sorted({r.get("nranks", 0) for r in recs})
        L.append(f"## {'CPU' if device == 'cpu' else 'GPU (' + device + ')'}: {date}, commit `{commit}`")
        L.append("")
        if device != "cpu":
            L.append(f"- device: {device}")
        L.append(f"- machine: {host} ({machine})")
        L.append(f"- PETSc {petsc}; MPI ranks: {', '.join(str(n) for n in ranks)}; results file `bench/results/{first['_file']}`")
        extra = []
        if "source_state" in first:
            extra.append(f"library sources against the commit: {first['source_state']}")
        if "load_avg" in first:
            extra.append(f"load average when the run started: {first['load_avg']}")
        if extra:
            L.append("- " + "; ".join(extra))
        for note in dict.fromkeys(r["note"] for r in recs if r.get("note")):
            L.append(f"- note: {note}")
        if device == "cpu":
            cpu_table(L, recs, formats)
        else:
            gpu_table(L, recs, formats)
        name = f"{IMG_PREFIX}{slug(device)}-{slug(date)}-{slug(commit)}.png"
        path = os.path.join(args.img, name)
        if plt is not None:
            os.makedirs(args.img, exist_ok=True)
            plot_run(plt, recs, cases, formats, f"MatMult time per format ({device}, {host}, {date}, commit {commit}, PETSc {petsc})", path)
            made.add(name)
        if os.path.exists(path):
            L.append(f"![MatMult time per format, {device} {date}]({img_rel}/{name})")
        else:
            L.append("(plot not generated: matplotlib was not available when this page was written)")
        L.append("")

    # plots of runs whose records are gone
    if plt is not None and os.path.isdir(args.img):
        for old in glob.glob(os.path.join(args.img, IMG_PREFIX + "*.png")):
            if os.path.basename(old) not in made:
                os.remove(old)

    cavity_section(L, os.path.join(args.results, "cavity"))
    cacg_section(L, os.path.join(args.results, "cacg"))
    ex45_section(L, os.path.join(args.results, "cacg"))
    tune_section(L, os.path.join(args.results, "tune"))
    gsai_section(L, os.path.join(args.results, "gsai"))

    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(L).rstrip("\n") + "\n")
    print(f"report.py: wrote {os.path.relpath(args.out)} ({len(order)} run{'s' if len(order) != 1 else ''}, {len(made)} plot{'s' if len(made) != 1 else ''})")


if __name__ == "__main__":
    main()
