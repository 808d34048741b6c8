#!/usr/bin/env python3
"""Check the PETSc binary files written by tests/conformance/mtx2petsc against their Matrix Market sources, read
independently here: same size, the same entries at the same places (the other triangle of symmetric files added,
explicit zeros kept), rows sorted, and a right-hand side b_i = 1 + sin(i+1)/2 after the matrix.

    mtxcheck.py MATRIX_DIR [NAME...]      (no NAME: every tests/data/matrices/*.mtx.gz)

PETSc binary (big-endian): int32 MAT_FILE_CLASSID 1211216, M, N, nz, M row lengths, nz columns, nz float64 values;
then int32 VEC_FILE_CLASSID 1211214, n, n float64 values. Exit 1 with a message at the first difference."""
import gzip, math, os, struct, sys

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
src = os.path.join(top, "tests", "data", "matrices")


def read_mtx(path):
    with gzip.open(path, "rt") as f:
        banner = f.readline().split()
        field, sym = banner[3].lower(), banner[4].lower()
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        m, n, nz = (int(t) for t in line.split())
        ent = {}
        for _ in range(nz):
            line = f.readline()
            while line.startswith("%") or not line.strip():
                line = f.readline()
            t = line.split()
            i, j = int(t[0]) - 1, int(t[1]) - 1
            v = 1.0 if field == "pattern" else float(t[2])
            ent[(i, j)] = ent.get((i, j), 0.0) + v
            if sym != "general" and i != j:
                ent[(j, i)] = ent.get((j, i), 0.0) + (-v if sym == "skew-symmetric" else v)
    return m, n, ent


def read_petsc(path):
    with open(path, "rb") as f:
        data = f.read()
    off = 0

    def ints(k):
        nonlocal off
        r = struct.unpack_from(">%di" % k, data, off)
        off += 4 * k
        return r

    def dbls(k):
        nonlocal off
        r = struct.unpack_from(">%dd" % k, data, off)
        off += 8 * k
        return r

    cid, m, n, nz = ints(4)
    if cid != 1211216:
        raise SystemExit("%s: not a PETSc binary matrix (class id %d)" % (path, cid))
    rl = ints(m)
    cols = ints(nz)
    vals = dbls(nz)
    ent, k = {}, 0
    for i in range(m):
        row = cols[k:k + rl[i]]
        if list(row) != sorted(set(row)):
            raise SystemExit("%s: row %d is not sorted and duplicate-free" % (path, i))
        for t in range(rl[i]):
            ent[(i, cols[k + t])] = vals[k + t]
        k += rl[i]
    vcid, vn = ints(2)
    if vcid != 1211214 or vn != m:
        raise SystemExit("%s: no right-hand side of length %d after the matrix" % (path, m))
    b = dbls(vn)
    if off != len(data):
        raise SystemExit("%s: %d unexpected trailing bytes" % (path, len(data) - off))
    return m, n, ent, b


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    mdir = sys.argv[1]
    names = sys.argv[2:] or sorted(f[:-7] for f in os.listdir(src) if f.endswith(".mtx.gz"))
    for name in names:
        m, n, ent = read_mtx(os.path.join(src, name + ".mtx.gz"))
        pm, pn, pent, b = read_petsc(os.path.join(mdir, name + ".petsc"))
        if (m, n) != (pm, pn):
            raise SystemExit("%s: size %dx%d in the .mtx, %dx%d in the binary" % (name, m, n, pm, pn))
        if set(ent) != set(pent):
            d = sorted(set(ent) ^ set(pent))[:5]
            raise SystemExit("%s: the patterns differ (%d vs %d entries; e.g. %s)" % (name, len(ent), len(pent), d))
        for key, v in ent.items():
            if pent[key] != v:
                raise SystemExit("%s: entry %s is %r in the .mtx, %r in the binary" % (name, key, v, pent[key]))
        for i, bi in enumerate(b):
            if abs(bi - (1.0 + 0.5 * math.sin(i + 1))) > 1e-15:
                raise SystemExit("%s: b[%d] = %r, expected 1 + sin(%d)/2" % (name, i, bi, i + 1))
        nzero = sum(1 for v in ent.values() if v == 0.0)
        print("mtxcheck: %-14s %6d x %-6d %7d entries (%d explicit zeros) and the right-hand side: equal" % (name, m, n, len(ent), nzero))
    print("mtxcheck: %d matrices checked" % len(names))


main()
