static const char help[] = "Heat conduction through contacts in a granular gas: grains move in a box, and every pair of grains\n"
                           "closer than a contact distance exchanges heat. Each time step finds the contacts, ADDS the new\n"
                           "couplings (and the changes of the old ones) with MatSetValues into the already assembled matrix,\n"
                           "assembles, and solves the implicit heat step with KSP. The sparsity grows at every step.\n"
                           "Options: -dim 2|3 (default 2) -n grains (default 20000) -steps (default 10) -dt (default 10)\n"
                           "         -phi packing fraction (default 1.5, sets the contact distance) -speed (default 0.2, in\n"
                           "         contact distances per step) -seed (default 1) and every PETSc option: -mat_type aij|dcsr|\n"
                           "         dcsrcuda|aijcusparse|..., -vec_type cuda, -ksp_type, -pc_type, -log_view.\n";

/*
   The problem. N grains (points) move with constant random velocities in the unit square (cube) and bounce off its
   walls, so their positions at step s are known in closed form. Two grains i, j are in contact while their distance
   r_ij is below the contact distance d, and then conduct heat with conductance k_ij = 1 - r_ij / d (touching lightly
   conducts little). With heat capacity 1 per grain and backward Euler, the temperatures T solve at every step

       (I / dt + L) T^{s+1} = T^s / dt,      L = sum over contacts of k_ij (e_i - e_j)(e_i - e_j)^T,

   a symmetric positive definite system (CG with Jacobi by default). The initial temperature is 1 on the left half of
   the box and 0 on the right; total heat sum(T) is conserved (L has zero row sums), which the output shows.

   The matrix. Step 0 preallocates exactly for the first contacts and assembles. Every later step adds, for every
   contact that is new, changed or broken, the change of k_ij into the four entries (i,i), (j,j), (i,j), (j,i) with
   MatSetValues(ADD_VALUES) into the assembled matrix, then MatAssemblyBegin/End. New contacts are new nonzeros; a
   broken contact leaves its entries in the pattern with the value (numerically) zero, as a contact code does that
   does not rebuild its matrix. With AIJ this needs MatSetOption(MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE) and
   costs a reallocation per overflowing row (and on the GPU a full re-upload); gpukit's MATDCSR inserts in place.

   Parallel layout. Grain i's row belongs to the rank that owns i (PETSc's default split of N). The rank that owns
   min(i, j) inserts all four entries of the pair, so rows of other ranks go through PETSc's stash and couplings cross
   ranks both ways. For simplicity every rank computes all positions (they are closed-form) and finds the contacts of
   its own grains with a cell list over all grains; a production code would exchange ghost grains instead.

   Output per step: contacts, new and broken ones, the matrix's nonzeros (MatGetInfo), KSP iterations, the 2-norm of
   T and the total heat. Timings (PetscTime, and the log events ContactFind, ContactInsert, ContactSolve for
   -log_view) are printed at the end, insertion + assembly apart from the solve.
*/
#include <petscksp.h>
#include <petsctime.h>
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

typedef struct {
  PetscInt  i, j; /* i < j */
  PetscReal k;    /* conductance */
} Contact;

typedef struct {
  PetscInt    dim, N, steps;
  PetscReal   dt, phi, speed, d; /* d: contact distance */
  PetscInt    seed;
  PetscReal  *x0, *v;            /* initial positions and velocities, N*dim */
  PetscReal  *x;                 /* positions at the current step */
  PetscInt    nc;                /* cells per direction (cell size >= d) */
  PetscInt   *cellstart, *cellitem;
  PetscInt    rstart, rend;      /* grains (rows) of this rank */
} Ctx;

/* a reproducible uniform number in [0,1) from (seed, index, stream): splitmix64, the same on every rank */
static PetscReal Uniform(PetscInt seed, PetscInt idx, PetscInt stream)
{
  unsigned long long z = (unsigned long long)seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)idx * 0xBF58476D1CE4E5B9ULL + (unsigned long long)stream * 0x94D049BB133111EBULL + 0x2545F4914F6CDD1DULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return (PetscReal)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* x0 + v t folded into [0,1] (bouncing off the walls) */
static PetscReal Bounce(PetscReal s)
{
  PetscReal y = PetscFmodReal(s, 2.0);
  if (y < 0) y += 2.0;
  return y <= 1.0 ? y : 2.0 - y;
}

static PetscErrorCode CtxSetUp(Ctx *c)
{
  PetscReal vol;

  PetscFunctionBeginUser;
  c->dim   = 2;
  c->N     = 20000;
  c->steps = 10;
  c->dt    = 10.0;
  c->phi   = 1.5;
  c->speed = 0.2;
  c->seed  = 1;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Contact example options", NULL);
  PetscCall(PetscOptionsInt("-dim", "Spatial dimension, 2 or 3", NULL, c->dim, &c->dim, NULL));
  PetscCall(PetscOptionsInt("-n", "Number of grains", NULL, c->N, &c->N, NULL));
  PetscCall(PetscOptionsInt("-steps", "Number of time steps", NULL, c->steps, &c->steps, NULL));
  PetscCall(PetscOptionsReal("-dt", "Time step (heat capacity 1 per grain)", NULL, c->dt, &c->dt, NULL));
  PetscCall(PetscOptionsReal("-phi", "Packing fraction: N times the volume of a ball of diameter d, over the box", NULL, c->phi, &c->phi, NULL));
  PetscCall(PetscOptionsReal("-speed", "Largest grain speed, in contact distances per step", NULL, c->speed, &c->speed, NULL));
  PetscCall(PetscOptionsInt("-seed", "Seed of the initial positions and velocities", NULL, c->seed, &c->seed, NULL));
  PetscOptionsEnd();
  PetscCheck(c->dim == 2 || c->dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3, got %" PetscInt_FMT, c->dim);
  PetscCheck(c->N >= 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 2, got %" PetscInt_FMT, c->N);
  PetscCheck(c->steps >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-steps must be >= 0, got %" PetscInt_FMT, c->steps);
  PetscCheck(c->dt > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dt must be positive, got %g", (double)c->dt);
  PetscCheck(c->phi > 0 && c->phi <= 4, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-phi must be in (0, 4], got %g", (double)c->phi);
  PetscCheck(c->speed >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-speed must be >= 0, got %g", (double)c->speed);
  /* d from the packing fraction of balls of diameter d: N * vol(d/2) = phi */
  vol  = c->dim == 2 ? PETSC_PI / 4.0 : PETSC_PI / 6.0;
  c->d = PetscPowReal(c->phi / (c->N * vol), 1.0 / c->dim);
  PetscCheck(c->d < 0.5, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "contact distance %g too large for the box: use more grains (-n) or a smaller -phi", (double)c->d);
  c->nc = (PetscInt)PetscFloorReal(1.0 / c->d);
  if (c->nc < 1) c->nc = 1;
  PetscCall(PetscMalloc3(c->N * c->dim, &c->x0, c->N * c->dim, &c->v, c->N * c->dim, &c->x));
  for (PetscInt i = 0; i < c->N; i++)
    for (PetscInt a = 0; a < c->dim; a++) {
      c->x0[i * c->dim + a] = Uniform(c->seed, i, a);
      c->v[i * c->dim + a]  = (2.0 * Uniform(c->seed, i, 3 + a) - 1.0) * c->speed * c->d / PetscSqrtReal((PetscReal)c->dim);
    }
  PetscCall(PetscMalloc2(PetscPowInt(c->nc, c->dim) + 1, &c->cellstart, c->N, &c->cellitem));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CtxDestroy(Ctx *c)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree3(c->x0, c->v, c->x));
  PetscCall(PetscFree2(c->cellstart, c->cellitem));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscInt CellOf(const Ctx *c, const PetscReal *p, PetscInt *ijk)
{
  PetscInt cell = 0;
  for (PetscInt a = c->dim - 1; a >= 0; a--) {
    PetscInt q = (PetscInt)(p[a] * c->nc);
    if (q >= c->nc) q = c->nc - 1;
    if (q < 0) q = 0;
    ijk[a] = q;
    cell   = cell * c->nc + q;
  }
  return cell;
}

static int CompareContact(const void *a, const void *b)
{
  const Contact *p = (const Contact *)a, *q = (const Contact *)b;
  if (p->i != q->i) return p->i < q->i ? -1 : 1;
  if (p->j != q->j) return p->j < q->j ? -1 : 1;
  return 0;
}

/* positions at step s; the contacts (i < j) with i owned by this rank (sorted); with dnz/onz, per owned row the
   contacts in the diagonal / off-diagonal block (both directions), for the preallocation */
static PetscErrorCode FindContacts(Ctx *c, PetscInt s, PetscInt *ncon, Contact **con, PetscInt *dnz, PetscInt *onz)
{
  PetscInt ncells = PetscPowInt(c->nc, c->dim), ijk[3], n = 0, cap = 16;
  Contact *list;

  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < c->N * c->dim; i++) c->x[i] = Bounce(c->x0[i] + c->v[i] * (PetscReal)s);
  /* cell list over all grains (counting sort) */
  PetscCall(PetscArrayzero(c->cellstart, ncells + 1));
  for (PetscInt i = 0; i < c->N; i++) c->cellstart[CellOf(c, &c->x[i * c->dim], ijk) + 1]++;
  for (PetscInt q = 0; q < ncells; q++) c->cellstart[q + 1] += c->cellstart[q];
  {
    PetscInt *fill;
    PetscCall(PetscMalloc1(ncells, &fill));
    PetscCall(PetscArraycpy(fill, c->cellstart, ncells));
    for (PetscInt i = 0; i < c->N; i++) c->cellitem[fill[CellOf(c, &c->x[i * c->dim], ijk)]++] = i;
    PetscCall(PetscFree(fill));
  }
  PetscCall(PetscMalloc1(cap, &list));
  for (PetscInt i = c->rstart; i < c->rend; i++) {
    const PetscReal *xi = &c->x[i * c->dim];
    PetscInt         lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, q[3];
    CellOf(c, xi, ijk);
    for (PetscInt a = 0; a < c->dim; a++) {
      lo[a] = PetscMax(ijk[a] - 1, 0);
      hi[a] = PetscMin(ijk[a] + 1, c->nc - 1);
    }
    for (q[2] = lo[2]; q[2] <= hi[2]; q[2]++)
      for (q[1] = lo[1]; q[1] <= hi[1]; q[1]++)
        for (q[0] = lo[0]; q[0] <= hi[0]; q[0]++) {
          PetscInt cell = 0;
          for (PetscInt a = c->dim - 1; a >= 0; a--) cell = cell * c->nc + q[a];
          for (PetscInt t = c->cellstart[cell]; t < c->cellstart[cell + 1]; t++) {
            PetscInt  j = c->cellitem[t];
            PetscReal r2 = 0, r;
            if (j == i) continue;
            for (PetscInt a = 0; a < c->dim; a++) r2 += (xi[a] - c->x[j * c->dim + a]) * (xi[a] - c->x[j * c->dim + a]);
            if (r2 >= c->d * c->d) continue;
            if (dnz) {
              if (j >= c->rstart && j < c->rend) dnz[i - c->rstart]++;
              else onz[i - c->rstart]++;
            }
            if (j < i) continue; /* the owner of min(i, j) records the pair */
            if (n == cap) {
              Contact *bigger;
              PetscCall(PetscMalloc1(2 * cap, &bigger));
              PetscCall(PetscArraycpy(bigger, list, n));
              PetscCall(PetscFree(list));
              list = bigger;
              cap *= 2;
            }
            r         = PetscSqrtReal(r2);
            list[n].i = i;
            list[n].j = j;
            list[n].k = 1.0 - r / c->d;
            n++;
          }
        }
  }
  qsort(list, (size_t)n, sizeof(Contact), CompareContact);
  *ncon = n;
  *con  = list;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add dk times (e_i - e_j)(e_i - e_j)^T */
static PetscErrorCode AddCoupling(Mat A, PetscInt i, PetscInt j, PetscReal dk)
{
  PetscInt    cols[2];
  PetscScalar vals[2] = {dk, -dk};

  PetscFunctionBeginUser;
  cols[0] = i;
  cols[1] = j;
  PetscCall(MatSetValues(A, 1, &i, 2, cols, vals, ADD_VALUES));
  cols[0] = j;
  cols[1] = i;
  PetscCall(MatSetValues(A, 1, &j, 2, cols, vals, ADD_VALUES));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Ctx            c;
  Mat            A;
  Vec            T, b;
  KSP            ksp;
  PetscInt      *dnz, *onz, nold = 0, nnew;
  Contact       *old = NULL, *cur;
  PetscLogEvent  evfind, evinsert, evsolve;
  PetscClassId   classid;
  PetscLogDouble t0, t1, tfind = 0, tins = 0, tsolve = 0, tins0 = 0;
  MatType        mtype;
  PetscMPIInt    size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(CtxSetUp(&c));
  PetscCall(PetscClassIdRegister("Contact example", &classid));
  PetscCall(PetscLogEventRegister("ContactFind", classid, &evfind));
  PetscCall(PetscLogEventRegister("ContactInsert", classid, &evinsert));
  PetscCall(PetscLogEventRegister("ContactSolve", classid, &evsolve));

  /* the matrix: MatSetFromOptions, so -mat_type picks the type; exact preallocation for the contacts of step 0 */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  {
    PetscInt nloc = PETSC_DECIDE, N = c.N;
    PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &nloc, &N)); /* PETSc's default split: grain i on the rank owning row i */
    PetscCallMPI(MPI_Scan(&nloc, &c.rend, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    c.rstart = c.rend - nloc;
    PetscCall(MatSetSizes(A, nloc, nloc, c.N, c.N));
  }
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscCalloc2(c.rend - c.rstart, &dnz, c.rend - c.rstart, &onz));
  PetscCall(PetscLogEventBegin(evfind, 0, 0, 0, 0));
  PetscCall(FindContacts(&c, 0, &nnew, &cur, dnz, onz));
  PetscCall(PetscLogEventEnd(evfind, 0, 0, 0, 0));
  for (PetscInt r = 0; r < c.rend - c.rstart; r++) dnz[r]++; /* the diagonal */
  PetscCall(MatXAIJSetPreallocation(A, 1, dnz, onz, NULL, NULL));
  PetscCall(PetscFree2(dnz, onz));
  /* AIJ refuses new nonzeros after an exact preallocation unless told otherwise (gpukit's MATDCSR never does) */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetType(A, &mtype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "contact: %" PetscInt_FMT " grains in %" PetscInt_FMT "-D, contact distance %.4g, dt %g, %" PetscInt_FMT " steps, %d ranks, matrix type %s\n", c.N, c.dim, (double)c.d, (double)c.dt, c.steps, (int)size, mtype));

  PetscCall(MatCreateVecs(A, &T, &b));
  {
    PetscScalar *t;
    PetscCall(VecGetArray(T, &t));
    for (PetscInt i = c.rstart; i < c.rend; i++) t[i - c.rstart] = c.x0[i * c.dim] < 0.5 ? 1.0 : 0.0;
    PetscCall(VecRestoreArray(T, &t));
  }
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  {
    PC pc;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI)); /* the same preconditioner on any number of ranks; -pc_type overrides */
  }
  PetscCall(KSPSetFromOptions(ksp));

  for (PetscInt s = 0; s <= c.steps; s++) {
    PetscInt  its, nadded = 0, nbroken = 0, ncon, counts[3];
    PetscReal tnorm;
    PetscScalar heat;
    MatInfo   info;

    if (s > 0) { /* step 0 found its contacts above, for the preallocation */
      PetscCall(PetscTime(&t0));
      PetscCall(PetscLogEventBegin(evfind, 0, 0, 0, 0));
      PetscCall(FindContacts(&c, s, &nnew, &cur, NULL, NULL));
      PetscCall(PetscLogEventEnd(evfind, 0, 0, 0, 0));
      PetscCall(PetscTime(&t1));
      tfind += t1 - t0;
    }
    /* insertion: merge the old and the new contact lists (both sorted) and add the change of every coupling */
    PetscCall(PetscTime(&t0));
    PetscCall(PetscLogEventBegin(evinsert, 0, 0, 0, 0));
    if (s == 0)
      for (PetscInt i = c.rstart; i < c.rend; i++) PetscCall(MatSetValue(A, i, i, 1.0 / c.dt, ADD_VALUES));
    {
      PetscInt p = 0, q = 0;
      while (p < nold || q < nnew) {
        int cmp = p == nold ? 1 : q == nnew ? -1 : CompareContact(&old[p], &cur[q]);
        if (cmp < 0) { /* broken: take its conductance out; its entries stay in the pattern */
          PetscCall(AddCoupling(A, old[p].i, old[p].j, -old[p].k));
          nbroken++;
          p++;
        } else if (cmp > 0) { /* new: new nonzeros */
          PetscCall(AddCoupling(A, cur[q].i, cur[q].j, cur[q].k));
          nadded++;
          q++;
        } else { /* persisting: its conductance changed */
          PetscCall(AddCoupling(A, cur[q].i, cur[q].j, cur[q].k - old[p].k));
          p++;
          q++;
        }
      }
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(PetscLogEventEnd(evinsert, 0, 0, 0, 0));
    PetscCall(PetscTime(&t1));
    if (s == 0) tins0 = t1 - t0;
    else tins += t1 - t0;
    PetscCall(PetscFree(old));
    old  = cur;
    nold = nnew;

    /* solve (I/dt + L) T_new = T / dt */
    PetscCall(PetscTime(&t0));
    PetscCall(PetscLogEventBegin(evsolve, 0, 0, 0, 0));
    PetscCall(VecCopy(T, b));
    PetscCall(VecScale(b, 1.0 / c.dt));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSolve(ksp, b, T));
    PetscCall(PetscLogEventEnd(evsolve, 0, 0, 0, 0));
    PetscCall(PetscTime(&t1));
    tsolve += t1 - t0;
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(VecNorm(T, NORM_2, &tnorm));
    PetscCall(VecSum(T, &heat));
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
    counts[0] = nnew;
    counts[1] = nadded;
    counts[2] = nbroken;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    ncon = counts[0];
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "step %3" PetscInt_FMT ": contacts %" PetscInt_FMT " (+%" PetscInt_FMT " new, -%" PetscInt_FMT " broken), nonzeros %.0f, iterations %" PetscInt_FMT ", norm of T %.10e, total heat %.10e\n", s, ncon, counts[1], counts[2], (double)info.nz_used, its, (double)tnorm, (double)PetscRealPart(heat)));
    {
      KSPConvergedReason reason;
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "the solve of step %" PetscInt_FMT " did not converge (reason %s)", s, KSPConvergedReasons[reason]);
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "timing (s): first assembly %.4f; over %" PetscInt_FMT " later steps: contact search %.4f, insertion + assembly %.4f (%.3g per step), solve %.4f (%.3g per step)\n", (double)tins0, c.steps, (double)tfind, (double)tins, (double)(c.steps ? tins / c.steps : 0), (double)tsolve, (double)(tsolve / (c.steps + 1))));

  PetscCall(PetscFree(old));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&T));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(CtxDestroy(&c));
  PetscCall(PetscFinalize());
  return 0;
}
