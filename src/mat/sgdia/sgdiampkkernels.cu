/*
   Device kernels of MATSGDIACUDA's ghost-region matrix powers route: see sgdiampkkernels.h.
*/
#include "sgdiampkkernels.h"

typedef struct {
  GpukitSGDIAMPKBox b;
  int               rlo[3], rn[3];
  long long         nr; /* rows of the region: points * dof */
} MPKLevelParams;

static __device__ __forceinline__ double MPKLoad(const double *p)
{
  return __ldg(p);
}

/* one thread per row of the region */
__global__ static void MPKLevelKernel(const MPKLevelParams P, const double *__restrict__ x, const double *__restrict__ xs, double a, double bb, double cc, const double *__restrict__ w0, const double *__restrict__ wm1, const double *__restrict__ dg, double *__restrict__ wn, double *__restrict__ wo, double *__restrict__ vo)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= P.nr) return;
  const int       dof = P.b.dof, r = (int)(e % dof);
  const long long q   = e / dof;
  const int       l0  = (int)(q % P.rn[0]), l1 = (int)((q / P.rn[0]) % P.rn[1]), l2 = (int)(q / ((long long)P.rn[0] * P.rn[1]));
  const int       g0 = P.rlo[0] + l0, g1 = P.rlo[1] + l1, g2 = P.rlo[2] + l2;
  const long long bp = (long long)(g0 - P.b.lo[0]) + (long long)P.b.n[0] * ((long long)(g1 - P.b.lo[1]) + (long long)P.b.n[1] * (g2 - P.b.lo[2]));
  const long long vm = P.b.vm;
  double          t  = 0.0;

  for (int s = 0; s < P.b.k; s++) {
    int       dx, dy, dz;
    long long o;
    if (P.b.pk) {
      dx = P.b.pdelta[3 * s];
      dy = P.b.pdelta[3 * s + 1];
      dz = P.b.pdelta[3 * s + 2];
      o  = P.b.poff[s];
    } else {
      dx = P.b.delta[3 * s];
      dy = P.b.delta[3 * s + 1];
      dz = P.b.delta[3 * s + 2];
      o  = P.b.off[s];
    }
    if (!P.b.periodic[0] && (g0 + dx < 0 || g0 + dx >= P.b.M[0])) continue;
    if (!P.b.periodic[1] && (g1 + dy < 0 || g1 + dy >= P.b.M[1])) continue;
    if (!P.b.periodic[2] && (g2 + dz < 0 || g2 + dz >= P.b.M[2])) continue;
    const long long xo = (bp + o) * dof;
    for (int c = 0; c < dof; c++) {
      const double xv = xs ? MPKLoad(xs + xo + c) * MPKLoad(x + xo + c) : MPKLoad(x + xo + c);
      t += MPKLoad(P.b.val + (long long)(s * dof + c) * vm + bp * dof + r) * xv;
    }
  }
  {
    const long long i = bp * dof + r;
    double          w = a * t;
    if (w0) w += bb * MPKLoad(w0 + i);
    if (wm1) w += cc * MPKLoad(wm1 + i);
    wn[i] = w;
    if (wo && g0 >= P.b.olo[0] && g0 < P.b.olo[0] + P.b.on[0] && g1 >= P.b.olo[1] && g1 < P.b.olo[1] + P.b.on[1] && g2 >= P.b.olo[2] && g2 < P.b.olo[2] + P.b.on[2]) {
      const long long op = ((long long)(g0 - P.b.olo[0]) + (long long)P.b.on[0] * ((long long)(g1 - P.b.olo[1]) + (long long)P.b.on[1] * (g2 - P.b.olo[2]))) * dof + r;
      wo[op] = w;
      if (vo) vo[op] = MPKLoad(dg + i) * w;
    }
  }
}

static int MPKBlockOK(int block)
{
  return block >= 32 && block <= 1024 && block % 32 == 0;
}

static unsigned int MPKGrid(long long n, int block)
{
  return (unsigned int)((n + block - 1) / block);
}

cudaError_t GpukitSGDIAMPKLevelCUDA(const GpukitSGDIAMPKBox *b, const int rlo[3], const int rhi[3], const double *x, const double *xs, double a, double bb, double cc, const double *w0, const double *wm1, const double *dg, double *wn, double *wo, double *vo, int block, cudaStream_t stream)
{
  MPKLevelParams P;

  if (!b || !rlo || !rhi || !MPKBlockOK(block) || b->dof < 1 || b->k < 1 || !b->val || !b->off || !b->delta || !x || !wn || (!vo) != (!dg) || (vo && !wo)) return cudaErrorInvalidValue;
  P.b  = *b;
  P.nr = b->dof;
  for (int d = 0; d < 3; d++) {
    if (rlo[d] < b->lo[d] || rhi[d] > b->lo[d] + b->n[d]) return cudaErrorInvalidValue;
    P.rlo[d] = rlo[d];
    P.rn[d]  = rhi[d] - rlo[d];
    if (P.rn[d] <= 0) return cudaSuccess;
    P.nr *= P.rn[d];
  }
  if (b->pk && b->k > GPUKIT_SGDIA_MPK_PARAM_K) return cudaErrorInvalidValue;
  MPKLevelKernel<<<MPKGrid(P.nr, block), block, 0, stream>>>(P, x, xs, a, bb, cc, w0, wm1, dg, wn, wo, vo);
  return cudaGetLastError();
}

__global__ static void MPKPackKernel(int dof, long long nrp, const int *__restrict__ rp, int nu, const double *__restrict__ s0, const double *__restrict__ s1, double *__restrict__ root)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= nrp * dof) return;
  const long long i = e / dof, p = rp[i];
  const int       c = (int)(e % dof);
  root[(nu * p) * dof + c] = s0[p * dof + c];
  if (nu == 2) root[(nu * p + 1) * dof + c] = s1[p * dof + c];
}

cudaError_t GpukitSGDIAMPKPackCUDA(int dof, long long nrp, const int *rp, int nu, const double *src0, const double *src1, double *root, int block, cudaStream_t stream)
{
  if (dof < 1 || nrp < 0 || (nu != 1 && nu != 2) || !MPKBlockOK(block) || (nrp && (!rp || !src0 || !root || (nu == 2 && !src1)))) return cudaErrorInvalidValue;
  if (!nrp) return cudaSuccess;
  MPKPackKernel<<<MPKGrid(nrp * dof, block), block, 0, stream>>>(dof, nrp, rp, nu, src0, src1, root);
  return cudaGetLastError();
}

__global__ static void MPKUnpackKernel(int dof, long long nl, const int *__restrict__ gidx, int nu, const double *__restrict__ leaf, double *__restrict__ d0, double *__restrict__ d1)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= nl * dof) return;
  const long long i = e / dof, p = gidx[i];
  const int       c = (int)(e % dof);
  d0[p * dof + c] = leaf[(nu * i) * dof + c];
  if (nu == 2) d1[p * dof + c] = leaf[(nu * i + 1) * dof + c];
}

cudaError_t GpukitSGDIAMPKUnpackCUDA(int dof, long long nleaves, const int *gidx, int nu, const double *leaf, double *dst0, double *dst1, int block, cudaStream_t stream)
{
  if (dof < 1 || nleaves < 0 || (nu != 1 && nu != 2) || !MPKBlockOK(block) || (nleaves && (!gidx || !leaf || !dst0 || (nu == 2 && !dst1)))) return cudaErrorInvalidValue;
  if (!nleaves) return cudaSuccess;
  MPKUnpackKernel<<<MPKGrid(nleaves * dof, block), block, 0, stream>>>(dof, nleaves, gidx, nu, leaf, dst0, dst1);
  return cudaGetLastError();
}

__global__ static void MPKOwnedToBoxKernel(const GpukitSGDIAMPKBox b, long long n, const double *__restrict__ src, double *__restrict__ dst)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const int       dof = b.dof, c = (int)(e % dof);
  const long long q   = e / dof;
  const int       l0 = (int)(q % b.on[0]), l1 = (int)((q / b.on[0]) % b.on[1]), l2 = (int)(q / ((long long)b.on[0] * b.on[1]));
  const long long bp = (long long)(b.olo[0] + l0 - b.lo[0]) + (long long)b.n[0] * ((long long)(b.olo[1] + l1 - b.lo[1]) + (long long)b.n[1] * (b.olo[2] + l2 - b.lo[2]));
  dst[bp * dof + c] = src[e];
}

cudaError_t GpukitSGDIAMPKOwnedToBoxCUDA(const GpukitSGDIAMPKBox *b, const double *src, double *dst, int block, cudaStream_t stream)
{
  long long n;

  if (!b || b->dof < 1 || !MPKBlockOK(block)) return cudaErrorInvalidValue;
  n = (long long)b->on[0] * b->on[1] * b->on[2] * b->dof;
  if (n <= 0) return cudaSuccess;
  if (!src || !dst) return cudaErrorInvalidValue;
  MPKOwnedToBoxKernel<<<MPKGrid(n, block), block, 0, stream>>>(*b, n, src, dst);
  return cudaGetLastError();
}
