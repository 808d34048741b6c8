static const char help[] = "The run-time tuner on a real kernel: the greedy search against an exhaustive search of the same candidates.\n\n"
                           "  -mat_type t        the matrix type, made by DMCreateMatrix() on the DMDA (default sgdiacuda)\n"
                           "  -kernel k          the tuned kernel's name (default sgdia_mult: MATSGDIACUDA's product)\n"
                           "  -dim, -dof, -stencil star|box, -n   the DMDA stencil operator (defaults 3, 1, star, 128)\n"
                           "  -samples s         launches per candidate in both searches (default 5)\n"
                           "  -json path         append one JSON record (one line) to this file\n\n"
                           "Each phase makes a new matrix (MatDuplicate) whose tuner starts afresh, and calls MatMult until its tuner\n"
                           "has chosen: (1) an exhaustive search times every candidate; (2) the greedy search (-gpukit_tune on)\n"
                           "times its path and writes the cache; (3) with -gpukit_tune cached the cache's choice is taken with zero\n"
                           "timed calls. The greedy choice's time is read from the exhaustive table (same run, same matrix): the\n"
                           "ratio to the exhaustive best is what the greedy search gives up. Tuning cost: the time of every timed\n"
                           "launch of the greedy search beyond what as many launches of its choice would take.\n";

#include <petscdmda.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include <time.h>
#include "gpukittune.h"
#include "gkbench.h"

typedef struct {
  PetscInt  ncalls;                       /* timed calls */
  PetscInt  nmult;                        /* MatMult calls until the choice */
  PetscReal cost_ms, best_ms, start_ms;   /* the tuner's own medians */
  PetscInt  vals[GPUKIT_TUNE_MAX_KNOBS];  /* its choice */
  PetscBool cached;
  PetscReal first_ms;                     /* the first MatMult (host clock, synchronised) */
} Phase;

/* a fresh copy of A0 whose tuner starts with the options set now; MatMult until the tuner has chosen */
static PetscErrorCode RunPhase(Mat A0, const char kernel[], Vec x, Vec y, PetscInt nk, Phase *ph)
{
  Mat             A;
  GpukitTuner     t = NULL;
  PetscBool       done = PETSC_FALSE;
  const PetscInt *v;
  PetscLogDouble  t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(ph, sizeof(*ph)));
  PetscCall(MatDuplicate(A0, MAT_COPY_VALUES, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(GKDeviceSynchronize(PETSC_TRUE));
  PetscCall(PetscTime(&t0));
  PetscCall(MatMult(A, x, y));
  PetscCall(GKDeviceSynchronize(PETSC_TRUE));
  PetscCall(PetscTime(&t1));
  ph->first_ms = 1e3 * (t1 - t0);
  for (ph->nmult = 1; ph->nmult < 1000; ph->nmult++) {
    PetscCall(GpukitTuneFind((PetscObject)A, kernel, &t));
    PetscCheck(t, PETSC_COMM_SELF, PETSC_ERR_USER, "the matrix has no tuner for kernel %s (give -kernel)", kernel);
    PetscCall(GpukitTunerGetStats(t, NULL, NULL, NULL, NULL, &done, NULL));
    if (done) break;
    PetscCall(MatMult(A, x, y));
  }
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the tuner of %s had not chosen after 1000 products", kernel);
  PetscCall(GpukitTunerGetStats(t, &ph->ncalls, &ph->cost_ms, &ph->best_ms, &ph->start_ms, NULL, &ph->cached));
  PetscCall(GpukitTunerGetConfig(t, &v, NULL));
  PetscCall(PetscArraycpy(ph->vals, v, nk));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char          mtype[64] = "sgdiacuda", kernel[64] = "sgdia_mult", stencil[16] = "star", json[PETSC_MAX_PATH_LEN] = "", dir[] = "/tmp/gpukit-tune-bench.XXXXXX", cache[PETSC_MAX_PATH_LEN], samples[16];
  PetscInt      dim = 3, dof = 1, n = 128, ns = 5, nk = 0;
  PetscBool     box, jset;
  DM            da;
  Mat           A0;
  Vec           x, y;
  GpukitTuner   t;
  const GpukitTuneKnob *knobs;
  Phase         ex, gr, ca;
  PetscReal     grms = -1, exms = -1, tablebest = -1;
  PetscInt      c[GPUKIT_TUNE_MAX_KNOBS];
  char          exv[128] = "", grv[128] = "", dev[128] = "?";

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mtype, sizeof(mtype), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-kernel", kernel, sizeof(kernel), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-samples", &ns, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-stencil", stencil, sizeof(stencil), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-json", json, sizeof(json), &jset));
  PetscCall(PetscStrcmp(stencil, "box", &box));
  PetscCheck(mkdtemp(dir), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot make a temporary folder for the cache");
  PetscCall(PetscSNPrintf(cache, sizeof(cache), "%s/tune.txt", dir));
  PetscCall(PetscSNPrintf(samples, sizeof(samples), "%" PetscInt_FMT, ns));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_cache", cache));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_samples", samples));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_max_calls", "1000"));

  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetVecType(da, VECCUDA));
  PetscCall(DMSetUp(da));
  PetscCall(DMSetMatType(da, mtype));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune", "off")); /* the template matrix: no search of its own */
  PetscCall(DMCreateMatrix(da, &A0));
  PetscCall(GKFillStencil(da, A0));
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A0, x, y)); /* the upload, outside every phase */
  PetscCall(GKDeviceName(dev, sizeof(dev)));

  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune", "on"));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_search", "exhaustive"));
  PetscCall(RunPhase(A0, kernel, x, y, GPUKIT_TUNE_MAX_KNOBS, &ex));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_search", "greedy"));
  PetscCall(RunPhase(A0, kernel, x, y, GPUKIT_TUNE_MAX_KNOBS, &gr));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune", "cached"));
  PetscCall(RunPhase(A0, kernel, x, y, GPUKIT_TUNE_MAX_KNOBS, &ca));

  /* the exhaustive table: a tuner of the same kernel, searched again (the medians of every candidate) */
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune", "on"));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_search", "exhaustive"));
  {
    Mat       A;
    PetscBool done = PETSC_FALSE;
    PetscCall(MatDuplicate(A0, MAT_COPY_VALUES, &A));
    PetscCall(MatSetFromOptions(A));
    for (PetscInt i = 0; i < 1000 && !done; i++) {
      PetscCall(MatMult(A, x, y));
      PetscCall(GpukitTuneFind((PetscObject)A, kernel, &t));
      PetscCall(GpukitTunerGetStats(t, NULL, NULL, NULL, NULL, &done, NULL));
    }
    PetscCall(GpukitTunerGetKnobs(t, &nk, &knobs));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-28s %10s\n", "candidate", "median ms"));
    for (PetscInt i = 0;; i++) {
      PetscReal ms;
      PetscBool same_gr = PETSC_TRUE, same_ex = PETSC_TRUE;
      char      s[128] = "";
      PetscCall(GpukitTunerGetCandidate(t, i, c, &ms));
      if (ms < 0) break;
      for (PetscInt k = 0; k < nk; k++) {
        size_t len;
        PetscCall(PetscStrlen(s, &len));
        if (knobs[k].labels) {
          PetscInt idx = 0;
          while (idx < knobs[k].n - 1 && knobs[k].values[idx] != c[k]) idx++;
          PetscCall(PetscSNPrintf(s + len, sizeof(s) - len, "%s%s=%s", k ? "," : "", knobs[k].name, knobs[k].labels[idx]));
        } else PetscCall(PetscSNPrintf(s + len, sizeof(s) - len, "%s%s=%" PetscInt_FMT, k ? "," : "", knobs[k].name, c[k]));
        same_gr = (PetscBool)(same_gr && c[k] == gr.vals[k]);
        same_ex = (PetscBool)(same_ex && c[k] == ex.vals[k]);
      }
      if (same_gr) {
        grms = ms;
        PetscCall(PetscStrncpy(grv, s, sizeof(grv)));
      }
      if (same_ex) {
        exms = ms;
        PetscCall(PetscStrncpy(exv, s, sizeof(exv)));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-28s %10.4f%s%s\n", s, (double)ms, same_gr ? "  <- greedy" : "", same_ex ? "  <- exhaustive (first run)" : ""));
    }
    for (PetscInt i = 0;; i++) { /* the table's best, before the matrix and its tuner go */
      PetscReal ms;
      PetscCall(GpukitTunerGetCandidate(t, i, c, &ms));
      if (ms < 0) break;
      if (tablebest < 0 || ms < tablebest) tablebest = ms;
    }
    t = NULL;
    PetscCall(MatDestroy(&A));
  }
  {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s, %s dim %" PetscInt_FMT " dof %" PetscInt_FMT " %s n %" PetscInt_FMT ":\n", dev, mtype, kernel, dim, dof, stencil, n));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  exhaustive: %" PetscInt_FMT " timed calls, choice %s\n", ex.ncalls, exv));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  greedy:     %" PetscInt_FMT " timed calls (%" PetscInt_FMT " products), choice %s: %.4f ms, %.3fx the best of the table (%.4f ms); starting values %.4f ms\n", gr.ncalls, gr.nmult, grv, (double)grms, (double)(grms / tablebest), (double)tablebest, (double)gr.start_ms));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  tuning cost: %.3f ms of timed launches, %.3f ms beyond as many launches of the choice\n", (double)gr.cost_ms, (double)(gr.cost_ms - gr.ncalls * ns * gr.best_ms)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  cached rerun: %" PetscInt_FMT " timed calls, from the cache: %s, first product %.4f ms (greedy run's first %.4f ms)\n", ca.ncalls, ca.cached ? "yes" : "no", (double)ca.first_ms, (double)gr.first_ms));
    if (jset) {
      FILE *fp;
      PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "{\"bench\": \"tune\", \"mat_type\": \"%s\", \"kernel\": \"%s\", \"case\": \"%" PetscInt_FMT "d dof%" PetscInt_FMT " %s n%" PetscInt_FMT "\", ", mtype, kernel, dim, dof, stencil, n));
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "\"samples\": %" PetscInt_FMT ", \"exhaustive_calls\": %" PetscInt_FMT ", \"exhaustive_choice\": \"%s\", \"table_best_ms\": %.6g, \"greedy_calls\": %" PetscInt_FMT ", \"greedy_choice\": \"%s\", \"greedy_ms\": %.6g, \"greedy_vs_best\": %.4f, \"start_ms\": %.6g, ", ns, ex.ncalls, exv, (double)tablebest, gr.ncalls, grv, (double)grms, (double)(grms / tablebest), (double)gr.start_ms));
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "\"tuning_cost_ms\": %.6g, \"tuning_extra_ms\": %.6g, \"cached_calls\": %" PetscInt_FMT ", \"cached_hit\": %s, \"cached_first_ms\": %.6g, \"greedy_first_ms\": %.6g, ", (double)gr.cost_ms, (double)(gr.cost_ms - gr.ncalls * ns * gr.best_ms), ca.ncalls, ca.cached ? "true" : "false", (double)ca.first_ms, (double)gr.first_ms));
      {
        char        version[32], date[32];
        const char *envdate = getenv("GPUKIT_DATE");
        time_t      now     = time(NULL);
        PetscCall(PetscGetVersion(version, sizeof(version)));
        if (envdate && envdate[0]) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
        else (void)strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        PetscCall(GKJSONRunInfo(fp, version, date, dev));
      }
      PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
    }
  }
  (void)exms;
  PetscCall(MatDestroy(&A0));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
