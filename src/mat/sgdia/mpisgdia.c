/*
   MATMPISGDIA: the communication that only more than one rank needs. Entries set on another rank's rows
   wait in a stash until assembly; rows zeroed by any rank reach their owners. Both use one all-to-all
   exchange of (index, value) records.
*/
#include "sgdiaimpl.h"

/* the rank owning global row idx */
static PetscMPIInt SGDIARowOwner(const PetscInt *range, PetscMPIInt size, PetscInt idx)
{
  PetscMPIInt lo = 0, hi = size - 1;
  while (lo < hi) {
    PetscMPIInt mid = (lo + hi + 1) / 2;
    if (range[mid] <= idx) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Send n records, each ni PetscInt (the first being a global row) and ns PetscScalar, to the owners of
   their rows; receive the records for this rank's rows. */
static PetscErrorCode SGDIAExchange(Mat A, PetscInt n, PetscInt ni, const PetscInt ints[], PetscInt ns, const PetscScalar scal[], PetscInt *nr, PetscInt **rints, PetscScalar **rscal)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt  size, *scnt, *rcnt, *sdsp, *rdsp, *pos, *dest;
  PetscInt     total = 0, *sbi;
  PetscScalar *sbs = NULL;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscCalloc5(size, &scnt, size, &rcnt, size + 1, &sdsp, size + 1, &rdsp, size, &pos));
  PetscCall(PetscMalloc1(n, &dest));
  for (PetscInt i = 0; i < n; i++) {
    dest[i] = SGDIARowOwner(A->rmap->range, size, ints[i * ni]);
    scnt[dest[i]]++;
  }
  PetscCallMPI(MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm));
  for (PetscMPIInt r = 0; r < size; r++) {
    sdsp[r + 1] = sdsp[r] + scnt[r];
    rdsp[r + 1] = rdsp[r] + rcnt[r];
    pos[r]      = sdsp[r];
  }
  total = rdsp[size];
  PetscCall(PetscMalloc1(n * ni, &sbi));
  if (ns) PetscCall(PetscMalloc1(n * ns, &sbs));
  for (PetscInt i = 0; i < n; i++) {
    PetscMPIInt q = pos[dest[i]]++;
    for (PetscInt j = 0; j < ni; j++) sbi[q * ni + j] = ints[i * ni + j];
    for (PetscInt j = 0; j < ns; j++) sbs[q * ns + j] = scal[i * ns + j];
  }
  PetscCall(PetscMalloc1(total * ni, rints));
  if (rscal) PetscCall(PetscMalloc1(total * ns, rscal));
  { /* the same exchange for the integers and the scalars, counts scaled by the record length */
    PetscMPIInt *c2, *d2, *c3, *d3;
    PetscCall(PetscMalloc4(size, &c2, size, &d2, size, &c3, size, &d3));
    for (PetscMPIInt r = 0; r < size; r++) {
      c2[r] = (PetscMPIInt)(scnt[r] * ni);
      d2[r] = (PetscMPIInt)(sdsp[r] * ni);
      c3[r] = (PetscMPIInt)(rcnt[r] * ni);
      d3[r] = (PetscMPIInt)(rdsp[r] * ni);
    }
    PetscCallMPI(MPI_Alltoallv(sbi, c2, d2, MPIU_INT, *rints, c3, d3, MPIU_INT, comm));
    if (ns) {
      for (PetscMPIInt r = 0; r < size; r++) {
        c2[r] = (PetscMPIInt)(scnt[r] * ns);
        d2[r] = (PetscMPIInt)(sdsp[r] * ns);
        c3[r] = (PetscMPIInt)(rcnt[r] * ns);
        d3[r] = (PetscMPIInt)(rdsp[r] * ns);
      }
      PetscCallMPI(MPI_Alltoallv(sbs, c2, d2, MPIU_SCALAR, *rscal, c3, d3, MPIU_SCALAR, comm));
    }
    PetscCall(PetscFree4(c2, d2, c3, d3));
  }
  *nr = total;
  PetscCall(PetscFree(sbi));
  PetscCall(PetscFree(sbs));
  PetscCall(PetscFree(dest));
  PetscCall(PetscFree5(scnt, rcnt, sdsp, rdsp, pos));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Assembly: stashed entries go to the owners of their rows, which insert or add them (A->insertmode). */
PetscErrorCode SGDIAStashExchange_Private(Mat A)
{
  Mat_SGDIA   *sg = (Mat_SGDIA *)A->data;
  PetscInt     nr, *ri;
  PetscScalar *rv;
  InsertMode   mode = A->insertmode, gmode;

  PetscFunctionBegin;
  /* ranks that set nothing have NOT_SET_VALUES; the others agree (MatSetValues() checks that) */
  PetscCall(MPIU_Allreduce((int *)&mode, (int *)&gmode, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscCall(SGDIAExchange(A, sg->stash.n, 2, sg->stash.ij, 1, sg->stash.v, &nr, &ri, &rv));
  sg->stash.n = 0;
  for (PetscInt i = 0; i < nr; i++) PetscCall(MatSetValues_SGDIA(A, 1, &ri[2 * i], 1, &ri[2 * i + 1], &rv[i], gmode == ADD_VALUES ? ADD_VALUES : INSERT_VALUES));
  PetscCall(PetscFree(ri));
  PetscCall(PetscFree(rv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Global rows given on any rank -> the sorted, unique local rows (0-based) this rank owns */
PetscErrorCode SGDIASendToOwners_Private(Mat A, PetscInt n, const PetscInt rows[], PetscInt *nl, PetscInt **lrows)
{
  PetscMPIInt size;
  PetscInt    nr, *ri;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) PetscCheck(rows[i] >= 0 && rows[i] < A->rmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " is outside the matrix (0..%" PetscInt_FMT ")", rows[i], A->rmap->N - 1);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size == 1) {
    nr = n;
    PetscCall(PetscMalloc1(n, &ri));
    PetscCall(PetscArraycpy(ri, rows, n));
  } else PetscCall(SGDIAExchange(A, n, 1, rows, 0, NULL, &nr, &ri, NULL));
  for (PetscInt i = 0; i < nr; i++) ri[i] -= A->rmap->rstart;
  PetscCall(PetscSortRemoveDupsInt(&nr, ri));
  *nl    = nr;
  *lrows = ri;
  PetscFunctionReturn(PETSC_SUCCESS);
}
