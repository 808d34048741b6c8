/* The small matrices of PCGSAI's bad-input and fallback tests, shared by tests/pc/gsai_errors.c (host set-up) and
   tests/gpu/gsai_cuda_errors.c (device set-up against the host): a rule gives the value of entry (i,j) of an n x n
   matrix and whether it is stored. */
#pragma once
#include "gktest.h"

typedef PetscScalar (*Rule)(PetscInt n, PetscInt i, PetscInt j, PetscBool *stored);

/* tridiagonal, diagonally dominant */
static inline PetscScalar Tridiag(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  *s = PetscAbsInt(i - j) <= 1 ? PETSC_TRUE : PETSC_FALSE;
  return i == j ? 4.0 : -1.0;
}

/* tridiagonal with A(3,3) = 0 stored: not SPD */
static inline PetscScalar ZeroDiag3(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  *s = PetscAbsInt(i - j) <= 1 ? PETSC_TRUE : PETSC_FALSE;
  return i == j ? (i == 3 ? 0.0 : 4.0) : -1.0;
}

/* pairs swapped: A(2i, 2i+1) = A(2i+1, 2i) = 1, no diagonal. A^{-1} = A, in the pattern of A */
static inline PetscScalar SwapPairs(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  *s = (j == (i ^ 1)) ? PETSC_TRUE : PETSC_FALSE;
  return 1.0;
}

/* cyclic shift A(i, i+1 mod n) = 1: the inverse A^T is out of reach of any pattern built from A */
static inline PetscScalar Shift(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  *s = (j == (i + 1) % n) ? PETSC_TRUE : PETSC_FALSE;
  return 1.0;
}

/* tridiagonal with row and column 5 empty: structurally singular */
static inline PetscScalar EmptyRowCol5(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  *s = (PetscAbsInt(i - j) <= 1 && i != 5 && j != 5) ? PETSC_TRUE : PETSC_FALSE;
  return i == j ? 4.0 : -1.0;
}

/* tridiagonal except rows 0 and 1 = (1, 1) and (1, 1 + 1e-14): A nonsingular, but the local problems of rows 0
   and 1 (left) are ill-conditioned far past GSAI_RCOND_TOL */
static inline PetscScalar NearlyDependent(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  if (i <= 1) {
    *s = j <= 1 ? PETSC_TRUE : PETSC_FALSE;
    return (i == 1 && j == 1) ? 1.0 + 1e-14 : 1.0;
  }
  *s = PetscAbsInt(i - j) <= 1 ? PETSC_TRUE : PETSC_FALSE;
  return i == j ? 4.0 : -1.0;
}

/* SPD with A(0:2,0:2) = [1 1; 1 1+1e-14] block: the FSAI system of row 1 is ill-conditioned */
static inline PetscScalar NearlySingularSPD(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  if (i <= 1 && j <= 1) {
    *s = PETSC_TRUE;
    return (i == 1 && j == 1) ? 1.0 + 1e-14 : 1.0;
  }
  *s = (i == j) ? PETSC_TRUE : PETSC_FALSE;
  return 2.0;
}

/* tridiagonal with column 5 empty (row 5 is not): structurally singular, though every row has a nonzero */
static inline PetscScalar EmptyCol5(PetscInt n, PetscInt i, PetscInt j, PetscBool *s)
{
  (void)n;
  *s = (PetscAbsInt(i - j) <= 1 && j != 5) ? PETSC_TRUE : PETSC_FALSE;
  return i == j ? 4.0 : -1.0;
}
