/*
   Reverse Cuthill-McKee on a host CSR pattern, for MATAMBCUDA's relabelled layout (ambcuda.cu: a square block whose
   rows scatter their columns over the whole matrix, as a stencil under a random permutation does, is laid out in this
   order, where its columns sit near its rows again and fit the 16-bit windows of AMB's segments).

   The pattern is read as the graph of A (structurally symmetric matrices give the classical RCM; for others the order
   follows the out-edges, which is still a permutation). Each connected piece starts from a pseudo-peripheral node:
   from the piece's first unvisited node of least degree, a breadth-first sweep, then again from a node of least degree
   in the last level while that makes the sweep deeper (at most AMB_RCM_SWEEPS sweeps). The order is the breadth-first
   order from there, the neighbours of a node taken by ascending degree, reversed at the end.
*/
#include "ambimpl.h"

#define AMB_RCM_SWEEPS 2

/* breadth-first levels from s over the unvisited nodes (mark[i] == 0 means unvisited here; the sweep marks with tag):
   the nodes in queue order into q (returns their number), the depth in *depth, a least-degree node of the last level
   in *last */
static PetscInt AMBRCMSweep(const PetscInt *ia, const PetscInt *ja, const PetscInt *deg, PetscInt s, PetscInt *mark, PetscInt tag, PetscInt *q, PetscInt *depth, PetscInt *last)
{
  PetscInt head = 0, tail = 0, lev = 0, levend;

  q[tail++] = s;
  mark[s]   = tag;
  levend    = tail;
  *last     = s;
  while (head < tail) {
    const PetscInt v = q[head++];
    for (PetscInt k = ia[v]; k < ia[v + 1]; k++) {
      const PetscInt w = ja[k];
      if (mark[w] == 0 || (mark[w] > 0 && mark[w] < tag)) {
        mark[w]   = tag;
        q[tail++] = w;
      }
    }
    if (head == levend && head < tail) { /* the next level is q[head .. tail) */
      lev++;
      levend = tail;
      *last  = q[head];
      for (PetscInt i = head + 1; i < tail; i++)
        if (deg[q[i]] < deg[*last]) *last = q[i];
    }
  }
  *depth = lev;
  return tail;
}

/*
  AMBReverseCuthillMcKee_Private - a reverse Cuthill-McKee order of the n x n pattern (ia, ja): perm[new] = old

  Work O(nnz) per sweep, at most AMB_RCM_SWEEPS + 1 sweeps a connected piece. Columns outside 0..n-1 are an error
  (the block must be square).
*/
PetscErrorCode AMBReverseCuthillMcKee_Private(PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt *perm)
{
  PetscInt *deg, *mark, *q, *tmp, done = 0, tag = 1, next = 0;

  PetscFunctionBegin;
  if (n <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc4(n, &deg, n, &mark, n, &q, n, &tmp));
  for (PetscInt i = 0; i < n; i++) {
    deg[i]  = ia[i + 1] - ia[i];
    mark[i] = 0;
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) PetscCheck(ja[k] >= 0 && ja[k] < n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Reverse Cuthill-McKee: column %" PetscInt_FMT " of row %" PetscInt_FMT " is outside 0..%" PetscInt_FMT, ja[k], i, n - 1);
  }
  while (done < n) {
    PetscInt s, depth, last, cnt, best = -1;
    while (mark[next] < 0) next++; /* mark < 0: placed in the order */
    s = next;
    /* a least-degree node among the first few unvisited ones starts the search for a peripheral node */
    for (PetscInt i = next, seen = 0; i < n && seen < 64; i++)
      if (mark[i] >= 0) {
        seen++;
        if (deg[i] < deg[s]) s = i;
      }
    for (PetscInt sw = 0; sw < AMB_RCM_SWEEPS; sw++) { /* sweeps mark with tags 1, 2, ...: all > 0, all unplaced */
      cnt = AMBRCMSweep(ia, ja, deg, s, mark, ++tag, q, &depth, &last);
      if (depth <= best) break;
      best = depth;
      if (last == s) break;
      s = last;
    }
    /* the Cuthill-McKee order of this piece from s: breadth-first, neighbours by ascending degree */
    {
      PetscInt head = 0, tail = 0;
      q[tail++] = s;
      mark[s]   = -1;
      while (head < tail) {
        const PetscInt v = q[head++], t0 = tail;
        for (PetscInt k = ia[v]; k < ia[v + 1]; k++) {
          const PetscInt w = ja[k];
          if (mark[w] >= 0) {
            mark[w]   = -1;
            q[tail++] = w;
          }
        }
        for (PetscInt i = t0 + 1; i < tail; i++) { /* insertion sort of the new ones by degree (rows are short) */
          const PetscInt w = q[i];
          PetscInt       j = i - 1;
          while (j >= t0 && deg[q[j]] > deg[w]) {
            q[j + 1] = q[j];
            j--;
          }
          q[j + 1] = w;
        }
      }
      (void)cnt;
      for (PetscInt i = 0; i < tail; i++) tmp[done + i] = q[i];
      done += tail;
    }
  }
  for (PetscInt i = 0; i < n; i++) perm[i] = tmp[n - 1 - i];
  PetscCall(PetscFree4(deg, mark, q, tmp));
  PetscFunctionReturn(PETSC_SUCCESS);
}
