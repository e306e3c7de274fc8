// The one place where the solver talks to BLAS/LAPACK (Fortran ABI, trailing underscore,
// every argument by pointer). Column-major, leading dimensions passed; every LAPACK call returns
// its info (0 = success, < 0 bad argument, > 0 routine-specific failure such as a zero pivot).
#ifndef CUSP_SOLVER_LAPACK_SHIM_H_
#define CUSP_SOLVER_LAPACK_SHIM_H_

#include <mujoco/mjtype.h>

#ifdef __cplusplus
extern "C" {
#endif

// LU with partial pivoting of a (m x n), ipiv (min(m,n)).
int cusp_dgetrf(mjtNum* a, int* ipiv, int m, int n, int lda);
// Solve A X = B (trans 'N') or A^T X = B ('T') with the LU from cusp_dgetrf; b (ldb x nrhs).
int cusp_dgetrs(mjtNum* b, char trans, const mjtNum* lu, const int* ipiv, int n, int nrhs,
                int lda, int ldb);
// Reciprocal 1-norm condition estimate from an LU and the 1-norm of the original matrix.
// work (4n) mjtNum, iwork (n).
int cusp_dgecon(mjtNum* rcond, const mjtNum* lu, mjtNum anorm, int n, int lda, mjtNum* work,
                int* iwork);
// 1-norm of a (m x n).
mjtNum cusp_dlange1(const mjtNum* a, int m, int n, int lda);
// Cholesky (lower) in place of a (n x n); info > 0: not positive definite.
int cusp_dpotrf(mjtNum* a, int n, int lda);
// Solve A X = B with the lower Cholesky factor; b (ldb x nrhs).
int cusp_dpotrs(mjtNum* b, const mjtNum* l, int n, int nrhs, int lda, int ldb);

// Band storage (LAPACK's): A(i,j) of an n x n matrix with kl subdiagonals and ku superdiagonals
// at ab[off + i - j + j ldab] for max(0, j - ku) <= i <= min(n - 1, j + kl), off = ku for a plain
// band matrix, off = kl + ku for the LU below (its first kl rows hold the fill of the pivoting).
// LU with partial pivoting of a band matrix, ldab >= 2 kl + ku + 1, A at off = kl + ku: the
// same pivots as cusp_dgetrf (the first largest |a_ij| of the column), in O(n kl (kl + ku)).
// U ends in the upper kl + ku + 1 rows, the multipliers below; ipiv (n) 1-based as LAPACK's.
// Rows 0 .. kl - 1 are overwritten (zeroed first). info = j + 1 for the first exactly zero pivot.
int cusp_dgbtrf(mjtNum* ab, int* ipiv, int n, int kl, int ku, int ldab);
// Solve A x = b (one right-hand side) with the band LU of cusp_dgbtrf.
void cusp_dgbtrs(mjtNum* b, const mjtNum* ab, const int* ipiv, int n, int kl, int ku, int ldab);
// Lower Cholesky of a symmetric band matrix with kd subdiagonals in place: A(i,j), j <= i <=
// j + kd, at ab[i - j + j ldab], ldab >= kd + 1. info = j + 1 if not positive definite.
int cusp_dpbtrf(mjtNum* ab, int n, int kd, int ldab);
// Solve A x = b with the band Cholesky factor of cusp_dpbtrf.
void cusp_dpbtrs(mjtNum* b, const mjtNum* ab, int n, int kd, int ldab);

// Envelope (profile) of a symmetric matrix's lower triangle a (n x n): first[i] = the first column
// k <= i with a[i][k] != 0 (i if none), last[k] = the last row i >= k with first[i] <= k. A
// Cholesky factor keeps the envelope of its matrix, so the _env routines below skip the products
// outside it, which are exact zeros: the same results as cusp_dpotrf / cusp_dpotrs, in O(sum of
// squared envelope widths) instead of O(n^3) (block-diagonal inertia of many bodies in one
// island). env holds 2 n ints: first, then last. start (n, or NULL: all 0): a known lower bound
// of first[i] (no nonzero left of it), where the scan of row i begins.
void cusp_envelope(int* env, const mjtNum* a, int n, int lda, const int* start);
int cusp_dpotrf_env(mjtNum* a, int n, int lda, const int* env);
// Also skips each right-hand side's leading zeros (a contact row touches few dofs).
int cusp_dpotrs_env(mjtNum* b, const mjtNum* l, int n, int nrhs, int lda, int ldb, const int* env);
// One right-hand side b that is zero outside [lo, hi), a union of whole diagonal blocks of the
// envelope (no entry of l couples it to the rest): the solve of cusp_dpotrs_env over that range
// only (b stays zero outside it), the same numbers.
void cusp_dpotrs_env_range(mjtNum* b, const mjtNum* l, int lda, const int* env, int n, int lo,
                           int hi);
// B := alpha op(A)^-1 B with A lower triangular on the left; trans 'N' or 'T'; b (ldb x nrhs).
void cusp_dtrsm_lower_left(mjtNum* b, char trans, const mjtNum* a, mjtNum alpha, int n, int nrhs,
                           int lda, int ldb);
// C := alpha A^T A + beta C (lower triangle of C updated), A (k x n), C (n x n).
void cusp_dsyrk_lower_t(mjtNum* c, const mjtNum* a, mjtNum alpha, mjtNum beta, int n, int k,
                        int lda, int ldc);
// C := alpha op(A) op(B) + beta C, C (m x n).
void cusp_dgemm(mjtNum* c, char transa, char transb, const mjtNum* a, const mjtNum* b,
                mjtNum alpha, mjtNum beta, int m, int n, int k, int lda, int ldb, int ldc);
// y := alpha op(A) x + beta y, A (m x n).
void cusp_dgemv(mjtNum* y, char trans, const mjtNum* a, const mjtNum* x, mjtNum alpha,
                mjtNum beta, int m, int n, int lda);
// Pivoted QR of a (m x n): jpvt (n) in: 0 = free column; out: 1-based permutation; tau
// (min(m,n)); work of lwork mjtNum (lwork = -1: optimal size returned in work[0]).
int cusp_dgeqp3(mjtNum* a, int* jpvt, mjtNum* tau, int m, int n, int lda, mjtNum* work,
                int lwork);

// Basic solution of M x = rhs (n x n, ld n; M overwritten) by QR with column pivoting: the
// columns with |R_ii| <= 1e-10 |R_11| (dependent ones) keep x = 0, so a singular but consistent
// system is solved exactly. x (n): in rhs, out the solution; tau (n), qw (2n + (n + 1) 64), jpvt
// (n). Returns 0 when M is 0 or LAPACK fails.
int cusp_basic_solve(mjtNum* x, mjtNum* M, int n, mjtNum rtol, mjtNum* tau, mjtNum* qw,
                     int* jpvt);
// Minimum-norm least-squares solution of M x = rhs (n x n, ld n; M overwritten) by a complete
// orthogonal factorisation (LAPACK dgelsy), rank decided at rtol times the largest |R_ii|: of all
// the solutions of a singular consistent system, the one closest to 0. x (n): in rhs, out the
// solution; qw (CUSP_BASIC_SOLVE_QW(n)), jpvt (n). Returns 0 if LAPACK fails or M is 0.
int cusp_min_norm_solve(mjtNum* x, mjtNum* M, int n, mjtNum rtol, mjtNum* qw, int* jpvt);
#define CUSP_BASIC_SOLVE_QW(n) (2 * (size_t)(n) + ((size_t)(n) + 1) * 64)

// Ask a threaded BLAS (OpenBLAS, found at run time) to use one thread: cusp's matrices are small,
// and waking and yielding BLAS threads costs more than the arithmetic (measured: 2.2 s of system
// time in 5000 steps of scenario A). Returns 1 if the BLAS offered the switch, else 0.
int cusp_blas_single_thread(void);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_LAPACK_SHIM_H_
