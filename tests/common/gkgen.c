/* gpukit's generator of large sparse test matrices: see gkgen.h. Self-contained, PETSc API only (3.18 .. 3.26).

   How a case is built: the family computes the pattern of this rank's rows (global column numbers, every row sorted
   and duplicate-free) with plain O(nnz) loops and a seeded splitmix64 generator; values come from a hash of
   (seed, row, column), so they do not depend on the number of ranks either; GKCSRToMat() then creates the matrix of
   the requested type with exact preallocation and one MatSetValues() call per row.
   Families whose rows are not independent (graphs, symmetrised random patterns, meshes with a random node order)
   are built whole on every rank, which then keeps its rows: fine for tests and one-rank benchmarks; the memory
   is that of the global pattern on every rank.

   The FEM cases are an honest substitute for DMPlex meshes (same patterns, much cheaper to build): tetrahedral
   meshes of a box made of n^3 cubes, each cube cut into 6 tetrahedra along its main diagonal (Kuhn; conforming,
   14 neighbours per interior vertex) or into 5 (a central tetrahedron on the corners of even parity i+j+k,
   alternating with the neighbour cubes so that faces match: interior vertices have 18 or 6 neighbours). P1 and P2
   patterns are the element-connectivity patterns of those meshes (P2: vertices and edge midpoints; two nodes are
   coupled when a tetrahedron holds both); the node order is the lexicographic one shuffled inside windows of 4096
   nodes, as an unstructured mesher's ordering with a bandwidth-reducing renumbering would look. */
#include "gkgen.h"
#include <petscsys.h>
#include <petscversion.h>
#include <stdint.h>
#include <math.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* ------------------------------------------------------------------------------------------------------------ */
/* random numbers: splitmix64 (a stream) and its finaliser as a hash */
static inline uint64_t Mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static inline uint64_t Next64(uint64_t *s)
{
  *s += 0x9E3779B97F4A7C15ULL;
  return Mix64(*s);
}
static inline double NextU(uint64_t *s) /* [0, 1) */
{
  return (double)(Next64(s) >> 11) * (1.0 / 9007199254740992.0);
}
static inline PetscInt NextInt(uint64_t *s, PetscInt64 n) /* [0, n) */
{
  PetscInt64 r = (PetscInt64)(NextU(s) * (double)n);
  return (PetscInt)(r < n ? r : n - 1);
}
static inline uint64_t Hash3(uint64_t a, uint64_t b, uint64_t c)
{
  return Mix64(Mix64(Mix64(a + 0x632BE59BD9B4E019ULL) ^ (b * 0x9E3779B97F4A7C15ULL)) ^ (c * 0xD6E8FEB86659FD93ULL));
}
static inline double HashU(uint64_t a, uint64_t b, uint64_t c)
{
  return (double)(Hash3(a, b, c) >> 11) * (1.0 / 9007199254740992.0);
}

/*
  GKGenerateUniform - a reproducible pseudo-random number in [0, 1) from three integers (a hash: seed, row, column)
*/
PetscErrorCode GKGenerateUniform(PetscInt64 a, PetscInt64 b, PetscInt64 c, PetscReal *u)
{
  PetscFunctionBegin;
  *u = (PetscReal)HashU((uint64_t)a, (uint64_t)b, (uint64_t)c);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* the cases */
static const GKGenCase cases[] = {
  {"fem_p1",        "fem",      "P1 Laplacian pattern, 5-tet mesh of n^3 cubes (rows of 19 and 7), window-shuffled order", PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"fem_p2",        "fem",      "P2 Laplacian pattern, 6-tet (Kuhn) mesh, vertices + edge nodes, window-shuffled order",    PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"fem_elast",     "fem",      "3-dof elasticity pattern (3x3 blocks), P1 on a 6-tet (Kuhn) mesh, window-shuffled order",  PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  3},
  {"stencil7",      "stencil",  "3D 7-point stencil, natural order",                                                        PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"stencil27",     "stencil",  "3D 27-point stencil, natural order",                                                       PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"stencil7_perm", "stencil",  "3D 7-point stencil under a random symmetric permutation (no locality)",                    PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"rmat20",        "graph",    "Kronecker/R-MAT graph (Graph500 a=.57 b=c=.19), scale 20, edge factor 16, symmetrised",     PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"rmat22",        "graph",    "Kronecker/R-MAT graph (Graph500 a=.57 b=c=.19), scale 22, edge factor 4, symmetrised",      PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"powerlaw",      "powerlaw", "power-law row lengths (Pareto, shape 1.6), uniformly random columns, unsymmetric",        PETSC_FALSE, PETSC_FALSE, PETSC_TRUE,  1},
  {"powerlaw_band", "powerlaw", "power-law row lengths (Pareto, shape 1.6), columns near the diagonal, unsymmetric",       PETSC_FALSE, PETSC_FALSE, PETSC_TRUE,  1},
  {"band_wide",     "band",     "wide band: 25-100 random columns a row in (i, i+B], symmetrised (mostly 50-200 a row; audikw_1-like)",     PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"circuit",       "circuit",  "circuit-like: mostly <= 5 a row, plus 8 dense rows and columns (rails), symmetric",         PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  1},
  {"lp_rect",       "lp",       "LP-like rectangular m x 3m: 1-6 entries a column, 40 dense linking rows",                  PETSC_FALSE, PETSC_FALSE, PETSC_FALSE, 1},
};

/*
  GKGenerateList - the named cases GKGenerate() knows, in the order the benchmarks use
*/
PetscErrorCode GKGenerateList(PetscInt *n, const GKGenCase **list)
{
  PetscFunctionBegin;
  if (n) *n = (PetscInt)(sizeof(cases) / sizeof(cases[0]));
  if (list) *list = cases;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKGenerateLookup - the case of that name; a clear error naming the known ones otherwise
*/
PetscErrorCode GKGenerateLookup(const char name[], const GKGenCase **c)
{
  char known[1024] = "";

  PetscFunctionBegin;
  *c = NULL;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    PetscBool match;
    PetscCall(PetscStrcmp(name, cases[i].name, &match));
    if (match) {
      *c = &cases[i];
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscStrlcat(known, i ? ", " : "", sizeof(known)));
    PetscCall(PetscStrlcat(known, cases[i].name, sizeof(known)));
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown generated matrix '%s'; known: %s", name ? name : "(null)", known);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* building the local rows */
typedef struct {
  GKCSR   *csr;
  uint64_t seed;
  PetscInt scale;
  MPI_Comm comm;
  PetscInt64 cap; /* of csr->ja */
} Gen;

/* sizes: rows split as PetscSplitOwnership() does (in blocks of bs), columns likewise */
static PetscErrorCode SetSizes(Gen *g, PetscInt M, PetscInt N, PetscInt bs)
{
  GKCSR   *c = g->csr;
  PetscInt mb = PETSC_DECIDE, Mb = M / bs, nb = PETSC_DECIDE, Nb = N / bs, end;

  PetscFunctionBegin;
  PetscCheck(M % bs == 0 && N % bs == 0, g->comm, PETSC_ERR_PLIB, "Generated sizes %" PetscInt_FMT " x %" PetscInt_FMT " not multiples of the block size %" PetscInt_FMT, M, N, bs);
  c->M  = M;
  c->N  = N;
  c->bs = bs;
  PetscCall(PetscSplitOwnership(g->comm, &mb, &Mb));
  PetscCall(PetscSplitOwnership(g->comm, &nb, &Nb));
  c->m = mb * bs;
  c->n = nb * bs;
  PetscCallMPI(MPI_Scan(&c->m, &end, 1, MPIU_INT, MPI_SUM, g->comm));
  c->rstart = end - c->m;
  PetscCallMPI(MPI_Scan(&c->n, &end, 1, MPIU_INT, MPI_SUM, g->comm));
  c->cstart = end - c->n;
  PetscCall(PetscMalloc1(c->m + 1, &c->ia));
  c->ia[0] = 0;
  g->cap   = 0;
  c->ja    = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Reserve(Gen *g, PetscInt64 need)
{
  GKCSR *c = g->csr;

  PetscFunctionBegin;
  if (need > g->cap) {
    PetscInt64 nc = PetscMax(need, 2 * g->cap + 1024);
    PetscInt  *nj;
    PetscCall(PetscMalloc1(nc, &nj));
    if (c->ja) PetscCall(PetscArraycpy(nj, c->ja, g->cap));
    PetscCall(PetscFree(c->ja));
    c->ja  = nj;
    g->cap = nc;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* appends local row r (rows must come in order) with cols[0..len) (sorted and made unique here; cols is scratch) */
static PetscErrorCode AddRow(Gen *g, PetscInt r, PetscInt len, PetscInt cols[])
{
  GKCSR     *c = g->csr;
  PetscInt64 at;

  PetscFunctionBegin;
  PetscCall(PetscSortRemoveDupsInt(&len, cols));
  at = c->ia[r];
  PetscCall(Reserve(g, at + len));
  PetscCall(PetscArraycpy(c->ja + at, cols, len));
  c->ia[r + 1] = at + len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* COO of local entries (row local index, global column), possibly duplicated -> the CSR (sorted, unique) */
typedef struct {
  PetscInt  *r, *j;
  PetscInt64 n, cap;
} COO;

static PetscErrorCode COOGrow(COO *q)
{
  PetscFunctionBegin;
  {
    PetscInt64 nc = 2 * q->cap + 4096;
    PetscInt  *nr, *nj;
    PetscCall(PetscMalloc2(nc, &nr, nc, &nj));
    if (q->n) {
      PetscCall(PetscArraycpy(nr, q->r, q->n));
      PetscCall(PetscArraycpy(nj, q->j, q->n));
    }
    PetscCall(PetscFree2(q->r, q->j));
    q->r   = nr;
    q->j   = nj;
    q->cap = nc;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode COOPush(COO *q, PetscInt r, PetscInt j)
{
  if (q->n == q->cap) {
    PetscErrorCode ierr = COOGrow(q);
    if (ierr) return ierr;
  }
  q->r[q->n]   = r;
  q->j[q->n++] = j;
  return PETSC_SUCCESS;
}

static PetscErrorCode COOToCSR(Gen *g, COO *q)
{
  GKCSR      *c = g->csr;
  PetscInt64 *fill;
  PetscInt    m = c->m;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(m + 1, &fill));
  for (PetscInt64 k = 0; k < q->n; k++) fill[q->r[k] + 1]++;
  for (PetscInt i = 0; i < m; i++) fill[i + 1] += fill[i];
  PetscCall(Reserve(g, fill[m]));
  for (PetscInt i = 0; i <= m; i++) c->ia[i] = fill[i];
  for (PetscInt64 k = 0; k < q->n; k++) c->ja[fill[q->r[k]]++] = q->j[k];
  PetscCall(PetscFree2(q->r, q->j));
  q->n = q->cap = 0;
  /* sort and compact the rows in place */
  {
    PetscInt64 w = 0;
    for (PetscInt i = 0; i < m; i++) {
      PetscInt64 s = c->ia[i];
      PetscInt   len = (PetscInt)(c->ia[i + 1] - s);
      PetscCall(PetscSortRemoveDupsInt(&len, c->ja + s));
      if (w != s) PetscCall(PetscArraymove(c->ja + w, c->ja + s, len));
      c->ia[i] = w;
      w += len;
    }
    c->ia[m] = w;
  }
  PetscCall(PetscFree(fill));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a random permutation of [0, n): full (window = n) or only inside consecutive windows of w entries */
static PetscErrorCode RandomPerm(uint64_t seed, PetscInt n, PetscInt w, PetscInt **perm, PetscInt **iperm)
{
  uint64_t s = seed;
  PetscInt *p, *ip;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n, &p, n, &ip));
  for (PetscInt i = 0; i < n; i++) p[i] = i;
  for (PetscInt b = 0; b < n; b += w) {
    PetscInt e = PetscMin(n, b + w);
    for (PetscInt i = e - 1; i > b; i--) {
      PetscInt k = b + NextInt(&s, i - b + 1), t = p[i];
      p[i] = p[k];
      p[k] = t;
    }
  }
  for (PetscInt i = 0; i < n; i++) ip[p[i]] = i;
  *perm  = p;  /* old -> new */
  *iperm = ip; /* new -> old */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscInt ScaleGrid(PetscInt ndef, PetscInt scale, PetscInt nmin)
{
  double n = (double)ndef * pow(2.0, (double)(scale - GK_GEN_SCALE_DEFAULT));
  return PetscMax(nmin, (PetscInt)(n + 0.5));
}
static PetscInt ScaleRows(PetscInt Ndef, PetscInt scale, PetscInt Nmin)
{
  double n = (double)Ndef * pow(8.0, (double)(scale - GK_GEN_SCALE_DEFAULT));
  return PetscMax(Nmin, (PetscInt)(n + 0.5));
}

/* 3D stencils on n^3 points: pts 7 or 27; perm: a random symmetric permutation of the unknowns */
static PetscErrorCode GenStencil(Gen *g, PetscInt ndef, PetscInt pts, PetscBool perm)
{
  PetscInt  n = ScaleGrid(ndef, g->scale, 6), N, *p = NULL, *ip = NULL, cols[27];
  GKCSR    *c = g->csr;

  PetscFunctionBegin;
  PetscCheck((double)n * n * n < PETSC_MAX_INT, g->comm, PETSC_ERR_SUP, "Grid %" PetscInt_FMT "^3 too large for 32-bit PetscInt", n);
  N = n * n * n;
  PetscCall(SetSizes(g, N, N, 1));
  if (perm) PetscCall(RandomPerm(g->seed * 7 + 1, N, N, &p, &ip));
  PetscCall(Reserve(g, (PetscInt64)c->m * pts));
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt o = perm ? ip[c->rstart + r] : c->rstart + r, i = o % n, j = (o / n) % n, k = o / (n * n), len = 0;
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt dj = -1; dj <= 1; dj++)
        for (PetscInt di = -1; di <= 1; di++) {
          PetscInt ii = i + di, jj = j + dj, kk = k + dk, q;
          if (pts == 7 && (di != 0) + (dj != 0) + (dk != 0) > 1) continue;
          if (ii < 0 || jj < 0 || kk < 0 || ii >= n || jj >= n || kk >= n) continue;
          q           = (kk * n + jj) * n + ii;
          cols[len++] = perm ? p[q] : q;
        }
    PetscCall(AddRow(g, r, len, cols));
  }
  if (perm) PetscCall(PetscFree2(p, ip));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* neighbour directions of a vertex: Kuhn (6-tet) mesh: +-(axes, (1,1,0), (1,0,1), (0,1,1), (1,1,1)) */
static const PetscInt kuhn[14][3] = {
  {1, 0, 0},  {0, 1, 0},  {0, 0, 1},  {1, 1, 0},  {1, 0, 1},  {0, 1, 1},  {1, 1, 1},
  {-1, 0, 0}, {0, -1, 0}, {0, 0, -1}, {-1, -1, 0}, {-1, 0, -1}, {0, -1, -1}, {-1, -1, -1},
};

/* P1 on the 5-tet mesh of n^3 cubes (fem_p1), and the 3-dof P1 on the Kuhn mesh (fem_elast, dof = 3) */
static PetscErrorCode GenFEMP1(Gen *g, PetscInt ndef, PetscBool kuhnmesh, PetscInt dof)
{
  PetscInt  n = ScaleGrid(ndef, g->scale, 4), nv = n + 1, NV, *p, *ip, vc[27], cols[81];
  GKCSR    *c = g->csr;

  PetscFunctionBegin;
  PetscCheck((double)nv * nv * nv * dof < PETSC_MAX_INT, g->comm, PETSC_ERR_SUP, "Mesh too large for 32-bit PetscInt");
  NV = nv * nv * nv;
  PetscCall(SetSizes(g, NV * dof, NV * dof, dof));
  PetscCall(RandomPerm(g->seed * 7 + 2, NV, 4096, &p, &ip));
  PetscCall(Reserve(g, (PetscInt64)c->m * (kuhnmesh ? 15 : 19) * dof));
  for (PetscInt r = 0; r < c->m; r += dof) {
    PetscInt v = ip[(c->rstart + r) / dof], i = v % nv, j = (v / nv) % nv, k = v / (nv * nv), nn = 0;
    vc[nn++] = v;
    if (kuhnmesh) {
      for (PetscInt d = 0; d < 14; d++) {
        PetscInt ii = i + kuhn[d][0], jj = j + kuhn[d][1], kk = k + kuhn[d][2];
        if (ii < 0 || jj < 0 || kk < 0 || ii >= nv || jj >= nv || kk >= nv) continue;
        vc[nn++] = (kk * nv + jj) * nv + ii;
      }
    } else {
      PetscBool even = (PetscBool)((i + j + k) % 2 == 0);
      for (PetscInt dk = -1; dk <= 1; dk++)
        for (PetscInt dj = -1; dj <= 1; dj++)
          for (PetscInt di = -1; di <= 1; di++) {
            PetscInt nz = (di != 0) + (dj != 0) + (dk != 0), ii = i + di, jj = j + dj, kk = k + dk;
            if (nz == 0 || nz == 3 || (nz == 2 && !even)) continue;
            if (ii < 0 || jj < 0 || kk < 0 || ii >= nv || jj >= nv || kk >= nv) continue;
            vc[nn++] = (kk * nv + jj) * nv + ii;
          }
    }
    for (PetscInt q = 0; q < nn; q++) vc[q] = p[vc[q]];
    for (PetscInt a = 0; a < dof; a++) {
      PetscInt len = 0;
      for (PetscInt q = 0; q < nn; q++)
        for (PetscInt b = 0; b < dof; b++) cols[len++] = vc[q] * dof + b;
      PetscCall(AddRow(g, r + a, len, cols));
    }
  }
  PetscCall(PetscFree2(p, ip));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P2 on the Kuhn mesh of n^3 cubes: element connectivity of vertex and edge nodes */
static PetscErrorCode GenFEMP2(Gen *g, PetscInt ndef)
{
  PetscInt    n = ScaleGrid(ndef, g->scale, 2), nv = n + 1, NV, NN = 0, *eid, *p, *ip, *mark, cols[1024];
  PetscInt64  ntet, *tstart;
  PetscInt   *tnodes, *tlist;
  GKCSR      *c   = g->csr;
  const PetscInt perms[6][3] = {
    {0, 1, 2},
    {0, 2, 1},
    {1, 0, 2},
    {1, 2, 0},
    {2, 0, 1},
    {2, 1, 0}
  };

  PetscFunctionBegin;
  PetscCheck((double)nv * nv * nv * 8 < PETSC_MAX_INT, g->comm, PETSC_ERR_SUP, "Mesh too large for 32-bit PetscInt");
  NV = nv * nv * nv;
  /* node numbering: vertex v, then its edges to v + d (d in {0,1}^3 \ 0, index dx + 2dy + 4dz - 1) inside the box */
  PetscCall(PetscMalloc1((PetscInt64)NV * 8, &eid)); /* eid[v*8]: vertex node, eid[v*8 + 1 + d]: edge node or -1 */
  for (PetscInt v = 0; v < NV; v++) {
    PetscInt i = v % nv, j = (v / nv) % nv, k = v / (nv * nv);
    eid[(PetscInt64)v * 8] = NN++;
    for (PetscInt d = 0; d < 7; d++) {
      PetscInt dx = (d + 1) & 1, dy = ((d + 1) >> 1) & 1, dz = ((d + 1) >> 2) & 1;
      eid[(PetscInt64)v * 8 + 1 + d] = (i + dx < nv && j + dy < nv && k + dz < nv) ? NN++ : -1;
    }
  }
  PetscCall(SetSizes(g, NN, NN, 1));
  PetscCall(RandomPerm(g->seed * 7 + 3, NN, 4096, &p, &ip));
  /* tetrahedra: 6 per cube, path base -> +e_a -> +e_b -> +e_c; 10 nodes each */
  ntet = 6 * (PetscInt64)n * n * n;
  PetscCall(PetscMalloc1(ntet * 10, &tnodes));
  {
    PetscInt64 t = 0;
    for (PetscInt k = 0; k < n; k++)
      for (PetscInt j = 0; j < n; j++)
        for (PetscInt i = 0; i < n; i++)
          for (PetscInt q = 0; q < 6; q++, t++) {
            PetscInt pc[4][3], vv[4], e = 4;
            pc[0][0] = i;
            pc[0][1] = j;
            pc[0][2] = k;
            for (PetscInt s = 1; s < 4; s++) {
              for (PetscInt x = 0; x < 3; x++) pc[s][x] = pc[s - 1][x];
              pc[s][perms[q][s - 1]]++;
            }
            for (PetscInt s = 0; s < 4; s++) {
              vv[s]                = (pc[s][2] * nv + pc[s][1]) * nv + pc[s][0];
              tnodes[t * 10 + s] = eid[(PetscInt64)vv[s] * 8];
            }
            for (PetscInt s = 0; s < 4; s++)
              for (PetscInt u = s + 1; u < 4; u++) {
                PetscInt d = (pc[u][0] - pc[s][0]) + 2 * (pc[u][1] - pc[s][1]) + 4 * (pc[u][2] - pc[s][2]) - 1;
                tnodes[t * 10 + e++] = eid[(PetscInt64)vv[s] * 8 + 1 + d];
              }
          }
  }
  PetscCall(PetscFree(eid));
  /* node -> tetrahedra */
  PetscCall(PetscCalloc1(NN + 1, &tstart));
  for (PetscInt64 t = 0; t < ntet * 10; t++) tstart[tnodes[t] + 1]++;
  for (PetscInt v = 0; v < NN; v++) tstart[v + 1] += tstart[v];
  PetscCall(PetscMalloc1(ntet * 10, &tlist));
  {
    PetscInt64 *f;
    PetscCall(PetscMalloc1(NN, &f));
    for (PetscInt v = 0; v < NN; v++) f[v] = tstart[v];
    for (PetscInt64 t = 0; t < ntet * 10; t++) tlist[f[tnodes[t]]++] = (PetscInt)(t / 10);
    PetscCall(PetscFree(f));
  }
  PetscCall(PetscMalloc1(NN, &mark));
  for (PetscInt v = 0; v < NN; v++) mark[v] = -1;
  PetscCall(Reserve(g, (PetscInt64)c->m * 32));
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt o = ip[c->rstart + r], len = 0;
    for (PetscInt64 q = tstart[o]; q < tstart[o + 1]; q++) {
      const PetscInt *tn = tnodes + (PetscInt64)tlist[q] * 10;
      for (PetscInt s = 0; s < 10; s++)
        if (mark[tn[s]] != r) {
          mark[tn[s]] = r;
          PetscCheck(len < 1024, g->comm, PETSC_ERR_PLIB, "P2 row longer than 1024");
          cols[len++] = p[tn[s]];
        }
    }
    PetscCall(AddRow(g, r, len, cols));
  }
  PetscCall(PetscFree(mark));
  PetscCall(PetscFree(tlist));
  PetscCall(PetscFree(tstart));
  PetscCall(PetscFree(tnodes));
  PetscCall(PetscFree2(p, ip));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R-MAT (Graph500 parameters, no noise), vertex labels scrambled, symmetrised, self-loops dropped, diagonal added */
static PetscErrorCode GenRMAT(Gen *g, PetscInt sdef, PetscInt edgefactor)
{
  PetscInt   s = PetscMax(6, sdef - 3 * (GK_GEN_SCALE_DEFAULT - g->scale)), N, *p, *ip, rs, re;
  PetscInt64 ne;
  uint64_t   st = g->seed * 0x1234567ULL + 11;
  const double a = 0.57, b = 0.19, cc = 0.19;
  COO        q = {NULL, NULL, 0, 0};
  GKCSR     *c = g->csr;

  PetscFunctionBegin;
  PetscCheck(s < 31, g->comm, PETSC_ERR_SUP, "R-MAT scale %" PetscInt_FMT " too large for 32-bit PetscInt", s);
  N  = (PetscInt)1 << s;
  ne = (PetscInt64)edgefactor * N;
  PetscCall(SetSizes(g, N, N, 1));
  rs = c->rstart;
  re = c->rstart + c->m;
  PetscCall(RandomPerm(g->seed * 7 + 4, N, N, &p, &ip));
  for (PetscInt r = rs; r < re; r++) PetscCall(COOPush(&q, r - rs, r));
  /* quadrant thresholds in 16-bit fixed point: one 64-bit draw gives four levels */
  const uint64_t ta = (uint64_t)(a * 65536.0), tab = (uint64_t)((a + b) * 65536.0), tabc = (uint64_t)((a + b + cc) * 65536.0);
  for (PetscInt64 e = 0; e < ne; e++) {
    PetscInt u = 0, v = 0;
    uint64_t x = 0;
    for (PetscInt l = 0; l < s; l++) {
      uint64_t q;
      PetscInt bit = (PetscInt)1 << l;
      if ((l & 3) == 0) x = Next64(&st);
      q = x & 0xFFFFULL;
      x >>= 16;
      if (q < ta) continue;
      else if (q < tab) v |= bit;
      else if (q < tabc) u |= bit;
      else {
        u |= bit;
        v |= bit;
      }
    }
    u = p[u];
    v = p[v];
    if (u == v) continue;
    if (u >= rs && u < re) PetscCall(COOPush(&q, u - rs, v));
    if (v >= rs && v < re) PetscCall(COOPush(&q, v - rs, u));
  }
  PetscCall(PetscFree2(p, ip));
  PetscCall(COOToCSR(g, &q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* power-law row lengths: Pareto(xm = 3, shape 1.6) capped at N/8; random columns (band: within +-max(4 len, 2000)) */
static PetscErrorCode GenPowerLaw(Gen *g, PetscInt Ndef, PetscBool band)
{
  PetscInt  N = ScaleRows(Ndef, g->scale, 512), cap = PetscMax(16, N / 8), *cols;
  GKCSR    *c = g->csr;

  PetscFunctionBegin;
  PetscCall(SetSizes(g, N, N, 1));
  PetscCall(PetscMalloc1(cap + 1, &cols));
  PetscCall(Reserve(g, (PetscInt64)c->m * 9));
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt gr = c->rstart + r, len, nn = 0;
    uint64_t s  = Hash3(g->seed, 101, (uint64_t)gr);
    double   u  = 1.0 - NextU(&s), x = 3.0 * pow(u, -1.0 / 1.6);
    len         = (PetscInt)PetscMin((double)cap, x);
    cols[nn++]  = gr;
    if (band) {
      PetscInt w = PetscMax(4 * len, 2000), lo = PetscMax(0, gr - w), hi = PetscMin(N - 1, gr + w);
      for (PetscInt t = 0; t < len; t++) cols[nn++] = lo + NextInt(&s, hi - lo + 1);
    } else {
      for (PetscInt t = 0; t < len; t++) cols[nn++] = NextInt(&s, N);
    }
    PetscCall(AddRow(g, r, nn, cols));
  }
  PetscCall(PetscFree(cols));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* wide band: row i picks 25..100 columns in (i, i+B], symmetrised (so 50-200 a row), diagonal */
static PetscErrorCode GenBand(Gen *g, PetscInt Ndef, PetscInt Bdef)
{
  PetscInt  N = ScaleRows(Ndef, g->scale, 400), B = PetscMin(N - 1, PetscMax(250, ScaleGrid(Bdef, g->scale, 250))), rs, re;
  COO       q = {NULL, NULL, 0, 0};
  GKCSR    *c = g->csr;

  PetscFunctionBegin;
  PetscCall(SetSizes(g, N, N, 1));
  rs = c->rstart;
  re = c->rstart + c->m;
  for (PetscInt r = rs; r < re; r++) PetscCall(COOPush(&q, r - rs, r));
  for (PetscInt i = PetscMax(0, rs - B); i < re; i++) {
    uint64_t s = Hash3(g->seed, 202, (uint64_t)i);
    PetscInt d = 25 + NextInt(&s, 76), w = PetscMin(B, N - 1 - i);
    if (w <= 0) continue;
    for (PetscInt t = 0; t < d; t++) {
      PetscInt j = i + 1 + NextInt(&s, w);
      if (i >= rs) PetscCall(COOPush(&q, i - rs, j));
      if (j >= rs && j < re) PetscCall(COOPush(&q, j - rs, i));
    }
  }
  PetscCall(COOToCSR(g, &q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* circuit-like: every node couples to 0-3 others (70% within +-64, else anywhere), symmetrised; 8 rails couple to
   N/4, N/8, ... random nodes (dense rows and columns); diagonal */
static PetscErrorCode GenCircuit(Gen *g, PetscInt Ndef)
{
  PetscInt  N = ScaleRows(Ndef, g->scale, 512), rs, re;
  COO       q = {NULL, NULL, 0, 0};
  GKCSR    *c = g->csr;
  uint64_t  st = g->seed * 31 + 5;

  PetscFunctionBegin;
  PetscCall(SetSizes(g, N, N, 1));
  rs = c->rstart;
  re = c->rstart + c->m;
  for (PetscInt r = rs; r < re; r++) PetscCall(COOPush(&q, r - rs, r));
  for (PetscInt i = 0; i < N; i++) {
    uint64_t s = Hash3(g->seed, 303, (uint64_t)i);
    double   x = NextU(&s);
    PetscInt k = x < 0.05 ? 0 : (x < 0.45 ? 1 : (x < 0.80 ? 2 : 3));
    for (PetscInt t = 0; t < k; t++) {
      PetscInt j;
      if (NextU(&s) < 0.7) j = i - 64 + NextInt(&s, 129);
      else j = NextInt(&s, N);
      if (j < 0 || j >= N || j == i) continue;
      if (i >= rs && i < re) PetscCall(COOPush(&q, i - rs, j));
      if (j >= rs && j < re) PetscCall(COOPush(&q, j - rs, i));
    }
  }
  for (PetscInt rail = 0; rail < 8; rail++) {
    PetscInt rr = NextInt(&st, N), cnt = PetscMax(2, N >> (rail + 2));
    for (PetscInt t = 0; t < cnt; t++) {
      PetscInt j = NextInt(&st, N);
      if (j == rr) continue;
      if (rr >= rs && rr < re) PetscCall(COOPush(&q, rr - rs, j));
      if (j >= rs && j < re) PetscCall(COOPush(&q, j - rs, rr));
    }
  }
  PetscCall(COOToCSR(g, &q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* LP-like m x 3m: column j has 1-6 entries (70% in rows near j/3, else anywhere); 40 linking rows hold each column
   with probability 0.03 */
static PetscErrorCode GenLP(Gen *g, PetscInt mdef)
{
  PetscInt  m = ScaleRows(mdef, g->scale, 256), N = 3 * m, rs, re, link[40];
  COO       q = {NULL, NULL, 0, 0};
  GKCSR    *c = g->csr;
  uint64_t  st = g->seed * 37 + 9;

  PetscFunctionBegin;
  PetscCall(SetSizes(g, m, N, 1));
  rs = c->rstart;
  re = c->rstart + c->m;
  for (PetscInt l = 0; l < 40; l++) link[l] = NextInt(&st, m);
  for (PetscInt j = 0; j < N; j++) {
    uint64_t s  = Hash3(g->seed, 404, (uint64_t)j);
    PetscInt k  = 1 + NextInt(&s, 6), ctr = j / 3;
    for (PetscInt t = 0; t < k; t++) {
      PetscInt i = NextU(&s) < 0.7 ? ctr - 500 + NextInt(&s, 1001) : NextInt(&s, m);
      if (i < 0 || i >= m) continue;
      if (i >= rs && i < re) PetscCall(COOPush(&q, i - rs, j));
    }
    for (PetscInt l = 0; l < 40; l++)
      if (NextU(&s) < 0.03 && link[l] >= rs && link[l] < re) PetscCall(COOPush(&q, link[l] - rs, j));
  }
  PetscCall(COOToCSR(g, &q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* values: symmetric cases -u(min(i,j), max(i,j)) off the diagonal, unsymmetric +-u(i,j) (u in [0.5, 1.5)); square
   cases: diagonal = sum of |off-diagonal| + 1 (strictly diagonally dominant; with symmetry: SPD) */
static PetscErrorCode FillValues(Gen *g)
{
  GKCSR    *c  = g->csr;
  PetscBool sq = (PetscBool)(c->M == c->N);

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(c->ia[c->m], &c->a));
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt  gr   = c->rstart + r;
    PetscInt64 dpos = -1;
    PetscReal sum  = 0;
    for (PetscInt64 k = c->ia[r]; k < c->ia[r + 1]; k++) {
      PetscInt  j = c->ja[k];
      PetscReal v;
      if (sq && j == gr) {
        dpos = k;
        continue;
      }
      if (c->symmetric) v = -(0.5 + HashU(g->seed, (uint64_t)PetscMin(gr, j), (uint64_t)PetscMax(gr, j)));
      else {
        uint64_t h = Hash3(g->seed, (uint64_t)gr, (uint64_t)j);
        v          = (0.5 + (double)(h >> 11) * (1.0 / 9007199254740992.0)) * ((h & 1) ? -1.0 : 1.0);
      }
      c->a[k] = v;
      sum += PetscAbsReal(v);
    }
    if (dpos >= 0) c->a[dpos] = sum + 1.0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKGenerateCSR - builds this rank's rows of the named case at that scale (0 .. GK_GEN_SCALE_MAX) from the seed
*/
PetscErrorCode GKGenerateCSR(MPI_Comm comm, const char name[], PetscInt scale, PetscInt seed, GKCSR **csr)
{
  const GKGenCase *gc;
  Gen              g;
  GKCSR           *c;

  PetscFunctionBegin;
  PetscCall(GKGenerateLookup(name, &gc));
  PetscCheck(scale >= 0 && scale <= GK_GEN_SCALE_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "Generator scale %" PetscInt_FMT " out of range [0, %d] (%d is the benchmark set)", scale, GK_GEN_SCALE_MAX, GK_GEN_SCALE_DEFAULT);
  PetscCall(PetscNew(&c));
  PetscCall(PetscStrncpy(c->name, gc->name, sizeof(c->name)));
  c->scale     = scale;
  c->seed      = seed;
  c->symmetric = gc->symmetric;
  c->spd       = gc->spd;
  g.csr        = c;
  g.seed       = Mix64((uint64_t)seed + 0x5EEDULL);
  g.scale      = scale;
  g.comm       = comm;
  g.cap        = 0;
  if (!strcmp(gc->name, "fem_p1")) PetscCall(GenFEMP1(&g, 120, PETSC_FALSE, 1));
  else if (!strcmp(gc->name, "fem_p2")) PetscCall(GenFEMP2(&g, 44));
  else if (!strcmp(gc->name, "fem_elast")) PetscCall(GenFEMP1(&g, 64, PETSC_TRUE, 3));
  else if (!strcmp(gc->name, "stencil7")) PetscCall(GenStencil(&g, 160, 7, PETSC_FALSE));
  else if (!strcmp(gc->name, "stencil27")) PetscCall(GenStencil(&g, 100, 27, PETSC_FALSE));
  else if (!strcmp(gc->name, "stencil7_perm")) PetscCall(GenStencil(&g, 160, 7, PETSC_TRUE));
  else if (!strcmp(gc->name, "rmat20")) PetscCall(GenRMAT(&g, 20, 16));
  else if (!strcmp(gc->name, "rmat22")) PetscCall(GenRMAT(&g, 22, 4));
  else if (!strcmp(gc->name, "powerlaw")) PetscCall(GenPowerLaw(&g, 2000000, PETSC_FALSE));
  else if (!strcmp(gc->name, "powerlaw_band")) PetscCall(GenPowerLaw(&g, 2000000, PETSC_TRUE));
  else if (!strcmp(gc->name, "band_wide")) PetscCall(GenBand(&g, 320000, 20000));
  else if (!strcmp(gc->name, "circuit")) PetscCall(GenCircuit(&g, 2000000));
  else if (!strcmp(gc->name, "lp_rect")) PetscCall(GenLP(&g, 1000000));
  else SETERRQ(comm, PETSC_ERR_PLIB, "Case %s has no generator", gc->name);
  PetscCall(FillValues(&g));
  *csr = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKCSRDestroy - frees what GKGenerateCSR() made
*/
PetscErrorCode GKCSRDestroy(GKCSR **csr)
{
  PetscFunctionBegin;
  if (!*csr) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree((*csr)->ia));
  PetscCall(PetscFree((*csr)->ja));
  PetscCall(PetscFree((*csr)->a));
  PetscCall(PetscFree(*csr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKCSRToMat - a matrix of that type holding the generated rows: MatSetType(type), options prefix (when prefix is
  not NULL: MatSetOptionsPrefix() + MatSetFromOptions(), so that type options such as -<prefix>mat_amb_b are read),
  block size, exact preallocation (MatXAIJSetPreallocation(), and the SELL calls), one MatSetValues() a row, final
  assembly. MAT_NEW_NONZERO_ALLOCATION_ERR is set, so a preallocation bug cannot hide.
*/
PetscErrorCode GKCSRToMat(MPI_Comm comm, const GKCSR *c, MatType type, const char prefix[], Mat *A)
{
  PetscInt *dnz, *onz, bs = c->bs, nb = c->m / bs, cend = c->cstart + c->n;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, c->m, c->n, c->M, c->N));
  PetscCall(MatSetType(*A, type));
  if (prefix) {
    PetscCall(MatSetOptionsPrefix(*A, prefix));
    PetscCall(MatSetFromOptions(*A));
  }
  if (bs > 1) PetscCall(MatSetBlockSize(*A, bs));
  /* per (block) row: distinct (block) columns inside and outside the diagonal block */
  PetscCall(PetscCalloc2(nb, &dnz, nb, &onz));
  for (PetscInt b = 0; b < nb; b++) {
    PetscInt r = b * bs, last = -1;
    for (PetscInt64 k = c->ia[r]; k < c->ia[r + 1]; k++) {
      PetscInt jb = c->ja[k] / bs;
      if (jb == last) continue;
      last = jb;
      if (c->ja[k] >= c->cstart && c->ja[k] < cend) dnz[b]++;
      else onz[b]++;
    }
  }
  PetscCall(MatXAIJSetPreallocation(*A, bs, dnz, onz, NULL, NULL));
  PetscCall(PetscFree2(dnz, onz));
  /* SELL (not covered by MatXAIJSetPreallocation): per point row; no-ops for other types */
  PetscCall(PetscCalloc2(c->m, &dnz, c->m, &onz));
  for (PetscInt r = 0; r < c->m; r++) {
    for (PetscInt64 k = c->ia[r]; k < c->ia[r + 1]; k++) {
      if (c->ja[k] >= c->cstart && c->ja[k] < cend) dnz[r]++;
      else onz[r]++;
    }
  }
  PetscCall(MatSeqSELLSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPISELLSetPreallocation(*A, 0, dnz, 0, onz));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt row = c->rstart + r, len = (PetscInt)(c->ia[r + 1] - c->ia[r]);
    PetscCall(MatSetValues(*A, 1, &row, len, c->ja + c->ia[r], c->a + c->ia[r], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKGenerate - the named case as an assembled matrix of that type (see GKGenerateCSR(), GKCSRToMat())
*/
PetscErrorCode GKGenerate(MPI_Comm comm, const char name[], PetscInt scale, PetscInt seed, MatType type, Mat *A)
{
  GKCSR *c;

  PetscFunctionBegin;
  PetscCall(GKGenerateCSR(comm, name, scale, seed, &c));
  PetscCall(GKCSRToMat(comm, c, type, NULL, A));
  PetscCall(GKCSRDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StatsReduce(MPI_Comm comm, PetscInt M, PetscInt N, PetscInt64 nnz, PetscReal sumsq, PetscInt maxlen, PetscInt minlen, PetscInt empty, GKRowStats *s)
{
  PetscReal  in[2] = {(PetscReal)nnz, sumsq}, out[2];
  PetscInt   mi[2] = {maxlen, -minlen}, mo[2];
  PetscInt64 nz;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(in, out, 2, MPIU_REAL, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(mi, mo, 2, MPIU_INT, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&nnz, &nz, 1, MPIU_INT64, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(&empty, &s->emptyrows, 1, MPIU_INT, MPI_SUM, comm));
  s->rows       = M;
  s->cols       = N;
  s->nnz        = nz;
  s->maxlen     = mo[0];
  s->minlen     = -mo[1];
  s->mean       = M ? out[0] / M : 0;
  s->std        = M ? PetscSqrtReal(PetscMax(0, out[1] / M - s->mean * s->mean)) : 0;
  s->maxovermean = s->mean > 0 ? s->maxlen / s->mean : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKCSRRowStats - rows, columns, nonzeros and row-length mean, standard deviation, min, max of a generated case
*/
PetscErrorCode GKCSRRowStats(MPI_Comm comm, const GKCSR *c, GKRowStats *s)
{
  PetscInt  maxlen = 0, minlen = PETSC_MAX_INT, empty = 0;
  PetscReal sq     = 0;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt len = (PetscInt)(c->ia[r + 1] - c->ia[r]);
    maxlen       = PetscMax(maxlen, len);
    minlen       = PetscMin(minlen, len);
    empty += len == 0;
    sq += (PetscReal)len * len;
  }
  PetscCall(StatsReduce(comm, c->M, c->N, c->ia[c->m], sq, maxlen, minlen, empty, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKMatRowStats - the same statistics for any assembled matrix (MatGetRow() over the local rows)
*/
PetscErrorCode GKMatRowStats(Mat A, GKRowStats *s)
{
  PetscInt   rs, re, M, N, maxlen = 0, minlen = PETSC_MAX_INT, empty = 0;
  PetscInt64 nnz = 0;
  PetscReal  sq  = 0;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt len, tmp;
    PetscCall(MatGetRow(A, r, &len, NULL, NULL));
    tmp = len;
    PetscCall(MatRestoreRow(A, r, &tmp, NULL, NULL)); /* sets its count to 0 */
    nnz += len;
    maxlen = PetscMax(maxlen, len);
    minlen = PetscMin(minlen, len);
    empty += len == 0;
    sq += (PetscReal)len * len;
  }
  PetscCall(StatsReduce(PetscObjectComm((PetscObject)A), M, N, nnz, sq, maxlen, minlen, empty, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKRowStatsPrint - one line of the statistics table (header first when header is true)
*/
PetscErrorCode GKRowStatsPrint(MPI_Comm comm, const char name[], const GKRowStats *s, PetscBool header)
{
  PetscFunctionBegin;
  if (header) PetscCall(PetscPrintf(comm, "%-14s %9s %9s %11s %7s %7s %6s %7s %8s %6s\n", "matrix", "rows", "cols", "nnz", "mean", "std", "min", "max", "max/mean", "empty"));
  PetscCall(PetscPrintf(comm, "%-14s %9" PetscInt_FMT " %9" PetscInt_FMT " %11" PetscInt64_FMT " %7.2f %7.2f %6" PetscInt_FMT " %7" PetscInt_FMT " %8.1f %6" PetscInt_FMT "\n", name, s->rows, s->cols, s->nnz, (double)s->mean, (double)s->std, s->minlen, s->maxlen, (double)s->maxovermean, s->emptyrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}
