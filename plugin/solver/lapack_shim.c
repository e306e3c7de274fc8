// Fortran BLAS/LAPACK name mangling in one file (see lapack_shim.h).
#define _GNU_SOURCE  // RTLD_DEFAULT
#include "solver/lapack_shim.h"

#include <math.h>

#include <dlfcn.h>
#include <stddef.h>

_Static_assert(sizeof(mjtNum) == sizeof(double), "cusp solver needs mjtNum == double");

// Fortran prototypes (gfortran ABI: trailing underscore, hidden string lengths omitted, which is
// safe for single-character arguments with the reference and OpenBLAS libraries).
extern void dgecon_(const char* norm, const int* n, const double* a, const int* lda,
                    const double* anorm, double* rcond, double* work, int* iwork, int* info);
extern double dlange_(const char* norm, const int* m, const int* n, const double* a,
                      const int* lda, double* work);
extern void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
                   const int* m, const int* n, const double* alpha, const double* a,
                   const int* lda, double* b, const int* ldb);
extern void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                   const double* alpha, const double* a, const int* lda, const double* beta,
                   double* c, const int* ldc);
extern void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda,
                    double* b, const int* ldb, int* jpvt, const double* rcond, int* rank,
                    double* work, const int* lwork, int* info);
extern void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt,
                    double* tau, double* work, const int* lwork, int* info);

// LU with partial pivoting and its solves are plain loops too, in LAPACK's format (unit lower L
// and U in a, 1-based row interchanges in ipiv), so that dgecon reads the factor; the pivot is the
// first largest |a_ij| in the column, as LAPACK's idamax. info = j + 1 for the first exactly zero
// pivot (the factorization is completed, as LAPACK).
int cusp_dgetrf(mjtNum* a, int* ipiv, int m, int n, int lda) {
  int info = 0, k = m < n ? m : n;
  for (int j = 0; j < k; j++) {
    mjtNum* aj = a + (size_t)j * lda;
    int p = j;
    mjtNum big = fabs(aj[j]);
    for (int i = j + 1; i < m; i++) {
      if (fabs(aj[i]) > big) {
        big = fabs(aj[i]);
        p = i;
      }
    }
    ipiv[j] = p + 1;
    if (aj[p] == 0) {
      if (!info) info = j + 1;
      continue;
    }
    if (p != j) {
      for (int c = 0; c < n; c++) {
        mjtNum* col = a + (size_t)c * lda;
        mjtNum t = col[j];
        col[j] = col[p];
        col[p] = t;
      }
    }
    mjtNum inv = 1 / aj[j];
    for (int i = j + 1; i < m; i++) aj[i] *= inv;
    for (int c = j + 1; c < n; c++) {
      mjtNum* col = a + (size_t)c * lda;
      mjtNum f = col[j];
      if (f == 0) continue;
      for (int i = j + 1; i < m; i++) col[i] -= aj[i] * f;
    }
  }
  return info;
}

int cusp_dgetrs(mjtNum* b, char trans, const mjtNum* lu, const int* ipiv, int n, int nrhs,
                int lda, int ldb) {
  int t = trans == 'T' || trans == 't';
  for (int c = 0; c < nrhs; c++) {
    mjtNum* x = b + (size_t)c * ldb;
    if (!t) {
      // P A = L U: x := P b, L y = x, U x = y
      for (int i = 0; i < n; i++) {
        int p = ipiv[i] - 1;
        if (p != i) {
          mjtNum tmp = x[i];
          x[i] = x[p];
          x[p] = tmp;
        }
      }
      for (int j = 0; j < n; j++) {
        const mjtNum* lj = lu + (size_t)j * lda;
        mjtNum xj = x[j];
        if (xj != 0) {
          for (int i = j + 1; i < n; i++) x[i] -= lj[i] * xj;
        }
      }
      for (int j = n - 1; j >= 0; j--) {
        const mjtNum* uj = lu + (size_t)j * lda;
        x[j] /= uj[j];
        mjtNum xj = x[j];
        if (xj != 0) {
          for (int i = 0; i < j; i++) x[i] -= uj[i] * xj;
        }
      }
    } else {
      // A^T x = b: U^T y = b, L^T z = y, x = P^T z
      for (int j = 0; j < n; j++) {
        const mjtNum* uj = lu + (size_t)j * lda;
        mjtNum s = x[j];
        for (int i = 0; i < j; i++) s -= uj[i] * x[i];
        x[j] = s / uj[j];
      }
      for (int j = n - 1; j >= 0; j--) {
        const mjtNum* lj = lu + (size_t)j * lda;
        mjtNum s = x[j];
        for (int i = j + 1; i < n; i++) s -= lj[i] * x[i];
        x[j] = s;
      }
      for (int i = n - 1; i >= 0; i--) {
        int p = ipiv[i] - 1;
        if (p != i) {
          mjtNum tmp = x[i];
          x[i] = x[p];
          x[p] = tmp;
        }
      }
    }
  }
  return 0;
}

// Band LU as LAPACK's dgbtf2 (unblocked): column j's pivot among rows j .. j + kl, the row
// interchange applied to the columns up to the last one it reaches (ju), then the rank-1 update.
int cusp_dgbtrf(mjtNum* ab, int* ipiv, int n, int kl, int ku, int ldab) {
  const int kv = kl + ku;
  int info = 0, ju = 0;
  for (int j = 0; j < n; j++) {
    mjtNum* col = ab + (size_t)j * ldab;
    for (int r = 0; r < kl; r++) col[r] = 0;
  }
  for (int j = 0; j < n; j++) {
    mjtNum* aj = ab + (size_t)j * ldab + kv;  // aj[r] = A(j + r, j)
    int km = kl < n - 1 - j ? kl : n - 1 - j;
    int jp = 0;
    mjtNum big = fabs(aj[0]);
    for (int r = 1; r <= km; r++) {
      if (fabs(aj[r]) > big) {
        big = fabs(aj[r]);
        jp = r;
      }
    }
    ipiv[j] = j + jp + 1;
    if (aj[jp] == 0) {
      if (!info) info = j + 1;
      continue;
    }
    int last = j + ku + jp < n - 1 ? j + ku + jp : n - 1;
    if (last > ju) ju = last;
    if (jp != 0) {
      for (int c = j; c <= ju; c++) {
        mjtNum* cc = ab + (size_t)c * ldab + kv - c;  // cc[i] = A(i, c)
        mjtNum t = cc[j];
        cc[j] = cc[j + jp];
        cc[j + jp] = t;
      }
    }
    mjtNum inv = 1 / aj[0];
    for (int r = 1; r <= km; r++) aj[r] *= inv;
    for (int c = j + 1; c <= ju; c++) {
      mjtNum* cc = ab + (size_t)c * ldab + kv - c;
      mjtNum f = cc[j];
      if (f == 0) continue;
      for (int r = 1; r <= km; r++) cc[j + r] -= aj[r] * f;
    }
  }
  return info;
}

void cusp_dgbtrs(mjtNum* b, const mjtNum* ab, const int* ipiv, int n, int kl, int ku, int ldab) {
  const int kv = kl + ku;
  for (int j = 0; j < n; j++) {  // L y = P b
    int p = ipiv[j] - 1;
    if (p != j) {
      mjtNum t = b[j];
      b[j] = b[p];
      b[p] = t;
    }
    const mjtNum* lj = ab + (size_t)j * ldab + kv;
    int km = kl < n - 1 - j ? kl : n - 1 - j;
    mjtNum bj = b[j];
    if (bj != 0) {
      for (int r = 1; r <= km; r++) b[j + r] -= lj[r] * bj;
    }
  }
  for (int j = n - 1; j >= 0; j--) {  // U x = y, U with kl + ku superdiagonals
    const mjtNum* uj = ab + (size_t)j * ldab + kv - j;  // uj[i] = U(i, j)
    b[j] /= uj[j];
    mjtNum bj = b[j];
    if (bj == 0) continue;
    for (int i = j - kv > 0 ? j - kv : 0; i < j; i++) b[i] -= uj[i] * bj;
  }
}

int cusp_dpbtrf(mjtNum* ab, int n, int kd, int ldab) {
  // column by column (left-looking), as cusp_dpotrf restricted to the band
  for (int j = 0; j < n; j++) {
    mjtNum* aj = ab + (size_t)j * ldab - j;  // aj[i] = L(i, j)
    int k0 = j - kd > 0 ? j - kd : 0;
    mjtNum djj = aj[j];
    for (int k = k0; k < j; k++) {
      mjtNum l = ab[(size_t)k * ldab + j - k];
      djj -= l * l;
    }
    if (!(djj > 0)) return j + 1;
    djj = sqrt(djj);
    aj[j] = djj;
    int i1 = j + kd < n - 1 ? j + kd : n - 1;
    for (int i = j + 1; i <= i1; i++) {
      mjtNum s = aj[i];
      for (int k = i - kd > k0 ? i - kd : k0; k < j; k++) {
        s -= ab[(size_t)k * ldab + i - k] * ab[(size_t)k * ldab + j - k];
      }
      aj[i] = s / djj;
    }
  }
  return 0;
}

void cusp_dpbtrs(mjtNum* b, const mjtNum* ab, int n, int kd, int ldab) {
  for (int i = 0; i < n; i++) {  // L y = b
    mjtNum s = b[i];
    for (int k = i - kd > 0 ? i - kd : 0; k < i; k++) s -= ab[(size_t)k * ldab + i - k] * b[k];
    b[i] = s / ab[(size_t)i * ldab];
  }
  for (int i = n - 1; i >= 0; i--) {  // L^T x = y
    const mjtNum* li = ab + (size_t)i * ldab - i;
    int k1 = i + kd < n - 1 ? i + kd : n - 1;
    mjtNum s = b[i];
    for (int k = i + 1; k <= k1; k++) s -= li[k] * b[k];
    b[i] = s / li[i];
  }
}

int cusp_dgecon(mjtNum* rcond, const mjtNum* lu, mjtNum anorm, int n, int lda, mjtNum* work,
                int* iwork) {
  int info = 0;
  const char norm = '1';
  if (n <= 0) {
    *rcond = 1;
    return 0;
  }
  dgecon_(&norm, &n, lu, &lda, &anorm, rcond, work, iwork, &info);
  return info;
}

mjtNum cusp_dlange1(const mjtNum* a, int m, int n, int lda) {
  const char norm = '1';
  if (m <= 0 || n <= 0) return 0;
  return dlange_(&norm, &m, &n, a, &lda, 0);
}

// Cholesky and its solves are plain loops, like the products below: the systems here are small
// (a rigid body's 6 dofs, an arm's tens), where reference BLAS's dtrsm spends most of its time in
// argument checks, and loops keep the summation order fixed.
int cusp_dpotrf(mjtNum* a, int n, int lda) {
  // lower Cholesky, column by column (left-looking); info = j + 1 if the leading minor of order
  // j + 1 is not positive definite, as LAPACK
  for (int j = 0; j < n; j++) {
    mjtNum* aj = a + (size_t)j * lda;
    mjtNum djj = aj[j];
    for (int k = 0; k < j; k++) djj -= a[j + (size_t)k * lda] * a[j + (size_t)k * lda];
    if (!(djj > 0)) return j + 1;
    djj = sqrt(djj);
    aj[j] = djj;
    for (int i = j + 1; i < n; i++) {
      mjtNum s = aj[i];
      for (int k = 0; k < j; k++) s -= a[i + (size_t)k * lda] * a[j + (size_t)k * lda];
      aj[i] = s / djj;
    }
  }
  return 0;
}

int cusp_dpotrs(mjtNum* b, const mjtNum* l, int n, int nrhs, int lda, int ldb) {
  for (int c = 0; c < nrhs; c++) {
    mjtNum* x = b + (size_t)c * ldb;
    // L y = b
    for (int i = 0; i < n; i++) {
      mjtNum s = x[i];
      for (int k = 0; k < i; k++) s -= l[i + (size_t)k * lda] * x[k];
      x[i] = s / l[i + (size_t)i * lda];
    }
    // L^T x = y
    for (int i = n - 1; i >= 0; i--) {
      const mjtNum* li = l + (size_t)i * lda;
      mjtNum s = x[i];
      for (int k = i + 1; k < n; k++) s -= li[k] * x[k];
      x[i] = s / li[i];
    }
  }
  return 0;
}

void cusp_envelope(int* env, const mjtNum* a, int n, int lda, const int* start) {
  int* first = env;
  int* last = env + n;
  for (int i = 0; i < n; i++) {
    int k = start ? start[i] : 0;
    while (k < i && a[i + (size_t)k * lda] == 0) k++;
    first[i] = k;
    last[i] = i;
  }
  for (int i = 0; i < n; i++) {
    for (int k = first[i]; k < i; k++) {
      if (last[k] < i) last[k] = i;
    }
  }
}

int cusp_dpotrf_env(mjtNum* a, int n, int lda, const int* env) {
  const int* first = env;
  const int* last = env + n;
  for (int j = 0; j < n; j++) {
    mjtNum* aj = a + (size_t)j * lda;
    mjtNum djj = aj[j];
    for (int k = first[j]; k < j; k++) djj -= a[j + (size_t)k * lda] * a[j + (size_t)k * lda];
    if (!(djj > 0)) return j + 1;
    djj = sqrt(djj);
    aj[j] = djj;
    for (int i = j + 1; i <= last[j]; i++) {
      mjtNum s = aj[i];
      int k0 = first[i] > first[j] ? first[i] : first[j];
      for (int k = k0; k < j; k++) s -= a[i + (size_t)k * lda] * a[j + (size_t)k * lda];
      aj[i] = s / djj;
    }
  }
  return 0;
}

int cusp_dpotrs_env(mjtNum* b, const mjtNum* l, int n, int nrhs, int lda, int ldb,
                    const int* env) {
  const int* first = env;
  const int* last = env + n;
  for (int c = 0; c < nrhs; c++) {
    mjtNum* x = b + (size_t)c * ldb;
    int i0 = 0;
    while (i0 < n && x[i0] == 0) i0++;
    // L y = b (y is 0 before the first nonzero of b)
    for (int i = i0; i < n; i++) {
      mjtNum s = x[i];
      for (int k = first[i] > i0 ? first[i] : i0; k < i; k++) s -= l[i + (size_t)k * lda] * x[k];
      x[i] = s / l[i + (size_t)i * lda];
    }
    // L^T x = y
    for (int i = n - 1; i >= 0; i--) {
      const mjtNum* li = l + (size_t)i * lda;
      mjtNum s = x[i];
      for (int k = i + 1; k <= last[i]; k++) s -= li[k] * x[k];
      x[i] = s / li[i];
    }
  }
  return 0;
}

void cusp_dpotrs_env_range(mjtNum* x, const mjtNum* l, int lda, const int* env, int n, int lo,
                           int hi) {
  const int* first = env;
  const int* last = env + n;
  int i0 = lo;
  while (i0 < hi && x[i0] == 0) i0++;
  for (int i = i0; i < hi; i++) {
    mjtNum s = x[i];
    for (int k = first[i] > i0 ? first[i] : i0; k < i; k++) s -= l[i + (size_t)k * lda] * x[k];
    x[i] = s / l[i + (size_t)i * lda];
  }
  for (int i = hi - 1; i >= lo; i--) {
    const mjtNum* li = l + (size_t)i * lda;
    mjtNum s = x[i];
    for (int k = i + 1; k <= last[i]; k++) s -= li[k] * x[k];
    x[i] = s / li[i];
  }
}

// Below this many multiply-adds dtrsm and dsyrk run as plain loops: a contact island's blocks
// (a rigid body's 6 dofs, a few contacts) cost less than reference BLAS's argument checks and
// call. The loops are reference BLAS's own, in its order, so results are bitwise those of the
// reference library; larger products go to whatever BLAS is installed.
#define CUSP_SMALL_BLAS_WORK 32768.0

void cusp_dtrsm_lower_left(mjtNum* b, char trans, const mjtNum* a, mjtNum alpha, int n, int nrhs,
                           int lda, int ldb) {
  const char side = 'L', uplo = 'L', diag = 'N';
  if (n <= 0 || nrhs <= 0) return;
  if (0.5 * n * n * (double)nrhs > CUSP_SMALL_BLAS_WORK) {
    dtrsm_(&side, &uplo, &trans, &diag, &n, &nrhs, &alpha, a, &lda, b, &ldb);
    return;
  }
  int t = trans == 'T' || trans == 't';
  for (int j = 0; j < nrhs; j++) {
    mjtNum* x = b + (size_t)j * ldb;
    if (!t) {  // B := alpha L^-1 B (forward, by columns of L, as reference dtrsm)
      if (alpha != 1) {
        for (int i = 0; i < n; i++) x[i] = alpha * x[i];
      }
      for (int k = 0; k < n; k++) {
        if (x[k] == 0) continue;
        const mjtNum* ak = a + (size_t)k * lda;
        x[k] = x[k] / ak[k];
        mjtNum xk = x[k];
        for (int i = k + 1; i < n; i++) x[i] = x[i] - xk * ak[i];
      }
    } else {  // B := alpha L^-T B (backward, dot products)
      for (int i = n - 1; i >= 0; i--) {
        const mjtNum* ai = a + (size_t)i * lda;
        mjtNum s = alpha * x[i];
        for (int k = i + 1; k < n; k++) s = s - ai[k] * x[k];
        x[i] = s / ai[i];
      }
    }
  }
}

void cusp_dsyrk_lower_t(mjtNum* c, const mjtNum* a, mjtNum alpha, mjtNum beta, int n, int k,
                        int lda, int ldc) {
  const char uplo = 'L', trans = 'T';
  if (n <= 0) return;
  if (0.5 * n * n * (double)k > CUSP_SMALL_BLAS_WORK) {
    dsyrk_(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc);
    return;
  }
  if ((alpha == 0 || k == 0) && beta == 1) return;
  for (int j = 0; j < n; j++) {
    const mjtNum* aj = a + (size_t)j * lda;
    mjtNum* cj = c + (size_t)j * ldc;
    if (alpha == 0) {
      for (int i = j; i < n; i++) cj[i] = beta == 0 ? 0 : beta * cj[i];
      continue;
    }
    int i = j;
    // four entries at a time: four independent sums (each in reference order), so the adds'
    // latency overlaps
    for (; i + 3 < n; i += 4) {
      const mjtNum* a0 = a + (size_t)i * lda;
      const mjtNum* a1 = a0 + lda;
      const mjtNum* a2 = a1 + lda;
      const mjtNum* a3 = a2 + lda;
      mjtNum s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int l = 0; l < k; l++) {
        mjtNum x = aj[l];
        s0 = s0 + a0[l] * x;
        s1 = s1 + a1[l] * x;
        s2 = s2 + a2[l] * x;
        s3 = s3 + a3[l] * x;
      }
      mjtNum sv[4] = {s0, s1, s2, s3};
      for (int q = 0; q < 4; q++) {
        cj[i + q] = beta == 0 ? alpha * sv[q] : alpha * sv[q] + beta * cj[i + q];
      }
    }
    for (; i < n; i++) {
      const mjtNum* ai = a + (size_t)i * lda;
      mjtNum s = 0;
      for (int l = 0; l < k; l++) s = s + ai[l] * aj[l];
      cj[i] = beta == 0 ? alpha * s : alpha * s + beta * cj[i];
    }
  }
}

// Level-2 and thin level-3 products are plain loops, not BLAS: the matrices here are small
// (tens to a few hundred rows), where a threaded BLAS spends more time waking and yielding threads
// than computing, and a fixed summation order keeps results bitwise independent of the BLAS build
// and its thread count.

// C (m x n) := beta C, with beta == 0 overwriting (NaN in C is not propagated)
static void scale_columns(mjtNum* c, mjtNum beta, int m, int n, int ldc) {
  for (int j = 0; j < n; j++) {
    mjtNum* cj = c + (size_t)j * ldc;
    if (beta == 0) {
      for (int i = 0; i < m; i++) cj[i] = 0;
    } else if (beta != 1) {
      for (int i = 0; i < m; i++) cj[i] *= beta;
    }
  }
}

void cusp_dgemm(mjtNum* c, char transa, char transb, const mjtNum* a, const mjtNum* b,
                mjtNum alpha, mjtNum beta, int m, int n, int k, int lda, int ldb, int ldc) {
  if (m <= 0 || n <= 0) return;
  int ta = transa == 'T' || transa == 't', tb = transb == 'T' || transb == 't';
  if (!ta) {
    // columns of C are combinations of columns of A: C(:,j) += alpha A(:,p) op(B)(p,j)
    scale_columns(c, beta, m, n, ldc);
    for (int j = 0; j < n; j++) {
      mjtNum* cj = c + (size_t)j * ldc;
      for (int p = 0; p < k; p++) {
        mjtNum bpj = alpha * (tb ? b[j + (size_t)p * ldb] : b[p + (size_t)j * ldb]);
        if (bpj == 0) continue;
        const mjtNum* ap = a + (size_t)p * lda;
        for (int i = 0; i < m; i++) cj[i] += bpj * ap[i];
      }
    }
    return;
  }
  // op(A) = A^T: C(i,j) is the dot product of column i of A with column j of op(B)
  for (int j = 0; j < n; j++) {
    mjtNum* cj = c + (size_t)j * ldc;
    for (int i = 0; i < m; i++) {
      const mjtNum* ai = a + (size_t)i * lda;
      mjtNum s = 0;
      if (!tb) {
        const mjtNum* bj = b + (size_t)j * ldb;
        for (int p = 0; p < k; p++) s += ai[p] * bj[p];
      } else {
        for (int p = 0; p < k; p++) s += ai[p] * b[j + (size_t)p * ldb];
      }
      cj[i] = (beta == 0 ? 0 : beta * cj[i]) + alpha * s;
    }
  }
}

void cusp_dgemv(mjtNum* y, char trans, const mjtNum* a, const mjtNum* x, mjtNum alpha,
                mjtNum beta, int m, int n, int lda) {
  int t = trans == 'T' || trans == 't';
  // an empty inner dimension still sets y := beta y (BLAS semantics): an early return would leave
  // whatever y held, e.g. a stale velocity correction when every DOF is held by equalities
  if ((t ? n : m) <= 0) return;
  if ((t ? m : n) <= 0) {
    scale_columns(y, beta, t ? n : m, 1, t ? n : m);
    return;
  }
  if (t) {
    // y (n) := alpha A^T x + beta y: dot products down the columns
    for (int j = 0; j < n; j++) {
      const mjtNum* aj = a + (size_t)j * lda;
      mjtNum s = 0;
      for (int i = 0; i < m; i++) s += aj[i] * x[i];
      y[j] = (beta == 0 ? 0 : beta * y[j]) + alpha * s;
    }
    return;
  }
  // y (m) := alpha A x + beta y: columns of A combined
  scale_columns(y, beta, m, 1, m);
  for (int j = 0; j < n; j++) {
    mjtNum xj = alpha * x[j];
    if (xj == 0) continue;
    const mjtNum* aj = a + (size_t)j * lda;
    for (int i = 0; i < m; i++) y[i] += xj * aj[i];
  }
}

int cusp_dgeqp3(mjtNum* a, int* jpvt, mjtNum* tau, int m, int n, int lda, mjtNum* work,
                int lwork) {
  int info = 0;
  if (m <= 0 || n <= 0) return 0;
  dgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  return info;
}

int cusp_basic_solve(mjtNum* x, mjtNum* M, int n, mjtNum rtol, mjtNum* tau, mjtNum* qw, int* jpvt) {
  for (int j = 0; j < n; j++) jpvt[j] = 0;
  if (cusp_dgeqp3(M, jpvt, tau, n, n, n, qw, (int)CUSP_BASIC_SOLVE_QW(n)) != 0) return 0;
  mjtNum r11 = fabs(M[0]);
  if (!(r11 > 0)) return 0;
  int rank = 0;
  while (rank < n && fabs(M[rank + (size_t)rank * n]) > rtol * r11) rank++;
  // x := Q^T rhs (its first rank entries), reflector j = I - tau_j v v^T, v = (1, M[j+1 .., j])
  for (int j = 0; j < rank; j++) {
    const mjtNum* v = M + (size_t)j * n;
    mjtNum d = x[j];
    for (int i = j + 1; i < n; i++) d += v[i] * x[i];
    d *= tau[j];
    x[j] -= d;
    for (int i = j + 1; i < n; i++) x[i] -= v[i] * d;
  }
  // R_11 y = (Q^T rhs)_1; then x[jpvt - 1] := y, the dependent columns 0
  for (int i = rank - 1; i >= 0; i--) {
    mjtNum v = x[i];
    for (int q = i + 1; q < rank; q++) v -= M[i + (size_t)q * n] * x[q];
    x[i] = v / M[i + (size_t)i * n];
  }
  for (int i = 0; i < rank; i++) tau[i] = x[i];
  for (int i = 0; i < n; i++) x[i] = 0;
  for (int i = 0; i < rank; i++) x[jpvt[i] - 1] = tau[i];
  return 1;
}

int cusp_min_norm_solve(mjtNum* x, mjtNum* M, int n, mjtNum rtol, mjtNum* qw, int* jpvt) {
  if (n <= 0) return 1;
  for (int j = 0; j < n; j++) jpvt[j] = 0;
  int one = 1, rank = 0, info = 0, lwork = (int)CUSP_BASIC_SOLVE_QW(n);
  dgelsy_(&n, &n, &one, M, &n, x, &n, jpvt, &rtol, &rank, qw, &lwork, &info);
  return info == 0 && rank > 0;
}

int cusp_blas_single_thread(void) {
  typedef void (*set_threads_fn)(int);
  set_threads_fn set_threads = (set_threads_fn)dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  if (!set_threads) return 0;
  set_threads(1);
  return 1;
}
