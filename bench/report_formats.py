#!/usr/bin/env python3
"""Markdown section (tables) and plots for the MATAMB and MATDCSR benchmarks, from their JSON records.

Reads bench/results/amb/*.json* (bench/amb.sh, bench/amb_bench.c) and bench/results/dcsr/*.json* (bench/dcsr.sh,
bench/dcsr_bench.c): one record a line, or a JSON list. Records of one run share device, date and commit; each run
gets its tables; matplotlib (when importable) draws the plots into docs/img/. The section is written to
docs/performance-formats.md for docs/performance.md to include (bench/report.py is not changed by this script).

    python3 bench/report_formats.py [--results DIR] [--out FILE] [--img DIR]
    python3 bench/report_formats.py --print FILE...      text tables of these files on stdout, nothing written
"""
import argparse
import glob
import json
import math
import os
import re
import sys

AMB_ORDER = ["ambcuda", "ambcuda_single", "ambcuda_det", "aijcusparse", "sellcuda", "cusparse_sell", "cusparse_bsr",
             "amb", "aij", "sell", "baij"]
DCSR_METHODS = ["dcsr_device_coo", "dcsr_setvalues", "aij_coo_rebuild", "aij_setvalues"]


def load(paths):
    recs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            data = json.loads(text)
            data = data if isinstance(data, list) else [data]
        except json.JSONDecodeError:
            data = []
            for line in text.splitlines():
                if line.strip():
                    try:
                        data.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        print(f"report_formats.py: {path}: skipping a line that is not JSON ({e})", file=sys.stderr)
        for r in data:
            if isinstance(r, dict) and "bench" in r and "case" in r:
                r["_file"] = os.path.basename(path)
                recs.append(r)
    return recs


def num(v, spec, dash="-"):
    return format(v, spec) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else dash


def ratio(v):
    s = num(v, ".2f")
    return s + "x" if s != "-" else s


def pct(v):
    return num(100 * v, ".0f") + "%" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def geomean(vals):
    vals = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else float("nan")


def runs(recs):
    out = {}
    for r in recs:
        key = (str(r.get("device", "cpu")), str(r.get("date", "?")), str(r.get("commit", "?")))
        out.setdefault(key, []).append(r)
    return sorted(out.items(), key=lambda kv: kv[0][1], reverse=True)


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "", text.replace(":", "").replace("T", "-", 1))


def table(L, head, rows, align=None):
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "|".join(align or (["---"] + ["---:"] * (len(head) - 1))) + "|")
    for row in rows:
        L.append("| " + " | ".join(row) + " |")
    L.append("")


# ---------------------------------------------------------------------------------------------------------------- AMB
def amb_section(L, key, recs, plt, img_dir, img_rel):
    device, date, commit = key
    timed = [r for r in recs if "time_ms" in r]
    skipped = [r for r in recs if "skipped" in r]
    cases = list(dict.fromkeys(r["case"] for r in timed))
    formats = [f for f in AMB_ORDER if any(r["format"] == f for r in timed)]
    formats += sorted({r["format"] for r in timed} - set(formats))
    base = timed[0].get("baseline", "aijcusparse") if timed else "aijcusparse"
    lead = next((f for f in formats if f.startswith("amb")), None)
    by = {(r["case"], r["format"]): r for r in timed}
    r0 = timed[0] if timed else recs[0]
    L.append(f"### MATAMB: {device}, {date}, commit {commit}")
    L.append("")
    L.append(f"PETSc {r0.get('petsc_version', '?')}, {r0.get('nranks', 1)} rank(s), generator scale {r0.get('scale', '?')}; "
             f"host {r0.get('host', '?')} ({r0.get('machine', '?')}). Times are the fastest of {r0.get('batches', '?')} batches. "
             f"GB/s = CSR-equivalent bytes ({r0.get('bytes_formula', '12*nnz + 4*(rows+1) + 8*rows + 8*cols')}) over the time, "
             "so every format is charged the same bytes and GB/s ratios are time ratios; % of copy = that over the device copy "
             "bandwidth (VecCopy) measured in the same run.")
    copy = sorted({r.get("copy_gbps") for r in timed if isinstance(r.get("copy_gbps"), (int, float))})
    if copy:
        L.append(f"Copy bandwidth: {num(copy[0], '.0f')}{'' if len(copy) == 1 else '-' + num(copy[-1], '.0f')} GB/s.")
    L.append("")
    # summary
    summ = []
    for f in formats:
        sp = [by[(c, f)].get("speedup_vs_baseline") for c in cases if (c, f) in by]
        lo = [v for v in sp if isinstance(v, (int, float)) and v < 0.97]
        fr = geomean([by[(c, f)].get("frac_copy_bw") for c in cases if (c, f) in by])
        summ.append([f"**{f}**" if f == lead else f, str(len(sp)), ratio(geomean(sp)),
                     ratio(min([v for v in sp if isinstance(v, (int, float))], default=float("nan"))), str(len(lo)), pct(fr)])
    L.append(f"Geometric means over the matrices (speedup = {base} time / format time):")
    L.append("")
    table(L, ["format", "matrices", f"geomean vs {base}", "min", "below 0.97x", "geomean % of copy bw"], summ)
    # per matrix
    head = ["matrix", "rows", "nnz", "row mean / max", f"{base} ms", f"{base} % copy"]
    for f in formats:
        if f != base:
            head += [f"{f}"]
    rows = []
    for c in cases:
        b = by.get((c, base), {})
        rr = next(r for r in timed if r["case"] == c)
        row = [c, str(rr.get("rows", "-")), str(rr.get("nnz", "-")), f"{num(rr.get('row_mean'), '.1f')} / {rr.get('row_max', '-')}",
               num(b.get("time_ms"), ".3f"), pct(b.get("frac_copy_bw"))]
        for f in formats:
            if f == base:
                continue
            r = by.get((c, f))
            row.append(f"{ratio(r.get('speedup_vs_baseline'))} ({pct(r.get('frac_copy_bw'))})" if r else "-")
        rows.append(row)
    L.append(f"MatMult per matrix: speedup vs {base} (% of copy bandwidth):")
    L.append("")
    table(L, head, rows)
    # AMB details
    ambf = [f for f in formats if f.startswith("amb")]
    if ambf:
        rows = []
        for c in cases:
            for f in ambf:
                r = by.get((c, f))
                if not r:
                    continue
                fb = r.get("amb_csr_fallback")
                rows.append([c, f, num(r.get("amb_b"), ".0f"), num(r.get("amb_segment_width"), ".0f"),
                             r.get("amb_layout") or ("CSR" if fb else ("AMB" if fb is not None else "-")),
                             num(r.get("model_bytes") / r["csr_bytes"] if isinstance(r.get("model_bytes"), (int, float)) and r.get("csr_bytes") else None, ".2f"),
                             pct(r.get("model_frac_copy_bw")), num(r.get("conversion_spmv"), ".1f"), num(r.get("conversion_minus_baseline_spmv"), ".1f"), num(r.get("build_event_spmv"), ".1f"),
                             num(r.get("refresh_spmv"), ".1f"), num(r.get("refresh_coo_spmv"), ".1f"), num(r.get("refresh_scale_spmv"), ".2f"),
                             ratio(r.get("mult_transpose_speedup_vs_baseline")), ratio(r.get("ksp_gmres_speedup_vs_baseline")),
                             ratio(r.get("ksp_cg_speedup_vs_baseline")), num(r.get("conversion_device_spmv"), ".1f"),
                             num(r.get("tune_overhead_spmv"), ".1f"), num(r.get("refresh_coo_copydown_ms"), ".3f")])
        L.append("AMB details: b and segment width W chosen; kernel (AMB, or the CSR fallback); the traffic model's bytes "
                 "over the CSR-equivalent bytes; the model's bytes over the measured time as % of copy bandwidth; conversion "
                 "= (first MatMult after assembly - a steady one) / a steady one, the same minus the baseline's first product (both "
                 "upload the CSR: the difference is the AMB build), and the AMB build event alone, in SpMVs; "
                 "values refresh in SpMVs (MatSetValues + assembly + first product, and MatSetValuesCOO with device values + "
                 "first product, each minus one product; and the first product after a device MatScale less one product, the refresh with "
                 "no host work or value transfer in it); MatMultTranspose and KSPSolve per iteration (GMRES(30), CG on SPD "
                 f"matrices, Jacobi) as speedups vs {base}; the first product less the upload and one product (device conversion), "
                 "the tuner's search over its products, and the COO refresh's copy of the values down to the host.")
        L.append("")
        table(L, ["matrix", "format", "b", "W", "kernel", "model/CSR bytes", "model % copy", "conversion (SpMVs)", f"conversion - {base}'s (SpMVs)", "build event (SpMVs)",
                  "refresh (SpMVs)", "COO refresh (SpMVs)", "device refresh (SpMVs)", "transpose", "GMRES/it", "CG/it", "device conversion (SpMVs)", "tuner search (SpMVs)",
                  "COO copy-down ms"], rows, ["---", "---"] + ["---:"] * 17)
        rows = []
        for c in cases:
            r = by.get((c, base))
            if r:
                rows.append([c, num(r.get("conversion_spmv"), ".1f"), num(r.get("refresh_spmv"), ".1f"), num(r.get("refresh_coo_spmv"), ".1f"),
                             num(r.get("refresh_scale_spmv"), ".2f"), num(r.get("mult_transpose_ms"), ".3f"), num(r.get("ksp_gmres_ms_per_it"), ".3f"), num(r.get("ksp_cg_ms_per_it"), ".3f")])
        L.append(f"The baseline's own numbers ({base}): first product after assembly (upload) and refreshes in its SpMVs, "
                 "MatMultTranspose and KSPSolve ms per iteration:")
        L.append("")
        table(L, ["matrix", "first product (SpMVs)", "refresh (SpMVs)", "COO refresh (SpMVs)", "device refresh (SpMVs)", "transpose ms", "GMRES ms/it", "CG ms/it"], rows)
    if skipped:
        why = {}
        for r in skipped:
            why.setdefault((r["format"], r["skipped"]), []).append(r["case"])
        L.append("Not measured: " + "; ".join(f"{f} ({w}): {', '.join(dict.fromkeys(cs))}" for (f, w), cs in why.items()))
        L.append("")
    if plt and cases and formats:
        path = os.path.join(img_dir, f"amb-{slug(device)}-{slug(date)}.png")
        others = [f for f in formats if f != base]
        colour = {f: f"C{i % 10}" for i, f in enumerate(formats)}  # one colour a format in both panels
        fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.9 * len(cases) + 3), 7.5))
        width = 0.8 / max(len(others), 1)
        for fi, f in enumerate(others):
            xs = [i + (fi - (len(others) - 1) / 2) * width for i, c in enumerate(cases) if (c, f) in by]
            ys = [by[(c, f)].get("speedup_vs_baseline") or 0 for c in cases if (c, f) in by]
            axes[0].bar(xs, ys, width, label=f, color=colour[f])
        axes[0].axhline(1.0, color="k", lw=0.8)
        axes[0].set_ylabel(f"MatMult speedup vs {base}")
        axes[0].legend(fontsize=7, ncol=4)
        width = 0.8 / max(len(formats), 1)
        for fi, f in enumerate(formats):
            xs = [i + (fi - (len(formats) - 1) / 2) * width for i, c in enumerate(cases) if (c, f) in by]
            if copy:
                ys = [100 * (by[(c, f)].get("frac_copy_bw") or 0) for c in cases if (c, f) in by]
            else:
                ys = [by[(c, f)].get("gbps") or 0 for c in cases if (c, f) in by]
            axes[1].bar(xs, ys, width, label=f, color=colour[f])
        axes[1].set_ylabel("% of copy bandwidth (CSR bytes)" if copy else "GB/s (CSR bytes)")
        axes[1].legend(fontsize=7, ncol=4)
        for ax in axes:
            ax.set_xticks(range(len(cases)))
            ax.set_xticklabels(cases, rotation=30, ha="right", fontsize=8)
        fig.suptitle(f"MATAMB MatMult (FP64), {device}, {date}", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        L.append(f"![MATAMB MatMult, {device}]({os.path.join(img_rel, os.path.basename(path))})")
        L.append("")


# --------------------------------------------------------------------------------------------------------------- DCSR
def dcsr_section(L, key, recs, plt, img_dir, img_rel):
    device, date, commit = key
    r0 = recs[0]
    base = r0.get("baseline", "aijcusparse")
    cases = list(dict.fromkeys(r["case"] for r in recs))
    L.append(f"### MATDCSR: {device}, {date}, commit {commit}")
    L.append("")
    L.append(f"PETSc {r0.get('petsc_version', '?')}, {r0.get('nranks', 1)} rank(s); host {r0.get('host', '?')} ({r0.get('machine', '?')}). "
             f"Baseline {base}. `aij_setvalues` (MatSetValues with MAT_NEW_NONZERO_ALLOCATION_ERR false + assembly) is "
             "EXTRAPOLATED from a timed sample of entries (each new entry in a full row reallocates the whole matrix on the "
             "host); `aij_coo_rebuild` is MatSetPreallocationCOO + MatSetValuesCOO with all entries (host arrays); "
             "`dcsr_setvalues` is MatSetValues + assembly; `dcsr_device_coo` is MatDCSRSetValuesCOODevice with device arrays. "
             "Every time runs to the end of the first MatMult after the insertion (device synchronised).")
    L.append("")
    st = [r for r in recs if r.get("test") == "streaming"]
    if st:
        rows = []
        for c in cases:
            for fr in sorted({r.get("fraction") for r in st if r["case"] == c}):
                rr = {r["method"]: r for r in st if r["case"] == c and r.get("fraction") == fr}
                any_r = next(iter(rr.values()))
                row = [c, f"{100 * fr:g}%", str(int(any_r.get("entries", 0)))]
                for m in DCSR_METHODS:
                    r = rr.get(m)
                    row.append(f"{num(r.get('time_ms'), '.2f')} ms, {num(r.get('spmv_equiv'), '.0f')} SpMVs" + ("" if r.get("correct", 1) else " WRONG") if r else "-")
                d = rr.get("dcsr_device_coo") or rr.get("dcsr_setvalues")
                row.append(ratio(d.get("speedup_vs_coo_rebuild")) if d else "-")
                rows.append(row)
        L.append("Streaming insertion of one batch (time, and in the baseline's SpMVs):")
        L.append("")
        table(L, ["matrix", "batch", "entries"] + DCSR_METHODS + ["DCSR vs COO rebuild"], rows)
    it = [r for r in recs if r.get("test") == "iterative"]
    if it:
        rows = []
        for c in cases:
            rr = {r["method"]: r for r in it if r["case"] == c}
            if not rr:
                continue
            a = next(iter(rr.values()))
            row = [c, f"{int(a.get('steps', 0))} x [{100 * a.get('fraction', 0):g}%, {int(a.get('mults_per_step', 0))} MatMult]"]
            for m in DCSR_METHODS:
                r = rr.get(m)
                row.append(f"{num(r.get('time_ms'), '.0f')} ms ({ratio(r.get('speedup_vs_coo_rebuild'))})" + ("" if r.get("correct", 1) else " WRONG") if r else "-")
            d = rr.get("dcsr_device_coo") or {}
            row.append(f"{num(d.get('batch_ms'), '.3f')} ms = {num(d.get('batch_spmv'), '.1f')} SpMVs" if d.get("batch_ms") is not None else "-")
            rows.append(row)
        L.append("Iterative protocol, total time (speedup vs the COO rebuild); the last column is one device batch alone, mean over "
                 "the steps, in the baseline's SpMVs (recorded since 2026-11-27, session 13):")
        L.append("")
        table(L, ["matrix", "protocol"] + DCSR_METHODS + ["device batch alone"], rows)
    sp = [r for r in recs if r.get("test") == "spmv"]
    if sp:
        rows = [[r["case"], num(r.get("aij_mult_ms"), ".4f"), num(r.get("fragmented_ms"), ".4f"), ratio(r.get("fragmented_vs_aij")),
                 num(r.get("defragmented_ms"), ".4f"), ratio(r.get("defragmented_vs_aij")), num(r.get("defrag_ms"), ".3f"),
                 num(r.get("defrag_spmv"), ".1f"),
                 f"{num(r.get('defrag_later_ms'), '.3f')} ms = {num(r.get('defrag_later_spmv'), '.1f')}" if r.get("defrag_later_ms") is not None else "-",
                 f"{num(r.get('segments_in_use'), '.0f')} / {num(r.get('max_segments'), '.0f')}",
                 base_product(r),
                 f"{100 * r['fragmented_marked_fraction']:.1f}%" if isinstance(r.get("fragmented_marked_fraction"), (int, float)) else "-",
                 f"{ratio(r.get('bound_fragmented_vs_aij'))} ({100 * r['bound_marked_fraction']:.1f}%)" if isinstance(r.get("bound_marked_fraction"), (int, float)) else "-"] for r in sp]
        L.append(f"SpMV after the iterative protocol: DCSR fragmented and after MatDCSRDefragment against {base} with the same entries:")
        L.append("")
        L.append("(The later defragmentation, recorded since session 14: more batches of new entries after the first one, "
                 "then one timed with the buffers the first one left, in SpMVs of the defragmented product. Until session 18, 10 "
                 "batches; since session 19, on the GPU, the batches until the next one would pass the auto defragmentation's "
                 "bound (-mat_dcsr_defrag_fraction), where the fragmented product is timed again against an AIJCUSPARSE copy of "
                 "the same entries: the last column, with the rows marked then. That is the most fragmented state the default "
                 "policy leaves.)")
        L.append("")
        L.append("(Since session 18: the fragmented product's kernel (on the CSR base: cuSPARSE and the fix-up, or the base stream "
                 "kernel; the ablation records of session 18 also have the removed base rows kernel and the fix-up beside cuSPARSE), "
                 "and the rows marked since the base.)")
        L.append("")
        table(L, ["matrix", f"{base} ms", "fragmented ms", "vs base", "defragmented ms", "vs base", "defrag ms", "defrag (SpMVs)", "later defrag (SpMVs)", "segments in use / K", "fragmented product", "rows marked", "fragmented at the bound (rows marked)"], rows)
    mem = [r for r in recs if r.get("test") == "memory"]
    if mem:
        rows = [[r["case"], str(r.get("nnz", "-")), num(r.get("aij_mult_ms"), ".4f"), num(r.get("dcsr_mult_ms"), ".4f"), ratio(r.get("dcsr_vs_aij")),
                 num((r.get("aij_device_bytes") or 0) / 1e6 if r.get("aij_device_bytes") is not None else None, ".1f"),
                 num((r.get("dcsr_device_bytes") or 0) / 1e6 if r.get("dcsr_device_bytes") is not None else None, ".1f"),
                 num(r.get("dcsr_vs_aij_memory"), ".2f"),
                 num(r["dcsr_storage_bytes"] / 1e6 if isinstance(r.get("dcsr_storage_bytes"), (int, float)) else None, ".1f"),
                 num(r.get("dcsr_storage_vs_aij"), ".2f"),
                 num(r["dcsr_work_bytes"] / 1e6 if isinstance(r.get("dcsr_work_bytes"), (int, float)) else None, ".1f"),
                 f"{num(r.get('dcsr_used'), '.0f')} / {num(r.get('dcsr_capacity'), '.0f')}"] for r in mem]
        L.append("As assembled: MatMult and device memory (cudaMemGetInfo around creation + first product); what the DCSR matrix "
                 "holds (segment tables, buffers at capacity, product bins) and the rest of the measured memory (the pool's "
                 "reserve of work space), DCSR used / capacity entries:")
        L.append("")
        table(L, ["matrix", "nnz", f"{base} ms", "DCSR ms", "DCSR speed", f"{base} MB", "DCSR MB", "DCSR / base memory", "DCSR held MB", "held / base",
                  "pool reserve MB", "used / capacity"], rows)
    if plt and st:
        path = os.path.join(img_dir, f"dcsr-{slug(device)}-{slug(date)}.png")
        fig, axes = plt.subplots(1, len(cases), figsize=(4.5 * len(cases), 3.8), squeeze=False)
        for ax, c in zip(axes.flat, cases):
            frs = sorted({r.get("fraction") for r in st if r["case"] == c})
            width = 0.8 / len(DCSR_METHODS)
            for mi, m in enumerate(DCSR_METHODS):
                xs, ys = [], []
                for fi, fr in enumerate(frs):
                    r = next((r for r in st if r["case"] == c and r.get("fraction") == fr and r["method"] == m), None)
                    if r and isinstance(r.get("entries_per_s"), (int, float)):
                        xs.append(fi + (mi - (len(DCSR_METHODS) - 1) / 2) * width)
                        ys.append(r["entries_per_s"])
                if xs:
                    ax.bar(xs, ys, width, label=m)
            ax.set_yscale("log")
            ax.set_xticks(range(len(frs)))
            ax.set_xticklabels([f"{100 * f:g}% of nnz" for f in frs], fontsize=8)
            ax.set_ylabel("new entries per second")
            ax.set_title(c, fontsize=10)
            ax.legend(fontsize=7)
        fig.suptitle(f"MATDCSR streaming insertion, {device}, {date}", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        L.append(f"![MATDCSR streaming insertion, {device}]({os.path.join(img_rel, os.path.basename(path))})")
        L.append("")


def build(recs, plt, img_dir, img_rel):
    L = []
    amb = [r for r in recs if r.get("bench") == "amb_bench"]
    dcsr = [r for r in recs if r.get("bench") == "dcsr_bench"]
    if amb:
        L.append("## MATAMB / MATAMBCUDA: SpMV on the generated large matrices")
        L.append("")
        L.append("Generated by tests/common/gkgen.c (`bench/genmat -list`; statistics in each table); run by `bash bench/amb.sh`.")
        L.append("")
        for key, rr in runs(amb):
            amb_section(L, key, rr, plt, img_dir, img_rel)
    if dcsr:
        L.append("## MATDCSR / MATDCSRCUDA: new nonzeros after assembly")
        L.append("")
        L.append("Run by `bash bench/dcsr.sh` (bench/dcsr_bench.c; issue 17's protocols).")
        L.append("")
        for key, rr in runs(dcsr):
            dcsr_section(L, key, rr, plt, img_dir, img_rel)
    return L


def base_product(r):
    """the fragmented product's kernel of a DCSR spmv record (fragmented_kernel/_lanes, since session 18)"""
    k, t = r.get("fragmented_kernel"), r.get("fragmented_lanes")
    if k is None:
        return "-"
    k, t = int(k), int(t or 0)
    if k != 3:
        return {0: "binned", 1: "fused", 2: f"rows ({t} lanes)"}.get(k, str(k))
    if t == 64:
        return "base: stream"
    if t > 0:
        return f"base: rows ({t} lanes)"
    return "base: cuSPARSE + fix-up beside" if t < 0 else "base: cuSPARSE + fix-up"


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(top, "bench", "results"))
    ap.add_argument("--out", default=os.path.join(top, "docs", "performance-formats.md"))
    ap.add_argument("--img", default=os.path.join(top, "docs", "img"))
    ap.add_argument("--print", nargs="+", metavar="FILE", dest="prints", help="print the tables of these files; write nothing")
    args = ap.parse_args()
    if args.prints:
        recs = load(args.prints)
        print("\n".join(build(recs, None, ".", ".")))
        return 0
    paths = sorted(glob.glob(os.path.join(args.results, "amb", "*.json*")) + glob.glob(os.path.join(args.results, "dcsr", "*.json*")))
    recs = load(paths)
    if not recs:
        print(f"report_formats.py: no records under {args.results}/amb or {args.results}/dcsr", file=sys.stderr)
        return 1
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("report_formats.py: matplotlib is not installed; tables without plots", file=sys.stderr)
    os.makedirs(args.img, exist_ok=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    img_rel = os.path.relpath(args.img, os.path.dirname(args.out))
    L = ["<!-- written by bench/report_formats.py from bench/results/amb and bench/results/dcsr; do not edit -->", ""] + build(recs, plt, args.img, img_rel)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(L) + "\n")
    print(f"report_formats.py: {len(recs)} records -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
