/*
   Device kernels of PCGSAI's adaptive pattern (gsaiadaptivekernels.h). One thread per row: the rows J of B are merged
   in increasing column order (a k-way merge of at most GPUKIT_GSAI_ADAPT_MAXJ sorted rows), each column's residual summed
   in the order of J as the host does (gsaiadaptive.c), with explicitly rounded products and sums (no fused multiply-add),
   and the perstep largest |r_i| kept in a small sorted list (single precision weights, ties to the smaller column).
*/
#include <climits>
#include "gsaiadaptivekernels.h"

#define GSAI_TPB 128

namespace
{

/* (w, g) before (w2, g2) in the selection order: larger weight, then smaller column */
__device__ __forceinline__ bool Before(float w, int g, float w2, int g2)
{
  return w > w2 || (w == w2 && g < g2);
}

__global__ void AdaptStepKernel(GpukitGSAIAdaptArgs a, int last)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  int       head[GPUKIT_GSAI_ADAPT_MAXJ];
  float     bw[GPUKIT_GSAI_ADAPT_MAXSTEP];
  int       bg[GPUKIT_GSAI_ADAPT_MAXSTEP];
  int       nbest = 0, ncand = 0;
  double    r2    = 0.0;

  if (k >= a.n || !a.grow[k]) return;
  const int  j0 = a.jptr[k], n2 = a.jptr[k + 1] - j0;
  const int *J  = a.jcol + j0;
  if (a.status[k] != 0 || n2 > GPUKIT_GSAI_ADAPT_MAXJ) { /* no solution on J (the final solve applies its fallback) */
    a.res[k]    = 1.0;
    a.grow[k]   = 0;
    a.addcnt[k] = 0;
    return;
  }
  for (int c = 0; c < n2; c++) head[c] = a.bptr[J[c]];
  int jp = 0; /* J[jp] is the first entry of J not below the current column */
  for (;;) {
    int col = INT_MAX;
    for (int c = 0; c < n2; c++)
      if (head[c] < a.bptr[J[c] + 1]) col = min(col, a.bcol[head[c]]);
    if (col == INT_MAX || (a.spd && col >= k)) break;
    double acc = (!a.spd && col == k) ? -1.0 : 0.0;
    for (int c = 0; c < n2; c++)
      if (head[c] < a.bptr[J[c] + 1] && a.bcol[head[c]] == col) {
        acc = __dadd_rn(acc, __dmul_rn(a.bval[head[c]], a.x[j0 + c]));
        head[c]++;
      }
    while (jp < n2 && J[jp] < col) jp++;
    const bool inJ = jp < n2 && J[jp] == col;
    double     rt  = acc;
    if (a.spd) {
      if (inJ) continue; /* zero for a symmetric A, not counted */
      const double aii = a.diag[col];
      rt               = aii > 0.0 ? acc / sqrt(aii) : 0.0;
    }
    r2 = __dadd_rn(r2, __dmul_rn(rt, rt));
    if (inJ || !(fabs(rt) > GPUKIT_GSAI_ADAPT_RDROP)) continue;
    ncand++;
    const float w = (float)fabs(rt);
    if (nbest == a.perstep && !Before(w, col, bw[nbest - 1], bg[nbest - 1])) continue;
    int p = nbest < a.perstep ? nbest++ : nbest - 1;
    while (p > 0 && Before(w, col, bw[p - 1], bg[p - 1])) {
      bw[p] = bw[p - 1];
      bg[p] = bg[p - 1];
      p--;
    }
    bw[p] = w;
    bg[p] = col;
  }
  const double res = sqrt(r2);
  a.res[k]         = res;
  if (last) return;
  if (res <= a.tol || n2 >= a.room || ncand == 0) {
    a.grow[k]   = 0;
    a.addcnt[k] = 0;
    return;
  }
  int na = min(a.perstep, min(ncand, a.room - n2));
  na     = min(na, nbest);
  /* the chosen columns, increasing */
  for (int i = 1; i < na; i++) {
    int g = bg[i], p = i;
    while (p > 0 && bg[p - 1] > g) {
      bg[p] = bg[p - 1];
      p--;
    }
    bg[p] = g;
  }
  for (int i = 0; i < na; i++) a.add[(size_t)k * a.perstep + i] = bg[i];
  a.addcnt[k] = na;
}

__global__ void AdaptMergeKernel(int n, const int *__restrict__ jptr, const int *__restrict__ jcol, const int *__restrict__ addcnt, const int *__restrict__ add, int perstep, const int *__restrict__ nptr, int *__restrict__ ncol)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const int *J = jcol + jptr[k], *D = add + (size_t)k * perstep;
  const int  nj = jptr[k + 1] - jptr[k], nd = addcnt[k];
  int       *o  = ncol + nptr[k];
  int        i = 0, j = 0;
  while (i < nj || j < nd) {
    if (j >= nd || (i < nj && J[i] < D[j])) *o++ = J[i++];
    else *o++ = D[j++];
  }
}

__global__ void AdaptDiagonalKernel(int n, int *jptr, int *jcol)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) {
    jptr[k] = k;
    jcol[k] = k;
  }
  if (k == 0) jptr[n] = n;
}

__global__ void AdaptLengthsKernel(int n, const int *jptr, const int *addcnt, int *cnt)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) cnt[k] = jptr[k + 1] - jptr[k] + addcnt[k];
}

unsigned Blocks(int n)
{
  return (unsigned)((n + GSAI_TPB - 1) / GSAI_TPB);
}

} // namespace

cudaError_t GpukitGSAIAdaptStepCUDA(const GpukitGSAIAdaptArgs *a, int last, cudaStream_t stream)
{
  if (!a || a->n < 0 || a->perstep < 1 || a->perstep > GPUKIT_GSAI_ADAPT_MAXSTEP || a->room > GPUKIT_GSAI_ADAPT_MAXJ || (a->spd && !a->diag)) return cudaErrorInvalidValue;
  if (!a->n) return cudaSuccess;
  AdaptStepKernel<<<Blocks(a->n), GSAI_TPB, 0, stream>>>(*a, last);
  return cudaGetLastError();
}

cudaError_t GpukitGSAIAdaptMergeCUDA(int n, const int *jptr, const int *jcol, const int *addcnt, const int *add, int perstep, const int *nptr, int *ncol, cudaStream_t stream)
{
  if (n < 0 || perstep < 1) return cudaErrorInvalidValue;
  if (!n) return cudaSuccess;
  AdaptMergeKernel<<<Blocks(n), GSAI_TPB, 0, stream>>>(n, jptr, jcol, addcnt, add, perstep, nptr, ncol);
  return cudaGetLastError();
}

cudaError_t GpukitGSAIAdaptDiagonalCUDA(int n, int *jptr, int *jcol, cudaStream_t stream)
{
  if (n < 0) return cudaErrorInvalidValue;
  AdaptDiagonalKernel<<<Blocks(n > 0 ? n : 1), GSAI_TPB, 0, stream>>>(n, jptr, jcol);
  return cudaGetLastError();
}

cudaError_t GpukitGSAIAdaptLengthsCUDA(int n, const int *jptr, const int *addcnt, int *cnt, cudaStream_t stream)
{
  if (n < 0) return cudaErrorInvalidValue;
  if (!n) return cudaSuccess;
  AdaptLengthsKernel<<<Blocks(n), GSAI_TPB, 0, stream>>>(n, jptr, addcnt, cnt);
  return cudaGetLastError();
}
