# gpukit from petsc4py: a 2-D Poisson problem on a DMDA with MATSGDIA, KSPCACG and PCGSAI (docs/python.md).
#   python3 tests/python/example.py [PETSc options]        (GPUKIT_LIB: the plugin; default lib/libpetscgpukit.so)
import os
import sys

import petsc4py

lib = os.path.abspath(os.environ.get("GPUKIT_LIB", "lib/libpetscgpukit.so"))
petsc4py.init(sys.argv + ["-dll_append", lib])  # before the first 'from petsc4py import PETSc'
from petsc4py import PETSc

n = 65
da = PETSc.DMDA().create(dim=2, sizes=(n, n), stencil_width=1, stencil_type=PETSc.DMDA.StencilType.STAR)
da.setMatType("sgdia")  # gpukit's structured-grid format (with a CUDA PETSc: "sgdiacuda")
A = da.createMatrix()

# the 5-point Laplacian; boundary rows are the identity, and interior rows leave the boundary out (SPD)
row, col = PETSc.Mat.Stencil(), PETSc.Mat.Stencil()
(xs, xe), (ys, ye) = da.getRanges()
for j in range(ys, ye):
    for i in range(xs, xe):
        row.index = (i, j)
        col.index = (i, j)
        if i in (0, n - 1) or j in (0, n - 1):
            A.setValueStencil(row, col, 1.0)
            continue
        A.setValueStencil(row, col, 4.0)
        for p, q in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
            if 0 < p < n - 1 and 0 < q < n - 1:
                col.index = (p, q)
                A.setValueStencil(row, col, -1.0)
A.assemble()

b = da.createGlobalVec()
b.set(1.0)
x = b.duplicate()

# gpukit's own options (PCGSAISetType(), KSPCACGSetS(), ...) have no petsc4py methods: set them in the database
opts = PETSc.Options()
opts["pc_gsai_type"] = "spd"  # FSAI: M = G^T G, symmetric, for CG
ksp = PETSc.KSP().create()
ksp.setOperators(A)
ksp.setType("cacg")
ksp.getPC().setType("gsai")
ksp.setTolerances(rtol=1e-8)
ksp.setFromOptions()  # also reads -ksp_cacg_s, -ksp_cacg_basis, -pc_gsai_pattern, ... from the command line
ksp.solve(b, x)

r = b.duplicate()
A.mult(x, r)
r.aypx(-1.0, b)  # r = b - A x
PETSc.Sys.Print("%s + %s on a %s matrix: converged reason %d after %d iterations, |b - Ax|/|b| = %.1e"
                % (ksp.getType(), ksp.getPC().getType(), A.getType(), ksp.getConvergedReason(),
                   ksp.getIterationNumber(), r.norm() / b.norm()))
