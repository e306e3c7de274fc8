// Contact LCP assembly (CUSP 10-13) and the three-stage conditioning pipeline (CUSP III-D).
// See condition.h for the layout of the unknowns.
#include "solver/condition.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "solver/contact_closed.h"
#include "solver/lapack_shim.h"
#include "solver/lcp_internal.h"

static int block_size(int r) { return r > 0 ? r + 2 : 1; }

// max / min for values that are never NaN (fmax is a library call without -ffast-math)
static inline mjtNum max_num(mjtNum a, mjtNum b) { return a > b ? a : b; }
static inline mjtNum min_num(mjtNum a, mjtNum b) { return a < b ? a : b; }

cuspConditionOptions cusp_condition_default_options(void) {
  cuspConditionOptions o;
  memset(&o, 0, sizeof(o));
  o.rank_select = 1;
  o.eps_rank = 1e-6;
  o.ruiz = 1;
  o.ruiz_passes = 5;
  o.ruiz_skip_spread = 32;
  o.tikhonov = 1;
  o.eps_w = 1e-10;
  o.estimate_condition = 1;
  o.backend = CUSP_LCP_CHAIN;
  o.lcp = cusp_lcp_default_options();
  o.finish = 1;
  o.closed_form = 1;
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
         CUSP_ALIGN(sizeof(int) * 3 * mm);
}

// Stage 1's priority classes (cls, m): contacts the free motion violates (bn < 0) before the
// others, and within each, those loaded in the warm start (fn_warm > 0: the last step kept them
// and they pushed) first: 0 violated and loaded, 1 violated, 2 loaded, 3 the rest. Classes are
// selected in this order, each by pivoted elimination among its own contacts on what the earlier
// ones leave, so among dependent contacts those that must push stay (not a far speculative
// contact that needs no impulse), and among those the loaded ones (the two rim points of a disk
// lying on the floor are dependent to 1e-6: a choice made by rounding alternated between them,
// and the warm start of the new choice was zero). fn_warm, bn may be NULL.
enum { kRankClasses = 4 };
static void rank_classes(int* cls, const mjtNum* fn_warm, const mjtNum* bn, int m) {
  for (int j = 0; j < m; j++) {
    int loaded = fn_warm && fn_warm[j] > 0;
    cls[j] = (bn && bn[j] < 0 ? 0 : 2) + (loaded ? 0 : 1);
  }
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

// sel[0 .. k) := sorted ascending (insertion sort: k is a handful of contacts)
static void sort_ascending(int* sel, int k) {
  for (int a = 1; a < k; a++) {
    int v = sel[a], b = a - 1;
    while (b >= 0 && sel[b] > v) {
      sel[b + 1] = sel[b];
      b--;
    }
    sel[b + 1] = v;
  }
}

// Stage 1 by pivoted QR over the classes cls (rank_classes) in order; work: as cusp_rank_select
static int rank_select_classes(int* sel, const mjtNum* L, const mjtNum* Jn, const int* cls, int nv,
                               int m, mjtNum eps_rank, void* work) {
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
  // class by class: the contacts selected so far (in their pivot order) fixed in front, then the
  // class's contacts; a single class is plain pivoted QR
  int k = 0;
  for (int c = 0; c < kRankClasses; c++) {
    int ncol = 0;
    for (int a = 0; a < k; a++) idx[ncol++] = sel[a];
    for (int j = 0; j < m; j++) {
      if (cls[j] == c) idx[ncol++] = j;
    }
    if (ncol == k) continue;
    for (int q = 0; q < ncol; q++) {
      memcpy(sub + (size_t)q * nv, st + (size_t)idx[q] * nv, sizeof(mjtNum) * nvv);
    }
    k = pivoted_keep(sel, sub, nv, ncol, k, tol, jpvt, tau, qw, lwork);
    for (int a = 0; a < k; a++) sel[a] = idx[sel[a]];
  }
  sort_ascending(sel, k);  // keeps the caller's contact order
  return k;
}

int cusp_rank_select(int* sel, const mjtNum* L, const mjtNum* Jn, const mjtNum* bn, int nv, int m,
                     mjtNum eps_rank, void* work) {
  if (m <= 0 || nv <= 0) return 0;
  size_t mm = (size_t)m, nvv = (size_t)nv;
  int* cls = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (2 * nvv * mm + 3 * mm + (mm + 1) * 64))) +
             2 * mm;
  rank_classes(cls, NULL, bn, m);
  return rank_select_classes(sel, L, Jn, cls, nv, m, eps_rank, work);
}

// Stage 1 screened by a pivoted Cholesky of the whitened normal block Wnn = S S^T (m x m, from
// S^T = L^-1 Jn^T): in exact arithmetic its pivots and pivot values are those of QR with column
// pivoting on S^T (the Schur complement's diagonal is |R_ii|^2), with the same order (violated
// contacts first). It costs m^2 (nv + m) multiply-adds and no LAPACK call; when every pivot is
// far from the threshold (a factor 2 in |R_ii| beyond rounding), its selection is the QR's and is
// returned with *clear = 1. A pivot near the threshold returns *clear = 0: the caller asks the
// QR (near-dependent normals need its accuracy). G: the whitened rows of all m contacts
// (whiten_rows), contact i's normal in column i * stride. work: rank_screen_worksize(m) bytes.
static size_t rank_screen_worksize(int m) {
  size_t mm = (size_t)(m > 0 ? m : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (2 * mm * mm + mm)) + CUSP_ALIGN(sizeof(int) * mm);
}

static int rank_screen(int* sel, int* clear, const mjtNum* G, int stride, const int* cls,
                       int nv, int m, mjtNum eps_rank, void* work) {
  size_t mm = (size_t)m;
  mjtNum* W = (mjtNum*)work;    // (m x m) lower triangle of S S^T
  mjtNum* lc = W + mm * mm;     // (m x m) Cholesky columns: lc[j + q m] = L(j, pivot q)
  mjtNum* d = lc + mm * mm;     // (m) diagonal of the current Schur complement
  int* state = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (2 * mm * mm + mm)));
  *clear = 1;
  for (int j = 0; j < m; j++) {
    const mjtNum* gj = G + (size_t)j * stride * nv;
    for (int i = j; i < m; i++) {
      const mjtNum* gi = G + (size_t)i * stride * nv;
      mjtNum v = 0;
      for (int l = 0; l < nv; l++) v += gi[l] * gj[l];
      W[i + (size_t)j * m] = v;
    }
  }
  mjtNum r11 = 0;
  for (int j = 0; j < m; j++) {
    d[j] = W[j + (size_t)j * m];
    r11 = max_num(r11, sqrt(d[j]));  // the QR's |R_11|: the largest column norm
  }
  if (!(r11 > 0)) return 0;
  mjtNum tol = eps_rank * r11, tol2 = tol * tol;
  mjtNum noise = 8.0 * (m + nv) * DBL_EPSILON * r11 * r11;  // rounding of W and the updates
  mjtNum keep_clear = 4 * tol2 + noise, drop_clear = 0.25 * tol2 - noise;
  // state: 0 candidate of this phase (class), 1 chosen, 2 dropped, 3 waiting for its class
  for (int j = 0; j < m; j++) state[j] = 3;
  int k = 0;
  for (int phase = 0; phase < kRankClasses; phase++) {
    int any = 0;
    for (int j = 0; j < m; j++) {
      if (cls[j] == phase) state[j] = 0, any = 1;
    }
    if (!any) continue;
    for (;;) {
      int p = -1;
      for (int j = 0; j < m; j++) {
        if (state[j] == 0 && (p < 0 || d[j] > d[p])) p = j;
      }
      if (p < 0 || !(d[p] > tol2) || k >= nv) break;
      if (d[p] < keep_clear) *clear = 0;
      state[p] = 1;
      sel[k] = p;
      mjtNum lp = sqrt(d[p]);
      for (int j = 0; j < m; j++) {
        if (state[j] != 0 && state[j] != 3) continue;
        mjtNum v = j > p ? W[j + (size_t)p * m] : W[p + (size_t)j * m];
        for (int q = 0; q < k; q++) v -= lc[j + (size_t)q * m] * lc[p + (size_t)q * m];
        v /= lp;
        lc[j + (size_t)k * m] = v;
        d[j] -= v * v;
      }
      k++;
    }
    // the phase ends: what is left is dependent on the chosen (or the rank is exhausted)
    for (int j = 0; j < m; j++) {
      if (state[j] != 0) continue;
      if (d[j] > drop_clear) *clear = 0;
      state[j] = 2;
    }
  }
  sort_ascending(sel, k);  // keeps the caller's contact order
  return k;
}

// A kept contact with no warm impulse takes the warm start (fn, beta, gamma) of the dropped,
// loaded contact of its own geom pair (pair) whose whitened normal is nearest to its own, if
// within half its norm: among dependent contacts (the two rim points of a disk lying on the floor,
// 4 mm apart on one rigid disk) rounding alternates which one stage 1 keeps, and the newly kept
// one's own warm start is zero while its twin's holds the last step's answer (a 20-segment rod on
// the floor: 21 of 42 contacts kept, up to 8 of them unloaded each step). Twins are 10-30 % apart
// in the whitened metric. Only a start: the solve checks it.
// G: the whitened columns of all m contacts (cw a contact, the normal first); sel ascending.
static void inherit_warm_start(mjtNum* fn, mjtNum* beta, mjtNum* gamma, const mjtNum* G, int cw,
                               int nv, int r, const int* pair, const int* sel, int k, int m) {
  for (int a = 0; a < k; a++) {
    int i = sel[a];
    if (fn[i] > 0) continue;
    const mjtNum* gi = G + (size_t)i * cw * nv;
    mjtNum n2 = 0;
    for (int l = 0; l < nv; l++) n2 += gi[l] * gi[l];
    int best = -1;
    mjtNum bd = 0.25 * n2;  // (1/2 |g_i|)^2: the nearest donor closer than that
    for (int j = 0, b = 0; j < m; j++) {
      if (b < k && sel[b] == j) {  // kept: not a donor
        b++;
        continue;
      }
      if (pair[j] != pair[i] || !(fn[j] > 0)) continue;
      const mjtNum* gj = G + (size_t)j * cw * nv;
      mjtNum d2 = 0;
      for (int l = 0; l < nv; l++) d2 += (gi[l] - gj[l]) * (gi[l] - gj[l]);
      if (d2 < bd) bd = d2, best = j;
    }
    if (best < 0) continue;
    fn[i] = fn[best];
    fn[best] = 0;
    for (int t = 0; t < r; t++) beta[(size_t)i * r + t] = beta[(size_t)best * r + t];
    if (gamma) gamma[i] = gamma[best];
  }
}

//---------------------------------- assembly ----------------------------------------------------

size_t cusp_contact_assemble_worksize(int nv, int k, int r) {
  size_t cols = (size_t)(k > 0 ? k : 1) * (size_t)(1 + r), kk = (size_t)(k > 0 ? k : 1);
  size_t nvv = (size_t)(nv > 0 ? nv : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (nvv * cols + cols * cols + nvv * 3 * kk));
}

// 1 if the friction rows come as (t, o) rows and directions (condition.h, Jto and dirs)
static int structured(const cuspContactLcp* c) { return c->r > 0 && c->Jto && c->dirs; }

// Gw (nv x 3k): columns 3a, 3a + 1, 3a + 2 = L^-1 (normal, t, o rows of contact sel[a])
static void whiten_structured(mjtNum* Gw, const cuspContactLcp* c, const mjtNum* L,
                              const int* sel, int k) {
  int nv = c->nv;
  for (int a = 0; a < k; a++) {
    int i = sel ? sel[a] : a;
    memcpy(Gw + (size_t)3 * a * nv, c->Jn + (size_t)i * nv, sizeof(mjtNum) * nv);
    memcpy(Gw + ((size_t)3 * a + 1) * nv, c->Jto + (size_t)2 * i * nv, sizeof(mjtNum) * 2 * nv);
  }
  cusp_dtrsm_lower_left(Gw, 'N', L, 1.0, nv, 3 * k, nv, nv);
}

// Gw's normal columns 3a := L^-1 (normal row of contact a), a < m: what stage 1 reads (the screen,
// the warm-start donors); the t, o columns are whitened for the kept contacts only, after
// (whiten_tangents). Column by column the same arithmetic as whiten_structured.
static void whiten_normals(mjtNum* Gw, const cuspContactLcp* c, const mjtNum* L, int m) {
  int nv = c->nv;
  for (int a = 0; a < m; a++) {
    memcpy(Gw + (size_t)3 * a * nv, c->Jn + (size_t)a * nv, sizeof(mjtNum) * nv);
  }
  cusp_dtrsm_lower_left(Gw, 'N', L, 1.0, nv, m, nv, 3 * nv);
}

// Gw's t, o columns 3a + 1, 3a + 2 := L^-1 (t, o rows of contact sel[a]), a < k
static void whiten_tangents(mjtNum* Gw, const cuspContactLcp* c, const mjtNum* L, const int* sel,
                            int k) {
  int nv = c->nv;
  for (int a = 0; a < k; a++) {
    memcpy(Gw + ((size_t)3 * a + 1) * nv, c->Jto + (size_t)2 * sel[a] * nv,
           sizeof(mjtNum) * 2 * nv);
  }
  cusp_dtrsm_lower_left(Gw + nv, 'N', L, 1.0, nv, k, nv, 3 * nv);
  cusp_dtrsm_lower_left(Gw + 2 * nv, 'N', L, 1.0, nv, k, nv, 3 * nv);
}

// G (nv x k(1+r)) from Gw (nv x 3k): the normal column, and friction column t = dirs[2t] g_t +
// dirs[2t+1] g_o (L^-1 is linear: the whitened friction rows)
static void expand_whitened(mjtNum* G, const mjtNum* Gw, const cuspContactLcp* c, int k) {
  int nv = c->nv, r = c->r;
  for (int a = 0; a < k; a++) {
    const mjtNum* gn = Gw + (size_t)3 * a * nv;
    const mjtNum* gt = gn + nv;
    const mjtNum* go = gt + nv;
    mjtNum* col = G + (size_t)a * (1 + r) * nv;
    memcpy(col, gn, sizeof(mjtNum) * nv);
    for (int t = 0; t < r; t++) {
      mjtNum ct = c->dirs[2 * t], st = c->dirs[2 * t + 1];
      mjtNum* g = col + (size_t)(1 + t) * nv;
      for (int l = 0; l < nv; l++) g[l] = ct * gt[l] + st * go[l];
    }
  }
}

// G (nv x k(1+r)): column a(1+r) + p = L^-1 (row p of contact sel[a]), p = 0 the normal row,
// p = 1 + t friction direction t (sel NULL: contacts 0 .. k-1)
static void whiten_rows(mjtNum* G, const cuspContactLcp* c, const mjtNum* L, const int* sel,
                        int k) {
  int nv = c->nv, r = c->r, nc = k * (1 + r);
  for (int a = 0; a < k; a++) {
    int i = sel ? sel[a] : a;
    memcpy(G + (size_t)a * (1 + r) * nv, c->Jn + (size_t)i * nv, sizeof(mjtNum) * nv);
    for (int t = 0; t < r; t++) {
      memcpy(G + ((size_t)a * (1 + r) + 1 + t) * nv, c->Jt + ((size_t)i * r + t) * nv,
             sizeof(mjtNum) * nv);
    }
  }
  cusp_dtrsm_lower_left(G, 'N', L, 1.0, nv, nc, nv, nv);
}

// A (N x N, lda) and b (N) of contacts sel[0 .. k) from their whitened rows G (nv x k(1+r), as
// whiten_rows); W: (k(1+r))^2 scratch for G^T G
static void assemble_whitened(mjtNum* A, int lda, mjtNum* b, const cuspContactLcp* c,
                              const mjtNum* G, const int* sel, int k, mjtNum* W) {
  int nv = c->nv, r = c->r, s = block_size(r), N = k * s, nc = k * (1 + r);
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

void cusp_contact_assemble(mjtNum* A, int lda, mjtNum* b, const cuspContactLcp* c,
                           const mjtNum* L, const int* sel, int k, void* work) {
  int nc = k * (1 + c->r);
  mjtNum* G = (mjtNum*)work;               // (nv x nc) L^-1 J^T for the selected rows
  mjtNum* W = G + (size_t)c->nv * nc;      // (nc x nc) G^T G, lower triangle
  if (structured(c)) {
    mjtNum* Gw = W + (size_t)nc * nc;      // (nv x 3k)
    whiten_structured(Gw, c, L, sel, k);
    expand_whitened(G, Gw, c, k);
  } else {
    whiten_rows(G, c, L, sel, k);
  }
  assemble_whitened(A, lda, b, c, G, sel, k, W);
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

// 1 if stage 2 cannot help the problem of k contacts with whitened rows G (nv x k(1+r)): the
// diagonal of its normal and friction rows (W_pp = |G_p|^2, > 0) and the unit entries of the
// cone rows (with r > 0) lie within a factor `spread` of each other. The off-diagonal W_pq are
// bounded by sqrt(W_pp W_qq), so the row and column norms Ruiz equalises are then within that
// spread too, and its factors would stay within a few units of 1 while costing 2 passes over A
// each. O(nv k (1+r)).
static int well_scaled(const mjtNum* G, int nv, int k, int r, mjtNum spread) {
  if (!(spread > 1)) return 0;
  mjtNum lo = r > 0 ? 1 : INFINITY, hi = r > 0 ? 1 : 0;
  for (int col = 0; col < k * (1 + r); col++) {
    const mjtNum* g = G + (size_t)col * nv;
    mjtNum v = 0;
    for (int l = 0; l < nv; l++) v += g[l] * g[l];
    if (!(v > 0)) return 0;
    lo = min_num(lo, v);
    hi = max_num(hi, v);
  }
  return hi <= spread * lo;
}


// The Gram entries of contact a's whitened columns (normal, t, o) of Gw (nv x 3k): |g_n|^2,
// |g_t|^2, g_t.g_o, |g_o|^2
static void contact_grams(mjtNum* nn, mjtNum* tt, mjtNum* to, mjtNum* oo, const mjtNum* Gw,
                          int nv, int a) {
  const mjtNum* gn = Gw + (size_t)3 * a * nv;
  const mjtNum* gt = gn + nv;
  const mjtNum* go = gt + nv;
  mjtNum snn = 0, stt = 0, sto = 0, soo = 0;
  for (int l = 0; l < nv; l++) {
    snn += gn[l] * gn[l];
    stt += gt[l] * gt[l];
    sto += gt[l] * go[l];
    soo += go[l] * go[l];
  }
  *nn = snn, *tt = stt, *to = sto, *oo = soo;
}

// The same test from the whitened (normal, t, o) columns Gw (nv x 3k): friction diagonal t is
// c^2 |g_t|^2 + 2 c s g_t.g_o + s^2 |g_o|^2 with (c, s) = dirs of t
// First a bound that needs no loop over the directions: a friction diagonal d^T T2 d (|d| = 1,
// T2 = [tt to; to oo]) lies within T2's eigenvalues; when the bounds, widened by 1e-12 (the
// rounding of the products, at most a few units of 1e-16 of the largest eigenvalue, which the
// test itself keeps within spread of the smallest), pass the test, the directions' own values do
// too and the answer is 1 without them. Otherwise the directions decide, as always.
static int well_scaled_structured(const mjtNum* Gw, const mjtNum* dirs, int nv, int k, int r,
                                  mjtNum spread) {
  if (!(spread > 1)) return 0;
  mjtNum lo = 1, hi = 1;
  int bound = 1;
  for (int a = 0; a < k && bound; a++) {
    mjtNum nn, tt, to, oo;
    contact_grams(&nn, &tt, &to, &oo, Gw, nv, a);
    mjtNum mean = 0.5 * (tt + oo), half = 0.5 * (tt - oo);
    mjtNum rad = sqrt(half * half + to * to);
    mjtNum emin = (mean - rad) * (1 - 1e-12), emax = (mean + rad) * (1 + 1e-12);
    bound = nn > 0 && emin > 0;
    lo = min_num(lo, min_num(nn, emin));
    hi = max_num(hi, max_num(nn, emax));
  }
  if (bound && r > 0 && hi <= spread * lo) return 1;
  lo = 1, hi = 1;
  for (int a = 0; a < k; a++) {
    mjtNum nn, tt, to, oo;
    contact_grams(&nn, &tt, &to, &oo, Gw, nv, a);
    if (!(nn > 0)) return 0;
    lo = min_num(lo, nn);
    hi = max_num(hi, nn);
    for (int t = 0; t < r; t++) {
      mjtNum c = dirs[2 * t], sn = dirs[2 * t + 1];
      mjtNum v = c * c * tt + 2 * c * sn * to + sn * sn * oo;
      if (!(v > 0)) return 0;
      lo = min_num(lo, v);
      hi = max_num(hi, v);
    }
  }
  return hi <= spread * lo;
}

//---------------------------------- the warm path ----------------------------------------------
// An unscaled problem (stage 2 skipped) is checked without forming A: w = G^T (G z) + b and the
// cone rows cost 2 nv k (1+r) multiply-adds instead of the (k(1+r))^2 nv / 2 of W. A resting
// contact's warm start (the previous step's impulses) usually solves it, or does so after one
// active-set solve (the rows with z > 0 as equalities), and then nothing else is built.

// |z - max(0, z - w)| of one row, a NaN read as infinite
static inline mjtNum natural_residual(mjtNum z, mjtNum w) {
  mjtNum res = fabs(z - max_num(0.0, z - w));
  return isnan(res) ? INFINITY : res;
}

// a row's residual res and product zw = z w into the largest residual, the sum of squares and the
// largest |z w|
static inline void tally_row(mjtNum* nat, mjtNum* err2, mjtNum* comp, mjtNum res, mjtNum zw) {
  *nat = max_num(*nat, res);
  *err2 += res * res;
  *comp = max_num(*comp, fabs(zw));
}

// w (N) := A z + b of contacts sel[0 .. k) (A with eps_n added to the normal diagonal), and the
// natural-map residuals of z with it (info) and without eps_n (*res_original). y: (nv) scratch.
// The natural-map residuals of z (N) with w (N, in: A z + b without eps_n; out: with it), q2 the
// squared norm of b: into info (with eps_n on the normal rows, block size s) and *res_original.
static void warm_natural(mjtNum* w, cuspLcpInfo* info, mjtNum* res_original, const mjtNum* z,
                         int N, int s, mjtNum q2, mjtNum eps_n) {
  mjtNum nat = 0, orig = 0, err2 = 0, comp = 0;
  for (int i0 = 0; i0 < N; i0 += s) {  // a contact's block: its normal row, then the others
    mjtNum wi = w[i0] + eps_n * z[i0];
    orig = max_num(orig, natural_residual(z[i0], w[i0]));  // without eps_n
    tally_row(&nat, &err2, &comp, natural_residual(z[i0], wi), z[i0] * wi);
    w[i0] = wi;
    for (int i = i0 + 1; i < i0 + s; i++) {  // w[i] is the same with and without eps_n
      wi = w[i] + 0;  // + 0: a -0 written back as +0, as the normal row's sum does
      mjtNum res = natural_residual(z[i], wi);
      orig = max_num(orig, res);
      tally_row(&nat, &err2, &comp, res, z[i] * wi);
      w[i] = wi;
    }
  }
  info->residual = nat;
  info->siconos_error = sqrt(err2) / (q2 > 0 ? sqrt(q2) : 1.0);
  info->complementarity = comp;
  *res_original = orig;
}

// w (N) := A z + b of contacts sel[0 .. k) (A with eps_n added to the normal diagonal), and the
// natural-map residuals of z with it (info) and without eps_n (*res_original). G: the whitened
// columns (nv x k(1+r)); y: (nv) scratch.
static void warm_residual(mjtNum* w, cuspLcpInfo* info, mjtNum* res_original, mjtNum* y,
                          const mjtNum* z, const cuspContactLcp* c, const mjtNum* G,
                          const int* sel, int k, mjtNum eps_n) {
  int nv = c->nv, r = c->r, s = block_size(r);
  for (int l = 0; l < nv; l++) y[l] = 0;
  for (int a = 0; a < k; a++) {
    for (int p = 0; p <= r; p++) {
      mjtNum zp = z[a * s + p];
      if (zp == 0) continue;
      const mjtNum* g = G + ((size_t)a * (1 + r) + p) * nv;
      for (int l = 0; l < nv; l++) y[l] += g[l] * zp;
    }
  }
  mjtNum q2 = 0;
  for (int a = 0; a < k; a++) {
    int i = sel[a], o = a * s;
    for (int p = 0; p <= r; p++) {
      const mjtNum* g = G + ((size_t)a * (1 + r) + p) * nv;
      mjtNum v = 0;
      for (int l = 0; l < nv; l++) v += g[l] * y[l];
      mjtNum q = p == 0 ? c->bn[i] : c->bt[(size_t)i * r + p - 1];
      w[o + p] = v + q + (p > 0 ? z[o + 1 + r] : 0);
      q2 += q * q;
    }
    if (r > 0) {
      mjtNum v = c->mu[i] * z[o];
      for (int t = 0; t < r; t++) v -= z[o + 1 + t];
      w[o + 1 + r] = v;
    }
  }
  warm_natural(w, info, res_original, z, k * s, s, q2, eps_n);
}

// The same from the whitened (normal, t, o) columns Gw (nv x 3k): the friction impulses enter G z
// as their resultants tau_t = sum_t c_t beta_t, tau_o = sum_t s_t beta_t, and row t of W z is
// c_t (g_t . y) + s_t (g_o . y): 6 nv multiply-adds a contact instead of 2 (1 + r) nv.
static void warm_residual_structured(mjtNum* w, cuspLcpInfo* info, mjtNum* res_original,
                                     mjtNum* y, const mjtNum* z, const cuspContactLcp* c,
                                     const mjtNum* Gw, const int* sel, int k, mjtNum eps_n) {
  int nv = c->nv, r = c->r, s = block_size(r);
  const mjtNum* dirs = c->dirs;
  for (int l = 0; l < nv; l++) y[l] = 0;
  for (int a = 0; a < k; a++) {
    const mjtNum* zb = z + a * s;
    mjtNum tau_t = 0, tau_o = 0;
    for (int t = 0; t < r; t++) {
      tau_t += dirs[2 * t] * zb[1 + t];
      tau_o += dirs[2 * t + 1] * zb[1 + t];
    }
    const mjtNum* gn = Gw + (size_t)3 * a * nv;
    const mjtNum* gt = gn + nv;
    const mjtNum* go = gt + nv;
    if (zb[0] == 0 && tau_t == 0 && tau_o == 0) continue;
    for (int l = 0; l < nv; l++) y[l] += gn[l] * zb[0] + gt[l] * tau_t + go[l] * tau_o;
  }
  mjtNum q2 = 0;
  for (int a = 0; a < k; a++) {
    int i = sel[a], o = a * s;
    const mjtNum* gn = Gw + (size_t)3 * a * nv;
    const mjtNum* gt = gn + nv;
    const mjtNum* go = gt + nv;
    mjtNum pn = 0, pt = 0, po = 0;
    for (int l = 0; l < nv; l++) {
      pn += gn[l] * y[l];
      pt += gt[l] * y[l];
      po += go[l] * y[l];
    }
    w[o] = pn + c->bn[i];
    q2 += c->bn[i] * c->bn[i];
    mjtNum gamma = z[o + 1 + r], v = c->mu[i] * z[o];
    for (int t = 0; t < r; t++) {
      mjtNum q = c->bt[(size_t)i * r + t];
      w[o + 1 + t] = dirs[2 * t] * pt + dirs[2 * t + 1] * po + q + gamma;
      q2 += q * q;
      v -= z[o + 1 + t];
    }
    w[o + 1 + r] = v;
  }
  warm_natural(w, info, res_original, z, k * s, s, q2, eps_n);
}

// Entry (i, j) of A (eps_n on the normal diagonal) of contacts sel[0 .. k) from G
static mjtNum warm_entry(int i, int j, const cuspContactLcp* c, const mjtNum* G, const int* sel,
                         mjtNum eps_n) {
  int nv = c->nv, r = c->r, s = block_size(r);
  int ai = i / s, pi = i % s, aj = j / s, pj = j % s;
  if (pi <= r && pj <= r) {  // W
    const mjtNum* gi = G + ((size_t)ai * (1 + r) + pi) * nv;
    const mjtNum* gj = G + ((size_t)aj * (1 + r) + pj) * nv;
    mjtNum v = 0;
    for (int l = 0; l < nv; l++) v += gi[l] * gj[l];
    return v + (i == j && pi == 0 ? eps_n : 0);
  }
  if (ai != aj) return 0;
  if (pi <= r) return pi > 0 ? 1 : 0;  // friction row, gamma column: e
  if (pj == 0) return c->mu[sel[ai]];  // cone row: mu fn - e^T beta
  return pj <= r ? -1 : 0;
}

// Semidefinite solve of M x = rhs (n x n, lower triangle read; M overwritten) by Cholesky with
// diagonal pivoting: pivots below tol times the largest diagonal end the factorisation and their
// unknowns are 0 (a basic solution, exact when rhs is in the range). x (n): in rhs, out the
// solution; y (n) scratch, perm (n). Returns 0 if no pivot is left.
static int psd_solve(mjtNum* x, mjtNum* M, int n, mjtNum tol, mjtNum* y, int* perm) {
  mjtNum dmax = 0;
  for (int i = 0; i < n; i++) {
    perm[i] = i;
    dmax = fmax(dmax, M[i + (size_t)i * n]);
  }
  if (!(dmax > 0)) return 0;
  int rank = 0;
  // right-looking on the permuted lower triangle: symmetric swaps keep it lower
  for (int j = 0; j < n; j++) {
    int piv = j;
    for (int i = j + 1; i < n; i++) {
      if (M[i + (size_t)i * n] > M[piv + (size_t)piv * n]) piv = i;
    }
    if (!(M[piv + (size_t)piv * n] > tol * dmax)) break;
    if (piv != j) {  // swap rows/columns j and piv of the symmetric matrix (lower storage)
      for (int c = 0; c < n; c++) {
        int a1 = j, a2 = piv;
        mjtNum* e1 = c <= a1 ? &M[a1 + (size_t)c * n] : &M[c + (size_t)a1 * n];
        mjtNum* e2 = c <= a2 ? &M[a2 + (size_t)c * n] : &M[c + (size_t)a2 * n];
        if (c == a1 || c == a2) continue;
        mjtNum t = *e1;
        *e1 = *e2;
        *e2 = t;
      }
      mjtNum t = M[j + (size_t)j * n];
      M[j + (size_t)j * n] = M[piv + (size_t)piv * n];
      M[piv + (size_t)piv * n] = t;
      int pt = perm[j];
      perm[j] = perm[piv];
      perm[piv] = pt;
    }
    mjtNum d = sqrt(M[j + (size_t)j * n]);
    M[j + (size_t)j * n] = d;
    for (int i = j + 1; i < n; i++) M[i + (size_t)j * n] /= d;
    for (int c = j + 1; c < n; c++) {
      mjtNum f = M[c + (size_t)j * n];
      for (int i = c; i < n; i++) M[i + (size_t)c * n] -= M[i + (size_t)j * n] * f;
    }
    rank++;
  }
  if (rank == 0) return 0;
  // solve L11 L11^T y = P^T rhs (first rank entries), the rest 0
  for (int i = 0; i < rank; i++) y[i] = x[perm[i]];
  for (int i = 0; i < rank; i++) {
    mjtNum v = y[i];
    for (int q = 0; q < i; q++) v -= M[i + (size_t)q * n] * y[q];
    y[i] = v / M[i + (size_t)i * n];
  }
  for (int i = rank - 1; i >= 0; i--) {
    mjtNum v = y[i];
    for (int q = i + 1; q < rank; q++) v -= M[q + (size_t)i * n] * y[q];
    y[i] = v / M[i + (size_t)i * n];
  }
  for (int i = 0; i < n; i++) x[i] = 0;
  for (int i = 0; i < rank; i++) x[perm[i]] = y[i];
  return 1;
}

// Row i of an active set (act NULL: z > 0) taken as an equality by the active-set step. The cone
// slack gamma of a contact whose normal and friction rows are all outside the set is not: its row
// (mu fn - e^T beta) would be zero in A_SS, singular. Such a contact carries no impulse and its
// gamma (a backend leaves any value that keeps v_t + gamma >= 0 on a separating contact) only has
// to keep its friction rows nonnegative: settle_free_slacks sets it after the step.
static int in_active_set(const mjtNum* z, const unsigned char* act, int i, int s, int r) {
  if (!(act ? act[i] : z[i] > 0)) return 0;
  if (r == 0 || i % s != r + 1) return 1;
  int o = i - (r + 1);
  for (int p = 0; p <= r; p++) {
    if (act ? act[o + p] : z[o + p] > 0) return 1;
  }
  return 0;
}

// expand_whitened for the columns of the rows warm_polish takes as equalities only (the W rows of
// in_active_set(z, act)): the same values, the others left unwritten (G is then not expanded)
static void expand_active(mjtNum* G, const mjtNum* Gw, const cuspContactLcp* c, int k,
                          const mjtNum* z, const unsigned char* act) {
  int nv = c->nv, r = c->r, s = block_size(r);
  for (int a = 0; a < k; a++) {
    const mjtNum* gn = Gw + (size_t)3 * a * nv;
    const mjtNum* gt = gn + nv;
    const mjtNum* go = gt + nv;
    mjtNum* col = G + (size_t)a * (1 + r) * nv;
    if (in_active_set(z, act, a * s, s, r)) memcpy(col, gn, sizeof(mjtNum) * nv);
    for (int t = 0; t < r; t++) {
      if (!in_active_set(z, act, a * s + 1 + t, s, r)) continue;
      mjtNum ct = c->dirs[2 * t], st = c->dirs[2 * t + 1];
      mjtNum* g = col + (size_t)(1 + t) * nv;
      for (int l = 0; l < nv; l++) g[l] = ct * gt[l] + st * go[l];
    }
  }
}

// Contacts of z (k blocks) without normal or friction impulse get the smallest cone slack that
// keeps their friction rows nonnegative: gamma = max(0, max_t -v_t), v_t = w_t - gamma (w = A z + b
// at z). Returns 1 if some gamma changed (w is then stale).
static int settle_free_slacks(mjtNum* z, const mjtNum* w, int k, int r) {
  int s = block_size(r), changed = 0;
  if (r == 0) return 0;
  for (int a = 0; a < k; a++) {
    mjtNum* zb = z + a * s;
    int loaded = zb[0] != 0;
    for (int t = 0; t < r && !loaded; t++) loaded = zb[1 + t] != 0;
    if (loaded) continue;
    mjtNum gamma = 0;
    for (int t = 0; t < r; t++) gamma = max_num(gamma, zb[1 + r] - w[a * s + 1 + t]);
    if (gamma != zb[1 + r]) {
      zb[1 + r] = gamma;
      changed = 1;
    }
  }
  return changed;
}

// One Newton step on the rows with z > 0 (act NULL) or act[i] taken as equalities:
// A_SS dz_S = -w_S (w = A z + b at z), the others kept as they are (0). When every such row is a
// W row (no sliding contact), A_SS is symmetric semidefinite and is solved by pivoted Cholesky
// (singular when a sticking contact's r friction impulses all carry: W_tt has rank 2); otherwise
// by LU. Returns 1 and replaces z when the step keeps it nonnegative, or (clip) with the rows the
// step takes below 0 set to 0 (the residual then decides); work: N^2 + 2N mjtNum, iwork: 2N int.
static int warm_polish(mjtNum* z, const mjtNum* w, const cuspContactLcp* c, const mjtNum* G,
                       const int* sel, int k, mjtNum eps_n, const unsigned char* act, int clip,
                       mjtNum* work, int* iwork) {
  int r = c->r, s = block_size(r), N = k * s, ns = 0, wrows = 1;
  int* S = iwork;       // (N) the rows with z > 0
  int* ipiv = S + N;    // (N)
  for (int i = 0; i < N; i++) {
    if (in_active_set(z, act, i, s, r)) {
      S[ns++] = i;
      wrows &= i % s <= r;
    }
  }
  if (ns == 0) return 0;
  mjtNum* M = work;                    // (ns x ns)
  mjtNum* x = work + (size_t)ns * ns;  // (ns), then (ns) scratch for psd_solve
  for (int a = 0; a < ns; a++) x[a] = -w[S[a]];
  int ok, nv = c->nv;
  size_t nvv = (size_t)nv;
  if (wrows && ns > nv && (size_t)ns + 2 * nvv * nvv + 2 * nvv <= (size_t)N * N + 2 * (size_t)N) {
    // W_SS = G_S^T G_S has rank <= nv < ns (a sticking contact's r friction impulses all carry):
    // the step dz = G_S^T u with K u = y, K y = G_S x, K = G_S G_S^T (nv x nv) solves
    // W_SS dz = x whenever x is in W_SS's range, at ns nv^2 / 2 instead of ns^2 nv / 2 + ns nv^2;
    // eps_n is left out of the step (the residual check that follows includes it)
    x = work;                     // (ns) the step, filled at the end
    mjtNum* K = x + ns;           // (nv x nv) lower, then overwritten by its factor
    mjtNum* K2 = K + nvv * nvv;   // (nv x nv) the same for the second solve
    mjtNum* y = K2 + nvv * nvv;   // (nv)
    mjtNum* scr = y + nvv;        // (nv)
    for (size_t q = 0; q < nvv * nvv; q++) K[q] = 0;
    for (int l = 0; l < nv; l++) y[l] = 0;
    for (int a = 0; a < ns; a++) {
      int ja = S[a];
      const mjtNum* ga = G + ((size_t)(ja / s) * (1 + r) + ja % s) * nv;
      mjtNum xa = -w[ja];
      for (int j = 0; j < nv; j++) {
        mjtNum gj = ga[j];
        y[j] += gj * xa;
        for (int i = j; i < nv; i++) K[i + (size_t)j * nv] += ga[i] * gj;
      }
    }
    memcpy(K2, K, sizeof(mjtNum) * nvv * nvv);
    ok = psd_solve(y, K, nv, 1e-12, scr, ipiv) && psd_solve(y, K2, nv, 1e-12, scr, ipiv);
    for (int a = 0; a < ns && ok; a++) {
      int ja = S[a];
      const mjtNum* ga = G + ((size_t)(ja / s) * (1 + r) + ja % s) * nv;
      mjtNum v = 0;
      for (int l = 0; l < nv; l++) v += ga[l] * y[l];
      x[a] = v;
    }
  } else if (wrows) {  // A_SS = W_SS (+ eps_n on normals): symmetric semidefinite
    for (int bcol = 0; bcol < ns; bcol++) {
      int jb = S[bcol];
      const mjtNum* gb = G + ((size_t)(jb / s) * (1 + r) + jb % s) * nv;
      for (int a = bcol; a < ns; a++) {
        int ja = S[a];
        const mjtNum* ga = G + ((size_t)(ja / s) * (1 + r) + ja % s) * nv;
        mjtNum v = 0;
        for (int l = 0; l < nv; l++) v += ga[l] * gb[l];
        M[a + (size_t)bcol * ns] = v + (a == bcol && ja % s == 0 ? eps_n : 0);
      }
    }
    ok = psd_solve(x, M, ns, 1e-12, x + ns, ipiv);
  } else {
    for (int bcol = 0; bcol < ns; bcol++) {
      for (int a = 0; a < ns; a++) {
        M[a + (size_t)bcol * ns] = warm_entry(S[a], S[bcol], c, G, sel, eps_n);
      }
    }
    ok = cusp_dgetrf(M, ipiv, ns, ns, ns) == 0 &&
         cusp_dgetrs(x, 'N', M, ipiv, ns, 1, ns, ns) == 0;
  }
  for (int a = 0; a < ns && ok && !clip; a++) ok = z[S[a]] + x[a] >= 0;
  if (!ok) return 0;
  for (int a = 0; a < ns; a++) z[S[a]] = max_num(z[S[a]] + x[a], 0.0);
  return 1;
}

// warm_polish for a no-sliding active set larger than nv, from the whitened (normal, t, o)
// columns Gw (nv x 3k): with S_a the active friction rows of contact a, W_SS's range term is
// K = sum_a [g_n g_n^T (if fn active) + A g_t g_t^T + B (g_t g_o^T + g_o g_t^T) + C g_o g_o^T],
// (A, B, C) = sums over S_a of (c^2, c s, s^2); a friction row's step is c (g_t . u) + s (g_o . u).
// Returns -1 when the set does not qualify (the caller expands G and takes warm_polish), else as
// warm_polish (act, clip too). work: 2 nv^2 + 3 nv mjtNum; iwork: nv int.
static int warm_polish_structured(mjtNum* z, const mjtNum* w, const cuspContactLcp* c,
                                  const mjtNum* Gw, int k, const unsigned char* act, int clip,
                                  mjtNum* work, int* iwork) {
  int nv = c->nv, r = c->r, s = block_size(r), N = k * s, ns = 0;
  const mjtNum* dirs = c->dirs;
  for (int i = 0; i < N; i++) {
    if (in_active_set(z, act, i, s, r)) {
      if (i % s > r) return -1;  // a sliding contact: LU on A_SS
      ns++;
    }
  }
  size_t nvv = (size_t)nv;
  if (ns <= nv || 2 * nvv * nvv + 2 * nvv > (size_t)N * N + 2 * (size_t)N) return -1;
  mjtNum* K = work;             // (nv x nv) lower
  mjtNum* K2 = K + nvv * nvv;   // (nv x nv)
  mjtNum* y = K2 + nvv * nvv;   // (nv) G_S x, then u
  mjtNum* scr = y + nvv;        // (nv)
  for (size_t q = 0; q < nvv * nvv; q++) K[q] = 0;
  for (int l = 0; l < nv; l++) y[l] = 0;
  for (int a = 0; a < k; a++) {
    const mjtNum* zb = z + a * s;
    const mjtNum* wb = w + a * s;
    const mjtNum* g[3] = {Gw + (size_t)3 * a * nv, Gw + ((size_t)3 * a + 1) * nv,
                          Gw + ((size_t)3 * a + 2) * nv};
    const unsigned char* ab = act ? act + a * s : NULL;
    mjtNum coef[3][3] = {{0}}, xs[3] = {0, 0, 0};  // K's 3 x 3 weights over (n, t, o); G_S x
    if (ab ? ab[0] : zb[0] > 0) {
      coef[0][0] = 1;
      xs[0] = -wb[0];
    }
    for (int t = 0; t < r; t++) {
      if (!(ab ? ab[1 + t] : zb[1 + t] > 0)) continue;
      mjtNum ct = dirs[2 * t], st = dirs[2 * t + 1];
      coef[1][1] += ct * ct;
      coef[1][2] += ct * st;
      coef[2][2] += st * st;
      xs[1] -= ct * wb[1 + t];
      xs[2] -= st * wb[1 + t];
    }
    coef[2][1] = coef[1][2];
    for (int j = 0; j < nv; j++) {
      for (int p = 0; p < 3; p++) y[j] += g[p][j] * xs[p];
      for (int q = 0; q < 3; q++) {
        mjtNum f = 0;
        for (int p = 0; p < 3; p++) f += coef[p][q] * g[p][j];  // (coef g_j) of column q
        if (f == 0) continue;
        for (int i = j; i < nv; i++) K[i + (size_t)j * nv] += g[q][i] * f;
      }
    }
  }
  memcpy(K2, K, sizeof(mjtNum) * nvv * nvv);
  if (!psd_solve(y, K, nv, 1e-12, scr, iwork) || !psd_solve(y, K2, nv, 1e-12, scr, iwork)) return 0;
  // the step, row by row; applied only if every active row stays nonnegative
  for (int pass = 0; pass < 2; pass++) {
    for (int a = 0; a < k; a++) {
      mjtNum* zb = z + a * s;
      const mjtNum* gn = Gw + (size_t)3 * a * nv;
      mjtNum pn = 0, pt = 0, po = 0;
      for (int l = 0; l < nv; l++) {
        pn += gn[l] * y[l];
        pt += gn[nv + l] * y[l];
        po += gn[2 * nv + l] * y[l];
      }
      const unsigned char* ab = act ? act + a * s : NULL;
      for (int p = 0; p <= r; p++) {
        if (!(ab ? ab[p] : zb[p] > 0)) continue;
        mjtNum dz = p == 0 ? pn : dirs[2 * (p - 1)] * pt + dirs[2 * (p - 1) + 1] * po;
        if (pass == 0 && !clip && !(zb[p] + dz >= 0)) return 0;
        if (pass == 1) zb[p] = max_num(zb[p] + dz, 0.0);
      }
    }
  }
  return 1;
}

// the warm path's active-set steps: the first, then up to 3 rounds when it fails
enum { kWarmRounds = 4 };

static size_t warm_worksize(int nv, int N) {
  size_t NN = (size_t)(N > 0 ? N : 1), nvv = (size_t)(nv > 0 ? nv : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (NN * NN + 2 * NN + nvv)) + CUSP_ALIGN(sizeof(int) * 3 * NN);
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
  if (opt->finish) {
    size_t fin = cusp_lcp_finish_worksize(N);
    need = need > fin ? need : fin;
  }
  size_t rc = CUSP_ALIGN(sizeof(mjtNum) * (size_t)N * N + 8) + cusp_rcond_worksize(N);
  return need > rc ? need : rc;
}

size_t cusp_contact_worksize(int nv, int m, int r, const cuspConditionOptions* opt) {
  int s = block_size(r), N = m * s;
  size_t nvv = (size_t)(nv > 0 ? nv : 1), NN = (size_t)(N > 0 ? N : 1);
  size_t nc = (size_t)(m > 0 ? m : 1) * (size_t)(1 + r);
  size_t bytes = CUSP_ALIGN(sizeof(mjtNum) * nvv * nvv);                 // L
  bytes += CUSP_ALIGN(sizeof(mjtNum) * nvv * nc);                         // G
  bytes += CUSP_ALIGN(sizeof(mjtNum) * nvv * 3 * (size_t)(m > 0 ? m : 1)); // Gw
  // A0, A, b, dr, dc, z, w, b0, z0, zf, zs, zk
  bytes += CUSP_ALIGN(sizeof(mjtNum) * (2 * NN * NN + 10 * NN));
  bytes += CUSP_ALIGN(sizeof(int) * 3 * (size_t)(m > 0 ? m : 1));         // sel, sel_qr, cls
  size_t s1 = cusp_rank_select_worksize(nv, m);
  size_t s0 = rank_screen_worksize(m);
  s1 = s1 > s0 ? s1 : s0;
  size_t s2 = cusp_contact_assemble_worksize(nv, m, r);
  size_t s3 = solve_lcp_bytes(N, opt);
  size_t s4 = warm_worksize(nv, N);
  size_t scratch = s1 > s2 ? s1 : s2;
  scratch = scratch > s3 ? scratch : s3;
  scratch = scratch > s4 ? scratch : s4;
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

// the answer z (N) of contacts sel[0 .. k) into the caller's arrays (cleared before)
static void scatter_answer(mjtNum* fn, mjtNum* beta, mjtNum* gamma, const mjtNum* z,
                           const int* sel, int k, int r) {
  int s = block_size(r);
  for (int a = 0; a < k; a++) {
    int i = sel[a];
    fn[i] = z[a * s];
    for (int t = 0; t < r; t++) beta[(size_t)i * r + t] = z[a * s + 1 + t];
    if (r > 0 && gamma) gamma[i] = z[a * s + 1 + r];
  }
}

// The one-contact closed form (contact_closed.h) on contact 0's whitened rows g_n, g_t, g_o =
// L^-1 (rows)^T, formed by forward substitution (nv^2 / 2 each, as the small dtrsm), and their
// products Wc. Returns 1 with the answer in fn, beta, gamma, keep and info, 0 when the pipeline
// must solve the problem (a zero normal row: stage 1 drops it; no candidate within tol).
// g: (3 nv) scratch; z, w: (s) scratch.
static int solve_closed_form(mjtNum* fn, mjtNum* beta, mjtNum* gamma, int* keep,
                             cuspConditionInfo* info, const cuspContactLcp* c, const mjtNum* L,
                             int ldl, const cuspConditionOptions* opt, mjtNum* g, mjtNum* z,
                             mjtNum* w) {
  int nv = c->nv, r = c->r, rows = r > 0 ? 3 : 1;
  for (int l = 0; l < nv; l++) g[l] = c->Jn[l];
  if (r > 0) {
    for (int l = 0; l < 2 * nv; l++) g[nv + l] = c->Jto[l];
  }
  for (int q = 0; q < rows; q++) {
    mjtNum* x = g + (size_t)q * nv;
    for (int k = 0; k < nv; k++) {
      if (x[k] == 0) continue;
      const mjtNum* lk = L + (size_t)k * ldl;
      x[k] = x[k] / lk[k];
      mjtNum xk = x[k];
      for (int i = k + 1; i < nv; i++) x[i] = x[i] - xk * lk[i];
    }
  }
  mjtNum wc[6] = {0, 0, 0, 0, 0, 0};  // nn, nt, no, tt, to, oo
  const mjtNum* gn = g;
  const mjtNum* gt = g + nv;
  const mjtNum* go = g + 2 * (size_t)nv;
  for (int l = 0; l < nv; l++) wc[0] += gn[l] * gn[l];
  if (!(wc[0] > 0)) return 0;
  if (r > 0) {
    for (int l = 0; l < nv; l++) {
      wc[1] += gn[l] * gt[l];
      wc[2] += gn[l] * go[l];
      wc[3] += gt[l] * gt[l];
      wc[4] += gt[l] * go[l];
      wc[5] += go[l] * go[l];
    }
  }
  mjtNum eps_n = opt->tikhonov && opt->eps_w > 0 ? opt->eps_w : 0, res_orig;
  if (!cusp_contact1_solve(z, w, &info->lcp, &res_orig, wc, c->bn[0], c->bt, r ? c->mu[0] : 0,
                           c->dirs, r, eps_n, opt->lcp.tol)) {
    return 0;
  }
  fn[0] = z[0];
  for (int t = 0; t < r; t++) beta[t] = z[1 + t];
  if (r > 0 && gamma) gamma[0] = z[r + 1];
  if (keep) keep[0] = 1;
  info->kept = 1;
  info->n_lcp = r > 0 ? r + 2 : 1;
  if (opt->estimate_condition) info->rcond_before = info->rcond_after = 1;  // a 1 x 1 block
  info->residual_original = res_orig;
  info->closed_form = 1;
  info->lcp.status = CUSP_LCP_SOLVED;
  info->lcp.message = "";
  info->lcp.index = -1;
  info->lcp.backend = "closed form";
  info->lcp.iterations = 0;
  return 1;
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
      (c->r > 0 && c->m > 0 &&
       ((!c->Jt && !(c->Jto && c->dirs)) || !c->mu || !c->bt || !beta))) {
    info->lcp.message = "bad contact data (sizes or NULL arrays)";
    return info->lcp.status;
  }
  if (work_bytes < cusp_contact_worksize(c->nv, c->m, c->r, opt)) {
    info->lcp.message = "workspace too small";
    return info->lcp.status;
  }
  int nv = c->nv, m = c->m, r = c->r, s = block_size(r), Nfull = m * s;
  size_t nvv = (size_t)nv, NN = (size_t)(Nfull > 0 ? Nfull : 1);
  size_t ncmax = (size_t)(m > 0 ? m : 1) * (size_t)(1 + r);
  char* p = (char*)work;
  mjtNum* Lw = (mjtNum*)p;  // (nv x nv) lower Cholesky factor of Meff, when it is not given
  p += CUSP_ALIGN(sizeof(mjtNum) * nvv * nvv);
  mjtNum* G = (mjtNum*)p;  // (nv x m(1+r)) whitened rows L^-1 J^T (kept contacts first)
  p += CUSP_ALIGN(sizeof(mjtNum) * nvv * ncmax);
  mjtNum* Gw = (mjtNum*)p;  // (nv x 3m) whitened (normal, t, o) rows when structured
  p += CUSP_ALIGN(sizeof(mjtNum) * nvv * 3 * (size_t)(m > 0 ? m : 1));
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
  mjtNum* zs = zf + NN;     // (N) the unscaled start of the dense path
  mjtNum* zk = zs + NN;     // (N) the scaled attempt's unscaled answer, when it failed
  p += CUSP_ALIGN(sizeof(mjtNum) * (2 * NN * NN + 10 * NN));
  int* sel = (int*)p;       // (m)
  int* sel_qr = sel + (m > 0 ? m : 1);  // (m) the QR's selection, when the screen's failed
  int* cls = sel_qr + (m > 0 ? m : 1);  // (m) stage 1's priority classes (rank_classes)
  p += CUSP_ALIGN(sizeof(int) * 3 * (size_t)(m > 0 ? m : 1));
  void* scratch = p;
  size_t scratch_bytes = work_bytes - (size_t)(p - (char*)work);

  info->detected = m;
  // one contact: its closed form, from the factor as given when it is one (no copy of L)
  int closed = opt->closed_form && m == 1 && (r == 0 || structured(c));
  if (closed && c->meff_is_factor &&
      solve_closed_form(fn, beta, gamma, keep, info, c, c->Meff, nv, opt, Gw, z, w)) {
    info->lcp.seconds = cusp_now() - t0;
    return CUSP_LCP_SOLVED;
  }
  for (int i = 0; i < m; i++) fn[i] = opt->lcp.warm_start ? fn[i] : 0;
  // Cholesky factor of Meff: the caller's when given (only its lower triangle is read: the
  // triangular solves and the closed form), else factored here
  const mjtNum* L = c->Meff;
  if (!c->meff_is_factor) {
    for (int j = 0; j < nv; j++) {
      memcpy(Lw + (size_t)j * nv, c->Meff + (size_t)j * nv, sizeof(mjtNum) * nv);
    }
    if (cusp_dpotrf(Lw, nv, nv) != 0) {
      info->lcp.status = CUSP_LCP_NUMERICAL;
      info->lcp.message = "Meff is not positive definite";
      return info->lcp.status;
    }
    for (int j = 1; j < nv; j++) memset(Lw + (size_t)j * nv, 0, sizeof(mjtNum) * (size_t)j);
    L = Lw;
  }
  if (closed && !c->meff_is_factor &&
      solve_closed_form(fn, beta, gamma, keep, info, c, L, nv, opt, Gw, z, w)) {
    info->lcp.seconds = cusp_now() - t0;
    return CUSP_LCP_SOLVED;
  }

  if (opt->estimate_condition && m > 0) {
    cusp_contact_assemble(A0, Nfull, b0, c, L, NULL, m, scratch);
    info->rcond_before = normal_block_rcond(A0, Nfull, m, s, scratch);
  }
  // every contact's rows whitened once: stage 1 reads the normals, assembly all of them (given
  // as t, o rows and directions: those 3 rows a contact, the r friction columns only if needed)
  int st = structured(c), cw = st ? 3 : 1 + r;  // whitened columns a contact
  mjtNum* Gc = st ? Gw : G;                     // (nv x m cw)
  // a problem that fails with the screen's selection is solved again, cold, with the QR's when
  // that differs: among exactly dependent contacts (the corners of a face pressed on a wall) the
  // choice is a tie broken by rounding, and the friction LCP of one choice can be much harder
  // than another's (an arm holding a parcel: Lemke 3e-6 against 1e-14)
  cuspConditionOptions retry_opt;
  int qr_retry = 0, retry_iterations = 0;
  // the warm start's loads are not a class yet: kept first (even after the violated ones) they
  // change which contact of a dependent pair is kept at an impact, and FB Newton alone then
  // failed 3 steps of disk_drop (tests/python/test_ncpsmooth_scenes.py)
  rank_classes(cls, NULL, c->bn, m);
reselect:
  if (m > 0) {
    if (st) whiten_normals(Gw, c, L, m);  // the kept contacts' t, o columns after stage 1
    else whiten_rows(G, c, L, NULL, m);
  }
  // stage 1: the Cholesky screening, the QR when a decision is close
  int k = m;
  if (opt->rank_select && m > 0) {
    int clear;
    k = qr_retry ? 0 : rank_screen(sel, &clear, Gc, cw, cls, nv, m, opt->eps_rank, scratch);
    if (qr_retry) {
      k = qr_retry;
      memcpy(sel, sel_qr, sizeof(int) * (size_t)k);
    } else if (!clear) {
      k = rank_select_classes(sel, L, c->Jn, cls, nv, m, opt->eps_rank, scratch);
      info->rank_qr = 1;
    }
  } else {
    for (int i = 0; i < m; i++) sel[i] = i;
  }
  info->kept = k;
  info->dropped = m - k;
  if (opt->lcp.warm_start && c->pair && k < m) {
    inherit_warm_start(fn, beta, gamma, Gc, cw, nv, r, c->pair, sel, k, m);
  }
  int N = k * s;
  info->n_lcp = N;
  if (keep) {
    for (int i = 0; i < m; i++) keep[i] = 0;
    for (int a = 0; a < k; a++) keep[sel[a]] = 1;
  }
  // the kept contacts' whitened rows to the front (sel ascending: a block never moves back)
  for (int a = 0; a < k; a++) {
    if (sel[a] == a) continue;
    memmove(Gc + (size_t)a * cw * nv, Gc + (size_t)sel[a] * cw * nv,
            sizeof(mjtNum) * nvv * (size_t)cw);
  }
  if (st) whiten_tangents(Gw, c, L, sel, k);
  // warm start values of the kept contacts, then clear the outputs
  int warm = opt->lcp.warm_start;
  for (int a = 0; a < k; a++) {
    int i = sel[a];
    z[a * s] = fn[i];
    for (int t = 0; t < r; t++) z[a * s + 1 + t] = warm ? beta[(size_t)i * r + t] : 0;
    if (r > 0) z[a * s + 1 + r] = warm && gamma ? gamma[i] : 0;
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
  // stage 2 is priced: an island already equilibrated is decided on its unscaled problem (the
  // warm path without forming A, then the backends unscaled; scaled only if they fail)
  int equilibrated = !(opt->ruiz && opt->ruiz_passes > 0) ||
                     (st ? well_scaled_structured(Gw, c->dirs, nv, k, r, opt->ruiz_skip_spread)
                         : well_scaled(G, nv, k, r, opt->ruiz_skip_spread));
  int ruiz = !equilibrated;  // stage 2 would scale the problem the backends solve
  int scale = opt->ruiz && opt->ruiz_passes > 0;
  int expanded = !st;  // G holds the kept contacts' 1 + r whitened columns
  mjtNum eps_n = opt->tikhonov && opt->eps_w > 0 ? opt->eps_w : 0;
  // the warm path: the warm start, or its active-set solve, if it solves the problem itself
  // (unscaled: the residual the physics sees, with the tolerance the backends meet on the problem
  // they solve), equilibrated or not: a resting island then never forms A (a rod lying on the
  // floor, 21 kept contacts: W, Ruiz and the candidate's check were 90 % of its step). For an
  // island that stage 2 scales, a step that fails unscaled is still a candidate (zf), checked on
  // the scaled problem below before any backend runs
  int candidate = 0;
  if (opt->lcp.warm_start) {
    mjtNum* wk = (mjtNum*)scratch;  // warm_worksize: (N^2 + 2N) polish, (nv) y
    mjtNum* y = wk + (size_t)N * N + 2 * N;
    int* iwk = (int*)((char*)scratch + CUSP_ALIGN(sizeof(mjtNum) * ((size_t)N * N + 2 * N + nvv)));
    mjtNum res_orig;  // iwk: (2N) polish, (N) the rounds' rows
    if (st) warm_residual_structured(w, &info->lcp, &res_orig, y, z, c, Gw, sel, k, eps_n);
    else warm_residual(w, &info->lcp, &res_orig, y, z, c, G, sel, k, eps_n);
    int solved = info->lcp.residual <= opt->lcp.tol, polished = 0;
    if (!solved) {
      // the active-set step from the warm start; if it fails (a row it drives below 0, a row it
      // leaves at w < -tol), further rounds on the rows with z > 0 or w < -tol, the step's
      // negative rows set to 0: a contact that loads or unloads between steps is then solved
      // here, without forming A (a rod settling on the floor: 108 of 1000 steps went to the
      // backends, 4-6 ms each, most of the scene's cost)
      unsigned char* act = (unsigned char*)(iwk + 2 * N);  // (N) the next round's rows
      memcpy(zf, z, sizeof(mjtNum) * N);
      for (int round = 0; round < kWarmRounds && !solved; round++) {
        const unsigned char* set = round ? act : NULL;
        int stepped = st ? warm_polish_structured(zf, w, c, Gw, k, set, round > 0, wk, iwk) : -1;
        if (stepped < 0) {
          if (!expanded) expand_active(G, Gw, c, k, zf, set);  // the columns the step reads
          stepped = warm_polish(zf, w, c, G, sel, k, eps_n, set, round > 0, wk, iwk);
        }
        if (stepped) {
          cuspLcpInfo trial = info->lcp;
          mjtNum trial_orig;
          if (st) warm_residual_structured(w, &trial, &trial_orig, y, zf, c, Gw, sel, k, eps_n);
          else warm_residual(w, &trial, &trial_orig, y, zf, c, G, sel, k, eps_n);
          if (!(trial.residual <= opt->lcp.tol) && settle_free_slacks(zf, w, k, r)) {
            if (st) warm_residual_structured(w, &trial, &trial_orig, y, zf, c, Gw, sel, k, eps_n);
            else warm_residual(w, &trial, &trial_orig, y, zf, c, G, sel, k, eps_n);
          }
          if (trial.residual <= opt->lcp.tol) {
            memcpy(z, zf, sizeof(mjtNum) * N);
            info->lcp = trial;
            res_orig = trial_orig;
            solved = 1;
            polished = round + 1;
            break;
          }
          if (round == 0 && ruiz) {
            candidate = 1;  // the first step's answer: checked on the scaled problem below
            memcpy(zs, zf, sizeof(mjtNum) * N);
          }
          if (!isfinite(trial.residual)) break;
        } else if (round > 0) {
          break;
        }
        // w = A zf + b here (after a failed step zf and w are the round's start)
        for (int i = 0; i < N; i++) act[i] = zf[i] > 0 || w[i] < -opt->lcp.tol;
      }
      if (candidate && !solved) memcpy(zf, zs, sizeof(mjtNum) * N);
    }
    if (solved) {
      info->lcp.status = CUSP_LCP_SOLVED;
      info->lcp.message = "";
      info->lcp.index = -1;
      info->lcp.backend = "warm start";
      info->lcp.iterations = polished;
      info->residual_original = res_orig;
      scatter_answer(fn, beta, gamma, z, sel, k, r);
      info->lcp.seconds = cusp_now() - t0;
      return CUSP_LCP_SOLVED;
    }
  }
  if (!expanded) expand_whitened(G, Gw, c, k);
  assemble_whitened(A0, N, b0, c, G, sel, k, (mjtNum*)scratch);
  memcpy(zs, z, sizeof(mjtNum) * N);  // the (unscaled) start of every attempt
  const cuspLcpBackend* be = cusp_lcp_backend(opt->backend);
  if (!be) be = cusp_lcp_backend(CUSP_LCP_CHAIN);
  cuspLcpOptions lcp_opt = opt->lcp;
  lcp_opt.block = s;  // PGS sweeps contact by contact (the cone-slack row has a zero diagonal)
  // an equilibrated island is solved unscaled first; if that fails, once more with stage 2 (on
  // degenerate friction LCPs the backends can need the equilibration even then: a box resting
  // on an arm's disks failed 26 of 3000 steps unscaled, none with the retry); one that stage 2
  // scales is solved scaled first and, if that fails, once more unscaled: Ruiz's row factors can
  // shrink a row's residual below tol while the backend's answer is not the solution (the scene
  // fuzzer's disk islands, seeds 200000-201999 x 500 steps: 109 failed solves, 59 with the
  // unscaled retry)
  int attempts = scale ? 2 : 1, earlier_iterations = 0, warm_solved = 0;
  cuspLcpInfo failed_scaled;
  cuspLcpProblem prob = {N, A, N, b, NULL, NULL};
  int retried = 0;  // the unscaled retry of an island stage 2 scales ran
  for (int attempt = 0; attempt < attempts; attempt++) {
    // the retry is made only while the step's pool still holds a whole run's budget: its finish
    // is no backend run, and from a start the budget left unsolved it would solve outside it
    if (attempt == 1 && !equilibrated) {
      mjtNum own = opt->lcp.work_budget > 0 ? opt->lcp.work_budget : CUSP_SOLVE_WORK_BUDGET;
      if (opt->lcp.work_pool && opt->lcp.work_budget >= 0 && !(*opt->lcp.work_pool >= own)) break;
      retried = 1;
    }
    int scaled = scale && (equilibrated ? attempt == 1 : attempt == 0);
    for (int j = 0; j < N; j++) memcpy(A + (size_t)j * N, A0 + (size_t)j * N, sizeof(mjtNum) * N);
    memcpy(b, b0, sizeof(mjtNum) * N);
    // stage 2
    if (scaled) {
      cusp_ruiz(A, b, dr, dc, N, N, opt->ruiz_passes, w);  // w, z0 (2 N): free until the solve
      info->ruiz_applied = 1;
    } else {
      for (int i = 0; i < N; i++) dr[i] = dc[i] = 1;
    }
    // stage 3
    if (eps_n > 0) {
      for (int a = 0; a < k; a++) A[a * s + (size_t)(a * s) * N] += eps_n;
    }
    if (opt->estimate_condition) info->rcond_after = normal_block_rcond(A, N, k, s, scratch);
    // solve the conditioned problem z' = Dc^-1 z
    for (int i = 0; i < N; i++) z[i] = zs[i] / dc[i];
    memcpy(z0, z, sizeof(mjtNum) * N);
    // a warm start that already solves the scaled problem is the answer, or else the warm path's
    // active-set step if that does: no backend runs
    warm_solved = 0;
    if (opt->lcp.warm_start && scaled) {
      cusp_lcp_residual(w, &info->lcp, z, &prob);
      warm_solved = info->lcp.residual <= opt->lcp.tol;
      if (!warm_solved && candidate) {
        cuspLcpInfo trial = info->lcp;
        for (int i = 0; i < N; i++) zf[i] /= dc[i];
        cusp_lcp_residual(w, &trial, zf, &prob);
        if (trial.residual <= opt->lcp.tol) {
          memcpy(z, zf, sizeof(mjtNum) * N);
          info->lcp = trial;
          warm_solved = 2;
        } else {
          cusp_lcp_residual(w, &info->lcp, z, &prob);  // w back to the warm start's
        }
      }
    }
    if (warm_solved) {
      info->lcp.status = CUSP_LCP_SOLVED;
      info->lcp.message = "";
      info->lcp.backend = "warm start";
      info->lcp.iterations = warm_solved - 1;
    } else {
      be->solve(z, w, &info->lcp, &prob, &lcp_opt, scratch, scratch_bytes);
    }
    if (info->lcp.status != CUSP_LCP_SOLVED && uses_fallback(opt)) {
      solve_fallback(z, w, zf, z0, &info->lcp, &prob, &lcp_opt, opt->backend, scratch,
                     scratch_bytes);
      info->fell_back = 1;
    }
    // no false success: whichever backend answered, its answer is checked here, on the problem
    // it was given, against the tolerance (and a failure keeps the backend's own status)
    if (!warm_solved) {
      cuspLcpInfo chk = info->lcp;
      cusp_lcp_residual(w, &chk, z, &prob);
      info->lcp.residual = chk.residual;
      info->lcp.siconos_error = chk.siconos_error;
      info->lcp.complementarity = chk.complementarity;
      if (info->lcp.status == CUSP_LCP_SOLVED && !(chk.residual <= opt->lcp.tol)) {
        info->lcp.status = CUSP_LCP_NUMERICAL;
        info->lcp.message = "final residual above tolerance";
      }
    }
    if (info->lcp.status != CUSP_LCP_SOLVED && opt->finish && isfinite(info->lcp.residual)) {
      // a backend that stopped short (PGS's linear rate, a budget cut) often has the answer's
      // active set already: one active-set solve from its answer (the warm path's step), kept
      // if it solves the problem the backend was given
      mjtNum* wk = (mjtNum*)scratch;  // warm_worksize: (N^2 + 2N) step, (nv) y
      mjtNum* y = wk + (size_t)N * N + 2 * N;
      int* iwk = (int*)((char*)scratch + CUSP_ALIGN(sizeof(mjtNum) * ((size_t)N * N + 2 * N + nvv)));
      cuspLcpInfo trial = info->lcp;
      mjtNum trial_orig;
      for (int i = 0; i < N; i++) zf[i] = z[i] * dc[i];
      warm_residual(w, &trial, &trial_orig, y, zf, c, G, sel, k, eps_n);
      if (warm_polish(zf, w, c, G, sel, k, eps_n, NULL, 0, wk, iwk)) {
        for (int i = 0; i < N; i++) zf[i] /= dc[i];
        cusp_lcp_residual(w, &trial, zf, &prob);
        if (trial.residual <= opt->lcp.tol) {
          memcpy(z, zf, sizeof(mjtNum) * N);
          info->lcp.status = CUSP_LCP_SOLVED;
          info->lcp.message = "";
          info->lcp.index = -1;
          info->lcp.residual = trial.residual;
          info->lcp.siconos_error = trial.siconos_error;
          info->lcp.complementarity = trial.complementarity;
          info->lcp.iterations++;
          info->finish = 1;
        }
      }
    }
    if (info->lcp.status != CUSP_LCP_SOLVED && opt->finish && isfinite(info->lcp.residual)) {
      // that step failed (a singular active set, a wrong row in it): the finish proper
      // (lcp_finish.c) from the backend's answer on the problem it was given
      int how = cusp_lcp_finish(z, w, &info->lcp, &prob, &lcp_opt, scratch, scratch_bytes);
      if (how) info->finish = 1 + how;
    }
    info->lcp.iterations += earlier_iterations;
    earlier_iterations = info->lcp.iterations;
    if (info->lcp.status == CUSP_LCP_SOLVED) break;
    if (!equilibrated && attempt == 0) {  // kept for the comparison below
      for (int i = 0; i < N; i++) zk[i] = z[i] * dc[i];
      failed_scaled = info->lcp;
    }
  }
  if (retried && info->lcp.status != CUSP_LCP_SOLVED) {
    // both failed: the answer (and report) of the one nearer a solution of the unscaled problem
    // (its correction is applied, scaled down, in the step)
    cuspLcpProblem unscaled = {N, A0, N, b0, NULL, NULL};
    cuspLcpInfo first, second;
    cusp_lcp_residual(w, &first, zk, &unscaled);
    for (int i = 0; i < N; i++) zf[i] = z[i] * dc[i];
    cusp_lcp_residual(w, &second, zf, &unscaled);
    if (first.residual < second.residual) {
      for (int i = 0; i < N; i++) z[i] = zk[i], dc[i] = 1;
      failed_scaled.iterations = info->lcp.iterations;
      failed_scaled.work += info->lcp.work;
      info->lcp = failed_scaled;
    }
  }
  if (info->lcp.status != CUSP_LCP_SOLVED && opt->rank_select && !info->rank_qr && k < m) {
    int kq = rank_select_classes(sel_qr, L, c->Jn, cls, nv, m, opt->eps_rank, scratch);
    if (kq > 0 && (kq != k || memcmp(sel_qr, sel, sizeof(int) * (size_t)k) != 0)) {
      retry_opt = *opt;
      retry_opt.lcp.warm_start = 0;  // the outputs were cleared: a cold start
      opt = &retry_opt;
      qr_retry = kq;
      retry_iterations = info->lcp.iterations;
      info->rank_qr = 1;
      goto reselect;  // the rows are whitened again (the kept ones were moved to the front)
    }
  }
  info->lcp.iterations += retry_iterations;
  for (int i = 0; i < N; i++) z[i] *= dc[i];
  // what the unconditioned reduced problem says about the unscaled answer
  cuspLcpProblem orig = {N, A0, N, b0, NULL, NULL};
  cuspLcpInfo chk;
  cusp_lcp_residual(w, &chk, z, &orig);
  info->residual_original = chk.residual;
  scatter_answer(fn, beta, gamma, z, sel, k, r);
  info->lcp.seconds = cusp_now() - t0;
  return info->lcp.status;
}
