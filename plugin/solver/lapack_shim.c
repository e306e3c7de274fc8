// Fortran BLAS/LAPACK name mangling in one file (see lapack_shim.h).
#include "lapack_shim.h"

#include <stddef.h>

_Static_assert(sizeof(mjtNum) == sizeof(double), "cusp solver needs mjtNum == double");

// Fortran prototypes (gfortran ABI: trailing underscore, hidden string lengths omitted, which is
// safe for single-character arguments with the reference and OpenBLAS libraries).
extern void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
extern void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a,
                    const int* lda, const int* ipiv, double* b, const int* ldb, int* info);
extern void dgecon_(const char* norm, const int* n, const double* a, const int* lda,
                    const double* anorm, double* rcond, double* work, int* iwork, int* info);
extern double dlange_(const char* norm, const int* m, const int* n, const double* a,
                      const int* lda, double* work);
extern void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
extern void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a,
                    const int* lda, double* b, const int* ldb, int* info);
extern void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
                   const int* m, const int* n, const double* alpha, const double* a,
                   const int* lda, double* b, const int* ldb);
extern void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                   const double* alpha, const double* a, const int* lda, const double* beta,
                   double* c, const int* ldc);
extern void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                   const int* k, const double* alpha, const double* a, const int* lda,
                   const double* b, const int* ldb, const double* beta, double* c,
                   const int* ldc);
extern void dgemv_(const char* trans, const int* m, const int* n, const double* alpha,
                   const double* a, const int* lda, const double* x, const int* incx,
                   const double* beta, double* y, const int* incy);
extern void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt,
                    double* tau, double* work, const int* lwork, int* info);

int cusp_dgetrf(mjtNum* a, int* ipiv, int m, int n, int lda) {
  int info = 0;
  dgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}

int cusp_dgetrs(mjtNum* b, char trans, const mjtNum* lu, const int* ipiv, int n, int nrhs,
                int lda, int ldb) {
  int info = 0;
  dgetrs_(&trans, &n, &nrhs, lu, &lda, ipiv, b, &ldb, &info);
  return info;
}

int cusp_dgecon(mjtNum* rcond, const mjtNum* lu, mjtNum anorm, int n, int lda, mjtNum* work,
                int* iwork) {
  int info = 0;
  const char norm = '1';
  dgecon_(&norm, &n, lu, &lda, &anorm, rcond, work, iwork, &info);
  return info;
}

mjtNum cusp_dlange1(const mjtNum* a, int m, int n, int lda) {
  const char norm = '1';
  return dlange_(&norm, &m, &n, a, &lda, 0);
}

int cusp_dpotrf(mjtNum* a, int n, int lda) {
  int info = 0;
  const char uplo = 'L';
  dpotrf_(&uplo, &n, a, &lda, &info);
  return info;
}

int cusp_dpotrs(mjtNum* b, const mjtNum* l, int n, int nrhs, int lda, int ldb) {
  int info = 0;
  const char uplo = 'L';
  dpotrs_(&uplo, &n, &nrhs, l, &lda, b, &ldb, &info);
  return info;
}

void cusp_dtrsm_lower_left(mjtNum* b, char trans, const mjtNum* a, mjtNum alpha, int n, int nrhs,
                           int lda, int ldb) {
  const char side = 'L', uplo = 'L', diag = 'N';
  if (n <= 0 || nrhs <= 0) return;
  dtrsm_(&side, &uplo, &trans, &diag, &n, &nrhs, &alpha, a, &lda, b, &ldb);
}

void cusp_dsyrk_lower_t(mjtNum* c, const mjtNum* a, mjtNum alpha, mjtNum beta, int n, int k,
                        int lda, int ldc) {
  const char uplo = 'L', trans = 'T';
  if (n <= 0) return;
  dsyrk_(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc);
}

void cusp_dgemm(mjtNum* c, char transa, char transb, const mjtNum* a, const mjtNum* b,
                mjtNum alpha, mjtNum beta, int m, int n, int k, int lda, int ldb, int ldc) {
  if (m <= 0 || n <= 0) return;
  if (transa == 'N' && transb == 'N') {
    // column by column (C(:,j) = alpha A B(:,j) + beta C(:,j)): OpenBLAS 0.3.21's AVX-512
    // small-matrix NN kernels malloc a packing buffer on every call, which must not happen in a
    // simulation step (tests/allocation_test.cc); dgemv does not allocate
    const char no = 'N';
    const int one = 1;
    for (int j = 0; j < n; j++) {
      dgemv_(&no, &m, &k, &alpha, a, &lda, b + (size_t)j * ldb, &one, &beta, c + (size_t)j * ldc,
             &one);
    }
    return;
  }
  dgemm_(&transa, &transb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
}

void cusp_dgemv(mjtNum* y, char trans, const mjtNum* a, const mjtNum* x, mjtNum alpha,
                mjtNum beta, int m, int n, int lda) {
  const int one = 1;
  if (m <= 0 || n <= 0) return;
  dgemv_(&trans, &m, &n, &alpha, a, &lda, x, &one, &beta, y, &one);
}

int cusp_dgeqp3(mjtNum* a, int* jpvt, mjtNum* tau, int m, int n, int lda, mjtNum* work,
                int lwork) {
  int info = 0;
  dgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  return info;
}
