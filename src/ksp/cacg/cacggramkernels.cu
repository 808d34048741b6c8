/* Device kernels of KSPCACG's lean-basis Gram matrices (GpukitCACGGramWCUDA); see cacggramkernels.h.

   Design. The m x m outputs are tall-skinny products W^T D W with K = n: each block of 128 threads is persistent
   (grid of about 2-4 blocks per SM) and walks a grid-stride sequence of 128-row tiles.
   - Staging: a 3-stage cp.async pipeline copies the 128 rows of each of the m vectors (then d, then x) into shared
     memory, one 8-byte copy per thread and vector (coalesced, any 8-byte alignment; rows past n are zero-filled),
     vector-major with a row stride of 132 doubles. While a tile is being used, the next two are in flight.
   - Products: each warp owns 32 rows of a tile and forms every output entry for them on the FP64 tensor cores. Lane
     (g = lane/4, t = lane%4) holds, per 4-row step, f_i = w_{8i+g}[row + t] for every 8-vector block i, and
     df_i = d[row + t] f_i. That one fragment is both the A operand (8x4, row-major: A[g][t]) and the B operand (4x8,
     column-major: B[t][g]) of mma.m8n8k4, so G(block ia, block ib) += mma(df_ia, f_ib), G2 += mma(df_ia, df_ib),
     G1 += mma(f_ia, f_ib), for the upper triangle of blocks ib >= ia only. The m16n8k8 / m16n8k16 variants stack
     two row blocks and two / four 4-row steps into one instruction (Hopper's native DMMA.16x8x8 / 16x8x16; m16n8k16
     is the default from 16 vectors on, as in CUTLASS's SM90 DGEMM: not yet measured against the others here,
     tests/gpu/cacg_gram_cuda -bench times all three). Fragment
     loads are conflict-free (stride 132 = 4 mod 16 doubles: the 32 lanes cover each bank pair twice, the minimum
     two wavefronts); d and x are broadcasts. Per 4 rows a lane loads blocks + 2 doubles from shared memory for
     256 x (block pairs) x (matrices) multiply-adds of the warp: 0.05-0.2 shared loads per multiply-add (2 in
     GramPartialKernel of cacgkernels.cu).
   - Tail: for m = 8k+1 (m = 9, 17, 25, 33, and 1) the last vector is not padded to a block of 8 (that would cost
     up to 2x the tensor-core work) but done with CUDA-core FMAs: lane (g, t) adds df_i w_last, df_i d w_last,
     f_i w_last and the last diagonal entry. Other m pad the last block with zeros (predicated loads).
   - Accumulators stay in registers (templates on the number of blocks, the tail, the shape and the matrices formed:
     every index is a compile-time constant). At the end the block's four warps add their accumulators, one warp
     after the other (fixed order), into the packed upper triangles in shared memory; the block writes them to
     work. A second kernel sums the blocks in a fixed order and scatters each sum to (i,j) and (j,i).
*/
#include "cacggramkernels.h"
#include <stdint.h>

namespace
{

constexpr int kThreads        = 128;               /* 4 warps */
constexpr int kWarps          = kThreads / 32;
constexpr int kRows           = 128;               /* rows per tile: one per thread in the copies, 32 per warp */
constexpr int kRS             = kRows + 4;         /* row stride of a staged vector: 132 = 4 (mod 16) doubles */
constexpr int kStages         = 3;                 /* tiles in shared memory: one used, two in flight */
constexpr int kMaxBlocksPerSM = 4;
constexpr int kMaxBlocks      = 1024;              /* WorkSize() assumes no more */
constexpr int kMaxV           = GPUKIT_CACG_GRAMW_MAX_M + 2;

static_assert(kRows == kThreads, "one row per thread in the copies");
static_assert(kRows == 32 * kWarps, "32 rows per warp");

/* the kernel's arguments: n, the tiles, and the staged vectors w_0..w_{m-1}, then d (hasd), then x (hasx) */
struct Params {
  long long     n, ntiles;
  int           m, nv, hasd, hasx;
  const double *p[kMaxV];
};

__device__ __forceinline__ void CpAsync8(double *dst, const double *src, int bytes)
{
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(src), "r"(bytes) : "memory");
}

__device__ __forceinline__ void CpAsyncCommit(void)
{
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void CpAsyncWait(void)
{
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* c (8x8: lane holds C[g][2t], C[g][2t+1]) += A (8x4: lane holds A[g][t]) B (4x8: lane holds B[t][g]) */
__device__ __forceinline__ void Mma884(double *c, double a, double b)
{
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n" : "+d"(c[0]), "+d"(c[1]) : "d"(a), "d"(b));
}

/* c (16x8: lane holds C[g][2t+e], C[g+8][2t+e]) += A (16 x 4KJ: a[2k] = A[g][4k+t], a[2k+1] = A[g+8][4k+t])
   B (4KJ x 8: b[k] = B[4k+t][g]): mma.m16n8k8 (KJ = 2) or mma.m16n8k16 (KJ = 4) */
template <int KJ>
__device__ __forceinline__ void Mma16(double *c, const double *a, const double *b)
{
  static_assert(KJ == 2 || KJ == 4, "m16n8k8 or m16n8k16");
  if constexpr (KJ == 2) {
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
}

/* m16n8k16 tiles: row block pairs I = (2I, 2I+1) times column blocks ib >= 2I */
__host__ __device__ constexpr int TileBase16(int nb, int I)
{
  return I <= 0 ? 0 : TileBase16(nb, I - 1) + (nb - 2 * (I - 1));
}
__host__ __device__ constexpr int Tiles16(int nb)
{
  return TileBase16(nb, (nb + 1) / 2);
}

/* the first row block and the column block of tile t: row blocks advance by 1 (m8n8k4) or 2 (m16n8k16), each
   with the column blocks from itself to nb - 1 */
__host__ __device__ constexpr int TileRowBlock(int nb, bool k16, int t, int ra = 0)
{
  return t < nb - ra ? ra : TileRowBlock(nb, k16, t - (nb - ra), ra + (k16 ? 2 : 1));
}
__host__ __device__ constexpr int TileColBlock(int nb, bool k16, int t, int ra = 0)
{
  return t < nb - ra ? ra + t : TileColBlock(nb, k16, t - (nb - ra), ra + (k16 ? 2 : 1));
}

/* position of (i, j), i <= j, in the packed upper triangle of an m x m matrix (row-major) */
__device__ __forceinline__ int Tri(int i, int j, int m)
{
  return i * m - (i * (i - 1)) / 2 + (j - i);
}

/* copies of the rows of tile `tile` of every staged vector into buf (rows past n: zeros) */
__device__ __forceinline__ void Issue(const Params &g, double *buf, long long tile, int tid)
{
  const long long row = tile * kRows + tid;
  const bool      ok  = row < g.n;

  for (int v = 0; v < g.nv; v++) {
    const double *src = g.p[v];
    CpAsync8(buf + v * kRS + tid, ok ? src + row : src, ok ? 8 : 0);
  }
}

/* NB: 8-vector blocks on the tensor cores (the last one zero-padded unless TAIL); TAIL: the last vector w_{m-1}
   (m = 8 NB + 1) on the CUDA cores; KJ: 4-row steps per instruction, 1 (m8n8k4, 8 x 8 tiles), 2 (m16n8k8) or 4
   (m16n8k16) (16 x 8 tiles: row blocks 2I, 2I+1 against column block ib >= 2I); Q2, Q1: also G2 = W^T D^2 W, G1 = W^T W.
   partial[blockIdx.x * E + e]: this block's sums, the packed upper triangles of G (G2, G1), then x.x;
   E = (1 + Q2 + Q1) m (m+1)/2 + 1. */
template <int NB, bool TAIL, int KJ, bool Q2, bool Q1>
__global__ void __launch_bounds__(kThreads, 1) GramWKernel(const __grid_constant__ Params g, double *partial)
{
  constexpr bool K16 = KJ > 1; /* 16 x 8 tiles (m16n8k8, m16n8k16), else 8 x 8 (m8n8k4) */
  constexpr int NQ  = 1 + (Q2 ? 1 : 0) + (Q1 ? 1 : 0);
  constexpr int QG1 = NQ - 1;                                  /* index of G1 when Q1 */
  constexpr int R   = K16 ? 4 : 2;                             /* accumulators per tile and lane */
  constexpr int NT  = K16 ? Tiles16(NB) : NB * (NB + 1) / 2;   /* tiles */
  constexpr int NTa = NT > 0 ? NT : 1, NBa = NB > 0 ? NB : 1; /* no zero-length arrays */
  constexpr int UNROLL = 1; /* the 4-row steps of a warp's 32 rows, one after the other (2: more registers, spills) */
  static_assert(KJ == 1 || KJ == 2 || KJ == 4, "4-row steps per instruction: 1 (m8n8k4), 2 (m16n8k8), 4 (m16n8k16)");
  static_assert(!K16 || NB >= 2, "16 x 8 tiles need two blocks");
  extern __shared__ __align__(16) double sh[];

  const int       tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tq = lane & 3;
  const int       m = g.m, hasd = g.hasd, hasx = g.hasx, stage = g.nv * kRS;
  const long long ntl = (g.ntiles - 1 - blockIdx.x) / gridDim.x + 1; /* tiles of this block (grid <= ntiles) */
  double          acc[NQ][NTa][R], tacc[NQ][NBa], ttacc[NQ], xx = 0.0;

#pragma unroll
  for (int q = 0; q < NQ; q++) {
#pragma unroll
    for (int t = 0; t < NTa; t++)
#pragma unroll
      for (int e = 0; e < R; e++) acc[q][t][e] = 0.0;
#pragma unroll
    for (int i = 0; i < NBa; i++) tacc[q][i] = 0.0;
    ttacc[q] = 0.0;
  }

  /* prologue: the first kStages - 1 tiles in flight (one commit group per tile, empty past the end) */
#pragma unroll
  for (int s = 0; s < kStages - 1; s++) {
    if (s < ntl) Issue(g, sh + s * stage, blockIdx.x + (long long)s * gridDim.x, tid);
    CpAsyncCommit();
  }
  int cur = 0, nxt = kStages - 1;
  for (long long j = 0; j < ntl; j++) {
    CpAsyncWait<kStages - 2>(); /* this thread's copies of tile j have landed */
    __syncthreads();            /* everyone's have, and everyone is done with tile j - 1 (buffer nxt) */
    if (j + kStages - 1 < ntl) Issue(g, sh + nxt * stage, blockIdx.x + (j + kStages - 1) * gridDim.x, tid);
    CpAsyncCommit();

    const double *wb = sh + cur * stage, *db = wb + m * kRS, *xb = db + hasd * kRS;
#pragma unroll UNROLL
    for (int u = 0; u < 8 / KJ; u++) {
      double f[NBa][KJ], df[NBa][KJ], tv[KJ], dtv[KJ];
#pragma unroll
      for (int k = 0; k < KJ; k++) {
        const int    row = warp * 32 + (u * KJ + k) * 4 + tq;
        const double dv  = hasd ? db[row] : 1.0;
#pragma unroll
        for (int i = 0; i < NB; i++) {
          const int v = 8 * i + gq;
          f[i][k]     = (TAIL || i < NB - 1 || v < m) ? wb[v * kRS + row] : 0.0;
          df[i][k]    = dv * f[i][k];
        }
        if (TAIL) {
          tv[k]  = wb[(m - 1) * kRS + row];
          dtv[k] = dv * tv[k];
        }
        if (hasx) {
          const double xv = xb[row];
          xx              = fma(xv, xv, xx);
        }
      }
      if constexpr (!K16) {
#pragma unroll
        for (int ia = 0; ia < NB; ia++)
#pragma unroll
          for (int ib = ia; ib < NB; ib++) {
            const int p = ia * NB - (ia * (ia - 1)) / 2 + (ib - ia);
            Mma884(acc[0][p], df[ia][0], f[ib][0]);
            if (Q2) Mma884(acc[1][p], df[ia][0], df[ib][0]);
            if (Q1) Mma884(acc[QG1][p], f[ia][0], f[ib][0]);
          }
      } else {
#pragma unroll
        for (int I = 0; I < (NB + 1) / 2; I++) {
          double a[2 * KJ], da[2 * KJ];
#pragma unroll
          for (int k = 0; k < KJ; k++) {
            a[2 * k]      = f[2 * I][k];
            da[2 * k]     = df[2 * I][k];
            a[2 * k + 1]  = 2 * I + 1 < NB ? f[2 * I + 1][k] : 0.0;
            da[2 * k + 1] = 2 * I + 1 < NB ? df[2 * I + 1][k] : 0.0;
          }
#pragma unroll
          for (int ib = 2 * I; ib < NB; ib++) {
            const int t = TileBase16(NB, I) + (ib - 2 * I);
            Mma16<KJ>(acc[0][t], da, f[ib]);
            if (Q2) Mma16<KJ>(acc[1][t], da, df[ib]);
            if (Q1) Mma16<KJ>(acc[QG1][t], a, f[ib]);
          }
        }
      }
      if (TAIL) {
#pragma unroll
        for (int k = 0; k < KJ; k++) {
#pragma unroll
          for (int i = 0; i < NB; i++) {
            tacc[0][i] = fma(df[i][k], tv[k], tacc[0][i]);
            if (Q2) tacc[1][i] = fma(df[i][k], dtv[k], tacc[1][i]);
            if (Q1) tacc[QG1][i] = fma(f[i][k], tv[k], tacc[QG1][i]);
          }
          ttacc[0] = fma(dtv[k], tv[k], ttacc[0]);
          if (Q2) ttacc[1] = fma(dtv[k], dtv[k], ttacc[1]);
          if (Q1) ttacc[QG1] = fma(tv[k], tv[k], ttacc[QG1]);
        }
      }
    }
    cur = cur == kStages - 1 ? 0 : cur + 1;
    nxt = nxt == kStages - 1 ? 0 : nxt + 1;
  }

  /* the block's sums: zero the packed triangles (the stage buffers are free once every copy has landed) */
  const int T = m * (m + 1) / 2, E = NQ * T + 1;
  CpAsyncWait<0>();
  __syncthreads();
  for (int e = tid; e < E; e += kThreads) sh[e] = 0.0;
  /* the tail's and x.x's sums over the four rows t of each step (lanes with the same g); every lane shuffles */
  xx += __shfl_xor_sync(0xffffffffu, xx, 1);
  xx += __shfl_xor_sync(0xffffffffu, xx, 2);
  if (TAIL) {
#pragma unroll
    for (int q = 0; q < NQ; q++) {
#pragma unroll
      for (int i = 0; i < NB; i++) {
        tacc[q][i] += __shfl_xor_sync(0xffffffffu, tacc[q][i], 1);
        tacc[q][i] += __shfl_xor_sync(0xffffffffu, tacc[q][i], 2);
      }
      ttacc[q] += __shfl_xor_sync(0xffffffffu, ttacc[q], 1);
      ttacc[q] += __shfl_xor_sync(0xffffffffu, ttacc[q], 2);
    }
  }
  __syncthreads();
  /* each warp in turn adds its sums: every entry of the upper triangles has exactly one slot in each warp */
  for (int w = 0; w < kWarps; w++) {
    if (warp == w) {
#pragma unroll
      for (int q = 0; q < NQ; q++) {
        double *tri = sh + q * T;
#pragma unroll
        for (int t = 0; t < NT; t++) {
          const int ra = TileRowBlock(NB, K16, t), ib = TileColBlock(NB, K16, t); /* compile-time */
#pragma unroll
          for (int e = 0; e < R; e++) {
            const int i = 8 * (ra + (e >> 1)) + gq, jj = 8 * ib + 2 * tq + (e & 1);
            if (i <= jj && jj < m) tri[Tri(i, jj, m)] += acc[q][t][e];
          }
        }
        if (TAIL) {
          if (tq == 0)
#pragma unroll
            for (int i = 0; i < NB; i++) tri[Tri(8 * i + gq, m - 1, m)] += tacc[q][i];
          if (lane == 0) tri[Tri(m - 1, m - 1, m)] += ttacc[q];
        }
      }
      if (lane == 0) sh[E - 1] += xx;
    }
    __syncthreads();
  }
  for (int e = tid; e < E; e += kThreads) partial[(long long)blockIdx.x * E + e] = sh[e];
}

/* out: the nq full m x m matrices then x.x, from the sums over nblocks of partial (E entries per block, packed
   upper triangles then x.x). Threads (x, y) of a block: entry blockIdx.x*32 + x, blocks y, y+32, ...; then a fixed
   tree over y. */
__global__ void __launch_bounds__(1024) GramWSumKernel(int nblocks, int E, int m, int nq, int hasx, const double *partial, double *out)
{
  __shared__ double red[32][33];
  const int         tx = threadIdx.x, ty = threadIdx.y, e = blockIdx.x * 32 + tx;
  double            s0 = 0.0, s1 = 0.0;

  if (e < E) {
    int b = ty;
    for (; b + 32 < nblocks; b += 64) {
      s0 += partial[(long long)b * E + e];
      s1 += partial[(long long)(b + 32) * E + e];
    }
    if (b < nblocks) s0 += partial[(long long)b * E + e];
  }
  red[ty][tx] = s0 + s1;
  __syncthreads();
  for (int h = 16; h > 0; h >>= 1) {
    if (ty < h) red[ty][tx] += red[ty + h][tx];
    __syncthreads();
  }
  if (ty == 0 && e < E) {
    const int    T = m * (m + 1) / 2;
    const double s = red[0][tx];
    if (e == E - 1) {
      if (hasx) out[(long long)nq * m * m] = s;
    } else {
      const int q = e / T;
      int       r = e - q * T, i = 0;
      while (r >= m - i) r -= m - i++;
      const int j                  = i + r;
      double   *o                  = out + (long long)q * m * m;
      o[i * m + j] = o[j * m + i] = s;
    }
  }
}

typedef void (*KernelFn)(const Params, double *);

/* m16n8k16 keeps 4 steps of fragments in registers: where the doubles a lane holds (accumulators, f and df, the
   tail's sums and values) pass 104, m16n8k8 instead (ptxas -v with nvcc 13.0: only m = 33 with G2 and G1 spills) */
constexpr bool Fits16816(int nb, bool tail, int nq)
{
  return nq * Tiles16(nb) * 4 + 8 * nb + (tail ? nq * (nb + 1) + 8 : 0) <= 104;
}

template <int NB, bool TAIL, int KJ>
KernelFn PickQ(int q2, int q1)
{
  constexpr int K3 = KJ == 4 && !Fits16816(NB, TAIL, 3) ? 2 : KJ, K2 = KJ == 4 && !Fits16816(NB, TAIL, 2) ? 2 : KJ;
  constexpr int K1 = KJ == 4 && !Fits16816(NB, TAIL, 1) ? 2 : KJ;
  if (q2 && q1) return GramWKernel<NB, TAIL, K3, true, true>;
  if (q2) return GramWKernel<NB, TAIL, K2, true, false>;
  if (q1) return GramWKernel<NB, TAIL, K2, false, true>;
  return GramWKernel<NB, TAIL, K1, false, false>;
}

template <int NB>
KernelFn PickShape(bool tail, int kj, int q2, int q1)
{
  if (kj == 4) return tail ? PickQ<NB, true, 4>(q2, q1) : PickQ<NB, false, 4>(q2, q1);
  if (kj == 2) return tail ? PickQ<NB, true, 2>(q2, q1) : PickQ<NB, false, 2>(q2, q1);
  return tail ? PickQ<NB, true, 1>(q2, q1) : PickQ<NB, false, 1>(q2, q1);
}

/* the kernel for m, the variant and the matrices formed */
KernelFn Pick(int m, int variant, int q2, int q1)
{
  const bool tail = m % 8 == 1;
  const int  nb   = tail ? (m - 1) / 8 : (m + 7) / 8;
  const int  kj   = nb < 2 || variant == GPUKIT_CACG_GRAMW_M8N8K4 ? 1 : variant == GPUKIT_CACG_GRAMW_M16N8K8 ? 2 : 4;

  switch (nb) {
  case 0:
    return PickQ<0, true, 1>(q2, q1);
  case 1:
    return tail ? PickQ<1, true, 1>(q2, q1) : PickQ<1, false, 1>(q2, q1);
  case 2:
    return PickShape<2>(tail, kj, q2, q1);
  case 3:
    return PickShape<3>(tail, kj, q2, q1);
  default:
    return PickShape<4>(tail, kj, q2, q1);
  }
}

long long Tiles(long long n)
{
  return (n + kRows - 1) / kRows;
}

/* entries of one block's partial sums */
long long PartialSize(const GpukitCACGGramWArgs *a)
{
  return (long long)(1 + a->gd2 + a->g1) * a->m * (a->m + 1) / 2 + 1;
}

bool Misaligned(const void *p)
{
  return ((uintptr_t)p & (sizeof(double) - 1)) != 0;
}

bool BadArgs(const GpukitCACGGramWArgs *a)
{
  if (!a || a->n < 0 || a->m < 1 || a->m > GPUKIT_CACG_GRAMW_MAX_M) return true;
  if ((a->gd2 != 0 && a->gd2 != 1) || (a->g1 != 0 && a->g1 != 1) || ((a->gd2 || a->g1) && !a->d)) return true;
  if (a->variant < GPUKIT_CACG_GRAMW_DEFAULT || a->variant > GPUKIT_CACG_GRAMW_M16N8K16) return true;
  if (a->n > 0) {
    for (int j = 0; j < a->m; j++)
      if (!a->w[j] || Misaligned(a->w[j])) return true;
    if ((a->d && Misaligned(a->d)) || (a->x && Misaligned(a->x))) return true;
  }
  return false;
}

} // namespace

long long GpukitCACGGramWResultSize(const GpukitCACGGramWArgs *a)
{
  if (!a) return 0;
  return (long long)a->m * a->m * (1 + (a->gd2 ? 1 : 0) + (a->g1 ? 1 : 0)) + (a->x ? 1 : 0);
}

long long GpukitCACGGramWWorkSize(const GpukitCACGGramWArgs *a)
{
  long long blocks;

  if (BadArgs(a) || a->n == 0) return 0;
  blocks = Tiles(a->n);
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return blocks * PartialSize(a) + GpukitCACGGramWResultSize(a);
}

cudaError_t GpukitCACGGramWCUDA(const GpukitCACGGramWArgs *a, double *work, double *result, cudaStream_t stream)
{
  Params      p;
  KernelFn    fn;
  long long   ntiles, nres, E;
  size_t      smem;
  int         dev, sms, bps = 0, nblocks;
  double     *out;
  cudaError_t err;

  if (BadArgs(a) || !result || (a->n > 0 && !work)) return cudaErrorInvalidValue;
  nres = GpukitCACGGramWResultSize(a);
  if (a->n == 0) {
    for (long long e = 0; e < nres; e++) result[e] = 0.0;
    return cudaStreamSynchronize(stream);
  }
  p.n      = a->n;
  p.ntiles = ntiles = Tiles(a->n);
  p.m               = a->m;
  p.hasd            = a->d ? 1 : 0;
  p.hasx            = a->x ? 1 : 0;
  p.nv              = a->m + p.hasd + p.hasx;
  for (int j = 0; j < kMaxV; j++) p.p[j] = NULL;
  for (int j = 0; j < a->m; j++) p.p[j] = a->w[j];
  if (a->d) p.p[a->m] = a->d;
  if (a->x) p.p[a->m + p.hasd] = a->x;
  E    = PartialSize(a);
  fn   = Pick(a->m, a->variant, a->gd2, a->g1);
  smem = (size_t)kStages * p.nv * kRS * sizeof(double); /* at most 3 x 35 x 132 x 8 = 110880 bytes */
  if ((size_t)E * sizeof(double) > smem) smem = (size_t)E * sizeof(double);

  if ((err = cudaGetDevice(&dev)) != cudaSuccess) return err;
  if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return err;
  if (smem > 48 * 1024 && (err = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) != cudaSuccess) return err;
  if ((err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fn, kThreads, smem)) != cudaSuccess) return err;
  if (bps < 1) bps = 1;
  if (bps > kMaxBlocksPerSM) bps = kMaxBlocksPerSM;
  nblocks = sms * bps;
  if (nblocks > kMaxBlocks) nblocks = kMaxBlocks;
  if (nblocks > ntiles) nblocks = (int)ntiles;
  out = work + (long long)nblocks * E;

  fn<<<nblocks, kThreads, smem, stream>>>(p, work);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  GramWSumKernel<<<(unsigned)((E + 31) / 32), dim3(32, 32), 0, stream>>>(nblocks, (int)E, a->m, 1 + a->gd2 + a->g1, p.hasx, work, out);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  if ((err = cudaMemcpyAsync(result, out, (size_t)nres * sizeof(double), cudaMemcpyDeviceToHost, stream)) != cudaSuccess) return err;
  return cudaStreamSynchronize(stream);
}
