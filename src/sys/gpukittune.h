/*
   gpukit's run-time tuner (src/sys/gpukittune.c): one API for every kernel that has knobs.

   A kernel declares its knobs (named variants or integer values, each with a starting value: the default or a
   model's guess) and a shape class (what its speed depends on: rows, nnz and row-length buckets, dof, stencil...).
   On the first calls with an unchanged operator the tuner hands out candidate configurations and times them
   (CUDA events on the kernel's stream, or the host clock for a host kernel): a greedy search that moves one knob
   at a time while the time improves by more than the threshold (5%), each time the median of its samples. When the
   search ends the choice is kept, shown by the owner's view and by -info, and written to the cache, so that a
   second run of the same program makes no timed call at all.

   Use in a kernel's glue:

     const PetscInt *cfg;
     PetscInt        nlaunch;
     PetscCall(GpukitTunerBegin(t, A->nonzerostate, stream, &cfg, &nlaunch));
     for (PetscInt l = 0; l < nlaunch; l++) {   // nlaunch > 1 only while tuning a repeatable kernel
       launch(cfg[0], cfg[1], ...);
       PetscCall(GpukitTunerMark(t));
     }
     PetscCall(GpukitTunerEnd(t));

   A device kernel given no stream is timed by the host clock after a device synchronisation (for a call that spans
   many launches on streams the caller does not know, e.g. a solver's outer iteration). A call during which another
   tuner timed a call of its own (a product tuned inside a solver step) is not counted: its time is not the
   candidate's. GpukitTunerSetWork() divides the call's time by its work (e.g. the CG steps it did).

   Options (global): -gpukit_tune <off,cached,on> (default cached: use the cache, tune what it lacks; on: tune
   every kernel again and rewrite its entry; off: the starting values, no timing), -gpukit_tune_cache <file>
   (default $XDG_CACHE_HOME/gpukit/tune.txt, else ~/.cache/gpukit/tune.txt), -gpukit_tune_threshold <0.05>,
   -gpukit_tune_samples <3> (launch times per candidate, median), -gpukit_tune_search <greedy,exhaustive>.
*/
#pragma once

#include "gpukitimpl.h"

#define GPUKIT_TUNE_MAX_KNOBS  4
#define GPUKIT_TUNE_MAX_VALUES 16

typedef enum {
  GPUKIT_TUNE_OFF,
  GPUKIT_TUNE_CACHED,
  GPUKIT_TUNE_ON
} GpukitTuneMode;

typedef struct {
  const char        *name;   /* "variant", "block", ...: letters, digits and '_' */
  PetscInt           n;      /* number of candidate values, 1..GPUKIT_TUNE_MAX_VALUES; 1 fixes the knob */
  PetscInt           values[GPUKIT_TUNE_MAX_VALUES];
  const char *const *labels; /* labels[i] names values[i]: a categorical knob (every value is tried); NULL: ordered
                                integers (the search moves to neighbours while it gains) */
  PetscInt           start;  /* index of the starting value */
} GpukitTuneKnob;

typedef struct _n_GpukitTuner *GpukitTuner;

/* a candidate the kernel cannot run (e.g. a variant that needs aligned arrays); ctx from GpukitTunerSetValid() */
typedef PetscBool (*GpukitTuneValidFn)(void *, const PetscInt[]);

PETSC_EXTERN PetscErrorCode GpukitTunerCreate(PetscObject, const char[], PetscInt, const GpukitTuneKnob[], GpukitTuner *);
PETSC_EXTERN PetscErrorCode GpukitTunerDestroy(GpukitTuner *);
PETSC_EXTERN PetscErrorCode GpukitTunerSetShape(GpukitTuner, const char[]);
PETSC_EXTERN PetscErrorCode GpukitTunerSetDevice(GpukitTuner, PetscBool);
PETSC_EXTERN PetscErrorCode GpukitTunerSetRepeatable(GpukitTuner, PetscBool);
PETSC_EXTERN PetscErrorCode GpukitTunerSetValid(GpukitTuner, GpukitTuneValidFn, void *);
PETSC_EXTERN PetscErrorCode GpukitTunerBegin(GpukitTuner, PetscObjectState, void *, const PetscInt **, PetscInt *);
PETSC_EXTERN PetscErrorCode GpukitTunerMark(GpukitTuner);
PETSC_EXTERN PetscErrorCode GpukitTunerSetWork(GpukitTuner, PetscReal);
PETSC_EXTERN PetscErrorCode GpukitTunerEnd(GpukitTuner);
PETSC_EXTERN PetscErrorCode GpukitTunerGetConfig(GpukitTuner, const PetscInt **, PetscBool *);
PETSC_EXTERN PetscErrorCode GpukitTunerGetLabel(GpukitTuner, PetscInt, const char **);
PETSC_EXTERN PetscErrorCode GpukitTunerView(GpukitTuner, PetscViewer);

/* what a tuner did: timed calls, the time of every timed launch (ms), the medians of the choice and of the starting
   values (ms; -1 unknown), whether the choice is final and whether it came from the cache */
PETSC_EXTERN PetscErrorCode GpukitTunerGetStats(GpukitTuner, PetscInt *, PetscReal *, PetscReal *, PetscReal *, PetscBool *, PetscBool *);
/* the number of knobs and their declarations */
PETSC_EXTERN PetscErrorCode GpukitTunerGetKnobs(GpukitTuner, PetscInt *, const GpukitTuneKnob **);
/* the i-th candidate a search measured: its values and its median (ms; -1 while it has too few samples); i beyond
   the last: *ms = -1 and values untouched */
PETSC_EXTERN PetscErrorCode GpukitTunerGetCandidate(GpukitTuner, PetscInt, PetscInt[], PetscReal *);
/* the live tuner of an object's kernel (benchmarks, tests, views of objects that do not hold it), or NULL */
PETSC_EXTERN PetscErrorCode GpukitTuneFind(PetscObject, const char[], GpukitTuner *);

/* the shape class of a sparse operator: "r<2 log2 rows>.z<2 log2 nnz>.a<mean row length>.x<log2 longest row>" */
PETSC_EXTERN PetscErrorCode GpukitTuneShapeCSR(PetscInt, PetscCount, PetscInt, char[], size_t);
/* appends ".sp<floor log2(1 + mean row span)>", the columns' locality (nothing for a negative span) */
PETSC_EXTERN PetscErrorCode GpukitTuneShapeAppendSpan(PetscReal, char[], size_t);

/* the process-wide mode (from -gpukit_tune) and counters: timed calls, searches finished, cache hits, cache writes */
PETSC_EXTERN PetscErrorCode GpukitTuneGetMode(GpukitTuneMode *);
PETSC_EXTERN PetscErrorCode GpukitTuneGetCounts(PetscInt *, PetscInt *, PetscInt *, PetscInt *);

/* tests: every launch time comes from fn(ctx, kernel, cfg, &ms) instead of a clock (NULL: the clocks again) */
typedef PetscErrorCode (*GpukitTuneTimerFn)(void *, const char[], const PetscInt[], PetscReal *);
PETSC_EXTERN PetscErrorCode GpukitTuneSetTestTimer(GpukitTuneTimerFn, void *);

/* library-private: options and cache at start-up and at PetscFinalize() (gpukit.c) */
PETSC_INTERN PetscErrorCode GpukitTuneInitialize(void);
