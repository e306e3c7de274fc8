// Contact LCP assembly (CUSP 10-13) and the three-stage conditioning pipeline (CUSP III-D).
// See condition.h for the layout of the unknowns.
#include "solver/condition.h"

#include <math.h>
#include <string.h>

#include "solver/lapack_shim.h"
#include "solver/lcp_internal.h"

static int block_size(int r) { return r > 0 ? r + 2 : 1; }

cuspConditionOptions cusp_condition_default_options(void) {
  cuspConditionOptions o;
  memset(&o, 0, sizeof(o));
  o.rank_select = 1;
  o.eps_rank = 1e-6;
  o.ruiz = 1;
  o.ruiz_passes = 5;
  o.tikhonov = 1;
  o.eps_w = 1e-10;
  o.estimate_condition = 1;
  o.backend = CUSP_LCP_CHAIN;
  o.lcp = cusp_lcp_default_options();
  return o;
}

//---------------------------------- reciprocal condition ----------------------------------------

size_t cusp_rcond_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (nn * nn + 5 * nn)) + CUSP_ALIGN(sizeof(int) * 2 * nn);
}

mjtNum cusp_rcond(const mjtNum* A, int n, int lda, void* work) {
  if (n <= 0) return 1;
  size_t nn = (size_t)n;
  mjtNum* lu = (mjtNum*)work;  // (n x n)
  mjtNum* w = lu + nn * nn;    // (4n)
  int* ipiv = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (nn * nn + 5 * nn)));
  int* iwork = ipiv + nn;
  for (int j = 0; j < n; j++) memcpy(lu + (size_t)j * n, A + (size_t)j * lda, sizeof(mjtNum) * n);
  mjtNum anorm = cusp_dlange1(lu, n, n, n);
  if (cusp_dgetrf(lu, ipiv, n, n, n) != 0) return 0;
  mjtNum rc = 0;
  if (cusp_dgecon(&rc, lu, anorm, n, n, w, iwork) != 0) return 0;
  return rc;
}

//---------------------------------- stage 1: rank selection -------------------------------------

size_t cusp_rank_select_worksize(int nv, int m) {
  size_t mm = (size_t)(m > 0 ? m : 1), nvv = (size_t)(nv > 0 ? nv : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (2 * nvv * mm + 3 * mm + (mm + 1) * 64)) +
         CUSP_ALIGN(sizeof(int) * 2 * mm);
}

// Pivoted QR of the ncol columns of st (nv x ncol) with the first nfixed kept in front in their
// order; appends the column indices (into st) whose |R_ii| > tol to out, in factor order.
static int pivoted_keep(int* out, mjtNum* st, int nv, int ncol, int nfixed, mjtNum tol, int* jpvt,
                        mjtNum* tau, mjtNum* qw, int lwork) {
  for (int j = 0; j < ncol; j++) jpvt[j] = j < nfixed;
  if (ncol == 0 || cusp_dgeqp3(st, jpvt, tau, nv, ncol, nv, qw, lwork) != 0) return 0;
  int kmax = nv < ncol ? nv : ncol, k = 0;
  for (int i = 0; i < kmax; i++) {
    if (fabs(st[i + (size_t)i * nv]) > tol) out[k++] = jpvt[i] - 1;
  }
  return k;
}

int cusp_rank_select(int* sel, const mjtNum* L, const mjtNum* Jn, const mjtNum* bn, int nv, int m,
                     mjtNum eps_rank, void* work) {
  if (m <= 0 || nv <= 0) return 0;
  size_t mm = (size_t)m, nvv = (size_t)nv;
  mjtNum* st = (mjtNum*)work;   // (nv x m) S^T = L^-1 Jn^T
  mjtNum* sub = st + nvv * mm;  // (nv x m) a column subset of S^T
  mjtNum* tau = sub + nvv * mm; // (m)
  mjtNum* qw = tau + mm;        // (2m + (m+1)*64)
  int lwork = (int)(2 * mm + (mm + 1) * 64);
  int* jpvt = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (2 * nvv * mm + 3 * mm + (mm + 1) * 64)));
  int* idx = jpvt + mm;         // (m) contact of each column of sub
  memcpy(st, Jn, sizeof(mjtNum) * nvv * mm);  // row-major Jn == column-major Jn^T
  cusp_dtrsm_lower_left(st, 'N', L, 1.0, nv, m, nv, nv);
  // the reference |R_11| of plain pivoting: the largest column norm
  mjtNum r11 = 0;
  for (int j = 0; j < m; j++) {
    mjtNum sq = 0;
    for (int i = 0; i < nv; i++) sq += st[i + (size_t)j * nv] * st[i + (size_t)j * nv];
    r11 = fmax(r11, sqrt(sq));
  }
  if (!(r11 > 0)) return 0;
  mjtNum tol = eps_rank * r11;
  // Contacts the free motion violates (bn < 0) are selected first, by pivoted QR among
  // themselves; the others then fill the remaining directions. Among dependent rows the ones that
  // must push are kept, not a far speculative contact that needs no impulse. Without bn, or when
  // all or none are violated, this is plain pivoted QR.
  int nviol = 0;
  for (int j = 0; j < m; j++) nviol += bn && bn[j] < 0;
  int nfirst = 0;
  if (nviol > 0 && nviol < m) {
    for (int j = 0, c = 0; j < m; j++) {
      if (bn[j] < 0) {
        memcpy(sub + (size_t)c * nv, st + (size_t)j * nv, sizeof(mjtNum) * nvv);
        idx[c++] = j;
      }
    }
    nfirst = pivoted_keep(sel, sub, nv, nviol, 0, tol, jpvt, tau, qw, lwork);
    for (int a = 0; a < nfirst; a++) sel[a] = idx[sel[a]];
  }
  // the selected violated contacts (in their pivot order) fixed in front, then every contact that
  // is not violated (all of them when nothing was selected first)
  int ncol = 0;
  for (int a = 0; a < nfirst; a++) idx[ncol++] = sel[a];
  for (int j = 0; j < m; j++) {
    if (nfirst == 0 || bn[j] >= 0) idx[ncol++] = j;
  }
  for (int c = 0; c < ncol; c++) {
    memcpy(sub + (size_t)c * nv, st + (size_t)idx[c] * nv, sizeof(mjtNum) * nvv);
  }
  int k = pivoted_keep(sel, sub, nv, ncol, nfirst, tol, jpvt, tau, qw, lwork);
  for (int a = 0; a < k; a++) sel[a] = idx[sel[a]];
  for (int a = 1; a < k; a++) {  // ascending order keeps the caller's contact order
    int v = sel[a], b = a - 1;
    while (b >= 0 && sel[b] > v) {
      sel[b + 1] = sel[b];
      b--;
    }
    sel[b + 1] = v;
  }
  return k;
}

//---------------------------------- assembly ----------------------------------------------------

size_t cusp_contact_assemble_worksize(int nv, int k, int r) {
  size_t cols = (size_t)(k > 0 ? k : 1) * (size_t)(1 + r);
  return CUSP_ALIGN(sizeof(mjtNum) * ((size_t)(nv > 0 ? nv : 1) * cols + cols * cols));
}

void cusp_contact_assemble(mjtNum* A, int lda, mjtNum* b, const cuspContactLcp* c,
                           const mjtNum* L, const int* sel, int k, void* work) {
  int nv = c->nv, r = c->r, s = block_size(r), N = k * s, nc = k * (1 + r);
  mjtNum* G = (mjtNum*)work;              // (nv x nc) L^-1 J^T for the selected rows
  mjtNum* W = G + (size_t)nv * nc;        // (nc x nc) G^T G, lower triangle
  for (int a = 0; a < k; a++) {
    int i = sel ? sel[a] : a;
    memcpy(G + (size_t)a * (1 + r) * nv, c->Jn + (size_t)i * nv, sizeof(mjtNum) * nv);
    for (int t = 0; t < r; t++) {
      memcpy(G + ((size_t)a * (1 + r) + 1 + t) * nv, c->Jt + ((size_t)i * r + t) * nv,
             sizeof(mjtNum) * nv);
    }
  }
  cusp_dtrsm_lower_left(G, 'N', L, 1.0, nv, nc, nv, nv);
  if (nc > 0) cusp_dsyrk_lower_t(W, G, 1.0, 0.0, nc, nv, nv, nc);
  for (int j = 0; j < N; j++) memset(A + (size_t)j * lda, 0, sizeof(mjtNum) * N);
  for (int bb = 0; bb < k; bb++) {
    for (int q = 0; q <= r; q++) {
      int wc = bb * (1 + r) + q, ac = bb * s + q;
      for (int a = 0; a < k; a++) {
        for (int p = 0; p <= r; p++) {
          int wr = a * (1 + r) + p;
          mjtNum v = wr >= wc ? W[wr + (size_t)wc * nc] : W[wc + (size_t)wr * nc];
          A[a * s + p + (size_t)ac * lda] = v;
        }
      }
    }
  }
  for (int a = 0; a < k; a++) {
    int i = sel ? sel[a] : a, o = a * s;
    b[o] = c->bn[i];
    if (r == 0) continue;
    for (int t = 0; t < r; t++) {
      b[o + 1 + t] = c->bt[(size_t)i * r + t];
      A[o + 1 + t + (size_t)(o + 1 + r) * lda] = 1;   // e: w_t += gamma
      A[o + 1 + r + (size_t)(o + 1 + t) * lda] = -1;  // -e^T beta
    }
    A[o + 1 + r + (size_t)o * lda] = c->mu[i];        // mu fn
    b[o + 1 + r] = 0;
  }
}

//---------------------------------- stage 2: Ruiz -----------------------------------------------

void cusp_ruiz(mjtNum* A, mjtNum* b, mjtNum* dr, mjtNum* dc, int n, int lda, int passes,
               mjtNum* scratch) {
  mjtNum* rowf = scratch;      // (n) row factors of the previous pass, not yet applied to A
  mjtNum* rowsq = scratch + n; // (n) squared row norms of this pass
  for (int i = 0; i < n; i++) dr[i] = dc[i] = rowf[i] = 1;
  // each pass: divide every column by the square root of its l2 norm, then every row by the
  // square root of its l2 norm (alternating Ruiz; norms tend to 1 geometrically). A is
  // column-major, so both sweeps run down the columns: a pass's row scaling is applied while the
  // next pass reads the column norms, and the row norms are accumulated while the columns are
  // scaled (two reads of A a pass, the same products in the same order as three).
  for (int pass = 0; pass < passes; pass++) {
    for (int i = 0; i < n; i++) rowsq[i] = 0;
    for (int j = 0; j < n; j++) {
      mjtNum* col = A + (size_t)j * lda;
      mjtNum s = 0;
      for (int i = 0; i < n; i++) {
        col[i] *= rowf[i];
        s += col[i] * col[i];
      }
      s = sqrt(s);
      mjtNum f = s > 0 ? 1.0 / sqrt(s) : 1.0;
      dc[j] *= f;
      for (int i = 0; i < n; i++) {
        col[i] *= f;
        rowsq[i] += col[i] * col[i];
      }
    }
    for (int i = 0; i < n; i++) {
      mjtNum s = sqrt(rowsq[i]);
      rowf[i] = s > 0 ? 1.0 / sqrt(s) : 1.0;
      dr[i] *= rowf[i];
      if (b) b[i] *= rowf[i];
    }
  }
  if (passes > 0) {
    for (int j = 0; j < n; j++) {
      mjtNum* col = A + (size_t)j * lda;
      for (int i = 0; i < n; i++) col[i] *= rowf[i];
    }
  }
}

//---------------------------------- the pipeline ------------------------------------------------

// rcond of the normal block A[a*s, b*s] (k x k) of A (N x N); scratch: k*k + rcond work
static mjtNum normal_block_rcond(const mjtNum* A, int N, int k, int s, void* scratch) {
  mjtNum* B = (mjtNum*)scratch;
  for (int b = 0; b < k; b++) {
    for (int a = 0; a < k; a++) B[a + (size_t)b * k] = A[a * s + (size_t)(b * s) * N];
  }
  return cusp_rcond(B, k, k, (char*)scratch + CUSP_ALIGN(sizeof(mjtNum) * (size_t)k * k + 8));
}

static int uses_fallback(const cuspConditionOptions* opt) {
  return opt->fallback && opt->backend != CUSP_LCP_CHAIN && cusp_lcp_backend(opt->backend);
}

static size_t solve_lcp_bytes(int N, const cuspConditionOptions* opt) {
  const cuspLcpBackend* be = cusp_lcp_backend(opt->backend);
  if (!be) be = cusp_lcp_backend(CUSP_LCP_CHAIN);
  size_t need = be->worksize(N);
  if (uses_fallback(opt)) {
    size_t chain = cusp_lcp_backend(CUSP_LCP_CHAIN)->worksize(N);
    need = need > chain ? need : chain;
  }
  size_t rc = CUSP_ALIGN(sizeof(mjtNum) * (size_t)N * N + 8) + cusp_rcond_worksize(N);
  return need > rc ? need : rc;
}

size_t cusp_contact_worksize(int nv, int m, int r, const cuspConditionOptions* opt) {
  int s = block_size(r), N = m * s;
  size_t nvv = (size_t)(nv > 0 ? nv : 1), NN = (size_t)(N > 0 ? N : 1);
  size_t bytes = CUSP_ALIGN(sizeof(mjtNum) * nvv * nvv);                 // L
  // A0, A, b, dr, dc, z, w, b0, z0, zf
  bytes += CUSP_ALIGN(sizeof(mjtNum) * (2 * NN * NN + 8 * NN));
  bytes += CUSP_ALIGN(sizeof(int) * (size_t)(m > 0 ? m : 1));             // sel
  size_t s1 = cusp_rank_select_worksize(nv, m);
  size_t s2 = cusp_contact_assemble_worksize(nv, m, r);
  size_t s3 = solve_lcp_bytes(N, opt);
  size_t scratch = s1 > s2 ? s1 : s2;
  scratch = scratch > s3 ? scratch : s3;
  return bytes + CUSP_ALIGN(scratch);
}

// The chosen backend failed with answer z (its report in info): run the chain without that backend
// from the same start z0 and keep the answer with the smaller residual. zf: (N) scratch.
static void solve_fallback(mjtNum* z, mjtNum* w, mjtNum* zf, const mjtNum* z0, cuspLcpInfo* info,
                           const cuspLcpProblem* prob, const cuspLcpOptions* lcp_opt,
                           cuspLcpBackendId failed, void* scratch, size_t scratch_bytes) {
  int N = prob->n;
  cuspLcpOptions chain_opt = cusp_lcp_chain_without(lcp_opt, failed);
  memcpy(zf, z, sizeof(mjtNum) * N);
  cuspLcpInfo failed_info = *info;
  cuspLcpInfo chain_info;
  memcpy(z, z0, sizeof(mjtNum) * N);
  cusp_lcp_backend(CUSP_LCP_CHAIN)->solve(z, w, &chain_info, prob, &chain_opt, scratch,
                                          scratch_bytes);
  int iterations = failed_info.iterations + chain_info.iterations;
  // a NaN residual never wins
  if (chain_info.status == CUSP_LCP_SOLVED || !(failed_info.residual <= chain_info.residual)) {
    *info = chain_info;
  } else {
    memcpy(z, zf, sizeof(mjtNum) * N);
    *info = failed_info;
    cusp_lcp_residual(w, info, z, prob);  // w was overwritten by the chain
  }
  info->iterations = iterations;
}

cuspLcpStatus cusp_contact_solve(mjtNum* fn, mjtNum* beta, mjtNum* gamma, int* keep,
                                 cuspConditionInfo* info, const cuspContactLcp* c,
                                 const cuspConditionOptions* opt, void* work, size_t work_bytes) {
  double t0 = cusp_now();
  memset(info, 0, sizeof(*info));
  cusp_lcp_info_begin(&info->lcp, "condition");
  info->rcond_before = info->rcond_after = -1;
  info->residual_original = INFINITY;
  info->lcp.status = CUSP_LCP_BAD_INPUT;
  if (!c || c->nv <= 0 || c->m < 0 || c->r < 0 || !c->Meff || (c->m > 0 && (!c->Jn || !c->bn)) ||
      (c->r > 0 && c->m > 0 && (!c->Jt || !c->mu || !c->bt || !beta))) {
    info->lcp.message = "bad contact data (sizes or NULL arrays)";
    return info->lcp.status;
  }
  if (work_bytes < cusp_contact_worksize(c->nv, c->m, c->r, opt)) {
    info->lcp.message = "workspace too small";
    return info->lcp.status;
  }
  int nv = c->nv, m = c->m, r = c->r, s = block_size(r), Nfull = m * s;
  size_t nvv = (size_t)nv, NN = (size_t)(Nfull > 0 ? Nfull : 1);
  char* p = (char*)work;
  mjtNum* L = (mjtNum*)p;  // (nv x nv) lower Cholesky factor of Meff
  p += CUSP_ALIGN(sizeof(mjtNum) * nvv * nvv);
  mjtNum* A0 = (mjtNum*)p;  // (N x N) reduced, unscaled, unregularised A
  mjtNum* A = A0 + NN * NN; // (N x N) conditioned A
  mjtNum* b0 = A + NN * NN; // (N)
  mjtNum* b = b0 + NN;      // (N)
  mjtNum* dr = b + NN;      // (N)
  mjtNum* dc = dr + NN;     // (N)
  mjtNum* z = dc + NN;      // (N)
  mjtNum* w = z + NN;       // (N)
  mjtNum* z0 = w + NN;      // (N) the start, kept for the fallback chain
  mjtNum* zf = z0 + NN;     // (N) the failed backend's answer
  p += CUSP_ALIGN(sizeof(mjtNum) * (2 * NN * NN + 8 * NN));
  int* sel = (int*)p;       // (m)
  p += CUSP_ALIGN(sizeof(int) * (size_t)(m > 0 ? m : 1));
  void* scratch = p;
  size_t scratch_bytes = work_bytes - (size_t)(p - (char*)work);

  info->detected = m;
  for (int i = 0; i < m; i++) fn[i] = opt->lcp.warm_start ? fn[i] : 0;
  // Cholesky factor of Meff
  for (int j = 0; j < nv; j++) memcpy(L + (size_t)j * nv, c->Meff + (size_t)j * nv, sizeof(mjtNum) * nv);
  if (!c->meff_is_factor && cusp_dpotrf(L, nv, nv) != 0) {
    info->lcp.status = CUSP_LCP_NUMERICAL;
    info->lcp.message = "Meff is not positive definite";
    return info->lcp.status;
  }
  for (int j = 1; j < nv; j++) memset(L + (size_t)j * nv, 0, sizeof(mjtNum) * (size_t)j);

  if (opt->estimate_condition && m > 0) {
    cusp_contact_assemble(A0, Nfull, b0, c, L, NULL, m, scratch);
    info->rcond_before = normal_block_rcond(A0, Nfull, m, s, scratch);
  }
  // stage 1
  int k = m;
  if (opt->rank_select && m > 0) {
    k = cusp_rank_select(sel, L, c->Jn, c->bn, nv, m, opt->eps_rank, scratch);
  } else {
    for (int i = 0; i < m; i++) sel[i] = i;
  }
  info->kept = k;
  info->dropped = m - k;
  int N = k * s;
  info->n_lcp = N;
  if (keep) {
    for (int i = 0; i < m; i++) keep[i] = 0;
    for (int a = 0; a < k; a++) keep[sel[a]] = 1;
  }
  // warm start values of the kept contacts, then clear the outputs
  for (int a = 0; a < k; a++) {
    int i = sel[a];
    z[a * s] = fn[i];
    for (int t = 0; t < r; t++) z[a * s + 1 + t] = opt->lcp.warm_start ? beta[(size_t)i * r + t] : 0;
    if (r > 0) z[a * s + 1 + r] = opt->lcp.warm_start && gamma ? gamma[i] : 0;
  }
  for (int i = 0; i < m; i++) {
    fn[i] = 0;
    for (int t = 0; t < r; t++) beta[(size_t)i * r + t] = 0;
    if (gamma) gamma[i] = 0;
  }
  if (N == 0) {
    info->lcp.status = CUSP_LCP_SOLVED;
    info->lcp.residual = info->lcp.siconos_error = info->residual_original = 0;
    info->lcp.seconds = cusp_now() - t0;
    return CUSP_LCP_SOLVED;
  }
  cusp_contact_assemble(A0, N, b0, c, L, sel, k, scratch);
  for (int j = 0; j < N; j++) memcpy(A + (size_t)j * N, A0 + (size_t)j * N, sizeof(mjtNum) * N);
  memcpy(b, b0, sizeof(mjtNum) * N);
  // stage 2
  if (opt->ruiz && opt->ruiz_passes > 0) {
    cusp_ruiz(A, b, dr, dc, N, N, opt->ruiz_passes, w);  // w, z0 (2 N): free until the solve
  } else {
    for (int i = 0; i < N; i++) dr[i] = dc[i] = 1;
  }
  // stage 3
  if (opt->tikhonov && opt->eps_w > 0) {
    for (int a = 0; a < k; a++) A[a * s + (size_t)(a * s) * N] += opt->eps_w;
  }
  if (opt->estimate_condition) info->rcond_after = normal_block_rcond(A, N, k, s, scratch);
  // solve the conditioned problem z' = Dc^-1 z
  for (int i = 0; i < N; i++) z[i] /= dc[i];
  cuspLcpProblem prob = {N, A, N, b, NULL, NULL};
  const cuspLcpBackend* be = cusp_lcp_backend(opt->backend);
  if (!be) be = cusp_lcp_backend(CUSP_LCP_CHAIN);
  cuspLcpOptions lcp_opt = opt->lcp;
  lcp_opt.block = s;  // PGS sweeps contact by contact (the cone-slack row has a zero diagonal)
  memcpy(z0, z, sizeof(mjtNum) * N);
  be->solve(z, w, &info->lcp, &prob, &lcp_opt, scratch, scratch_bytes);
  if (info->lcp.status != CUSP_LCP_SOLVED && uses_fallback(opt)) {
    solve_fallback(z, w, zf, z0, &info->lcp, &prob, &lcp_opt, opt->backend, scratch,
                   scratch_bytes);
    info->fell_back = 1;
  }
  for (int i = 0; i < N; i++) z[i] *= dc[i];
  // what the unconditioned reduced problem says about the unscaled answer
  cuspLcpProblem orig = {N, A0, N, b0, NULL, NULL};
  cuspLcpInfo chk;
  cusp_lcp_residual(w, &chk, z, &orig);
  info->residual_original = chk.residual;
  for (int a = 0; a < k; a++) {
    int i = sel[a];
    fn[i] = z[a * s];
    for (int t = 0; t < r; t++) beta[(size_t)i * r + t] = z[a * s + 1 + t];
    if (r > 0 && gamma) gamma[i] = z[a * s + 1 + r];
  }
  info->lcp.seconds = cusp_now() - t0;
  return info->lcp.status;
}
