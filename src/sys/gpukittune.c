/*
   gpukit's run-time tuner (declarations and usage: gpukittune.h; options and cache format: docs/tuning.md).

   A tuner belongs to one kernel of one object (a Mat's product, a KSP's basis step). Its search is a greedy walk
   (seed 003, sec. 4.5.2, with the noise guard the thesis lacks): start from the kernel's starting values, then for
   each knob in turn try other values (every value of a categorical knob; neighbours of an ordered one, moving on in a
   direction while each step is faster than the last); a value replaces the incumbent only when its median time is
   lower by more than the threshold. Each candidate is timed over -gpukit_tune_samples launches: within one call for a
   repeatable kernel, over as many calls otherwise. The outcome is kept in memory for the process and in the cache file, keyed by the
   device, the kernel, the shape class and the candidate sets, so a second run makes no timed call.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <petsc/private/petscimpl.h>
#include <petsctime.h>
#include "gpukittune.h"

#define GPUKIT_TUNE_MAX_SAMPLES 8
#define GPUKIT_TUNE_MAX_CANDS   128
#define GPUKIT_TUNE_KEY_LEN     512
#define GPUKIT_TUNE_VAL_LEN     192
#define GPUKIT_TUNE_HEADER      "gpukit-tune-cache 1"

#if defined(GPUKIT_HAVE_CUDA)
/* gpukitcuda.cu: CUDA events on a stream, and the device's name and compute capability */
PETSC_INTERN PetscErrorCode GpukitCUDATimerRecord(void **, PetscInt, void *);
PETSC_INTERN PetscErrorCode GpukitCUDATimerElapsed(void *, PetscInt, PetscReal[]);
PETSC_INTERN PetscErrorCode GpukitCUDATimerDestroy(void **);
PETSC_INTERN PetscErrorCode GpukitCUDADeviceKey(char[], size_t);
PETSC_INTERN PetscErrorCode GpukitCUDASynchronize(void);
#endif

typedef struct {
  PetscInt  idx[GPUKIT_TUNE_MAX_KNOBS];
  PetscReal t[GPUKIT_TUNE_MAX_SAMPLES];
  PetscInt  ns;
} GpukitTuneCand;

typedef enum {
  TUNE_SEARCHING,
  TUNE_DONE
} GpukitTuneState;

typedef enum {
  TUNE_FROM_START, /* tuning off (or this tuner disabled): the starting values */
  TUNE_FROM_SEARCH,
  TUNE_FROM_CACHE
} GpukitTuneSource;

struct _n_GpukitTuner {
  PetscObject       owner; /* not referenced */
  char              kernel[64], shape[128], key[GPUKIT_TUNE_KEY_LEN];
  PetscInt          nknobs;
  GpukitTuneKnob    knobs[GPUKIT_TUNE_MAX_KNOBS];
  PetscBool         device, repeatable;
  GpukitTuneValidFn valid;
  void             *validctx;
  GpukitTuneMode    mode;
  PetscBool         exhaustive;
  PetscReal         threshold;
  PetscInt          nsamples, maxcalls;

  /* the search */
  GpukitTuneState  state;
  GpukitTuneSource source;
  PetscBool        looked; /* the cache was asked for this key */
  PetscInt         cur[GPUKIT_TUNE_MAX_KNOBS], start[GPUKIT_TUNE_MAX_KNOBS], pending[GPUKIT_TUNE_MAX_KNOBS];
  PetscBool        haspending;
  PetscInt         knob, dir, catpos; /* position of the greedy walk */
  PetscInt         probe;             /* an ordered knob's value index where the walk in direction dir has got to */
  GpukitTuneCand  *cands;
  PetscInt         ncands;
  PetscInt         ncalls;               /* timed calls of this search */
  PetscReal        cost_ms;              /* time of every timed launch */
  PetscReal        best_ms, start_ms;    /* medians of the choice and of the starting values */
  PetscObjectState opstate;              /* the operator's state the samples belong to */
  PetscBool        hasstate;
  PetscInt         vals[GPUKIT_TUNE_MAX_KNOBS]; /* the values handed out by the last Begin() */

  /* this call */
  PetscBool      timing, hostclock; /* hostclock: the host clock (after a device synchronisation for a device kernel) */
  PetscInt       timedbefore;       /* the process's timed calls when this one began */
  PetscInt       discarded;         /* calls not counted because another tuner timed inside them */
  PetscReal      work;              /* the call's time is divided by it */
  PetscInt       nmarks;
  void          *stream, *events;
  PetscLogDouble ht[GPUKIT_TUNE_MAX_SAMPLES + 1];
  PetscReal      fake[GPUKIT_TUNE_MAX_SAMPLES];
};

/* ---------------------------------------------------------------------------------------------------------- */
/* process-wide state: counters, the test timer, the in-memory cache                                          */

typedef struct {
  char      key[GPUKIT_TUNE_KEY_LEN];
  char      vals[GPUKIT_TUNE_VAL_LEN]; /* "name=value,name=value" */
  PetscReal best_ms, start_ms;
} GpukitTuneEntry;

typedef struct {
  GpukitTuneEntry *e;
  PetscInt         n, max;
} GpukitTuneTable;

static PetscInt          GpukitTuneTimedCalls, GpukitTuneSearches, GpukitTuneCacheHits, GpukitTuneCacheWrites;
static GpukitTuneTimerFn GpukitTuneTestTimer;
static void             *GpukitTuneTestCtx;
static GpukitTuneTable   GpukitTuneMem;          /* what this process knows: the file's entries and its own */
static char              GpukitTuneMemPath[PETSC_MAX_PATH_LEN];
static PetscBool         GpukitTuneMemLoaded;    /* GpukitTuneMem holds the file at GpukitTuneMemPath */
static PetscBool         GpukitTuneFileBad;      /* the file is foreign or corrupt: never read or written */
static PetscBool         GpukitTuneToldWrite;
static GpukitTuner       GpukitTuneLive[64]; /* the live tuners, for GpukitTuneFind() (the first 64) */

static PetscErrorCode GpukitTuneTableFree(GpukitTuneTable *tb)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(tb->e));
  tb->n = tb->max = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitTuneTableSet(GpukitTuneTable *tb, const char key[], const char vals[], PetscReal best, PetscReal start)
{
  PetscInt i;

  PetscFunctionBegin;
  for (i = 0; i < tb->n; i++)
    if (!strcmp(tb->e[i].key, key)) break;
  if (i == tb->n) {
    if (tb->n == tb->max) {
      GpukitTuneEntry *e;
      tb->max = PetscMax(16, 2 * tb->max);
      PetscCall(PetscCalloc1(tb->max, &e));
      if (tb->n) PetscCall(PetscArraycpy(e, tb->e, tb->n));
      PetscCall(PetscFree(tb->e));
      tb->e = e;
    }
    tb->n++;
  }
  PetscCall(PetscStrncpy(tb->e[i].key, key, sizeof(tb->e[i].key)));
  PetscCall(PetscStrncpy(tb->e[i].vals, vals, sizeof(tb->e[i].vals)));
  tb->e[i].best_ms  = best;
  tb->e[i].start_ms = start;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const GpukitTuneEntry *GpukitTuneTableFind(const GpukitTuneTable *tb, const char key[])
{
  for (PetscInt i = 0; i < tb->n; i++)
    if (!strcmp(tb->e[i].key, key)) return &tb->e[i];
  return NULL;
}

static PetscErrorCode GpukitTuneWarn(const char msg[], const char path[])
{
  PetscFunctionBegin;
  PetscCall(PetscInfo(NULL, "gpukit tuning cache %s: %s\n", path, msg));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "gpukit: warning: tuning cache %s %s; it is ignored (remove it, or give -gpukit_tune_cache another file)\n", path, msg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads the cache file into tb. *bad: the file exists but is foreign or corrupt (a warning was given once). A missing
   file is an empty table. */
static PetscErrorCode GpukitTuneFileRead(const char path[], GpukitTuneTable *tb, PetscBool warn, PetscBool *bad)
{
  FILE *f;
  char  line[GPUKIT_TUNE_KEY_LEN + GPUKIT_TUNE_VAL_LEN + 128];
  int   lineno = 0;

  PetscFunctionBegin;
  *bad = PETSC_FALSE;
  f    = fopen(path, "r");
  if (!f) PetscFunctionReturn(PETSC_SUCCESS);
  while (fgets(line, sizeof(line), f)) {
    size_t len = strlen(line);
    char  *key, *vals, *sbest, *sstart, *end;
    double best, start;

    lineno++;
    if (len == 0 || line[len - 1] != '\n') { /* a line too long, or a file cut short */
      *bad = PETSC_TRUE;
      break;
    }
    line[len - 1] = 0;
    if (lineno == 1) {
      if (strcmp(line, GPUKIT_TUNE_HEADER)) {
        fclose(f);
        *bad = PETSC_TRUE;
        if (warn) PetscCall(GpukitTuneWarn("is not a gpukit tuning cache (its first line is not \"" GPUKIT_TUNE_HEADER "\")", path));
        PetscCall(GpukitTuneTableFree(tb));
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      continue;
    }
    key    = line;
    vals   = strchr(key, '\t');
    sbest  = vals ? strchr(vals + 1, '\t') : NULL;
    sstart = sbest ? strchr(sbest + 1, '\t') : NULL;
    if (!sstart || strchr(sstart + 1, '\t')) {
      *bad = PETSC_TRUE;
      break;
    }
    *vals++ = 0;
    *sbest++ = 0;
    *sstart++ = 0;
    errno = 0;
    best  = strtod(sbest, &end);
    if (errno || *end || !(best >= 0)) {
      *bad = PETSC_TRUE;
      break;
    }
    start = strtod(sstart, &end);
    if (errno || *end || !(start >= 0) || !*key || !*vals || strlen(key) >= GPUKIT_TUNE_KEY_LEN || strlen(vals) >= GPUKIT_TUNE_VAL_LEN) {
      *bad = PETSC_TRUE;
      break;
    }
    PetscCall(GpukitTuneTableSet(tb, key, vals, (PetscReal)best, (PetscReal)start));
  }
  if (!*bad && lineno == 0) *bad = PETSC_TRUE; /* an empty file is not ours either */
  fclose(f);
  if (*bad) {
    char msg[64];
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "is corrupt (line %d)", lineno));
    if (warn) PetscCall(GpukitTuneWarn(msg, path));
    PetscCall(GpukitTuneTableFree(tb));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mkdir -p of the folder that holds path */
static PetscErrorCode GpukitTuneMakeDir(const char path[])
{
  char dir[PETSC_MAX_PATH_LEN], *p;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(dir, path, sizeof(dir)));
  p = strrchr(dir, '/');
  if (!p || p == dir) PetscFunctionReturn(PETSC_SUCCESS);
  *p = 0;
  for (p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    (void)mkdir(dir, 0755);
    *p = '/';
  }
  (void)mkdir(dir, 0755);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Adds one entry to the cache file: reads it again (another process may have written since), merges, writes a
   temporary file beside it and renames it over the file, so readers see the old or the new file, never a mix. A file
   that is foreign or corrupt is left alone; a file that cannot be written is reported through -info once. */
static PetscErrorCode GpukitTuneFileAdd(const char path[], const GpukitTuneEntry *add)
{
  GpukitTuneTable tb = {NULL, 0, 0};
  PetscBool       bad;
  char            tmp[PETSC_MAX_PATH_LEN + 64];
  FILE           *f;
  int             ok;
  static int      serial = 0;

  PetscFunctionBegin;
  PetscCall(GpukitTuneFileRead(path, &tb, PETSC_FALSE, &bad));
  if (bad) {
    PetscCall(PetscInfo(NULL, "gpukit tuning cache %s is foreign or corrupt: not written\n", path));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitTuneTableSet(&tb, add->key, add->vals, add->best_ms, add->start_ms));
  PetscCall(GpukitTuneMakeDir(path));
  PetscCall(PetscSNPrintf(tmp, sizeof(tmp), "%s.tmp.%d.%d", path, (int)getpid(), serial++));
  f  = fopen(tmp, "w");
  ok = f != NULL;
  if (ok) {
    ok = fprintf(f, "%s\n", GPUKIT_TUNE_HEADER) > 0;
    for (PetscInt i = 0; ok && i < tb.n; i++) ok = fprintf(f, "%s\t%s\t%.6g\t%.6g\n", tb.e[i].key, tb.e[i].vals, (double)tb.e[i].best_ms, (double)tb.e[i].start_ms) > 0;
    ok = (fclose(f) == 0) && ok;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) (void)unlink(tmp);
  }
  PetscCall(GpukitTuneTableFree(&tb));
  if (ok) GpukitTuneCacheWrites++;
  else if (!GpukitTuneToldWrite) {
    GpukitTuneToldWrite = PETSC_TRUE;
    PetscCall(PetscInfo(NULL, "gpukit tuning cache %s cannot be written (%s): the choices of this run are not kept\n", path, strerror(errno)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitTuneFinalize(void)
{
  PetscFunctionBegin;
  PetscCall(GpukitTuneTableFree(&GpukitTuneMem));
  GpukitTuneMemLoaded   = PETSC_FALSE;
  GpukitTuneFileBad     = PETSC_FALSE;
  GpukitTuneToldWrite   = PETSC_FALSE;
  GpukitTuneMemPath[0]  = 0;
  GpukitTuneTimedCalls  = 0;
  GpukitTuneSearches    = 0;
  GpukitTuneCacheHits   = 0;
  GpukitTuneCacheWrites = 0;
  GpukitTuneTestTimer   = NULL;
  GpukitTuneTestCtx     = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GpukitTuneInitialize(void)
{
  PetscFunctionBegin;
  PetscCall(PetscRegisterFinalize(GpukitTuneFinalize));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const GpukitTuneModes[] = {"off", "cached", "on", "GpukitTuneMode", "GPUKIT_TUNE_", NULL};

/* the cache file: -gpukit_tune_cache, else $XDG_CACHE_HOME/gpukit/tune.txt, else $HOME/.cache/gpukit/tune.txt */
static PetscErrorCode GpukitTuneCachePath(char path[], size_t len)
{
  PetscBool   set;
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-gpukit_tune_cache", path, len, &set));
  if (set && path[0]) PetscFunctionReturn(PETSC_SUCCESS);
  if (xdg && xdg[0]) PetscCall(PetscSNPrintf(path, len, "%s/gpukit/tune.txt", xdg));
  else if (home && home[0]) PetscCall(PetscSNPrintf(path, len, "%s/.cache/gpukit/tune.txt", home));
  else path[0] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTuneGetMode - The tuning mode of this process, from `-gpukit_tune <off,cached,on>` (default cached)

  Not Collective

  Output Parameter:
. mode - `GPUKIT_TUNE_OFF`, `GPUKIT_TUNE_CACHED` or `GPUKIT_TUNE_ON`

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTuneGetMode(GpukitTuneMode *mode)
{
  PetscInt  m = GPUKIT_TUNE_CACHED;
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetEList(NULL, NULL, "-gpukit_tune", GpukitTuneModes, 3, &m, &set));
  *mode = (GpukitTuneMode)m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTuneGetCounts - Process-wide counters of the tuner

  Not Collective

  Output Parameters:
+ timed    - calls in which a kernel was timed (or `NULL`)
. searches - searches finished (or `NULL`)
. hits     - tuners whose choice came from the cache (or `NULL`)
- writes   - entries written to the cache file (or `NULL`)

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTuneGetCounts(PetscInt *timed, PetscInt *searches, PetscInt *hits, PetscInt *writes)
{
  PetscFunctionBegin;
  if (timed) *timed = GpukitTuneTimedCalls;
  if (searches) *searches = GpukitTuneSearches;
  if (hits) *hits = GpukitTuneCacheHits;
  if (writes) *writes = GpukitTuneCacheWrites;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTuneSetTestTimer - Makes every launch time come from a function instead of a clock (for tests)

  Not Collective

  Input Parameters:
+ fn  - fn(ctx, kernel, values, &ms) gives the time of one launch of the kernel with the knob values, or `NULL`
        for the clocks again
- ctx - its context

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTuneSetTestTimer(GpukitTuneTimerFn fn, void *ctx)
{
  PetscFunctionBegin;
  GpukitTuneTestTimer = fn;
  GpukitTuneTestCtx   = ctx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTuneShapeCSR - The shape class of a sparse operator, for a tuner's cache key

  Not Collective

  Input Parameters:
+ rows   - local rows
. nnz    - local entries
. maxrow - the longest row
- len    - the size of buf

  Output Parameter:
. buf - "r<a>.z<b>.a<c>.x<d>": rows and nnz in half octaves (floor of 2 log2), the mean row length rounded (above 64
        in half octaves beyond 64), the longest row in octaves (x-1: not given). Two operators share a class only when
        they are alike to within about 40% in size and have the same mean row length: 2-D 5-point 4096^2 and 3-D
        7-point 257^3 (16.8M and 17.0M rows) fall apart.

  Level: developer

.seealso: `GpukitTunerSetShape()`
@*/
PetscErrorCode GpukitTuneShapeCSR(PetscInt rows, PetscCount nnz, PetscInt maxrow, char buf[], size_t len)
{
  int lr = rows > 0 ? (int)PetscFloorReal(2.0 * PetscLog2Real((PetscReal)rows)) : -1, lz = nnz > 0 ? (int)PetscFloorReal(2.0 * PetscLog2Real((PetscReal)nnz)) : -1, lx = maxrow > 0 ? (int)PetscFloorReal(PetscLog2Real((PetscReal)maxrow)) : -1;
  int la = rows > 0 ? (int)PetscFloorReal((PetscReal)nnz / (PetscReal)rows + 0.5) : 0;

  PetscFunctionBegin;
  if (la > 64) la = 64 + (int)PetscFloorReal(2.0 * PetscLog2Real((PetscReal)la / 64.0)); /* long rows: half octaves */
  PetscCall(PetscSNPrintf(buf, len, "r%d.z%d.a%d.x%d", lr, lz, la, lx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTuneShapeAppendSpan - Appends the locality class of a sparse operator to a shape class, for a tuner's cache key

  Not Collective

  Input Parameters:
+ meanspan - the mean over the rows of (the row's last column - its first column), 0 for an empty row; negative: not
             known, nothing is appended
. buf      - a shape, e.g. from `GpukitTuneShapeCSR()`
- len      - the size of buf

  Output Parameter:
. buf - with ".sp<k>" appended, k = floor(log2(1 + meanspan)): the span in octaves

  Level: developer

  Note:
  Size and row lengths do not tell where the columns lie: a 3-D 7-point stencil and the same matrix under a random
  symmetric permutation share their `GpukitTuneShapeCSR()` class, but one reads x almost in order and the other at
  random, and the fastest kernel differs (a cached choice of one slowed the other to 0.83x `MATAIJCUSPARSE`). Their
  spans differ by 6 octaves (2n^2 against about 3/4 of the rows).

.seealso: `GpukitTuneShapeCSR()`, `GpukitTunerSetShape()`
@*/
PetscErrorCode GpukitTuneShapeAppendSpan(PetscReal meanspan, char buf[], size_t len)
{
  size_t used;

  PetscFunctionBegin;
  if (meanspan < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrlen(buf, &used));
  PetscCheck(used + 1 < len, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "No room in the shape buffer (%zu of %zu bytes used) for the locality class", used, len);
  PetscCall(PetscSNPrintf(buf + used, len - used, ".sp%d", (int)PetscFloorReal(PetscLog2Real(1.0 + meanspan))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* one tuner                                                                                                   */

static PetscErrorCode GpukitTunerValues(GpukitTuner t, const PetscInt idx[], PetscInt vals[])
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < t->nknobs; k++) vals[k] = t->knobs[k].values[idx[k]];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool GpukitTunerIsValid(GpukitTuner t, const PetscInt idx[])
{
  PetscInt vals[GPUKIT_TUNE_MAX_KNOBS];

  if (!t->valid) return PETSC_TRUE;
  for (PetscInt k = 0; k < t->nknobs; k++) vals[k] = t->knobs[k].values[idx[k]];
  return t->valid(t->validctx, vals);
}

static GpukitTuneCand *GpukitTunerFind(GpukitTuner t, const PetscInt idx[])
{
  for (PetscInt c = 0; c < t->ncands; c++) {
    PetscBool same = PETSC_TRUE;
    for (PetscInt k = 0; k < t->nknobs; k++) same = (PetscBool)(same && t->cands[c].idx[k] == idx[k]);
    if (same) return &t->cands[c];
  }
  return NULL;
}

static int GpukitTuneRealCompare(const void *a, const void *b)
{
  PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* the median of a measured candidate, or -1 while it has fewer samples than the search asks */
static PetscReal GpukitTunerEstimate(GpukitTuner t, const PetscInt idx[])
{
  GpukitTuneCand *c = GpukitTunerFind(t, idx);
  PetscReal       s[GPUKIT_TUNE_MAX_SAMPLES];

  if (!c || c->ns < t->nsamples) return -1.0;
  memcpy(s, c->t, (size_t)c->ns * sizeof(PetscReal));
  qsort(s, (size_t)c->ns, sizeof(PetscReal), GpukitTuneRealCompare);
  return c->ns % 2 ? s[c->ns / 2] : 0.5 * (s[c->ns / 2 - 1] + s[c->ns / 2]);
}

/* the key: device | kernel | shape | candidate sets */
static PetscErrorCode GpukitTunerMakeKey(GpukitTuner t)
{
  char   dev[160] = "cpu";
  size_t n;

  PetscFunctionBegin;
#if defined(GPUKIT_HAVE_CUDA)
  if (t->device) PetscCall(GpukitCUDADeviceKey(dev, sizeof(dev)));
#endif
  PetscCall(PetscSNPrintf(t->key, sizeof(t->key), "%s|%s|%s|", dev, t->kernel, t->shape));
  for (PetscInt k = 0; k < t->nknobs; k++) {
    PetscCall(PetscStrlen(t->key, &n));
    PetscCall(PetscSNPrintf(t->key + n, sizeof(t->key) - n, "%s%s:", k ? ";" : "", t->knobs[k].name));
    for (PetscInt i = 0; i < t->knobs[k].n; i++) {
      PetscCall(PetscStrlen(t->key, &n));
      PetscCall(PetscSNPrintf(t->key + n, sizeof(t->key) - n, "%s%" PetscInt_FMT, i ? "/" : "", t->knobs[k].values[i]));
    }
  }
  for (char *p = t->key; *p; p++)
    if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the greedy walk from its start: no candidate measured, no call counted */
static void GpukitTunerRestartSearch(GpukitTuner t)
{
  t->haspending = PETSC_FALSE;
  t->knob       = 0;
  t->dir        = 0;
  t->catpos     = 0;
  t->probe      = 0;
  t->ncands     = 0;
  t->ncalls     = 0;
  t->discarded  = 0;
  for (PetscInt k = 0; k < t->nknobs; k++) t->cur[k] = t->start[k];
}

static PetscErrorCode GpukitTunerReset(GpukitTuner t)
{
  PetscFunctionBegin;
  t->state  = TUNE_SEARCHING;
  t->source = TUNE_FROM_START;
  t->looked = PETSC_FALSE;
  GpukitTunerRestartSearch(t);
  t->cost_ms = 0;
  t->best_ms    = -1;
  t->start_ms   = -1;
  t->hasstate   = PETSC_FALSE;
  for (PetscInt k = 0; k < t->nknobs; k++) t->cur[k] = t->start[k] = t->knobs[k].start;
  if (t->mode == GPUKIT_TUNE_OFF) t->state = TUNE_DONE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the cache's choice for this tuner's key, when the mode allows it and every value is still a candidate */
static PetscErrorCode GpukitTunerLookup(GpukitTuner t)
{
  char                   path[PETSC_MAX_PATH_LEN];
  const GpukitTuneEntry *e;
  PetscInt               idx[GPUKIT_TUNE_MAX_KNOBS];
  char                   vals[GPUKIT_TUNE_VAL_LEN], *tok, *save = NULL;
  PetscInt               found = 0;

  PetscFunctionBegin;
  t->looked = PETSC_TRUE;
  if (t->mode != GPUKIT_TUNE_CACHED) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitTuneCachePath(path, sizeof(path)));
  if (!GpukitTuneMemLoaded || strcmp(path, GpukitTuneMemPath)) {
    PetscCall(GpukitTuneTableFree(&GpukitTuneMem));
    PetscCall(PetscStrncpy(GpukitTuneMemPath, path, sizeof(GpukitTuneMemPath)));
    GpukitTuneFileBad = PETSC_FALSE;
    if (path[0]) PetscCall(GpukitTuneFileRead(path, &GpukitTuneMem, PETSC_TRUE, &GpukitTuneFileBad));
    GpukitTuneMemLoaded = PETSC_TRUE;
  }
  e = GpukitTuneTableFind(&GpukitTuneMem, t->key);
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(vals, e->vals, sizeof(vals)));
  for (PetscInt k = 0; k < t->nknobs; k++) idx[k] = -1;
  for (tok = strtok_r(vals, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '='), *end;
    long  v;
    if (!eq) break;
    *eq = 0;
    v   = strtol(eq + 1, &end, 10);
    if (*end) break;
    for (PetscInt k = 0; k < t->nknobs; k++) {
      if (strcmp(tok, t->knobs[k].name)) continue;
      for (PetscInt i = 0; i < t->knobs[k].n; i++)
        if (t->knobs[k].values[i] == (PetscInt)v) idx[k] = i;
    }
  }
  for (PetscInt k = 0; k < t->nknobs; k++) found += idx[k] >= 0;
  if (found != t->nknobs || !GpukitTunerIsValid(t, idx)) {
    PetscCall(PetscInfo(t->owner, "tuner %s: the cache's entry does not fit the candidates; tuning again\n", t->kernel));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt k = 0; k < t->nknobs; k++) t->cur[k] = idx[k];
  t->best_ms  = e->best_ms;
  t->start_ms = e->start_ms;
  t->state    = TUNE_DONE;
  t->source   = TUNE_FROM_CACHE;
  GpukitTuneCacheHits++;
  PetscCall(PetscInfo(t->owner, "tuner %s [%s]: from the cache %s\n", t->kernel, e->vals, path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitTunerValuesString(GpukitTuner t, const PetscInt idx[], char buf[], size_t len)
{
  size_t n;

  PetscFunctionBegin;
  buf[0] = 0;
  for (PetscInt k = 0; k < t->nknobs; k++) {
    PetscCall(PetscStrlen(buf, &n));
    PetscCall(PetscSNPrintf(buf + n, len - n, "%s%s=%" PetscInt_FMT, k ? "," : "", t->knobs[k].name, t->knobs[k].values[idx[k]]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitTunerFinish(GpukitTuner t)
{
  char vals[GPUKIT_TUNE_VAL_LEN], path[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  t->state      = TUNE_DONE;
  t->source     = TUNE_FROM_SEARCH;
  t->haspending = PETSC_FALSE;
  t->best_ms    = GpukitTunerEstimate(t, t->cur);
  t->start_ms   = GpukitTunerEstimate(t, t->start);
  GpukitTuneSearches++;
  PetscCall(GpukitTunerValuesString(t, t->cur, vals, sizeof(vals)));
  PetscCall(PetscInfo(t->owner, "tuner %s [%s]: %s after %" PetscInt_FMT " timed calls, %g ms (starting values %g ms; %" PetscInt_FMT " candidates)\n", t->kernel, t->shape, vals, t->ncalls, (double)t->best_ms, (double)t->start_ms, t->ncands));
  for (PetscInt i = 0; i < t->ncands; i++) { /* every measured candidate, in the order it was measured */
    char cv[GPUKIT_TUNE_VAL_LEN];
    PetscCall(GpukitTunerValuesString(t, t->cands[i].idx, cv, sizeof(cv)));
    PetscCall(PetscInfo(t->owner, "tuner %s: candidate %" PetscInt_FMT " %s: %g ms\n", t->kernel, i, cv, (double)GpukitTunerEstimate(t, t->cands[i].idx)));
  }
  if (t->mode == GPUKIT_TUNE_OFF) PetscFunctionReturn(PETSC_SUCCESS);
  if (t->best_ms < 0 || t->start_ms < 0) { /* nothing clean was measured: nothing to keep */
    PetscCall(PetscInfo(t->owner, "tuner %s: no clean measurement; the starting values, not written to the cache\n", t->kernel));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitTuneCachePath(path, sizeof(path)));
  {
    GpukitTuneEntry e;
    PetscCall(PetscStrncpy(e.key, t->key, sizeof(e.key)));
    PetscCall(PetscStrncpy(e.vals, vals, sizeof(e.vals)));
    e.best_ms  = t->best_ms;
    e.start_ms = t->start_ms;
    if (GpukitTuneMemLoaded && !strcmp(path, GpukitTuneMemPath)) PetscCall(GpukitTuneTableSet(&GpukitTuneMem, e.key, e.vals, e.best_ms, e.start_ms));
    if (path[0] && !(GpukitTuneFileBad && !strcmp(path, GpukitTuneMemPath))) PetscCall(GpukitTuneFileAdd(path, &e));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the next candidate to time (t->pending), or the end of the search */
static PetscErrorCode GpukitTunerStep(GpukitTuner t)
{
  PetscInt c[GPUKIT_TUNE_MAX_KNOBS];

  PetscFunctionBegin;
  t->haspending = PETSC_FALSE;
  if (t->ncalls >= t->maxcalls || t->ncands >= GPUKIT_TUNE_MAX_CANDS) { /* out of calls (or room): the best measured so far */
    PetscReal best = GpukitTunerEstimate(t, t->cur);
    for (PetscInt i = 0; i < t->ncands; i++) {
      PetscReal e = GpukitTunerEstimate(t, t->cands[i].idx);
      if (e >= 0 && (best < 0 || e < best)) {
        best = e;
        PetscCall(PetscArraycpy(t->cur, t->cands[i].idx, t->nknobs));
      }
    }
    PetscCall(GpukitTunerFinish(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (GpukitTunerEstimate(t, t->start) < 0) {
    PetscCall(PetscArraycpy(t->pending, t->start, t->nknobs));
    t->haspending = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (t->exhaustive) { /* every valid combination, in order; then the fastest */
    PetscInt  idx[GPUKIT_TUNE_MAX_KNOBS] = {0};
    PetscReal best                        = -1;
    for (;;) {
      if (GpukitTunerIsValid(t, idx) && GpukitTunerEstimate(t, idx) < 0) {
        PetscCall(PetscArraycpy(t->pending, idx, t->nknobs));
        t->haspending = PETSC_TRUE;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      if (GpukitTunerIsValid(t, idx)) {
        PetscReal e = GpukitTunerEstimate(t, idx);
        if (best < 0 || e < best) {
          best = e;
          PetscCall(PetscArraycpy(t->cur, idx, t->nknobs));
        }
      }
      PetscInt k = 0;
      while (k < t->nknobs && ++idx[k] == t->knobs[k].n) idx[k++] = 0;
      if (k == t->nknobs) break;
    }
    PetscCall(GpukitTunerFinish(t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (;;) { /* the greedy walk */
    const GpukitTuneKnob *K;
    PetscReal             ecur = GpukitTunerEstimate(t, t->cur);

    if (t->knob >= t->nknobs) break;
    K = &t->knobs[t->knob];
    if (K->n == 1) {
      t->knob++;
      continue;
    }
    if (K->labels) { /* categorical: every other value, then the fastest if it gains enough */
      PetscInt best[GPUKIT_TUNE_MAX_KNOBS];
      for (; t->catpos < K->n; t->catpos++) {
        if (t->catpos == t->cur[t->knob]) continue;
        PetscCall(PetscArraycpy(c, t->cur, t->nknobs));
        c[t->knob] = t->catpos;
        if (!GpukitTunerIsValid(t, c) || GpukitTunerEstimate(t, c) >= 0) continue;
        PetscCall(PetscArraycpy(t->pending, c, t->nknobs));
        t->haspending = PETSC_TRUE;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      PetscCall(PetscArraycpy(best, t->cur, t->nknobs));
      for (PetscInt v = 0; v < K->n; v++) {
        PetscReal e;
        PetscCall(PetscArraycpy(c, t->cur, t->nknobs));
        c[t->knob] = v;
        if (!GpukitTunerIsValid(t, c)) continue;
        e = GpukitTunerEstimate(t, c);
        if (e >= 0 && e < GpukitTunerEstimate(t, best)) PetscCall(PetscArraycpy(best, c, t->nknobs));
      }
      if (GpukitTunerEstimate(t, best) < (1.0 - t->threshold) * ecur) PetscCall(PetscArraycpy(t->cur, best, t->nknobs));
      t->knob++;
      t->catpos = 0;
      continue;
    }
    /* ordered: upwards first, downwards if upwards did not replace the incumbent. In a direction the walk goes on while
       each step is faster than the one before, by any amount; where it stops, the value it reached (the fastest of
       the direction) replaces the incumbent if it is faster by more than the threshold. So a gain below the threshold
       at the first step (256 -> 512 threads: 3.7% on a P1 FEM product, H200) does not hide a larger one further on
       (1024 threads: 28%) */
    if (t->dir == 0) {
      t->dir   = 1;
      t->probe = t->cur[t->knob];
    }
    PetscCall(PetscArraycpy(c, t->cur, t->nknobs));
    c[t->knob] = t->probe;
    do c[t->knob] += t->dir;
    while (c[t->knob] >= 0 && c[t->knob] < K->n && !GpukitTunerIsValid(t, c));
    if (c[t->knob] >= 0 && c[t->knob] < K->n) {
      PetscInt  p[GPUKIT_TUNE_MAX_KNOBS];
      PetscReal e = GpukitTunerEstimate(t, c);
      if (e < 0) {
        PetscCall(PetscArraycpy(t->pending, c, t->nknobs));
        t->haspending = PETSC_TRUE;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      PetscCall(PetscArraycpy(p, t->cur, t->nknobs));
      p[t->knob] = t->probe;
      if (e < GpukitTunerEstimate(t, p)) { /* faster than the step before: on in this direction */
        t->probe = c[t->knob];
        continue;
      }
    }
    { /* the end of this direction */
      PetscBool adopted = PETSC_FALSE;
      if (t->probe != t->cur[t->knob]) {
        PetscCall(PetscArraycpy(c, t->cur, t->nknobs));
        c[t->knob] = t->probe;
        if (GpukitTunerEstimate(t, c) < (1.0 - t->threshold) * ecur) {
          t->cur[t->knob] = t->probe;
          adopted         = PETSC_TRUE;
        }
      }
      if (t->dir == 1 && !adopted) {
        t->dir   = -1;
        t->probe = t->cur[t->knob];
      } else {
        t->knob++;
        t->dir = 0;
      }
    }
  }
  PetscCall(GpukitTunerFinish(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerCreate - Creates the run-time tuner of one kernel

  Not Collective

  Input Parameters:
+ owner  - the object whose kernel it tunes (for -info; not referenced)
. kernel - the kernel's name, as in the cache and in views (e.g. "SGDIAMult")
. nknobs - the number of knobs, 1..`GPUKIT_TUNE_MAX_KNOBS`
- knobs  - the knobs: name, candidate values, labels for a categorical knob, the starting value

  Output Parameter:
. t - the tuner

  Options Database Keys:
+ -gpukit_tune <off,cached,on>                 - off: the starting values; cached (default): the cache's choice, or tune; on: always tune
. -gpukit_tune_cache <file>                    - the cache file (default $XDG_CACHE_HOME/gpukit/tune.txt or ~/.cache/gpukit/tune.txt)
. -gpukit_tune_threshold <0.05>                - a candidate must be faster by this fraction to replace the incumbent
. -gpukit_tune_samples <3>                     - launches timed per candidate (their median counts)
. -gpukit_tune_max_calls <32>                  - timed calls at most, then the best measured
- -gpukit_tune_search <greedy,exhaustive>      - the search (exhaustive: every combination, for benchmarks)

  Level: developer

  Note:
  The labels of a categorical knob are kept by pointer: pass static strings.

.seealso: `GpukitTunerBegin()`, `GpukitTunerView()`, `GpukitTuneGetCounts()`
@*/
PetscErrorCode GpukitTunerCreate(PetscObject owner, const char kernel[], PetscInt nknobs, const GpukitTuneKnob knobs[], GpukitTuner *t)
{
  GpukitTuner tu;
  PetscBool   set, exh = PETSC_FALSE;
  PetscInt    search = 0;
  const char *searches[] = {"greedy", "exhaustive"};

  PetscFunctionBegin;
  GpukitAssertPointer(kernel, 2);
  GpukitAssertPointer(t, 5);
  PetscCheck(nknobs >= 1 && nknobs <= GPUKIT_TUNE_MAX_KNOBS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A tuner takes 1..%d knobs, got %" PetscInt_FMT, GPUKIT_TUNE_MAX_KNOBS, nknobs);
  for (PetscInt k = 0; k < nknobs; k++) {
    PetscCheck(knobs[k].name && knobs[k].name[0], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Knob %" PetscInt_FMT " of tuner %s has no name", k, kernel);
    PetscCheck(knobs[k].n >= 1 && knobs[k].n <= GPUKIT_TUNE_MAX_VALUES, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Knob %s of tuner %s has %" PetscInt_FMT " values; 1..%d allowed", knobs[k].name, kernel, knobs[k].n, GPUKIT_TUNE_MAX_VALUES);
    PetscCheck(knobs[k].start >= 0 && knobs[k].start < knobs[k].n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Knob %s of tuner %s starts at index %" PetscInt_FMT ", outside 0..%" PetscInt_FMT, knobs[k].name, kernel, knobs[k].start, knobs[k].n - 1);
  }
  PetscCall(PetscNew(&tu));
  tu->owner  = owner;
  tu->nknobs = nknobs;
  PetscCall(PetscStrncpy(tu->kernel, kernel, sizeof(tu->kernel)));
  PetscCall(PetscArraycpy(tu->knobs, knobs, nknobs));
  PetscCall(PetscMalloc1(GPUKIT_TUNE_MAX_CANDS, &tu->cands));
  PetscCall(GpukitTuneGetMode(&tu->mode));
  tu->threshold = 0.05;
  tu->nsamples  = 3;
  tu->maxcalls  = 32;
  { /* global options, listed once by -help */
    PetscInt mode = (PetscInt)tu->mode;
    char     file[PETSC_MAX_PATH_LEN];

    PetscCall(GpukitTuneCachePath(file, sizeof(file)));
    PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "gpukit run-time tuner (docs/tuning.md)", NULL);
    PetscCall(PetscOptionsEList("-gpukit_tune", "off: starting values; cached: the cache's choice, else a search; on: search again", "GpukitTunerCreate", GpukitTuneModes, 3, GpukitTuneModes[mode], &mode, NULL));
    PetscCall(PetscOptionsString("-gpukit_tune_cache", "The tuning cache file", "GpukitTunerCreate", file, file, sizeof(file), NULL));
    PetscCall(PetscOptionsReal("-gpukit_tune_threshold", "A candidate must be faster by this fraction to replace the incumbent", "GpukitTunerCreate", tu->threshold, &tu->threshold, NULL));
    PetscCall(PetscOptionsInt("-gpukit_tune_samples", "Launches timed per candidate (their median counts)", "GpukitTunerCreate", tu->nsamples, &tu->nsamples, NULL));
    PetscCall(PetscOptionsInt("-gpukit_tune_max_calls", "Timed calls at most per search", "GpukitTunerCreate", tu->maxcalls, &tu->maxcalls, NULL));
    PetscCall(PetscOptionsEList("-gpukit_tune_search", "The search", "GpukitTunerCreate", searches, 2, searches[0], &search, &set));
    PetscOptionsEnd();
  }
  exh = (PetscBool)(search == 1);
  PetscCheck(tu->threshold >= 0 && tu->threshold < 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-gpukit_tune_threshold must be in [0, 1), got %g", (double)tu->threshold);
  PetscCheck(tu->nsamples >= 1 && tu->nsamples <= GPUKIT_TUNE_MAX_SAMPLES, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-gpukit_tune_samples must be in 1..%d, got %" PetscInt_FMT, GPUKIT_TUNE_MAX_SAMPLES, tu->nsamples);
  PetscCheck(tu->maxcalls >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-gpukit_tune_max_calls must be at least 1, got %" PetscInt_FMT, tu->maxcalls);
  tu->exhaustive = exh;
  PetscCall(GpukitTunerReset(tu));
  PetscCall(GpukitTunerMakeKey(tu));
  for (PetscInt i = 0; i < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(GpukitTuneLive); i++)
    if (!GpukitTuneLive[i]) {
      GpukitTuneLive[i] = tu;
      break;
    }
  *t = tu;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerDestroy - Destroys a tuner

  Not Collective

  Input Parameter:
. t - the tuner (may be `NULL`)

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTunerDestroy(GpukitTuner *t)
{
  PetscFunctionBegin;
  if (!*t) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(GpukitTuneLive); i++)
    if (GpukitTuneLive[i] == *t) GpukitTuneLive[i] = NULL;
#if defined(GPUKIT_HAVE_CUDA)
  PetscCall(GpukitCUDATimerDestroy(&(*t)->events));
#endif
  PetscCall(PetscFree((*t)->cands));
  PetscCall(PetscFree(*t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerSetShape - Sets the shape class of the operator the kernel runs on (part of the cache key); a new
  shape starts the search again

  Not Collective

  Input Parameters:
+ t     - the tuner
- shape - e.g. from `GpukitTuneShapeCSR()`, plus what else the kernel's speed depends on (dof, stencil, ...)

  Level: developer

.seealso: `GpukitTunerCreate()`, `GpukitTuneShapeCSR()`
@*/
PetscErrorCode GpukitTunerSetShape(GpukitTuner t, const char shape[])
{
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(t->shape, shape, &same));
  if (same) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(t->shape, shape, sizeof(t->shape)));
  PetscCall(GpukitTunerReset(t));
  PetscCall(GpukitTunerMakeKey(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerSetDevice - Says whether the kernel runs on the device (timed with CUDA events on the stream given to
  `GpukitTunerBegin()`; the device's name is in the cache key) or on the host (the host clock)

  Not Collective

  Input Parameters:
+ t   - the tuner
- flg - `PETSC_TRUE` for a device kernel

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTunerSetDevice(GpukitTuner t, PetscBool flg)
{
  PetscFunctionBegin;
#if !defined(GPUKIT_HAVE_CUDA)
  PetscCheck(!flg, PETSC_COMM_SELF, PETSC_ERR_SUP, "Tuner %s: a device kernel needs gpukit built against a CUDA PETSc", t->kernel);
#endif
  if (t->device == flg) PetscFunctionReturn(PETSC_SUCCESS);
  t->device = flg;
  PetscCall(GpukitTunerReset(t)); /* another clock, another key: start again */
  PetscCall(GpukitTunerMakeKey(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerSetRepeatable - Says whether one call may launch the kernel several times (an out-of-place product: each
  launch gives the same output); then a candidate is timed within one call

  Not Collective

  Input Parameters:
+ t   - the tuner
- flg - `PETSC_TRUE` if repeatable

  Level: developer

.seealso: `GpukitTunerBegin()`
@*/
PetscErrorCode GpukitTunerSetRepeatable(GpukitTuner t, PetscBool flg)
{
  PetscFunctionBegin;
  t->repeatable = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerSetValid - Gives the function that says which combinations of knob values the kernel can run

  Not Collective

  Input Parameters:
+ t     - the tuner
. valid - valid(ctx, values): `PETSC_FALSE` for a combination the kernel cannot run (it is never handed out)
- ctx   - its context

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTunerSetValid(GpukitTuner t, GpukitTuneValidFn valid, void *ctx)
{
  PetscFunctionBegin;
  t->valid    = valid;
  t->validctx = ctx;
  PetscCheck(GpukitTunerIsValid(t, t->start), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Tuner %s: its starting values are not valid", t->kernel);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerBegin - The knob values for this call of the kernel, and how many times to launch it

  Not Collective

  Input Parameters:
+ t      - the tuner
. state  - the operator's state the kernel's speed depends on (a change during a search starts it again)
- stream - the CUDA stream of a device kernel (a `cudaStream_t`), or `NULL`

  Output Parameters:
+ values  - the value of each knob (owned by the tuner, valid until the next call)
- nlaunch - launches to make, each followed by `GpukitTunerMark()`: 1, or more while a repeatable kernel is timed

  Level: developer

.seealso: `GpukitTunerMark()`, `GpukitTunerEnd()`
@*/
PetscErrorCode GpukitTunerBegin(GpukitTuner t, PetscObjectState state, void *stream, const PetscInt **values, PetscInt *nlaunch)
{
  PetscFunctionBegin;
  t->timing = PETSC_FALSE;
  t->nmarks = 0;
  *nlaunch  = 1;
  if (t->state == TUNE_SEARCHING && !t->looked) PetscCall(GpukitTunerLookup(t));
  if (t->state == TUNE_SEARCHING && t->hasstate && state != t->opstate) { /* the samples were of another operator */
    PetscCall(PetscInfo(t->owner, "tuner %s: the operator changed during the search; starting again\n", t->kernel));
    GpukitTunerRestartSearch(t);
  }
  t->opstate  = state;
  t->hasstate = PETSC_TRUE;
  if (t->state == TUNE_SEARCHING && !t->haspending) PetscCall(GpukitTunerStep(t));
  if (t->state == TUNE_SEARCHING) {
    GpukitTuneCand *c = GpukitTunerFind(t, t->pending);
    if (!c) {
      PetscCheck(t->ncands < GPUKIT_TUNE_MAX_CANDS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Tuner %s: more than %d candidates", t->kernel, GPUKIT_TUNE_MAX_CANDS);
      c = &t->cands[t->ncands++];
      PetscCall(PetscArraycpy(c->idx, t->pending, t->nknobs));
      c->ns = 0;
    }
    PetscCall(GpukitTunerValues(t, t->pending, t->vals));
    *nlaunch  = t->repeatable ? t->nsamples - c->ns : 1;
    t->timing = PETSC_TRUE;
    t->stream = stream;
    t->ncalls++;
    GpukitTuneTimedCalls++;
    t->timedbefore = GpukitTuneTimedCalls;
    t->work        = 1.0;
    t->hostclock   = (PetscBool)(!t->device || !stream);
    if (!GpukitTuneTestTimer) {
#if defined(GPUKIT_HAVE_CUDA)
      if (!t->hostclock) PetscCall(GpukitCUDATimerRecord(&t->events, 0, stream));
      else {
        if (t->device) PetscCall(GpukitCUDASynchronize());
        PetscCall(PetscTime(&t->ht[0]));
      }
#else
      PetscCall(PetscTime(&t->ht[0]));
#endif
    }
  } else PetscCall(GpukitTunerValues(t, t->cur, t->vals));
  *values = t->vals;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerMark - Marks the end of one launch of the kernel (after `GpukitTunerBegin()`)

  Not Collective

  Input Parameter:
. t - the tuner

  Level: developer

.seealso: `GpukitTunerBegin()`, `GpukitTunerEnd()`
@*/
PetscErrorCode GpukitTunerMark(GpukitTuner t)
{
  PetscFunctionBegin;
  if (!t->timing) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(t->nmarks < GPUKIT_TUNE_MAX_SAMPLES, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Tuner %s: more than %d launches marked in one call", t->kernel, GPUKIT_TUNE_MAX_SAMPLES);
  t->nmarks++;
  if (GpukitTuneTestTimer) PetscCall((*GpukitTuneTestTimer)(GpukitTuneTestCtx, t->kernel, t->vals, &t->fake[t->nmarks - 1]));
#if defined(GPUKIT_HAVE_CUDA)
  else if (!t->hostclock) PetscCall(GpukitCUDATimerRecord(&t->events, t->nmarks, t->stream));
  else {
    if (t->device) PetscCall(GpukitCUDASynchronize());
    PetscCall(PetscTime(&t->ht[t->nmarks]));
  }
#else
  else PetscCall(PetscTime(&t->ht[t->nmarks]));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerEnd - Ends one call of the kernel: its launch times go to the search

  Not Collective

  Input Parameter:
. t - the tuner

  Level: developer

.seealso: `GpukitTunerBegin()`, `GpukitTunerMark()`
@*/
PetscErrorCode GpukitTunerEnd(GpukitTuner t)
{
  GpukitTuneCand *c;
  PetscReal       ms[GPUKIT_TUNE_MAX_SAMPLES];

  PetscFunctionBegin;
  if (!t->timing) PetscFunctionReturn(PETSC_SUCCESS);
  t->timing = PETSC_FALSE;
  if (!t->nmarks) PetscFunctionReturn(PETSC_SUCCESS); /* nothing launched: nothing learnt */
  if (GpukitTuneTestTimer) PetscCall(PetscArraycpy(ms, t->fake, t->nmarks));
#if defined(GPUKIT_HAVE_CUDA)
  else if (!t->hostclock) PetscCall(GpukitCUDATimerElapsed(t->events, t->nmarks, ms));
#endif
  else
    for (PetscInt i = 0; i < t->nmarks; i++) ms[i] = (PetscReal)(1e3 * (t->ht[i + 1] - t->ht[i]));
  if (GpukitTuneTimedCalls != t->timedbefore) { /* another tuner timed inside this call: not this candidate's time */
    PetscCall(PetscInfo(t->owner, "tuner %s: a call with another tuner's timing inside it is not counted\n", t->kernel));
    t->ncalls--;
    if (++t->discarded >= t->maxcalls) { /* never a clean call: stop with the best measured (the starting values if none) */
      PetscCall(PetscInfo(t->owner, "tuner %s: %" PetscInt_FMT " calls had other tuners' timing inside them: the search ends\n", t->kernel, t->discarded));
      t->ncalls = t->maxcalls;
      PetscCall(GpukitTunerStep(t));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt i = 0; i < t->nmarks; i++) ms[i] /= t->work;
  c = GpukitTunerFind(t, t->pending);
  PetscCheck(c, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Tuner %s: timed a candidate it does not know", t->kernel);
  for (PetscInt i = 0; i < t->nmarks && c->ns < GPUKIT_TUNE_MAX_SAMPLES; i++) {
    c->t[c->ns++] = ms[i];
    t->cost_ms += ms[i];
  }
  if (c->ns >= t->nsamples) PetscCall(GpukitTunerStep(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerGetConfig - The knob values the kernel uses now (the choice once the search is over)

  Not Collective

  Input Parameter:
. t - the tuner

  Output Parameters:
+ values - the value of each knob (owned by the tuner)
- done   - `PETSC_TRUE` when the choice is final (tuned, cached, or tuning off) (or `NULL`)

  Level: developer

.seealso: `GpukitTunerBegin()`
@*/
PetscErrorCode GpukitTunerGetConfig(GpukitTuner t, const PetscInt **values, PetscBool *done)
{
  PetscFunctionBegin;
  if (t->state == TUNE_SEARCHING && !t->looked) PetscCall(GpukitTunerLookup(t));
  PetscCall(GpukitTunerValues(t, t->cur, t->vals));
  *values = t->vals;
  if (done) *done = (PetscBool)(t->state == TUNE_DONE);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerGetLabel - The label of a categorical knob's current value, or `NULL` for an integer knob

  Not Collective

  Input Parameters:
+ t - the tuner
- k - the knob

  Output Parameter:
. label - its label

  Level: developer

.seealso: `GpukitTunerGetConfig()`
@*/
PetscErrorCode GpukitTunerGetLabel(GpukitTuner t, PetscInt k, const char **label)
{
  PetscFunctionBegin;
  PetscCheck(k >= 0 && k < t->nknobs, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Tuner %s has no knob %" PetscInt_FMT, t->kernel, k);
  *label = t->knobs[k].labels ? t->knobs[k].labels[t->cur[k]] : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerView - Prints a tuner's choice and where it came from (one line, for `::ascii_info` views)

  Not Collective

  Input Parameters:
+ t      - the tuner
- viewer - an ASCII viewer

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTunerView(GpukitTuner t, PetscViewer viewer)
{
  char buf[GPUKIT_TUNE_VAL_LEN] = "";

  PetscFunctionBegin;
  for (PetscInt k = 0; k < t->nknobs; k++) {
    size_t n;
    PetscCall(PetscStrlen(buf, &n));
    if (t->knobs[k].labels) PetscCall(PetscSNPrintf(buf + n, sizeof(buf) - n, "%s%s %s", k ? ", " : "", t->knobs[k].name, t->knobs[k].labels[t->cur[k]]));
    else PetscCall(PetscSNPrintf(buf + n, sizeof(buf) - n, "%s%s %" PetscInt_FMT, k ? ", " : "", t->knobs[k].name, t->knobs[k].values[t->cur[k]]));
  }
  if (t->mode == GPUKIT_TUNE_OFF) PetscCall(PetscViewerASCIIPrintf(viewer, "  tuner %s: %s (tuning off: starting values)\n", t->kernel, buf));
  else if (t->state == TUNE_SEARCHING) PetscCall(PetscViewerASCIIPrintf(viewer, "  tuner %s: %s (searching: %" PetscInt_FMT " timed calls so far)\n", t->kernel, buf, t->ncalls));
  else if (t->source == TUNE_FROM_CACHE) PetscCall(PetscViewerASCIIPrintf(viewer, "  tuner %s: %s (from the tuning cache: %.4g ms; starting values %.4g ms)\n", t->kernel, buf, (double)t->best_ms, (double)t->start_ms));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  tuner %s: %s (tuned in %" PetscInt_FMT " timed calls: %.4g ms; starting values %.4g ms)\n", t->kernel, buf, t->ncalls, (double)t->best_ms, (double)t->start_ms));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerGetStats - What a tuner did

  Not Collective

  Input Parameter:
. t - the tuner

  Output Parameters (each may be `NULL`):
+ ncalls    - timed calls of its search
. cost_ms   - the time of every timed launch, in ms
. best_ms   - the median time of the choice (ms; -1 when unknown)
. start_ms  - the median time of the starting values (ms; -1 when unknown)
. done      - the choice is final
- fromcache - the choice came from the cache

  Level: developer

.seealso: `GpukitTuneFind()`, `GpukitTunerView()`
@*/
PetscErrorCode GpukitTunerGetStats(GpukitTuner t, PetscInt *ncalls, PetscReal *cost_ms, PetscReal *best_ms, PetscReal *start_ms, PetscBool *done, PetscBool *fromcache)
{
  PetscFunctionBegin;
  if (ncalls) *ncalls = t->ncalls;
  if (cost_ms) *cost_ms = t->cost_ms;
  if (best_ms) *best_ms = t->best_ms;
  if (start_ms) *start_ms = t->start_ms;
  if (done) *done = (PetscBool)(t->state == TUNE_DONE);
  if (fromcache) *fromcache = (PetscBool)(t->source == TUNE_FROM_CACHE);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTuneFind - The live tuner of one kernel of an object

  Not Collective

  Input Parameters:
+ owner  - the object given to `GpukitTunerCreate()`
- kernel - the kernel's name

  Output Parameter:
. t - the tuner, or `NULL` when there is none

  Level: developer

.seealso: `GpukitTunerCreate()`, `GpukitTunerGetStats()`
@*/
PetscErrorCode GpukitTuneFind(PetscObject owner, const char kernel[], GpukitTuner *t)
{
  PetscFunctionBegin;
  *t = NULL;
  for (PetscInt i = 0; i < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(GpukitTuneLive); i++)
    if (GpukitTuneLive[i] && GpukitTuneLive[i]->owner == owner && !strcmp(GpukitTuneLive[i]->kernel, kernel)) {
      *t = GpukitTuneLive[i];
      break;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerGetCandidate - A candidate the search measured, and its median time

  Not Collective

  Input Parameters:
+ t - the tuner
- i - the candidate's number, from 0 in the order they were measured

  Output Parameters:
+ values - its knob values (untouched past the last candidate)
- ms     - its median time in ms; -1 past the last candidate or while it has too few samples

  Level: developer

.seealso: `GpukitTunerGetStats()`
@*/
PetscErrorCode GpukitTunerGetCandidate(GpukitTuner t, PetscInt i, PetscInt values[], PetscReal *ms)
{
  PetscFunctionBegin;
  *ms = -1;
  if (i < 0 || i >= t->ncands) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitTunerValues(t, t->cands[i].idx, values));
  *ms = GpukitTunerEstimate(t, t->cands[i].idx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerGetKnobs - The knobs a tuner was created with

  Not Collective

  Input Parameter:
. t - the tuner

  Output Parameters:
+ nknobs - their number (or `NULL`)
- knobs  - their declarations (or `NULL`)

  Level: developer

.seealso: `GpukitTunerCreate()`
@*/
PetscErrorCode GpukitTunerGetKnobs(GpukitTuner t, PetscInt *nknobs, const GpukitTuneKnob **knobs)
{
  PetscFunctionBegin;
  if (nknobs) *nknobs = t->nknobs;
  if (knobs) *knobs = t->knobs;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitTunerSetWork - The work the current timed call did (its time is divided by it): e.g. the solver steps of a
  call whose number of steps varies

  Not Collective

  Input Parameters:
+ t    - the tuner
- work - the work, positive (1 unless set)

  Level: developer

.seealso: `GpukitTunerBegin()`, `GpukitTunerEnd()`
@*/
PetscErrorCode GpukitTunerSetWork(GpukitTuner t, PetscReal work)
{
  PetscFunctionBegin;
  PetscCheck(work > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Tuner %s: the work of a call must be positive, got %g", t->kernel, (double)work);
  t->work = work;
  PetscFunctionReturn(PETSC_SUCCESS);
}
