/*
   MATSGDIA's matrix powers kernel, composed as "MatMatrixPowers_C" (contract in src/mat/utils/gpukitmat.h):

     for j = 0..k-1:  W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j],   V[j+1] = dinv .* W[j+1]

   Three routes, chosen per call:
   - local (one rank without periodic dimensions, or stencil width 0): no ghosts; each level is one pass over the
     owned rows that does the product, the three-term update and the Jacobi scaling together (SGDIAMPKLevel);
   - ghost region (several ranks or periodic dimensions): ONE neighbour exchange per call gathers V[0] and W[0]
     over a ghost region of depth kc*sw (kc >= k levels, sw the stencil width): one PetscSFBcast with a unit of
     2*dof scalars over a star forest built once from the matrix's grid description (each ghost point of the box ->
     its owner and position there; no collective but PetscSFSetUp()'s one reduction). Level j+1 is then computed on
     the owned box grown by (k-1-j)*sw (clipped to the domain, wrapped in periodic dimensions), so the last level is
     exactly the owned box and no further message is needed. Only W is kept over the box: the product of level j+1
     reads dinv .* W[j] there (the same rounding as V[j]), and V[j+1] is written for the owned points only. This needs the rows of the ghost points up to depth (k-1)*sw, and dinv on
     the ghost points: both are gathered once and cached, keyed on the matrix's object state and on dinv's id and
     state. The depth is built for the largest k seen (KSPCACG calls with k = s and s-1 alternately), so a call
     with a smaller k reuses it;
   - fallback (GpukitMatMatrixPowersReference(): k MatMult + the update + VecPointwiseMult) when the ghost region does
     not fit: a rank's box narrower than the depth kc*sw in a direction that is exchanged (the region would reach
     past the neighbouring ranks: more messages and redundant work than it saves; DMDA's own limit too), a
     periodic dimension shorter than the stencil, or a matrix of another type (MATSGDIACUDA composes its own or
     none). -info says why, once per depth.
   -mat_sgdia_mpk_ghost_region false forces the fallback, true makes a region that does not fit an error (default:
   the region whenever it fits). The set-up (SGDIAMPKChooseRoute_Private(), the gathers; struct in sgdiampk.h) is
   shared with MATSGDIACUDA's device route (sgdiapowerscuda.cu), which uploads the box values and runs the levels
   as kernels.
*/
#include "sgdiampk.h"
#include "gpukitmat.h"

PetscLogEvent MAT_SGDIA_MatPowers;

static PetscInt SGDIAMPKGenerations = 0;

static PetscErrorCode SGDIAMPKReset(SGDIAMPK mk)
{
  PetscFunctionBegin;
  PetscCall(PetscSFDestroy(&mk->sf));
  PetscCall(PetscFree(mk->gidx));
  PetscCall(PetscFree(mk->rp));
  if (mk->uv != MPI_DATATYPE_NULL) PetscCallMPI(MPI_Type_free(&mk->uv));
  if (mk->uvw != MPI_DATATYPE_NULL) PetscCallMPI(MPI_Type_free(&mk->uvw));
  if (mk->um != MPI_DATATYPE_NULL) PetscCallMPI(MPI_Type_free(&mk->um));
  PetscCall(PetscFree(mk->off));
  PetscCall(PetscFree(mk->val));
  PetscCall(PetscFree(mk->dg));
  for (PetscInt i = 0; i < 4; i++) PetscCall(PetscFree(mk->buf[i]));
  PetscCall(PetscFree2(mk->root, mk->leaf));
  PetscCall(PetscFree2(mk->line, mk->sl));
  mk->kc    = 0;
  mk->valok = PETSC_FALSE;
  mk->dok   = PETSC_FALSE;
  mk->gen   = ++SGDIAMPKGenerations; /* unique over all matrices: a device copy keyed on it is never taken for another's */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGDIAMPKDestroy_Private(SGDIAMPK *mkp)
{
  SGDIAMPK mk = *mkp;

  PetscFunctionBegin;
  if (!mk) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIAMPKReset(mk));
  PetscCall(PetscFree(*mkp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the box the level arrays cover and the matrix values there */
typedef struct {
  const Mat_SGDIA   *sg;
  PetscInt           lo[3], n[3]; /* box in global grid coordinates */
  const PetscInt    *off;         /* stencil offsets in the box, in points */
  const PetscScalar *val;         /* val[(s*dof + c)*vm + p*dof + r], p a point of the box */
  const PetscScalar *xs;          /* NULL, or the product reads xs .* x (V[j] = dinv .* W[j], not stored) */
  PetscInt           vm;
  PetscScalar       *line;
  PetscInt          *sl;
} SGDIAMPKBox;

/* One level on the region [rlo, rhi) of the box (global grid coordinates), x-line by x-line: t = A x on the line,
   then w = a t + b wj + c wjm1 (mode 0: a t; 1: b wj + a t; 2: b wj + c wjm1 + a t, the operations and order of
   the reference) and v = dinv .* w (v NULL: none). With wo (and vo), the part of each line inside the owned box
   [olo, olo + om) is also copied there (owned numbering). */
static void SGDIAMPKLevel(const SGDIAMPKBox *B, const PetscInt rlo[3], const PetscInt rhi[3], const PetscScalar *x, const PetscScalar *wj, const PetscScalar *wjm1, const PetscScalar *dinv, PetscScalar a, PetscScalar b, PetscScalar c, PetscInt mode, PetscScalar *w, PetscScalar *v, const PetscInt olo[3], const PetscInt om[3], PetscScalar *wo, PetscScalar *vo)
{
  const Mat_SGDIA   *sg  = B->sg;
  const PetscInt     dof = sg->dof, vm = B->vm, sw = sg->sw, len = rhi[0] - rlo[0];
  const PetscScalar *val = B->val;
  PetscScalar       *t   = B->line;
  PetscInt          *sl  = B->sl;
  PetscInt           ia = rlo[0], ib = rhi[0];

  if (len <= 0) return;
  if (sg->bd[0] != DM_BOUNDARY_PERIODIC) { /* [ia, ib): the stencil stays in the domain along x */
    ia = PetscMax(rlo[0], sw);
    ib = PetscMin(rhi[0], sg->M[0] - sw);
    if (ib < ia) ib = ia;
  }
  for (PetscInt l2 = rlo[2]; l2 < rhi[2]; l2++) {
    for (PetscInt l1 = rlo[1]; l1 < rhi[1]; l1++) {
      const PetscInt bp0 = (rlo[0] - B->lo[0]) + B->n[0] * ((l1 - B->lo[1]) + B->n[1] * (l2 - B->lo[2]));
      PetscInt       ns  = 0;

      for (PetscInt s = 0; s < sg->k; s++) { /* the stencil points in the domain along y and z */
        PetscBool in = PETSC_TRUE;
        PetscInt  q1 = l1 + sg->delta[3 * s + 1], q2 = l2 + sg->delta[3 * s + 2];
        if (sg->bd[1] != DM_BOUNDARY_PERIODIC && (q1 < 0 || q1 >= sg->M[1])) in = PETSC_FALSE;
        if (sg->bd[2] != DM_BOUNDARY_PERIODIC && (q2 < 0 || q2 >= sg->M[2])) in = PETSC_FALSE;
        if (in) sl[ns++] = s;
      }
      for (PetscInt e = 0; e < len * dof; e++) t[e] = 0.0;
      if (ib > ia) { /* the stretch without checks */
        const PetscInt b0 = bp0 + (ia - rlo[0]), nl = ib - ia;
        PetscScalar   *tt = t + (ia - rlo[0]) * dof;
        if (dof == 1) { /* four stored columns per pass over the line */
          PetscInt q = 0;
          const PetscScalar *xs = B->xs;
          for (; q + 4 <= ns; q += 4) {
            const PetscScalar *v0 = val + sl[q] * vm + b0, *v1 = val + sl[q + 1] * vm + b0, *v2 = val + sl[q + 2] * vm + b0, *v3 = val + sl[q + 3] * vm + b0;
            const PetscInt     o0 = b0 + B->off[sl[q]], o1 = b0 + B->off[sl[q + 1]], o2 = b0 + B->off[sl[q + 2]], o3 = b0 + B->off[sl[q + 3]];
            const PetscScalar *x0 = x + o0, *x1 = x + o1, *x2 = x + o2, *x3 = x + o3;
            if (xs) {
              const PetscScalar *s0 = xs + o0, *s1 = xs + o1, *s2 = xs + o2, *s3 = xs + o3;
              for (PetscInt i = 0; i < nl; i++) tt[i] += v0[i] * (s0[i] * x0[i]) + v1[i] * (s1[i] * x1[i]) + v2[i] * (s2[i] * x2[i]) + v3[i] * (s3[i] * x3[i]);
            } else
              for (PetscInt i = 0; i < nl; i++) tt[i] += v0[i] * x0[i] + v1[i] * x1[i] + v2[i] * x2[i] + v3[i] * x3[i];
          }
          for (; q < ns; q++) {
            const PetscInt     o  = b0 + B->off[sl[q]];
            const PetscScalar *vv = val + sl[q] * vm + b0, *xx = x + o;
            if (xs) {
              const PetscScalar *ss = xs + o;
              for (PetscInt i = 0; i < nl; i++) tt[i] += vv[i] * (ss[i] * xx[i]);
            } else
              for (PetscInt i = 0; i < nl; i++) tt[i] += vv[i] * xx[i];
          }
        } else {
          for (PetscInt q = 0; q < ns; q++) {
            const PetscInt s = sl[q];
            for (PetscInt cc = 0; cc < dof; cc++) {
              const PetscScalar *vv = val + (s * dof + cc) * vm + b0 * dof, *xx = x + (b0 + B->off[s]) * dof + cc, *ss = B->xs ? B->xs + (b0 + B->off[s]) * dof + cc : NULL;
              for (PetscInt i = 0; i < nl; i++) {
                const PetscScalar xv = ss ? ss[i * dof] * xx[i * dof] : xx[i * dof];
                for (PetscInt r = 0; r < dof; r++) tt[i * dof + r] += vv[i * dof + r] * xv;
              }
            }
          }
        }
      }
      for (PetscInt i = rlo[0]; i < rhi[0]; i++) { /* points near a non-periodic end of the line: check x */
        const PetscInt bp = bp0 + (i - rlo[0]);
        PetscScalar   *tt = t + (i - rlo[0]) * dof;
        if (i >= ia && i < ib) {
          i = ib - 1;
          continue;
        }
        for (PetscInt q = 0; q < ns; q++) {
          const PetscInt s = sl[q], qx = i + sg->delta[3 * s];
          if (sg->bd[0] != DM_BOUNDARY_PERIODIC && (qx < 0 || qx >= sg->M[0])) continue;
          for (PetscInt cc = 0; cc < dof; cc++) {
            const PetscInt    o  = (bp + B->off[s]) * dof + cc;
            const PetscScalar xv = B->xs ? B->xs[o] * x[o] : x[o];
            for (PetscInt r = 0; r < dof; r++) tt[r] += val[(s * dof + cc) * vm + bp * dof + r] * xv;
          }
        }
      }
      { /* the three-term update and the Jacobi scaling */
        const PetscInt     o   = bp0 * dof;
        PetscScalar       *ww  = w + o, *vv = v ? v + o : NULL;
        const PetscScalar *w0  = wj ? wj + o : NULL, *w1 = wjm1 ? wjm1 + o : NULL, *dd = dinv ? dinv + o : NULL;
        const PetscInt     nl  = len * dof;
        if (mode == 2)
          for (PetscInt e = 0; e < nl; e++) ww[e] = b * w0[e] + c * w1[e] + a * t[e];
        else if (mode == 1)
          for (PetscInt e = 0; e < nl; e++) ww[e] = b * w0[e] + a * t[e];
        else
          for (PetscInt e = 0; e < nl; e++) ww[e] = a * t[e];
        if (vv)
          for (PetscInt e = 0; e < nl; e++) vv[e] = dd[e] * ww[e];
      }
      if (wo && l1 >= olo[1] && l1 < olo[1] + om[1] && l2 >= olo[2] && l2 < olo[2] + om[2]) { /* owned part of the line */
        const PetscInt i0 = PetscMax(rlo[0], olo[0]), i1 = PetscMin(rhi[0], olo[0] + om[0]);
        const PetscInt src = (bp0 + (i0 - rlo[0])) * dof, dst = ((i0 - olo[0]) + om[0] * ((l1 - olo[1]) + om[1] * (l2 - olo[2]))) * dof;
        for (PetscInt e = 0; e < (i1 - i0) * dof; e++) wo[dst + e] = w[src + e];
        if (vo && v)
          for (PetscInt e = 0; e < (i1 - i0) * dof; e++) vo[dst + e] = v[src + e];
        else if (vo)
          for (PetscInt e = 0; e < (i1 - i0) * dof; e++) vo[dst + e] = dinv[src + e] * w[src + e];
      }
    }
  }
}

static void SGDIAMPKCoefficients(PetscInt j, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], PetscScalar *a, PetscScalar *b, PetscScalar *c, PetscInt *mode)
{
  *a = 1.0 / sigma[j];
  *b = -theta[j] / sigma[j];
  *c = -gamma[j] / sigma[j];
  if (j > 0 && gamma[j] != 0.0) *mode = 2;
  else if (theta[j] != 0.0) *mode = 1;
  else *mode = 0;
}

/* no ghosts: every level on the owned box, straight into the output vectors */
static PetscErrorCode SGDIAMPKLocal(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  SGDIAMPKBox         B;
  const PetscScalar **wa, **va, *da = NULL;
  PetscInt            rhi[3];

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(k + 1, &wa, k + 1, &va));
  B.sg  = sg;
  B.xs  = NULL;
  B.off = sg->ooff;
  B.val = sg->v;
  B.vm  = sg->m;
  for (PetscInt d = 0; d < 3; d++) {
    B.lo[d] = sg->xs[d];
    B.n[d]  = sg->xm[d];
    rhi[d]  = sg->xs[d] + sg->xm[d];
  }
  PetscCall(PetscMalloc2(sg->xm[0] * sg->dof, &B.line, sg->k, &B.sl));
  PetscCall(VecGetArrayRead(W[0], &wa[0]));
  if (dinv) {
    PetscCall(VecGetArrayRead(V[0], &va[0]));
    PetscCall(VecGetArrayRead(dinv, &da));
  } else va[0] = wa[0];
  for (PetscInt j = 0; j < k; j++) {
    PetscScalar  a, b, c, *w, *v = NULL;
    PetscInt     mode;

    SGDIAMPKCoefficients(j, theta, sigma, gamma, &a, &b, &c, &mode);
    PetscCall(VecGetArrayWrite(W[j + 1], &w));
    if (dinv) PetscCall(VecGetArrayWrite(V[j + 1], &v));
    SGDIAMPKLevel(&B, sg->xs, rhi, va[j], wa[j], j > 0 ? wa[j - 1] : NULL, da, a, b, c, mode, w, v, NULL, NULL, NULL, NULL);
    wa[j + 1] = w;
    va[j + 1] = dinv ? v : w;
  }
  for (PetscInt j = 1; j <= k; j++) {
    PetscCall(VecRestoreArrayWrite(W[j], (PetscScalar **)&wa[j]));
    if (dinv) PetscCall(VecRestoreArrayWrite(V[j], (PetscScalar **)&va[j]));
  }
  PetscCall(VecRestoreArrayRead(W[0], &wa[0]));
  if (dinv) {
    PetscCall(VecRestoreArrayRead(V[0], &va[0]));
    PetscCall(VecRestoreArrayRead(dinv, &da));
  }
  PetscCall(PetscFree2(B.line, B.sl));
  PetscCall(PetscFree2(wa, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Can a ghost region of depth kc*sw be gathered? NULL when it can, else why not (the same answer on every rank) */
static const char *SGDIAMPKWhyNot(Mat A, PetscInt kc)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  const PetscInt K  = kc * sg->sw;

  if (sg->periodic_alias) return "a periodic dimension is shorter than the stencil";
  for (PetscInt d = 0; d < sg->dim; d++) {
    if (sg->nranks[d] == 1 && sg->bd[d] != DM_BOUNDARY_PERIODIC) continue;
    for (PetscInt r = 0; r < sg->nranks[d]; r++)
      if (sg->rstart[d][r + 1] - sg->rstart[d][r] < K) return "a rank's box is narrower than the ghost depth in an exchanged direction";
  }
  if (sg->dim == 1 && sg->nranks[0] > 1 && sg->M[0] - 1 < K) return "the grid is shorter than the ghost depth";
  return NULL;
}

static PetscErrorCode SGDIAMPKUnit(PetscInt n, MPI_Datatype *unit)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Type_contiguous((PetscMPIInt)n, MPIU_SCALAR, unit));
  PetscCallMPI(MPI_Type_commit(unit));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* (Re)build the ghost region for kc levels (SGDIAMPKWhyNot(A, kc) is NULL): the box of depth kc*sw around the owned
   box (clipped to the domain in non-periodic dimensions) and a star forest from its points to their owners, which
   the grid description gives without communication (ranks x fastest, as DMDA numbers them) */
static PetscErrorCode SGDIAMPKSetUp(Mat A, PetscInt kc)
{
  Mat_SGDIA   *sg = (Mat_SGDIA *)A->data;
  SGDIAMPK     mk = sg->mpk;
  const PetscInt K = kc * sg->sw;
  PetscSFNode *iremote;

  PetscFunctionBegin;
  PetscCall(SGDIAMPKReset(mk));
  mk->kc = kc;
  for (PetscInt d = 0; d < 3; d++) {
    PetscInt lo = sg->xs[d], hi = sg->xs[d] + sg->xm[d];
    if (d < sg->dim) {
      lo -= K;
      hi += K;
      if (sg->bd[d] != DM_BOUNDARY_PERIODIC) {
        lo = PetscMax(lo, 0);
        hi = PetscMin(hi, sg->M[d]);
      }
    }
    mk->lo[d] = lo;
    mk->n[d]  = hi - lo;
  }
  mk->gnp = mk->n[0] * mk->n[1] * mk->n[2];
  mk->nleaves = mk->gnp - sg->np;
  PetscCall(PetscMalloc1(mk->nleaves, &iremote));
  PetscCall(PetscMalloc1(mk->nleaves, &mk->gidx));
  mk->nleaves = 0;
  for (PetscInt l2 = 0; l2 < mk->n[2]; l2++)
    for (PetscInt l1 = 0; l1 < mk->n[1]; l1++)
      for (PetscInt l0 = 0; l0 < mk->n[0]; l0++) {
        PetscInt  g[3] = {mk->lo[0] + l0, mk->lo[1] + l1, mk->lo[2] + l2}, r[3], loc[3], w[3];
        PetscBool owned = PETSC_TRUE;
        for (PetscInt d = 0; d < 3; d++)
          if (g[d] < sg->xs[d] || g[d] >= sg->xs[d] + sg->xm[d]) owned = PETSC_FALSE;
        if (owned) continue;
        SGDIAWrap(sg, g);
        for (PetscInt d = 0; d < 3; d++) {
          r[d]   = SGDIAOwnerInDim(sg, d, g[d]);
          loc[d] = g[d] - sg->rstart[d][r[d]];
          w[d]   = sg->rstart[d][r[d] + 1] - sg->rstart[d][r[d]];
        }
        mk->gidx[mk->nleaves]          = l0 + mk->n[0] * (l1 + mk->n[1] * l2);
        iremote[mk->nleaves].rank      = (PetscMPIInt)(r[0] + sg->nranks[0] * (r[1] + sg->nranks[1] * r[2]));
        iremote[mk->nleaves++].index   = loc[0] + w[0] * (loc[1] + w[1] * loc[2]);
      }
  PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)A), &mk->sf));
  PetscCall(PetscSFSetGraph(mk->sf, sg->np, mk->nleaves, NULL, PETSC_COPY_VALUES, iremote, PETSC_OWN_POINTER));
  /* the owned points a neighbour may read: within K of a face across which ranks (or a periodic wrap) exchange */
  PetscCall(PetscMalloc1(sg->np, &mk->rp));
  mk->nrp = 0;
  for (PetscInt p = 0; p < sg->np; p++) {
    PetscInt  l[3] = {p % sg->xm[0], (p / sg->xm[0]) % sg->xm[1], p / (sg->xm[0] * sg->xm[1])};
    PetscBool halo = PETSC_FALSE;
    for (PetscInt d = 0; d < sg->dim; d++)
      if ((sg->nranks[d] > 1 || sg->bd[d] == DM_BOUNDARY_PERIODIC) && (l[d] < K || l[d] >= sg->xm[d] - K)) halo = PETSC_TRUE;
    if (halo) mk->rp[mk->nrp++] = p;
  }
  PetscCall(PetscSFSetUp(mk->sf));
  PetscCall(SGDIAMPKUnit(sg->dof, &mk->uv));
  PetscCall(SGDIAMPKUnit(2 * sg->dof, &mk->uvw));
  PetscCall(SGDIAMPKUnit(sg->k * sg->dof * sg->dof, &mk->um));
  PetscCall(PetscMalloc1(sg->k, &mk->off));
  for (PetscInt s = 0; s < sg->k; s++) mk->off[s] = sg->delta[3 * s] + mk->n[0] * (sg->delta[3 * s + 1] + mk->n[1] * sg->delta[3 * s + 2]);
  for (PetscInt i = 0; i < 4; i++) PetscCall(PetscMalloc1(mk->gnp * sg->dof, &mk->buf[i]));
  PetscCall(PetscMalloc2(2 * sg->np * sg->dof, &mk->root, 2 * mk->nleaves * sg->dof, &mk->leaf));
  PetscCall(PetscMalloc2(mk->n[0] * sg->dof, &mk->line, sg->k, &mk->sl));
  PetscCall(PetscInfo(A, "Matrix powers: ghost region of depth %" PetscInt_FMT " x %" PetscInt_FMT " (box %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " points), one exchange per call\n", kc, sg->sw, mk->n[0], mk->n[1], mk->n[2]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the owned part of the box from an owned array: ncol columns of np*dof values (stride sstride) into columns of
   gnp*dof values (stride dstride) */
static void SGDIAMPKOwnedToBox(const Mat_SGDIA *sg, SGDIAMPK mk, PetscInt ncol, const PetscScalar *src, PetscInt sstride, PetscScalar *dst, PetscInt dstride)
{
  const PetscInt dof = sg->dof, len = sg->xm[0] * dof;

  for (PetscInt c = 0; c < ncol; c++)
    for (PetscInt l2 = 0; l2 < sg->xm[2]; l2++)
      for (PetscInt l1 = 0; l1 < sg->xm[1]; l1++) {
        const PetscInt     bp = (sg->xs[0] - mk->lo[0]) + mk->n[0] * ((sg->xs[1] + l1 - mk->lo[1]) + mk->n[1] * (sg->xs[2] + l2 - mk->lo[2]));
        const PetscScalar *a  = src + c * sstride + SGDIAPoint(sg, 0, l1, l2) * dof;
        PetscScalar       *b  = dst + c * dstride + bp * dof;
        for (PetscInt e = 0; e < len; e++) b[e] = a[e];
      }
}

/* the rows of the ghosted box, when the matrix changed */
PetscErrorCode SGDIAMPKGatherValues_Private(Mat A)
{
  Mat_SGDIA       *sg = (Mat_SGDIA *)A->data;
  SGDIAMPK         mk = sg->mpk;
  const PetscInt   dof = sg->dof, F = sg->k * dof * dof, m = sg->m, gm = mk->gnp * dof;
  PetscObjectState st;
  PetscScalar     *root, *leaf;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (mk->valok && mk->valstate == st) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE)); /* MATSGDIACUDA: its values back from the device, once per state */
  if (!mk->val) PetscCall(PetscMalloc1((size_t)sg->k * dof * gm, &mk->val));
  PetscCall(PetscMalloc2((size_t)sg->np * F, &root, (size_t)mk->nleaves * F, &leaf));
  for (PetscInt i = 0; i < mk->nrp; i++) {
    const PetscInt p = mk->rp[i];
    for (PetscInt sc = 0; sc < sg->k * dof; sc++)
      for (PetscInt r = 0; r < dof; r++) root[p * F + sc * dof + r] = sg->v[sc * m + p * dof + r];
  }
  PetscCall(PetscSFBcastBegin(mk->sf, mk->um, root, leaf, MPI_REPLACE));
  SGDIAMPKOwnedToBox(sg, mk, sg->k * dof, sg->v, m, mk->val, gm);
  PetscCall(PetscSFBcastEnd(mk->sf, mk->um, root, leaf, MPI_REPLACE));
  for (PetscInt i = 0; i < mk->nleaves; i++) {
    const PetscInt p = mk->gidx[i];
    for (PetscInt sc = 0; sc < sg->k * dof; sc++)
      for (PetscInt r = 0; r < dof; r++) mk->val[sc * gm + p * dof + r] = leaf[i * F + sc * dof + r];
  }
  PetscCall(PetscFree2(root, leaf));
  mk->valok    = PETSC_TRUE;
  mk->valstate = st;
  mk->vgen++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dinv over the ghosted box, when dinv changed */
PetscErrorCode SGDIAMPKGatherDinv_Private(Mat A, Vec dinv)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  SGDIAMPK           mk = sg->mpk;
  const PetscInt     dof = sg->dof;
  PetscObjectState   st;
  PetscInt64         id;
  const PetscScalar *da;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)dinv, &st));
  PetscCall(PetscObjectGetId((PetscObject)dinv, &id));
  if (mk->dok && mk->dstate == st && mk->did == id) PetscFunctionReturn(PETSC_SUCCESS);
  if (!mk->dg) PetscCall(PetscMalloc1(mk->gnp * dof, &mk->dg));
  PetscCall(VecGetArrayRead(dinv, &da));
  PetscCall(PetscSFBcastBegin(mk->sf, mk->uv, da, mk->leaf, MPI_REPLACE));
  SGDIAMPKOwnedToBox(sg, mk, 1, da, 0, mk->dg, 0);
  PetscCall(PetscSFBcastEnd(mk->sf, mk->uv, da, mk->leaf, MPI_REPLACE));
  PetscCall(VecRestoreArrayRead(dinv, &da));
  for (PetscInt i = 0; i < mk->nleaves; i++)
    for (PetscInt c = 0; c < dof; c++) mk->dg[mk->gidx[i] * dof + c] = mk->leaf[i * dof + c];
  mk->dok    = PETSC_TRUE;
  mk->dstate = st;
  mk->did    = id;
  mk->dgen++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the region [rlo, rhi) (global grid coordinates) that level j+1 of k is computed on: the owned box grown by
   (k-1-j)*sw, clipped to the domain in non-periodic dimensions */
void SGDIAMPKLevelRegion_Private(const Mat_SGDIA *sg, PetscInt k, PetscInt j, PetscInt rlo[3], PetscInt rhi[3])
{
  const PetscInt grow = (k - 1 - j) * sg->sw;

  for (PetscInt d = 0; d < 3; d++) {
    rlo[d] = sg->xs[d] - (d < sg->dim ? grow : 0);
    rhi[d] = sg->xs[d] + sg->xm[d] + (d < sg->dim ? grow : 0);
    if (sg->bd[d] != DM_BOUNDARY_PERIODIC) {
      rlo[d] = PetscMax(rlo[d], 0);
      rhi[d] = PetscMin(rhi[d], sg->M[d]);
    }
  }
}

/* the cache, made at the first use; the option -mat_sgdia_mpk_ghost_region is read then (and by MatSetFromOptions()) */
static PetscErrorCode SGDIAMPKGet(Mat A, SGDIAMPK *mkp)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  if (!sg->mpk) {
    PetscBool flg, set;

    PetscCall(PetscNew(&sg->mpk));
    sg->mpk->uv = sg->mpk->uvw = sg->mpk->um = MPI_DATATYPE_NULL;
    sg->mpk->force                             = -1;
    PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_sgdia_mpk_ghost_region", &flg, &set));
    if (set) sg->mpk->force = flg ? 1 : 0;
  }
  *mkp = sg->mpk;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_sgdia_mpk_ghost_region (MatSetFromOptions_SGDIA()): force -1 automatic, 0 never, 1 always */
PetscErrorCode SGDIAMPKSetForce_Private(Mat A, PetscInt force)
{
  SGDIAMPK mk;

  PetscFunctionBegin;
  PetscCheck(force >= -1 && force <= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "The matrix powers ghost-region setting must be -1 (automatic), 0 (never) or 1 (always), not %" PetscInt_FMT, force);
  PetscCall(SGDIAMPKGet(A, &mk));
  mk->force = force;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   SGDIAMPKChooseRoute_Private - the route of a call with k levels, for the host (MatMatrixPowers_SGDIA()) and the
   device (MatMatrixPowers_SGDIACUDA()) alike: local without ghosts; else the ghost region when it fits (built or
   rebuilt deeper here) and -mat_sgdia_mpk_ghost_region is not false; else the fallback, with -info saying why (once
   per k). With -mat_sgdia_mpk_ghost_region true a region that does not fit is an error. Collective when it builds.
*/
PetscErrorCode SGDIAMPKChooseRoute_Private(Mat A, PetscInt k, SGDIAMPKRoute *route)
{
  Mat_SGDIA  *sg = (Mat_SGDIA *)A->data;
  SGDIAMPK    mk;
  PetscMPIInt size;
  PetscBool   periodic = PETSC_FALSE;
  const char *why;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  for (PetscInt d = 0; d < sg->dim; d++)
    if (sg->bd[d] == DM_BOUNDARY_PERIODIC) periodic = PETSC_TRUE;
  if ((size == 1 && !periodic) || sg->sw == 0) {
    *route = SGDIA_MPK_LOCAL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIAMPKGet(A, &mk));
  if (mk->force == 0) {
    if (!mk->toldforce) PetscCall(PetscInfo(A, "Matrix powers: -mat_sgdia_mpk_ghost_region false; one neighbour exchange and MatMult per level\n"));
    mk->toldforce = PETSC_TRUE;
    *route        = SGDIA_MPK_FALLBACK;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  why = SGDIAMPKWhyNot(A, k);
  PetscCheck(!why || mk->force != 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_INCOMP, "Matrix powers with %" PetscInt_FMT " levels: -mat_sgdia_mpk_ghost_region true, but the ghost region of depth %" PetscInt_FMT " cannot be used: %s", k, k * sg->sw, why);
  if (why) { /* the cache keeps the deepest region that fits */
    if (k > 30 || !(mk->infomask & (1 << k))) PetscCall(PetscInfo(A, "Matrix powers of %" PetscInt_FMT " levels (ghost depth %" PetscInt_FMT "): %s; using %" PetscInt_FMT " MatMult calls instead\n", k, k * sg->sw, why, k));
    if (k <= 30) mk->infomask |= 1 << k;
    *route = SGDIA_MPK_FALLBACK;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (k > mk->kc) PetscCall(SGDIAMPKSetUp(A, k));
  *route = SGDIA_MPK_GHOST;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one exchange of V[0] (and W[0]) over the ghosted box, then k levels on shrinking regions */
static PetscErrorCode SGDIAMPKGhost(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  SGDIAMPK           mk = sg->mpk;
  const PetscInt     dof = sg->dof, gn = mk->gnp * dof;
  SGDIAMPKBox        B;
  const PetscScalar *x0, *w0;
  PetscScalar       *wbuf[3];
  const PetscScalar *xj, *wj, *wjm1 = NULL;

  PetscFunctionBegin;
  PetscCall(SGDIAMPKGatherValues_Private(A));
  if (dinv) PetscCall(SGDIAMPKGatherDinv_Private(A, dinv));
  /* the exchange: V[0] alone without a preconditioner, else V[0] and W[0] interleaved (a unit of 2 dof); the
     owned part of the box is copied meanwhile */
  if (!dinv) {
    PetscCall(VecGetArrayRead(V[0], &x0));
    PetscCall(PetscSFBcastBegin(mk->sf, mk->uv, x0, mk->leaf, MPI_REPLACE));
    SGDIAMPKOwnedToBox(sg, mk, 1, x0, 0, mk->buf[0], 0);
    PetscCall(PetscSFBcastEnd(mk->sf, mk->uv, x0, mk->leaf, MPI_REPLACE));
    PetscCall(VecRestoreArrayRead(V[0], &x0));
    for (PetscInt i = 0; i < mk->nleaves; i++)
      for (PetscInt c = 0; c < dof; c++) mk->buf[0][mk->gidx[i] * dof + c] = mk->leaf[i * dof + c];
    wj      = mk->buf[0];
    xj      = wj;
    wbuf[0] = mk->buf[0];
    wbuf[1] = mk->buf[1];
    wbuf[2] = mk->buf[2];
  } else {
    PetscScalar *root = mk->root, *leaf = mk->leaf;
    PetscCall(VecGetArrayRead(V[0], &x0));
    PetscCall(VecGetArrayRead(W[0], &w0));
    for (PetscInt i = 0; i < mk->nrp; i++) {
      const PetscInt p = mk->rp[i];
      for (PetscInt c = 0; c < dof; c++) {
        root[2 * p * dof + c]       = x0[p * dof + c];
        root[2 * p * dof + dof + c] = w0[p * dof + c];
      }
    }
    PetscCall(PetscSFBcastBegin(mk->sf, mk->uvw, root, leaf, MPI_REPLACE));
    SGDIAMPKOwnedToBox(sg, mk, 1, x0, 0, mk->buf[3], 0);
    SGDIAMPKOwnedToBox(sg, mk, 1, w0, 0, mk->buf[0], 0);
    PetscCall(PetscSFBcastEnd(mk->sf, mk->uvw, root, leaf, MPI_REPLACE));
    PetscCall(VecRestoreArrayRead(V[0], &x0));
    PetscCall(VecRestoreArrayRead(W[0], &w0));
    for (PetscInt i = 0; i < mk->nleaves; i++) {
      const PetscInt p = mk->gidx[i];
      for (PetscInt c = 0; c < dof; c++) {
        mk->buf[3][p * dof + c] = leaf[2 * i * dof + c];
        mk->buf[0][p * dof + c] = leaf[2 * i * dof + dof + c];
      }
    }
    xj      = mk->buf[3];
    wj      = mk->buf[0];
    wbuf[0] = mk->buf[0];
    wbuf[1] = mk->buf[1];
    wbuf[2] = mk->buf[2];
  }

  B.sg   = sg;
  B.off  = mk->off;
  B.val  = mk->val;
  B.vm   = gn;
  B.line = mk->line;
  B.sl   = mk->sl;
  for (PetscInt d = 0; d < 3; d++) {
    B.lo[d] = mk->lo[d];
    B.n[d]  = mk->n[d];
  }
  for (PetscInt j = 0; j < k; j++) {
    PetscInt       rlo[3], rhi[3], mode;
    PetscScalar    a, b, c, *wnext, *wo, *vo = NULL;

    SGDIAMPKLevelRegion_Private(sg, k, j, rlo, rhi);
    SGDIAMPKCoefficients(j, theta, sigma, gamma, &a, &b, &c, &mode);
    /* the next W array: the one of the three that holds neither W[j] nor W[j-1] */
    wnext = wbuf[0] != wj && wbuf[0] != wjm1 ? wbuf[0] : (wbuf[1] != wj && wbuf[1] != wjm1 ? wbuf[1] : wbuf[2]);
    /* V[j] = dinv .* W[j] is not kept in the box: the product reads dinv .* W[j] (the same rounding); V[0] is given */
    B.xs = dinv && j > 0 ? mk->dg : NULL;
    PetscCall(VecGetArrayWrite(W[j + 1], &wo));
    if (dinv) PetscCall(VecGetArrayWrite(V[j + 1], &vo));
    SGDIAMPKLevel(&B, rlo, rhi, xj, wj, wjm1, dinv ? mk->dg : NULL, a, b, c, mode, wnext, NULL, sg->xs, sg->xm, wo, vo);
    PetscCall(VecRestoreArrayWrite(W[j + 1], &wo));
    if (dinv) PetscCall(VecRestoreArrayWrite(V[j + 1], &vo));
    wjm1 = wj;
    wj   = wnext;
    xj   = wnext;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatMatrixPowers_SGDIA - the "MatMatrixPowers_C" of MATSEQSGDIA and MATMPISGDIA (see the top of this file and
   src/mat/utils/gpukitmat.h). Logged as SGDIAMatPowers.
*/
PetscErrorCode MatMatrixPowers_SGDIA(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Mat_SGDIA    *sg = (Mat_SGDIA *)A->data;
  PetscBool     host;
  SGDIAMPKRoute route;

  PetscFunctionBegin;
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(sg->da, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "The matrix is not set up");
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  if (!V) { /* the lean basis on the host (KSPCACG uses it only on CUDA vectors): the same basis through work vectors */
    Vec *T;
    PetscCall(VecDuplicateVecs(W[0], k + 1, &T));
    PetscCall(VecPointwiseMult(T[0], dinv, W[0]));
    PetscCall(MatMatrixPowers_SGDIA(A, dinv, k, theta, sigma, gamma, T, W));
    PetscCall(VecDestroyVecs(k + 1, &T));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &host, MATSEQSGDIA, MATMPISGDIA, ""));
  if (!host) {
    /* a type built on MATSGDIA that kept this hook (MATSGDIACUDA must compose its own or none) */
    PetscCall(PetscLogEventBegin(MAT_SGDIA_MatPowers, A, 0, 0, 0));
    PetscCall(PetscInfo(A, "Matrix powers: the host kernel does not serve type %s; using MatMult\n", ((PetscObject)A)->type_name));
    PetscCall(GpukitMatMatrixPowersReference(A, dinv, k, theta, sigma, gamma, V, W));
    PetscCall(PetscLogEventEnd(MAT_SGDIA_MatPowers, A, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(SGDIAMPKChooseRoute_Private(A, k, &route)); /* before the event: an error there leaves it balanced */
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MatPowers, A, 0, 0, 0));
  if (route == SGDIA_MPK_LOCAL) PetscCall(SGDIAMPKLocal(A, dinv, k, theta, sigma, gamma, V, W));
  else if (route == SGDIA_MPK_GHOST) PetscCall(SGDIAMPKGhost(A, dinv, k, theta, sigma, gamma, V, W));
  else PetscCall(GpukitMatMatrixPowersReference(A, dinv, k, theta, sigma, gamma, V, W));
  PetscCall(PetscLogFlops((2.0 * sg->nv + 6.0 * sg->m) * k));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_MatPowers, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
