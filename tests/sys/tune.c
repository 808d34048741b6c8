static const char help[] = "The run-time tuner (src/sys/gpukittune.c) with an injected timer: its choice, its cost, the cache.\n"
                           "  -model <bowl,flat,noisy,invalid,state,ridge,ridge2,dip>  the fake kernel's time model (below)\n"
                           "  -repeatable <bool>   the fake kernel may be launched several times per call (default true)\n"
                           "  -ncalls <n>          calls of the fake kernel (default 40)\n"
                           "  -shape <s>           the shape class (default s0); -nshapes <k>: k tuners, shapes s0..s(k-1)\n"
                           "  -shape_csr <rows,nnz,maxrow>  the shape is GpukitTuneShapeCSR()'s class of these instead\n"
                           "  -shape_span <s>      appends GpukitTuneShapeAppendSpan()'s class of the mean row span s\n"
                           "  -expect_shape <s>    the shape must be s\n"
                           "  -expect <vals>       the choice, \"variant=V,block=B\" (V as an index)\n"
                           "  -expect_timed <n>    timed calls expected in the run (-1: any, -2: at least 1)\n"
                           "  -max_timed <n>       at most n timed calls for the search (default: no bound)\n"
                           "  -expect_hits <n>, -expect_writes <n>  cache hits and writes expected (-1: any)\n"
                           "  -within_best <f>     the choice's model time is within f of the best over every candidate\n"
                           "  -nested              a second tuner (\"Inner\") times its own kernel inside every call of the first\n"
                           "  -work <w>            each call declares work w (GpukitTunerSetWork): the medians are model / w\n";

/*
   The fake kernel has two knobs, as MATSGDIACUDA's product: "variant" (categorical: a, b, c; starts at a) and
   "block" (ordered: 64 .. 1024; starts at 256). Its "time" per launch comes from the model, through
   GpukitTuneSetTestTimer(), so that the test decides which candidate is fast and checks what the tuner picks:
   - bowl:    variant b is 30% faster than a, c 10%; block time is a bowl with its bottom at 128 -> b/128
   - flat:    every candidate within 3% of the start (below the 5% threshold) -> the start, a/256
   - noisy:   bowl, with every third launch 5x slower (a median of 3 must ignore it) -> b/128
   - invalid: bowl, but variant b cannot run with block < 192 (the tuner must never hand such a candidate out)
   - state:   bowl; the operator's state changes at call 2, so the search starts again; same choice
   - ridge:   variant a fastest; block 256 -> 512 gains 3.5% (below the threshold), 1024 25% -> a/1024 (MATAMBCUDA's
              P1 FEM product on an H200: 3.7% and 28%)
   - ridge2:  variant a; 512 gains 23% on 256, 1024 4.5% more (below the threshold against 512) -> a/1024
   - dip:     variant a; 512 gains 2% (below the threshold), 1024 loses; downwards 192, 128 gain -> a/128
*/
#include <petscsys.h>
#include "gktest.h"
#include "gpukittune.h"

static const char *const Variants[] = {"a", "b", "c"};
static const PetscInt    Blocks[]   = {64, 96, 128, 192, 256, 512, 1024};

typedef struct {
  char      model[32];
  PetscInt  launches;
  PetscBool badhanded; /* an invalid candidate was handed out */
} Fake;

static PetscReal ModelTime(const char model[], const PetscInt v[])
{
  const PetscReal var[3] = {1.0, 0.7, 0.9};
  PetscReal       b      = (PetscReal)v[1], bowl = 1.0 + 0.25 * PetscSqr(PetscLog2Real(b / 128.0));
  PetscBool       flat;

  PetscStrcmp(model, "flat", &flat);
  if (flat) return 1.0 - 0.02 * (v[0] == 2) - 0.03 * (v[1] == 512); /* every gain below the threshold */
  { /* per-block tables (64 .. 1024), variant a fastest */
    const PetscReal ridge[7] = {1.3, 1.25, 1.2, 1.1, 1.0, 0.965, 0.75}, ridge2[7] = {1.3, 1.25, 1.2, 1.1, 1.0, 0.77, 0.735}, dip[7] = {0.8, 0.75, 0.7, 0.85, 1.0, 0.98, 1.05};
    const PetscReal avar[3] = {1.0, 1.2, 1.1};
    PetscBool       isridge, isridge2, isdip;
    PetscInt        ib = 0;
    PetscStrcmp(model, "ridge", &isridge);
    PetscStrcmp(model, "ridge2", &isridge2);
    PetscStrcmp(model, "dip", &isdip);
    while (ib < 6 && Blocks[ib] != v[1]) ib++;
    if (isridge) return avar[v[0]] * ridge[ib];
    if (isridge2) return avar[v[0]] * ridge2[ib];
    if (isdip) return avar[v[0]] * dip[ib];
  }
  return var[v[0]] * bowl;
}

static PetscBool ValidFn(void *ctx, const PetscInt v[])
{
  (void)ctx;
  return (PetscBool)!(v[0] == 1 && v[1] < 192);
}

static PetscErrorCode FakeTimer(void *ctx, const char kernel[], const PetscInt v[], PetscReal *ms)
{
  Fake     *f = (Fake *)ctx;
  PetscBool noisy, invalid, inner;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(kernel, "Inner", &inner));
  if (inner) { /* the nested kernel: block 128 is its best */
    *ms = v[0] == 128 ? 1.0 : 2.0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrcmp(f->model, "noisy", &noisy));
  PetscCall(PetscStrcmp(f->model, "invalid", &invalid));
  if (invalid && !ValidFn(NULL, v)) f->badhanded = PETSC_TRUE;
  *ms = ModelTime(f->model, v);
  if (noisy && f->launches % 3 == 2) *ms *= 5.0;
  f->launches++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Fake           fake = {"bowl", 0, PETSC_FALSE};
  GpukitTuneKnob knobs[2];
  GpukitTuner   *t;
  PetscInt       ncalls = 40, nshapes = 1, expect_timed = -1, expect_hits = -1, expect_writes = -1, max_timed = -1;
  PetscInt       timed, searches, hits, writes;
  PetscBool      repeatable = PETSC_TRUE, isstate, isinvalid, within_set, nested = PETSC_FALSE;
  PetscReal      work       = 1.0;
  GpukitTuner    inner      = NULL;
  PetscReal      within     = 0.05;
  char           shape[64]  = "s0", expect[128] = "", expect_shape[64] = "";
  PetscInt       csr[3], ncsr = 3;
  PetscReal      span = -1;
  PetscBool      csrset, shapeok;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-model", fake.model, sizeof(fake.model), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-repeatable", &repeatable, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ncalls", &ncalls, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nshapes", &nshapes, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-shape", shape, sizeof(shape), NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-shape_csr", csr, &ncsr, &csrset));
  PetscCheck(!csrset || ncsr == 3, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-shape_csr takes rows,nnz,maxrow");
  if (csrset) PetscCall(GpukitTuneShapeCSR(csr[0], (PetscCount)csr[1], csr[2], shape, sizeof(shape)));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-shape_span", &span, NULL));
  PetscCall(GpukitTuneShapeAppendSpan(span, shape, sizeof(shape)));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_shape", expect_shape, sizeof(expect_shape), NULL));
  if (expect_shape[0]) {
    PetscCall(PetscStrcmp(shape, expect_shape, &shapeok));
    PetscCheck(shapeok, PETSC_COMM_SELF, PETSC_ERR_PLIB, "shape %s, expected %s", shape, expect_shape);
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect", expect, sizeof(expect), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_timed", &expect_timed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_timed", &max_timed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_hits", &expect_hits, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_writes", &expect_writes, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-within_best", &within, &within_set));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-nested", &nested, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-work", &work, NULL));
  PetscCall(PetscStrcmp(fake.model, "state", &isstate));
  PetscCall(PetscStrcmp(fake.model, "invalid", &isinvalid));
  PetscCall(GpukitTuneSetTestTimer(FakeTimer, &fake));

  knobs[0].name   = "variant";
  knobs[0].n      = 3;
  knobs[0].labels = Variants;
  knobs[0].start  = 0;
  for (PetscInt i = 0; i < 3; i++) knobs[0].values[i] = i;
  knobs[1].name   = "block";
  knobs[1].n      = 7;
  knobs[1].labels = NULL;
  knobs[1].start  = 4;
  for (PetscInt i = 0; i < 7; i++) knobs[1].values[i] = Blocks[i];

  if (nested) {
    GpukitTuneKnob k = {"block", 2, {64, 128}, NULL, 0};
    PetscCall(GpukitTunerCreate(NULL, "Inner", 1, &k, &inner));
    PetscCall(GpukitTunerSetRepeatable(inner, PETSC_TRUE));
  }
  PetscCall(PetscMalloc1(nshapes, &t));
  for (PetscInt s = 0; s < nshapes; s++) {
    char sh[80];
    PetscCall(GpukitTunerCreate(NULL, "FakeMult", 2, knobs, &t[s]));
    if (nshapes > 1) PetscCall(PetscSNPrintf(sh, sizeof(sh), "%s.%" PetscInt_FMT, shape, s));
    else PetscCall(PetscStrncpy(sh, shape, sizeof(sh)));
    PetscCall(GpukitTunerSetShape(t[s], sh));
    PetscCall(GpukitTunerSetRepeatable(t[s], repeatable));
    if (isinvalid) PetscCall(GpukitTunerSetValid(t[s], ValidFn, NULL));
  }

  /* the kernel's calls, as a Mat's product would make them */
  for (PetscInt s = 0; s < nshapes; s++) {
    for (PetscInt c = 0; c < ncalls; c++) {
      const PetscInt *v;
      PetscInt        nl;

      PetscCall(GpukitTunerBegin(t[s], (isstate && c >= 2) ? 2 : 1, NULL, &v, &nl));
      PetscCheck(nl >= 1 && nl <= 8, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " launches asked for", nl);
      PetscCheck(repeatable || nl == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " launches asked of a kernel that is not repeatable", nl);
      if (inner) { /* the inner kernel, tuned inside the outer call */
        const PetscInt *iv;
        PetscInt        inl;
        PetscCall(GpukitTunerBegin(inner, 1, NULL, &iv, &inl));
        for (PetscInt l = 0; l < inl; l++) PetscCall(GpukitTunerMark(inner));
        PetscCall(GpukitTunerEnd(inner));
      }
      for (PetscInt l = 0; l < nl; l++) PetscCall(GpukitTunerMark(t[s]));
      if (work != 1.0) PetscCall(GpukitTunerSetWork(t[s], work));
      PetscCall(GpukitTunerEnd(t[s]));
    }
  }

  PetscCall(GpukitTuneGetCounts(&timed, &searches, &hits, &writes));
  for (PetscInt s = 0; s < nshapes; s++) {
    const PetscInt *v;
    PetscBool       done;
    char            got[128];
    PetscViewer     viewer = PETSC_VIEWER_STDOUT_SELF;

    PetscCall(GpukitTunerGetConfig(t[s], &v, &done));
    PetscCall(GKCheck(done, "the search ended within the calls"));
    PetscCall(PetscSNPrintf(got, sizeof(got), "variant=%" PetscInt_FMT ",block=%" PetscInt_FMT, v[0], v[1]));
    if (s == 0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "choice %s; timed calls %" PetscInt_FMT ", searches %" PetscInt_FMT ", cache hits %" PetscInt_FMT ", cache writes %" PetscInt_FMT "\n", got, timed, searches, hits, writes));
      PetscCall(GpukitTunerView(t[s], viewer));
    }
    if (expect[0]) {
      PetscBool same;
      PetscCall(PetscStrcmp(expect, got, &same));
      PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: tuner %" PetscInt_FMT " chose %s, expected %s", s, got, expect);
    }
    if (within_set) { /* against an exhaustive search of the same candidates, by the model */
      PetscReal best = PETSC_MAX_REAL, mine = ModelTime(fake.model, v);
      for (PetscInt a = 0; a < 3; a++)
        for (PetscInt b = 0; b < 7; b++) {
          PetscInt c[2] = {a, Blocks[b]};
          if (isinvalid && !ValidFn(NULL, c)) continue;
          best = PetscMin(best, ModelTime(fake.model, c));
        }
      PetscCheck(mine <= (1.0 + within) * best, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: choice %s takes %g, the best %g (more than %g above)", got, (double)mine, (double)best, (double)within);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "choice within %.1f%% of the exhaustive best (%g vs %g)\n", (double)(100 * (mine / best - 1)), (double)mine, (double)best));
    }
  }
  { /* the tuner is found through its owner and kernel, and its statistics agree with the counters and the model */
    GpukitTuner     f;
    PetscInt        nc;
    PetscReal       cost, best, startms;
    PetscBool       done, cached, noisy;
    const PetscInt *v;
    PetscCall(GpukitTuneFind(NULL, "FakeMult", &f));
    PetscCheck(f == t[0], PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: GpukitTuneFind() did not find the first tuner");
    PetscCall(GpukitTuneFind(NULL, "NoSuchKernel", &f));
    PetscCheck(!f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: GpukitTuneFind() found a kernel that does not exist");
    PetscCall(GpukitTunerGetStats(t[0], &nc, &cost, &best, &startms, &done, &cached));
    PetscCall(GpukitTunerGetConfig(t[0], &v, NULL));
    PetscCall(PetscStrcmp(fake.model, "noisy", &noisy));
    if (nshapes == 1 && !isstate && !inner) PetscCheck(nc == timed, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: the tuner counts %" PetscInt_FMT " timed calls, the process %" PetscInt_FMT, nc, timed);
    PetscCheck(cached == (hits > 0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: from the cache %d, cache hits %" PetscInt_FMT, (int)cached, hits);
    if (!cached && timed && !noisy) PetscCheck(PetscAbsReal(best - ModelTime(fake.model, v) / work) < 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: the choice's median %g is not its model time %g", (double)best, (double)ModelTime(fake.model, v));
    if (!cached && timed && !noisy) { /* every measured candidate's median is its model time */
      PetscInt  c[2], n = 0;
      PetscReal m;
      for (;; n++) {
        PetscCall(GpukitTunerGetCandidate(t[0], n, c, &m));
        if (m < 0) break;
        PetscCheck(PetscAbsReal(m - ModelTime(fake.model, c) / work) < 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: candidate %" PetscInt_FMT " median %g, model %g", n, (double)m, (double)(ModelTime(fake.model, c) / work));
      }
      PetscCheck(n >= 2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " candidates measured", n);
    }
    if (!cached && timed) PetscCheck(cost > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: no tuning cost recorded");
  }
  PetscCheck(!fake.badhanded, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: the tuner handed out a candidate its valid function refuses");
  if (expect_timed == -2) PetscCheck(timed >= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: no timed call, expected a search");
  else if (expect_timed >= 0) PetscCheck(timed == expect_timed, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " timed calls, expected %" PetscInt_FMT, timed, expect_timed);
  if (max_timed >= 0) PetscCheck(timed <= max_timed * nshapes, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " timed calls, at most %" PetscInt_FMT " expected", timed, max_timed * nshapes);
  if (expect_hits >= 0) PetscCheck(hits == expect_hits, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " cache hits, expected %" PetscInt_FMT, hits, expect_hits);
  if (expect_writes >= 0) PetscCheck(writes == expect_writes, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " cache writes, expected %" PetscInt_FMT, writes, expect_writes);
  if (inner) { /* the inner search ended with its best; the outer one did not count the calls it shared */
    const PetscInt *iv;
    PetscBool       idone;
    PetscInt        onc, inc;
    PetscCall(GpukitTunerGetConfig(inner, &iv, &idone));
    PetscCheck(idone && iv[0] == 128, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: the inner tuner chose %" PetscInt_FMT " (done %d), expected 128", iv[0], (int)idone);
    PetscCall(GpukitTunerGetStats(inner, &inc, NULL, NULL, NULL, NULL, NULL));
    PetscCall(GpukitTunerGetStats(t[0], &onc, NULL, NULL, NULL, NULL, NULL));
    PetscCheck(onc + inc < timed, PETSC_COMM_SELF, PETSC_ERR_PLIB, "FAIL: the outer tuner counted %" PetscInt_FMT " calls, the inner %" PetscInt_FMT ", the process %" PetscInt_FMT ": the shared calls should not count for the outer one", onc, inc, timed);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "nested: inner %" PetscInt_FMT " timed calls, outer %" PetscInt_FMT " counted of %" PetscInt_FMT "\n", inc, onc, timed - inc));
    PetscCall(GpukitTunerDestroy(&inner));
  }
  for (PetscInt s = 0; s < nshapes; s++) PetscCall(GpukitTunerDestroy(&t[s]));
  PetscCall(PetscFree(t));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
