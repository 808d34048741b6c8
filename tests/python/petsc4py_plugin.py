#!/usr/bin/env python3
"""gpukit from petsc4py: load libpetscgpukit.so into a Python PETSc session and use MATSGDIA, PCGSAI and KSPCACG.

    [PETSC_OPTIONS="-dll_append /abs/lib/libpetscgpukit.so"] \
    [mpiexec -n 2] python3 tests/python/petsc4py_plugin.py --load env|init|none [--lib PATH] [--dim 2|3] [--n N]
                                                           [--expect-error load|type] [-- PETSc options ...]

--load env   the plugin comes from PETSC_OPTIONS (-dll_append); the script checks that PETSC_OPTIONS names it
--load init  the script passes ['-dll_append', LIB] to petsc4py.init() (LIB: --lib, else $LIB)
--load none  the plugin is not loaded (only with --expect-error type: asking for 'sgdia' must then fail)

The run builds the 5-point (2-D) or 7-point (3-D) Laplacian on an n^dim DMDA (Dirichlet boundary rows, identity)
twice through MatSetValuesStencil, once as -dm_mat_type sgdia and once as aij, and fails unless
  - the types are the ones asked for (seqsgdia/mpisgdia, seqaij/mpiaij, KSP 'cacg', PC 'gsai'), and KSPView shows
    the options that reached the plugin's types (-ca_ksp_cacg_s (4 unless given), -ca_ksp_cacg_basis,
    -ca_pc_gsai_type spd, -ca_pc_gsai_pattern when given) and the sgdia operator;
  - MatMult of the sgdia matrix equals the AIJ one (1e-13 relative), and both equal the stencil applied with numpy
    on the ghosted local array (an independent reference); the diagonals are equal;
  - CACG + GSAI on the sgdia matrix and CG + Jacobi on the AIJ matrix both converge, their solutions agree to 1e-6
    relative, and the CG solution is the exact solution u of A u = b (b = A_aij u) to 1e-6 relative.
--expect-error load: PETSc's initialisation must raise petsc4py.PETSc.Error with PETSC_ERR_FILE_OPEN (a bad
-dll_append path); the list line also checks PETSc's message. --expect-error type: creating the sgdia matrix must
raise PETSc.Error with PETSC_ERR_UNKNOWN_TYPE.
Exit status 0 on success, 1 on any failed check (the message says which).
"""
import argparse
import os
import sys
import tempfile

import numpy as np


# PETSc error codes (petscerror.h; the same in every release gpukit supports)
PETSC_ERR_FILE_OPEN = 65
PETSC_ERR_UNKNOWN_TYPE = 86


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--load", choices=["env", "init", "none"], required=True)
    p.add_argument("--lib", default=os.environ.get("LIB", ""))
    p.add_argument("--dim", type=int, choices=[2, 3], default=2)
    p.add_argument("--n", type=int, default=0, help="grid points per direction (default 33 in 2-D, 12 in 3-D)")
    p.add_argument("--expect-error", choices=["load", "type"], default=None)
    p.add_argument("petsc", nargs="*", help="PETSc options (after --)")
    a = p.parse_args()
    if a.n == 0:
        a.n = 33 if a.dim == 2 else 12
    if a.n < 3:
        p.error("--n must be at least 3")
    if a.load == "none" and a.expect_error != "type":
        p.error("--load none is only for --expect-error type")
    if a.load == "init" and not a.lib:
        p.error("--load init needs --lib PATH (or $LIB)")
    return a


def init_petsc(a):
    """petsc4py.init() with the plugin loaded the way --load asks; returns the PETSc module."""
    import petsc4py

    args = [sys.argv[0]] + a.petsc
    if a.load == "env":
        opts = os.environ.get("PETSC_OPTIONS", "")
        if "-dll_append" not in opts:
            fail("--load env, but PETSC_OPTIONS does not hold -dll_append: '%s'" % opts)
    elif a.load == "init":
        args += ["-dll_append", a.lib]
    if a.expect_error == "load":
        try:
            petsc4py.init(args)
            from petsc4py import PETSc  # PETSc initialises here at the latest
        except Exception as e:  # petsc4py.PETSc.Error, which we cannot name before the import succeeded
            code = getattr(e, "ierr", None)
            if type(e).__name__ != "Error" or code is None:
                fail("PETSc's initialisation raised %s: %s, not petsc4py.PETSc.Error" % (type(e).__name__, e))
            if code != PETSC_ERR_FILE_OPEN:
                fail("PETSc's initialisation failed with error code %d, not PETSC_ERR_FILE_OPEN (%d)" % (code, PETSC_ERR_FILE_OPEN))
            print("ok: loading the plugin failed as expected: petsc4py.PETSc.Error, error code %d" % code)
            sys.exit(0)
        PETSc.Sys.Print("FAIL: PETSc initialised although -dll_append names a library that does not exist")
        sys.exit(1)
    petsc4py.init(args)
    from petsc4py import PETSc

    return PETSc


def check(PETSc, cond, msg):
    """collective check: every rank fails when one does"""
    flag = PETSc.Vec().createMPI((1, None), comm=PETSc.COMM_WORLD)
    flag.set(0.0)
    if not cond:
        flag.setValue(flag.getOwnershipRange()[0], 1.0)
    flag.assemble()
    bad = flag.sum() > 0
    flag.destroy()
    if bad:
        if not cond:
            print("FAIL [rank %d]: %s" % (PETSc.COMM_WORLD.getRank(), msg), flush=True)
        PETSc.COMM_WORLD.barrier()
        sys.exit(1)
    PETSc.Sys.Print("ok: " + msg)


def assemble_laplacian(PETSc, da, mattype):
    """the (2*dim+1)-point Laplacian on da as mattype, through MatSetValuesStencil; boundary rows identity,
    couplings to boundary points left out (so the matrix is symmetric positive definite)"""
    dim = da.getDim()
    M = da.getSizes()
    da.setMatType(mattype)
    A = da.createMatrix()
    (xs, xm), (ys, ym), (zs, zm) = (list(da.getRanges()) + [(0, 1), (0, 1)])[:3]
    row, col = PETSc.Mat.Stencil(), PETSc.Mat.Stencil()
    offs = [o for o in [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)][: 2 * dim]]

    def interior(p):
        return all(0 < p[d] < M[d] - 1 for d in range(dim))

    for k in range(zs, zm):
        for j in range(ys, ym):
            for i in range(xs, xm):
                p = (i, j, k)[:dim]
                row.index = p
                col.index = p
                if not interior(p):
                    A.setValueStencil(row, col, 1.0)
                    continue
                A.setValueStencil(row, col, 2.0 * dim)
                for o in offs:
                    q = tuple(p[d] + o[d] for d in range(dim))
                    if interior(q):
                        col.index = q
                        A.setValueStencil(row, col, -1.0)
    A.assemble()
    return A


def field(da):
    """a smooth field with every mode, from the global grid indices (the same on any number of ranks)"""
    v = da.createGlobalVec()
    a = da.getVecArray(v)
    dim = da.getDim()
    M = da.getSizes()
    rng = da.getRanges()
    idx = np.meshgrid(*[np.arange(s, e) for s, e in rng], indexing="ij")
    val = np.ones(idx[0].shape)
    for d in range(dim):
        t = idx[d] / (M[d] - 1.0)
        val *= np.sin(np.pi * (d + 1) * t + 0.3 * d) + 0.5 * t
    a[...] = val
    return v


def stencil_reference(da, x):
    """y = A x with numpy on the ghosted local array: an independent check of both matrices"""
    dim = da.getDim()
    M = da.getSizes()
    xl = da.createLocalVec()
    da.globalToLocal(x, xl)
    xa = da.getVecArray(xl)  # indexed by global grid indices over the ghosted box
    y = da.createGlobalVec()
    ya = da.getVecArray(y)
    rng = da.getRanges()
    for p in np.ndindex(*[e - s for s, e in rng]):
        g = tuple(rng[d][0] + p[d] for d in range(dim))
        if not all(0 < g[d] < M[d] - 1 for d in range(dim)):
            ya[g] = xa[g]
            continue
        s = 2.0 * dim * xa[g]
        for d in range(dim):
            for sgn in (1, -1):
                q = list(g)
                q[d] += sgn
                q = tuple(q)
                if all(0 < q[e] < M[e] - 1 for e in range(dim)):
                    s -= xa[q]
        ya[g] = s
    xl.destroy()
    return y


def viewed(PETSc, obj):
    """what obj.view() prints, as a string (an ASCII viewer on a file; rank 0's text)"""
    comm = PETSc.COMM_WORLD
    name = os.path.join(tempfile.gettempdir(), "gpukit-petsc4py-view-%d-%s.txt" % (os.getppid(), obj.getType()))
    v = PETSc.Viewer().createASCII(name, comm=comm)
    obj.view(v)
    v.destroy()
    comm.barrier()
    with open(name) as f:
        text = f.read()
    comm.barrier()
    if comm.getRank() == 0:
        os.remove(name)
    return text


def main():
    a = parse()
    PETSc = init_petsc(a)
    comm = PETSc.COMM_WORLD
    size = comm.getSize()
    PETSc.Sys.Print("petsc4py %s, PETSc %s, %d rank(s), plugin loaded through %s, %d-D, n = %d"
                    % (__import__("petsc4py").__version__, ".".join(map(str, PETSc.Sys.getVersion())), size,
                       a.load, a.dim, a.n))

    da = PETSc.DMDA().create(dim=a.dim, dof=1, sizes=(a.n,) * a.dim, stencil_type=PETSc.DMDA.StencilType.STAR,
                             stencil_width=1, comm=comm)
    if a.expect_error == "type":
        try:
            da.setMatType("sgdia")
            A = da.createMatrix()
        except PETSc.Error as e:
            if e.ierr != PETSC_ERR_UNKNOWN_TYPE:
                fail("creating an 'sgdia' matrix without the plugin failed with error code %d, not PETSC_ERR_UNKNOWN_TYPE (%d)" % (e.ierr, PETSC_ERR_UNKNOWN_TYPE))
            PETSc.Sys.Print("ok: without the plugin, -dm_mat_type sgdia is an error (PETSc error code %d)" % e.ierr)
            return 0
        fail("a matrix of type 'sgdia' was created (%s) although the plugin was not loaded" % A.getType())

    As = assemble_laplacian(PETSc, da, "sgdia")
    Aa = assemble_laplacian(PETSc, da, "aij")
    want = "seq" if size == 1 else "mpi"
    check(PETSc, As.getType() == want + "sgdia", "the sgdia matrix has type %s" % As.getType())
    check(PETSc, Aa.getType() == want + "aij", "the AIJ matrix has type %s" % Aa.getType())

    # MatMult: sgdia against AIJ against the stencil applied with numpy
    x = field(da)
    ys, ya = As.createVecLeft(), Aa.createVecLeft()
    As.mult(x, ys)
    Aa.mult(x, ya)
    yr = stencil_reference(da, x)
    nrm = ya.norm(PETSc.NormType.INFINITY)
    d1 = ys.copy()
    d1.axpy(-1.0, ya)
    d2 = ya.copy()
    d2.axpy(-1.0, yr)
    e1 = d1.norm(PETSc.NormType.INFINITY) / nrm
    e2 = d2.norm(PETSc.NormType.INFINITY) / nrm
    check(PETSc, e1 <= 1e-13, "MatMult sgdia = AIJ (max relative difference %.1e)" % e1)
    check(PETSc, e2 <= 1e-13, "MatMult AIJ = the numpy stencil (max relative difference %.1e)" % e2)
    ds, da_ = As.getDiagonal(), Aa.getDiagonal()
    ds.axpy(-1.0, da_)
    check(PETSc, ds.norm(PETSc.NormType.INFINITY) == 0.0, "the diagonals of sgdia and AIJ are equal")

    # solves: b = A u; CG + Jacobi on AIJ, CACG + GSAI(spd) on sgdia (options through the database, prefix ca_)
    u = x
    b = ya
    opts = PETSc.Options()
    if not opts.hasName("ca_ksp_cacg_s"):
        opts["ca_ksp_cacg_s"] = "4"
    opts["ca_pc_gsai_type"] = "spd"
    s_want = opts.getInt("ca_ksp_cacg_s")
    basis_want = opts.getString("ca_ksp_cacg_basis", "newton")
    pattern_want = opts.getString("ca_pc_gsai_pattern") if opts.hasName("ca_pc_gsai_pattern") else None  # the default may change
    ref = PETSc.KSP().create(comm)
    ref.setOperators(Aa)
    ref.setType("cg")
    ref.getPC().setType("jacobi")
    ref.setTolerances(rtol=1e-11, atol=0.0, max_it=2000)
    ref.setFromOptions()
    ca = PETSc.KSP().create(comm)
    ca.setOptionsPrefix("ca_")
    ca.setOperators(As)
    ca.setType("cacg")
    ca.getPC().setType("gsai")
    ca.setTolerances(rtol=1e-11, atol=0.0, max_it=2000)
    ca.setFromOptions()
    check(PETSc, ca.getType() == "cacg" and ca.getPC().getType() == "gsai",
          "the KSP/PC types are %s/%s" % (ca.getType(), ca.getPC().getType()))
    xr, xc = u.duplicate(), u.duplicate()
    ref.solve(b, xr)
    ca.solve(b, xc)
    rr, rc = ref.getConvergedReason(), ca.getConvergedReason()
    check(PETSc, rr > 0, "CG + Jacobi (AIJ) converged: reason %d, %d iterations" % (rr, ref.getIterationNumber()))
    check(PETSc, rc > 0, "CACG + GSAI (sgdia) converged: reason %d, %d iterations" % (rc, ca.getIterationNumber()))
    view = viewed(PETSc, ca)
    for text in ["type: cacg", "s = %d CG steps" % s_want, "basis %s" % basis_want, "type: gsai", "type spd",
                 "type: %s" % As.getType()] + (["pattern %s" % pattern_want] if pattern_want else []):
        check(PETSc, text in view, "the KSP viewer shows '%s' (options with prefix ca_ reached the plugin)" % text)
    du = xr.copy()
    du.axpy(-1.0, u)
    eu = du.norm() / u.norm()
    dc = xc.copy()
    dc.axpy(-1.0, xr)
    ec = dc.norm() / xr.norm()
    check(PETSc, eu <= 1e-6, "the CG solution is the exact one (relative error %.1e)" % eu)
    check(PETSc, ec <= 1e-6, "the CACG + GSAI solution matches CG's (relative difference %.1e)" % ec)
    for o in (ref, ca, As, Aa, da):
        o.destroy()
    PETSc.Sys.Print("petsc4py_plugin: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
