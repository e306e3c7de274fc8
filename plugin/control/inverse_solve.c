// cusp.inverse: one control step (inverse.h) on the controller's model (inverse_model.h): the
// actuation and contact impulses in up to three tries (the contacts' last modes held, the whole
// complementarity as one box LCP, a block Gauss-Seidel), then the report.
#include <math.h>

#include "collide/contact.h"
#include "control/inverse.h"
#include "control/inverse_model.h"
#include "solver/condition.h"
#include "step/step.h"

#define CUSP_INVERSE_TOUCH 1e-4  // m, gap under which a released contact counts as touching

// Work budget (solver/lcp.h) of one control solve of n unknowns: 200 Newton steps of its size,
// what its Newton solves are allowed in iterations (the contact step's default pays for 8 steps of
// the 142 unknowns of a parcel held against a wall, which then dropped), and never less than that
// default. Finite whatever the contact instance's max_iterations say: about 0.1 s at n = 140.
static mjtNum control_budget(int n) {
  return fmax(CUSP_SOLVE_WORK_BUDGET, 200 * cusp_solve_iteration_cost(CUSP_ITER_NEWTON, n, 0));
}

//---------------------------------- shared pieces --------------------------------------------------

// The tracking term's Hessian in the actuation, A^T A + eps I with eps = effort x its largest
// diagonal (1 if zero), into the leading nu x nu block of the column-major M (leading dimension
// ld); A (ne x nu, row-major): the effectors' velocity per unit of actuation.
static void tracking_hessian(mjtNum* M, int ld, const mjtNum* A, int ne, int nu, mjtNum effort) {
  mjtNum diag = 0;
  for (int a = 0; a < nu; a++) {
    for (int b = 0; b < nu; b++) {
      mjtNum v = 0;
      for (int e = 0; e < ne; e++) v += A[e * nu + a] * A[e * nu + b];
      M[a + (size_t)b * ld] = v;
    }
    diag = mju_max(diag, M[a + (size_t)a * ld]);
  }
  for (int a = 0; a < nu; a++) M[a + (size_t)a * ld] += effort * (diag > 0 ? diag : 1);
}

// Solve the box LCP (M, q, lo, hi) of n unknowns whose first nu are the actuation: Ruiz
// equilibration (condition.h, stage 2: actuation, impulse and velocity rows differ by orders of
// magnitude; the scaled unknowns z / dc keep scaled boxes; M, q, lo, hi are scaled in place),
// then FB Newton from zero impulses and the actuation nearest zero in its box. On success z
// holds the unscaled answer. Scratch from d's arena (the caller's mark).
static cuspLcpStatus solve_scaled_box_lcp(mjtNum* z, mjtNum* M, mjtNum* q, mjtNum* lo, mjtNum* hi,
                                          int n, int nu, int max_iter, mjData* d) {
  mjtNum* dr = mj_stackAllocNum(d, n);
  mjtNum* dc = mj_stackAllocNum(d, n);
  mjtNum* ruiz_scratch = mj_stackAllocNum(d, 2 * (size_t)n);  // cusp_ruiz: 2 n
  cusp_ruiz(M, q, dr, dc, n, n, 5, ruiz_scratch);
  for (int i = 0; i < n; i++) {
    lo[i] /= dc[i];
    hi[i] /= dc[i];
  }
  cuspLcpProblem prob = {n, M, n, q, lo, hi};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.tol = 1e-10;
  opt.max_iter = max_iter;
  opt.work_budget = control_budget(n);
  size_t bytes = cusp_lcp_fbnewton_worksize(n);
  void* work = mj_stackAllocByte(d, bytes, sizeof(mjtNum));
  cuspLcpInfo info;
  mju_zero(z, n);
  for (int a = 0; a < nu; a++) z[a] = mju_clip(0, lo[a], hi[a]);
  cuspLcpStatus status = cusp_lcp_fbnewton(z, NULL, &info, &prob, &opt, work, bytes);
  if (status == CUSP_LCP_SOLVED) {
    for (int i = 0; i < n; i++) z[i] *= dc[i];
  }
  return status;
}

// A box LCP of n unknowns from d's arena: M (n x n, column-major, zeroed), q, lo, hi, z
typedef struct BoxLcp_ {
  int n;
  mjtNum *M, *q, *lo, *hi, *z;
} BoxLcp;

static BoxLcp box_lcp_alloc(int n, mjData* d) {
  BoxLcp b = {n, mj_stackAllocNum(d, (size_t)n * n), mj_stackAllocNum(d, n),
              mj_stackAllocNum(d, n), mj_stackAllocNum(d, n), mj_stackAllocNum(d, n)};
  mju_zero(b.M, (size_t)n * n);
  return b;
}

// the actuation rows of a box LCP whose first nu unknowns are u: the tracking Hessian of the
// effective couplings A (ne x nu), q = A^T v (v: the effectors' velocity at u = 0 minus vdes),
// the force boxes
static void actuation_rows(BoxLcp* b, const mjtNum* A, const mjtNum* v, int ne,
                           const cuspInverse* inv) {
  int nu = inv->nact;
  tracking_hessian(b->M, b->n, A, ne, nu, inv->effort);
  for (int a = 0; a < nu; a++) {
    mjtNum s = 0;
    for (int e = 0; e < ne; e++) s += A[e * nu + a] * v[e];
    b->q[a] = s;
    b->lo[a] = inv->lo[a];
    b->hi[a] = inv->hi[a];
  }
}

// The held rows' impulses la (na: per held contact its normal, then t and o if it sticks; arow
// its contact, akind 0 n, 1 t, 2 o) in the layout of the full model's rows, lambda (per contact the
// normal, then the r directions d_k = cone[2k] t + cone[2k+1] o): a friction impulse (t, o) is
// split over the two directions it lies between. Contacts not held get zero.
static void held_to_rows(mjtNum* lambda, const mjtNum* la, const int* arow, const int* akind,
                         int na, int ncontact, int r, const mjtNum* cone) {
  mju_zero(lambda, (size_t)ncontact * (1 + r) + 1);
  for (int i = 0; i < na; i++) {
    if (akind[i] == 0) lambda[arow[i] * (1 + r)] = la[i];
  }
  for (int c = 0; c < ncontact; c++) {
    int i = -1;
    for (int q = 0; q < na; q++) {
      if (arow[q] == c && akind[q] == 1) i = q;
    }
    if (i < 0) continue;
    mjtNum lt = la[i], lo = la[i + 1];
    mjtNum th = atan2(lo, lt), mag = mju_sqrt(lt * lt + lo * lo);
    if (th < 0) th += 2 * mjPI;
    int k0 = (int)floor(th / (2 * mjPI / r)) % r, k1 = (k0 + 1) % r;
    // mag (cos th, sin th) = a d_k0 + b d_k1
    mjtNum x0 = cone[2 * k0], y0 = cone[2 * k0 + 1];
    mjtNum x1 = cone[2 * k1], y1 = cone[2 * k1 + 1];
    mjtNum det = x0 * y1 - x1 * y0;
    mjtNum fx = mag * cos(th), fy = mag * sin(th);
    lambda[c * (1 + r) + 1 + k0] = (fx * y1 - fy * x1) / det;
    lambda[c * (1 + r) + 1 + k1] = (x0 * fy - y0 * fx) / det;
  }
}

// 1 if a contact is a grasp: between the robot and one of the objects
static int is_grasp(const cuspInverse* inv, const mjModel* m, const cuspContact* c) {
  int t0 = m->body_treeid[c->body[0]], t1 = c->body[1] > 0 ? m->body_treeid[c->body[1]] : -1;
  if (t0 < 0 || t1 < 0) return 0;
  return (t0 == inv->tree && t1 != inv->tree && cusp_inverse_models_tree(inv, t1)) ||
         (t1 == inv->tree && t0 != inv->tree && cusp_inverse_models_tree(inv, t0));
}

//---------------------------------- the contacts' modes held ---------------------------------------
// Sticking contacts (Coevoet's QP): the contacts loaded in the last step hold their mode: a
// sticking contact is bilateral in n, t, o, a sliding one in n alone, so the impulses are affine
// in the actuation, lambda(u) = l0 + L u from (W_A + eps I) lambda = -(b_A + G_A u), and the
// tracking is a box QP in u under lambda_n(u) >= 0 and the friction pyramid
// |lambda_t|, |lambda_o| <= mu lambda_n: with multipliers mu_i, the monotone box LCP
//   [Q  -(C L)^T; C L  0] (u, mu) + (q, C l0),  u in its box, mu >= 0.
// It is exact for a mode that holds; when the QP fails or a predicted impulse leaves the last
// mode, the whole complementarity decides (below).

// the held (bilateral) rows: per held contact its normal, then t and o if it sticks
typedef struct HeldRows_ {
  int na;        // bilateral rows
  int ncon;      // inequality rows: per held contact 1, or 5 if it sticks (n, the pyramid)
  int* arow;     // (na) contact of each row
  int* akind;    // (na) 0 n, 1 t, 2 o
  mjtNum* Ar;    // (na x nr) reduced rows: n, t = d_0, o = (d_1 - cos t) / sin
  mjtNum* AT;    // (na x nr) their Mh^-1
  mjtNum* av;    // (na) free velocity of each row (+ gap / H for normals)
  mjtNum* aG;    // (na x nu) their coupling with the actuation
} HeldRows;

// which rows are held: a contact that was not released, or is released but still touching
static void held_select(HeldRows* hr, const cuspInverseModel* im, const cuspInverse* inv,
                        mjData* d) {
  int ncontact = im->ncontact, r = im->r;
  hr->na = hr->ncon = 0;
  hr->arow = mj_stackAllocInt(d, 3 * (size_t)ncontact + 1);
  hr->akind = mj_stackAllocInt(d, 3 * (size_t)ncontact + 1);
  for (int c = 0; c < ncontact; c++) {
    const cuspContact* ct = im->contact + c;
    // hysteresis: a contact released in the last step but still touching (gap within
    // CUSP_INVERSE_TOUCH) stays in the model as sticking; leaving it out let the actuation press
    // freely, the next step stick, and the two alternate from step to step
    int touching = ct->gap <= CUSP_INVERSE_TOUCH;
    if (ct->mode == CUSP_MODE_BREAK && !touching) continue;
    int stick = (inv->sticking == CUSP_INVERSE_STICK_ALL || ct->mode != CUSP_MODE_SLIDE) && r >= 2;
    for (int e = 0; e < (stick ? 3 : 1); e++) {
      hr->arow[hr->na] = c;
      hr->akind[hr->na] = e;
      hr->na++;
    }
    hr->ncon += stick ? 5 : 1;
  }
}

// the held rows' reduced rows, their Mh^-1, free velocities and actuation couplings
static void held_rows(HeldRows* hr, const cuspInverseModel* im, mjData* d) {
  int na = hr->na, nr = im->nr, nu = im->nu, ne = im->ne, r = im->r;
  const mjtNum* Jr = im->Jr;
  const mjtNum* T = im->T;
  const mjtNum* G = im->G;
  hr->Ar = mj_stackAllocNum(d, (size_t)na * nr);
  hr->AT = mj_stackAllocNum(d, (size_t)na * nr);
  hr->av = mj_stackAllocNum(d, na);
  hr->aG = mj_stackAllocNum(d, (size_t)na * nu);
  mjtNum c1 = r >= 2 ? im->cone[2] : 0, s1 = r >= 2 ? im->cone[3] : 1;
  for (int i = 0; i < na; i++) {
    int base = ne + hr->arow[i] * (1 + r);  // the contact's normal row
    int akind = hr->akind[i];
    const mjtNum* j0 = Jr + (size_t)(base + (akind ? 1 : 0)) * nr;
    const mjtNum* t0 = T + (size_t)(base + (akind ? 1 : 0)) * nr;
    mjtNum v0 = im->rowv[base + (akind ? 1 : 0)];
    mju_copy(hr->Ar + (size_t)i * nr, j0, nr);
    mju_copy(hr->AT + (size_t)i * nr, t0, nr);
    hr->av[i] = v0;
    mju_copy(hr->aG + (size_t)i * nu, G + (size_t)(base - ne + (akind ? 1 : 0)) * nu, nu);
    if (akind == 2) {  // o from d_1 and t
      mjtNum* ar = hr->Ar + (size_t)i * nr;
      mjtNum* at = hr->AT + (size_t)i * nr;
      const mjtNum* j1 = Jr + (size_t)(base + 2) * nr;
      const mjtNum* t1 = T + (size_t)(base + 2) * nr;
      for (int k = 0; k < nr; k++) {
        ar[k] = (j1[k] - c1 * ar[k]) / s1;
        at[k] = (t1[k] - c1 * at[k]) / s1;
      }
      hr->av[i] = (im->rowv[base + 2] - c1 * hr->av[i]) / s1;
      mjtNum* g = hr->aG + (size_t)i * nu;
      const mjtNum* g1 = G + (size_t)(base - ne + 2) * nu;
      for (int a = 0; a < nu; a++) g[a] = (g1[a] - c1 * g[a]) / s1;
    }
    if (akind == 0) hr->av[i] += mju_max(im->contact[hr->arow[i]].gap, 0) / im->H;  // open gap
  }
}

// W_A (na x na, row-major) = A Mh^-1 A^T of the held rows; returns its largest diagonal
static mjtNum held_delassus(mjtNum* WA, const HeldRows* hr, int nr) {
  int na = hr->na;
  mjtNum wmax = 0;
  for (int i = 0; i < na; i++) {
    for (int k = 0; k < na; k++) {
      WA[i * na + k] = mju_dot(hr->Ar + (size_t)i * nr, hr->AT + (size_t)k * nr, nr);
    }
    wmax = mju_max(wmax, WA[i * na + i]);
  }
  return wmax;
}

// the coefficients (normal, t, o) of the g-th inequality row of a held contact: g = 0 its normal
// n >= 0, then (sticking) the pyramid mu n - t, mu n + t, mu n - o, mu n + o >= 0
static void pyramid_row(mjtNum* cn, mjtNum* ct, mjtNum* co, int g, mjtNum mu) {
  *cn = g == 0 ? 1 : mu;
  *ct = g == 1 ? -1 : g == 2 ? 1 : 0;
  *co = g == 3 ? -1 : g == 4 ? 1 : 0;
}

// 1 if held row i (a normal) starts a sticking contact's three rows
static int held_sticks(const HeldRows* hr, int i) {
  return i + 2 < hr->na && hr->arow[i + 1] == hr->arow[i] && hr->akind[i + 1] == 1;
}

// The impulses of the held rows eliminated: lambda(u) = l0 + L u with l0 = -W^-1 av,
// L = -W^-1 G_A (na x nu, column a at L[a * na]), W = W_A + Tikhonov (1e-9 of its largest
// diagonal). col: na of scratch. Returns 0, or -1 if W is not positive definite.
static int eliminate_held_impulses(mjtNum* l0, mjtNum* L, mjtNum* col, const HeldRows* hr,
                                   const cuspInverseModel* im, mjData* d) {
  int na = hr->na, nu = im->nu;
  mjtNum* WA = mj_stackAllocNum(d, (size_t)na * na);
  mjtNum wmax = held_delassus(WA, hr, im->nr);
  for (int i = 0; i < na; i++) WA[i * na + i] += 1e-9 * wmax;
  if (mju_cholFactor(WA, na, mjMINVAL) != na) return -1;
  mju_scl(col, hr->av, -1, na);
  mju_cholSolve(l0, WA, col, na);
  for (int a = 0; a < nu; a++) {
    for (int i = 0; i < na; i++) col[i] = -hr->aG[(size_t)i * nu + a];
    mju_cholSolve(L + (size_t)a * na, WA, col, na);
  }
  return 0;
}

// The effectors' velocity with the impulses eliminated: Je v = rowv + Ae u + Ce_A lambda(u)
// (Ce_A row i = Je Mh^-1 A_i^T): the effective couplings At_ (ne x nu) and the effective
// rowv - vdes, rt (ne). ce: na of scratch.
static void held_effective_tracking(mjtNum* At_, mjtNum* rt, mjtNum* ce, const mjtNum* l0,
                                    const mjtNum* L, const HeldRows* hr,
                                    const cuspInverseModel* im) {
  int na = hr->na, nr = im->nr, nu = im->nu;
  for (int e = 0; e < im->ne; e++) {
    for (int i = 0; i < na; i++) {
      ce[i] = mju_dot(im->Jr + (size_t)e * nr, hr->AT + (size_t)i * nr, nr);
    }
    rt[e] = im->verr[e] + mju_dot(ce, l0, na);
    for (int a = 0; a < nu; a++) {
      At_[e * nu + a] = im->Ae[e * nu + a] + mju_dot(ce, L + (size_t)a * na, na);
    }
  }
}

// the multiplier rows of the robot's QP b: the inequality rows on lambda, C (ncon x na), applied
// to l0 and L: per held contact sum_i coef_i lambda_i >= 0 over its rows (normal, and the
// pyramid if it sticks, mu held back by cone_margin)
static void held_robot_inequalities(BoxLcp* b, const mjtNum* l0, const mjtNum* L,
                                    const HeldRows* hr, const cuspInverseModel* im,
                                    const cuspInverse* inv) {
  int na = hr->na, nu = im->nu, n2 = b->n;
  int k = 0;
  for (int i = 0; i < na; i++) {
    if (hr->akind[i] != 0) continue;  // one group per contact, starting at its normal row
    int stick = held_sticks(hr, i);
    mjtNum mu = im->contact[hr->arow[i]].mu * (1 - inv->cone_margin);  // the cone held back
    for (int g = 0; g < (stick ? 5 : 1); g++) {
      mjtNum cn, ct, co;
      pyramid_row(&cn, &ct, &co, g, mu);
      int row = nu + k;
      mjtNum c0 = cn * l0[i] + (stick ? ct * l0[i + 1] + co * l0[i + 2] : 0);
      b->q[row] = c0;
      for (int a = 0; a < nu; a++) {
        const mjtNum* La = L + (size_t)a * na;
        mjtNum v = cn * La[i] + (stick ? ct * La[i + 1] + co * La[i + 2] : 0);
        b->M[row + (size_t)a * n2] = v;    // C L
        b->M[a + (size_t)row * n2] = -v;   // -(C L)^T
      }
      b->lo[row] = 0;
      b->hi[row] = INFINITY;
      k++;
    }
  }
}

// The robot alone: its held rows are independent in practice (a few contacts on many dofs), so
// the impulses are eliminated and the QP is in u alone. Returns 1 with u and lambda if it solved.
static int solve_held_robot(mjtNum* u, mjtNum* lambda, const HeldRows* hr,
                            const cuspInverseModel* im, const cuspInverse* inv, mjData* d) {
  int na = hr->na, nu = im->nu, ne = im->ne;
  mjtNum* l0 = mj_stackAllocNum(d, na);
  mjtNum* L = mj_stackAllocNum(d, (size_t)na * nu);
  mjtNum* col = mj_stackAllocNum(d, na);
  if (eliminate_held_impulses(l0, L, col, hr, im, d)) return 0;
  mjtNum* At_ = mj_stackAllocNum(d, (size_t)ne * nu);  // effective Ae
  mjtNum* rt = mj_stackAllocNum(d, ne);                 // effective rowv - vdes
  held_effective_tracking(At_, rt, col, l0, L, hr, im);
  BoxLcp b = box_lcp_alloc(nu + hr->ncon, d);
  int n2 = b.n;
  actuation_rows(&b, At_, rt, ne, inv);
  held_robot_inequalities(&b, l0, L, hr, im, inv);
  cuspLcpProblem p2 = {n2, b.M, n2, b.q, b.lo, b.hi};
  cuspLcpOptions o2 = cusp_lcp_default_options();
  o2.tol = 1e-10 * mju_max(im->range, 1);
  o2.max_iter = 200;
  o2.work_budget = control_budget(n2);
  size_t b2 = cusp_lcp_fbnewton_worksize(n2);
  void* w2 = mj_stackAllocByte(d, b2, sizeof(mjtNum));
  cuspLcpInfo i2;
  mju_zero(b.z, n2);
  for (int a = 0; a < nu; a++) b.z[a] = mju_clip(0, inv->lo[a], inv->hi[a]);
  if (cusp_lcp_fbnewton(b.z, NULL, &i2, &p2, &o2, w2, b2) != CUSP_LCP_SOLVED) return 0;
  mju_copy(u, b.z, nu);
  for (int i = 0; i < na; i++) {  // the held rows' impulses l0 + L u
    col[i] = l0[i];
    for (int a = 0; a < nu; a++) col[i] += L[(size_t)a * na + i] * u[a];
  }
  held_to_rows(lambda, col, hr->arow, hr->akind, na, im->ncontact, im->r, im->cone);
  return 1;
}

// With objects: a held object has more rows than dofs (a face on a wall, the grasp) and W_A is
// singular: the impulses stay unknowns. The QP in (u, lambda) with the held rows as equalities
// as the monotone box LCP of its KKT conditions, z = (u, lambda, nu, kappa):
//   F_u      = Q u + Ae^T CeA lambda + G_A^T nu + Ae^T (Je v0 - vdes)        u in its box
//   F_lambda = CeA^T Ae u + (CeA^T CeA + dl) lambda + W_A nu - C^T kappa
//              + CeA^T (Je v0 - vdes)
//   F_nu     = -(G_A u + W_A lambda + av) + dn nu = 0   (the held rows do not move)
//   F_kappa  = C lambda - c >= 0   (normals, friction pyramids, the grip)
#define AT2(i, j) b->M[(i) + (size_t)(j) * b->n]

// the (u, lambda, nu) blocks of the KKT box LCP b: W_A (na x na, row-major, largest diagonal
// wmax) and CeA (ne x na) = Je Mh^-1 A^T of the held rows
static void held_kkt_equalities(BoxLcp* b, const mjtNum* WA, mjtNum wmax, const mjtNum* CeA,
                                const HeldRows* hr, const cuspInverseModel* im,
                                const cuspInverse* inv) {
  int na = hr->na, nu = im->nu, ne = im->ne, ul = nu, un = nu + na;
  const mjtNum* Ae = im->Ae;
  mjtNum ldiag = 0;
  actuation_rows(b, Ae, im->verr, ne, inv);
  for (int a = 0; a < nu; a++) {
    for (int i = 0; i < na; i++) {
      mjtNum v = 0;
      for (int e = 0; e < ne; e++) v += Ae[e * nu + a] * CeA[e * na + i];
      AT2(a, ul + i) = AT2(ul + i, a) = v;
      AT2(a, un + i) = hr->aG[(size_t)i * nu + a];
      AT2(un + i, a) = -hr->aG[(size_t)i * nu + a];
    }
  }
  for (int i = 0; i < na; i++) {
    for (int k = 0; k < na; k++) {
      mjtNum v = 0;
      for (int e = 0; e < ne; e++) v += CeA[e * na + i] * CeA[e * na + k];
      AT2(ul + i, ul + k) = v;
      AT2(ul + i, un + k) = WA[i * na + k];
      AT2(un + i, ul + k) = -WA[i * na + k];
    }
    ldiag = mju_max(ldiag, AT2(ul + i, ul + i));
    mjtNum v = 0;
    for (int e = 0; e < ne; e++) v += CeA[e * na + i] * im->verr[e];
    b->q[ul + i] = v;
    b->q[un + i] = -hr->av[i];
    b->lo[ul + i] = b->lo[un + i] = -INFINITY;
    b->hi[ul + i] = b->hi[un + i] = INFINITY;
  }
  // regularisation: lambda (the least impulses among those that hold), nu (redundant rows)
  mjtNum dl = 1e-9 * (ldiag + wmax * wmax > 0 ? ldiag + wmax * wmax : 1);
  for (int i = 0; i < na; i++) {
    AT2(ul + i, ul + i) += dl;
    AT2(un + i, un + i) += 1e-9;
  }
}

// the kappa rows of the KKT box LCP b, constraint rows on lambda: per held contact n >= 0, and
// if sticking the pyramid mu n -+ t >= 0, mu n -+ o >= 0 (mu held back by cone_margin); then the
// grip (grip_row: a row of it)
static void held_kkt_inequalities(BoxLcp* b, int grip_row, const HeldRows* hr,
                                  const cuspInverseModel* im, const cuspInverse* inv,
                                  const mjModel* m) {
  int na = hr->na, nu = im->nu, ul = nu, uk = nu + 2 * na;
  const int* arow = hr->arow;
  const int* akind = hr->akind;
  int k = 0;
  for (int i = 0; i < na; i++) {
    if (akind[i] != 0) continue;  // one group per contact, starting at its normal row
    int stick = held_sticks(hr, i);
    mjtNum mu = im->contact[arow[i]].mu * (1 - inv->cone_margin);
    for (int g = 0; g < (stick ? 5 : 1); g++) {
      mjtNum cn, ct, co;
      pyramid_row(&cn, &ct, &co, g, mu);
      int row = uk + k;
      AT2(row, ul + i) = cn;
      AT2(ul + i, row) = -cn;
      if (stick) {
        AT2(row, ul + i + 1) = ct;
        AT2(ul + i + 1, row) = -ct;
        AT2(row, ul + i + 2) = co;
        AT2(ul + i + 2, row) = -co;
      }
      b->q[row] = 0;
      b->lo[row] = 0;
      b->hi[row] = INFINITY;
      k++;
    }
  }
  if (grip_row) {
    int row = uk + k;
    for (int i = 0; i < na; i++) {
      if (akind[i] != 0 || !is_grasp(inv, m, im->contact + arow[i])) continue;
      AT2(row, ul + i) = 1;
      AT2(ul + i, row) = -1;
    }
    b->q[row] = -inv->grip * im->H;
    b->lo[row] = 0;
    b->hi[row] = INFINITY;
  }
}
#undef AT2

// The held rows with objects (above). Returns 1 with u and lambda if it solved.
static int solve_held_objects(mjtNum* u, mjtNum* lambda, const HeldRows* hr,
                              const cuspInverseModel* im, const cuspInverse* inv,
                              const mjModel* m, mjData* d) {
  int na = hr->na, nr = im->nr, nu = im->nu, ne = im->ne;
  // W_A (na x na) = A Mh^-1 A^T and Ce_A (ne x na) = Je Mh^-1 A^T
  mjtNum* WA = mj_stackAllocNum(d, (size_t)na * na);
  mjtNum* CeA = mj_stackAllocNum(d, (size_t)ne * na);
  mjtNum wmax = held_delassus(WA, hr, nr);
  for (int e = 0; e < ne; e++) {
    for (int i = 0; i < na; i++) {
      CeA[e * na + i] = mju_dot(im->Jr + (size_t)e * nr, hr->AT + (size_t)i * nr, nr);
    }
  }
  int grip_row = 0;
  for (int i = 0; i < na && inv->grip > 0; i++) {
    grip_row |= hr->akind[i] == 0 && is_grasp(inv, m, im->contact + hr->arow[i]);
  }
  BoxLcp b = box_lcp_alloc(nu + 2 * na + hr->ncon + grip_row, d);
  held_kkt_equalities(&b, WA, wmax, CeA, hr, im, inv);
  held_kkt_inequalities(&b, grip_row, hr, im, inv, m);
  if (solve_scaled_box_lcp(b.z, b.M, b.q, b.lo, b.hi, b.n, nu, 200, d) != CUSP_LCP_SOLVED) {
    return 0;
  }
  mju_copy(u, b.z, nu);
  held_to_rows(lambda, b.z + nu, hr->arow, hr->akind, na, im->ncontact, im->r, im->cone);
  return 1;
}

// the contacts' last modes held (unless sticking is off): 1 with u and lambda if that solved
static int solve_held_modes(mjtNum* u, mjtNum* lambda, const cuspInverseModel* im,
                            const cuspInverse* inv, const mjModel* m, mjData* d) {
  HeldRows hr;
  held_select(&hr, im, inv, d);
  if (!hr.na || inv->sticking == CUSP_INVERSE_STICK_OFF) return 0;
  held_rows(&hr, im, d);
  if (inv->ntree == 1) return solve_held_robot(u, lambda, &hr, im, inv, d);
  return solve_held_objects(u, lambda, &hr, im, inv, m, d);
}

//---------------------------------- the whole complementarity --------------------------------------

// The whole complementarity as the box LCP b, column-major (n x n): unknowns u (nu), then per
// contact (fn, beta (r), gamma); actuation optimality, then the contacts' rows
static void complementarity_rows(BoxLcp* b, const cuspInverseModel* im, const cuspInverse* inv) {
  int nu = im->nu, ne = im->ne, nc = im->nc, nr = im->nr, r = im->r, nrow = im->nrow;
  int ncontact = im->ncontact, s = r + 2;
  const mjtNum* Ae = im->Ae;
  const mjtNum* Ce = im->Ce;
  const mjtNum* T = im->T;
  mjtNum H = im->H;
  int n = b->n;
  mjtNum* M = b->M;
#define UNKNOWN(k) (nu + ((k) / (1 + r)) * s + ((k) % (1 + r)))
  // u rows: Ae^T Ae u + eps u + Ae^T Ce lambda + Ae^T (Je v_H0 - vdes)
  actuation_rows(b, Ae, im->verr, ne, inv);
  for (int a = 0; a < nu; a++) {
    for (int k = 0; k < nc; k++) {
      mjtNum v = 0;
      for (int i = 0; i < ne; i++) v += Ae[i * nu + a] * Ce[i * nc + k];
      M[a + (size_t)UNKNOWN(k) * n] = v;
    }
  }
  // contact rows, as the simulation writes them (CUSP 10-13), over the horizon
  for (int c = 0; c < ncontact; c++) {
    const cuspContact* ct = im->contact + c;
    for (int e = 0; e < 1 + r; e++) {
      int k = c * (1 + r) + e;  // contact velocity row
      int row = UNKNOWN(k);
      const mjtNum* jr = im->Jr + (size_t)(ne + k) * nr;
      for (int a = 0; a < nu; a++) {
        M[row + (size_t)a * n] = H * mju_dot(jr, T + (size_t)(nrow + a) * nr, nr);
      }
      for (int k2 = 0; k2 < nc; k2++) {
        M[row + (size_t)UNKNOWN(k2) * n] = mju_dot(jr, T + (size_t)(ne + k2) * nr, nr);
      }
      mjtNum vfree = im->rowv[ne + k];
      b->q[row] = e == 0 ? cusp_normal_rhs(vfree, ct->gap + H * vfree, H, im->ccfg->gap_alpha,
                                          im->ccfg->pushout_speed, 0, 0)
                        : vfree;
      if (e > 0) M[row + (size_t)(nu + c * s + r + 1) * n] = 1;  // + gamma
      b->lo[row] = 0;
      b->hi[row] = INFINITY;
    }
    int gr = nu + c * s + r + 1;  // cone row: mu fn - sum beta
    M[gr + (size_t)(nu + c * s) * n] = ct->mu;
    for (int e = 1; e <= r; e++) M[gr + (size_t)(nu + c * s + e) * n] = -1;
    b->q[gr] = 0;
    b->lo[gr] = 0;
    b->hi[gr] = INFINITY;
  }
#undef UNKNOWN
}

// Actuation optimality and the contacts' rows together as one box LCP, (u, per contact fn,
// beta (r), gamma), Ruiz-scaled and solved by FB Newton. Returns 1 with u and lambda if it
// solved.
static int solve_box_lcp(mjtNum* u, mjtNum* lambda, const cuspInverseModel* im,
                         const cuspInverse* inv, mjData* d) {
  int nu = im->nu, r = im->r, s = r + 2;
  BoxLcp b = box_lcp_alloc(nu + im->ncontact * s, d);
  complementarity_rows(&b, im, inv);
  if (solve_scaled_box_lcp(b.z, b.M, b.q, b.lo, b.hi, b.n, nu, 100, d) != CUSP_LCP_SOLVED) {
    return 0;
  }
  mju_copy(u, b.z, nu);
  for (int c = 0; c < im->ncontact; c++) mju_copy(lambda + c * (1 + r), b.z + nu + c * s, 1 + r);
  return 1;
}

//---------------------------------- block Gauss-Seidel ---------------------------------------------

// The actuation block: (Ae^T Ae + eps I) u + Ae^T (Ce lambda + Je v_H0 - vdes) in the box, an SPD
// box LCP (column-major Q, nu x nu), warm-started from u
typedef struct ActuationBlock_ {
  mjtNum* Q;   // (nu x nu)
  mjtNum* qu;  // (nu)
  mjtNum* ue;  // (ne) Ce lambda + Je v_H0 - vdes
  cuspLcpProblem prob;
  cuspLcpOptions opt;
  size_t bytes;
  void* work;
} ActuationBlock;

static void actuation_block(ActuationBlock* ab, const cuspInverseModel* im,
                            const cuspInverse* inv, mjData* d) {
  int nu = im->nu;
  ab->Q = mj_stackAllocNum(d, (size_t)nu * nu);
  ab->qu = mj_stackAllocNum(d, nu);
  ab->ue = mj_stackAllocNum(d, im->ne);
  tracking_hessian(ab->Q, nu, im->Ae, im->ne, nu, inv->effort);
  ab->prob = (cuspLcpProblem){nu, ab->Q, nu, ab->qu, inv->lo, inv->hi};
  ab->opt = cusp_lcp_default_options();
  ab->opt.work_budget = control_budget(nu);
  ab->opt.tol = 1e-10 * mju_max(im->range, 1);
  ab->opt.warm_start = 1;
  ab->bytes = cusp_lcp_fbnewton_worksize(nu);
  ab->work = mj_stackAllocByte(d, ab->bytes, sizeof(mjtNum));
}

// The contact block: the simulation's conditioned contact LCP (condition.h) on Mh, with the free
// velocities the actuation gives (bn, bt, filled per round); the cone rows of the scene's
// cusp.contact settings
typedef struct ContactBlock_ {
  mjtNum *bn, *bt;           // (ncontact), (ncontact r): right-hand sides
  mjtNum *fn, *beta, *gamma; // (ncontact), (ncontact r), (ncontact): the answer
  cuspContactLcp lcp;
  cuspConditionOptions opt;
  size_t bytes;
  void* work;
} ContactBlock;

static void contact_block(ContactBlock* cb, const cuspInverseModel* im, mjData* d) {
  int nr = im->nr, ncontact = im->ncontact, r = im->r, ne = im->ne;
  mjtNum* Lc = mj_stackAllocNum(d, (size_t)nr * nr);  // column-major lower factor of Mh
  for (int i = 0; i < nr; i++) {
    for (int j = 0; j < nr; j++) Lc[i + (size_t)j * nr] = j <= i ? im->Mr[i * nr + j] : 0;
  }
  mjtNum* Jn = mj_stackAllocNum(d, (size_t)(ncontact + 1) * nr);
  mjtNum* Jt = mj_stackAllocNum(d, (size_t)(ncontact * r + 1) * nr);
  mjtNum* mu = mj_stackAllocNum(d, ncontact + 1);
  cb->bn = mj_stackAllocNum(d, ncontact + 1);
  cb->bt = mj_stackAllocNum(d, (size_t)ncontact * r + 1);
  cb->fn = mj_stackAllocNum(d, ncontact + 1);
  cb->beta = mj_stackAllocNum(d, (size_t)ncontact * r + 1);
  cb->gamma = mj_stackAllocNum(d, ncontact + 1);
  for (int c = 0; c < ncontact; c++) {
    mju_copy(Jn + (size_t)c * nr, im->Jr + (size_t)(ne + c * (1 + r)) * nr, nr);
    mju_copy(Jt + (size_t)c * r * nr, im->Jr + (size_t)(ne + c * (1 + r) + 1) * nr,
             (size_t)r * nr);
    mu[c] = im->contact[c].mu;
  }
  cb->lcp = (cuspContactLcp){.nv = nr, .m = ncontact, .r = r, .Meff = Lc, .meff_is_factor = 1,
                             .Jn = Jn, .Jt = Jt, .mu = mu, .bn = cb->bn, .bt = cb->bt};
  cb->opt = cusp_condition_default_options();
  cb->bytes = 0;
  cb->work = NULL;
  if (ncontact) {
    // the contact instance's conditioning and tolerances; the chain with fallback, no warm start
    // (the controller's problem has no history of its own)
    cb->opt = cusp_step_condition_options(im->ccfg);
    cb->opt.lcp.warm_start = cusp_condition_default_options().lcp.warm_start;
    cb->opt.backend = CUSP_LCP_CHAIN;
    cb->opt.fallback = 1;
    cb->opt.lcp.work_budget = control_budget(ncontact * (r + 2));
    cb->bytes = cusp_contact_worksize(nr, ncontact, r, &cb->opt);
    cb->work = mj_stackAllocByte(d, cb->bytes, sizeof(mjtNum));
  }
}

// the actuation block's right-hand side for the impulses lambda
static void actuation_rhs(ActuationBlock* ab, const mjtNum* lambda, const cuspInverseModel* im) {
  int nu = im->nu, ne = im->ne, nc = im->nc;
  for (int i = 0; i < ne; i++) {
    ab->ue[i] = im->verr[i] + (nc ? mju_dot(im->Ce + (size_t)i * nc, lambda, nc) : 0);
  }
  for (int a = 0; a < nu; a++) {
    mjtNum v = 0;
    for (int i = 0; i < ne; i++) v += im->Ae[i * nu + a] * ab->ue[i];
    ab->qu[a] = v;
  }
}

// the contact block's right-hand side: the free contact velocities with the actuation u
static void contact_rhs(ContactBlock* cb, const mjtNum* u, const cuspInverseModel* im) {
  int r = im->r, ne = im->ne, nu = im->nu;
  mjtNum H = im->H;
  for (int c = 0; c < im->ncontact; c++) {
    for (int e = 0; e <= r; e++) {
      int k = c * (1 + r) + e;
      mjtNum v = im->rowv[ne + k] + mju_dot(im->G + (size_t)k * nu, u, nu);
      if (e == 0) {
        // the published gap is the current one (the last step's, at its q*): the end of the
        // horizon sees gap + H v, the gap the simulation's rule takes
        cb->bn[c] = cusp_normal_rhs(v, im->contact[c].gap + H * v, H, im->ccfg->gap_alpha,
                                    im->ccfg->pushout_speed, 0, 0);
      } else {
        cb->bt[c * r + e - 1] = v;
      }
    }
  }
}

// Block Gauss-Seidel between the two blocks: u for the impulses, the impulses for u, until u
// settles (at most `iterations` rounds; a contact-free model needs one round). A failed solve in
// a later round keeps the last round that solved; only a first round that fails is a failed
// step. Returns the status; *rounds: the rounds reported (the last one run, from 1).
static cuspLcpStatus solve_gauss_seidel(mjtNum* u, mjtNum* lambda, int* rounds_out,
                                        const cuspInverseModel* im, const cuspInverse* inv,
                                        mjData* d) {
  int nu = im->nu, nc = im->nc, ncontact = im->ncontact, r = im->r;
  ActuationBlock ab;
  ContactBlock cb;
  actuation_block(&ab, im, inv, d);
  contact_block(&cb, im, d);
  mju_zero(lambda, nc + 1);
  for (int a = 0; a < nu; a++) u[a] = mju_clip(0, inv->lo[a], inv->hi[a]);
  cuspLcpStatus last = CUSP_LCP_SOLVED;
  int rounds = 0, settled = 0;
  mjtNum* ugood = mj_stackAllocNum(d, nu);     // the last actuation whose solves all succeeded
  mjtNum* lgood = mj_stackAllocNum(d, nc + 1); // and its impulses
  mjtNum* uold = mj_stackAllocNum(d, nu);
  for (rounds = 0; rounds < inv->iterations; rounds++) {
    mju_copy(uold, u, nu);
    actuation_rhs(&ab, lambda, im);
    cuspLcpInfo uinfo;
    last = cusp_lcp_fbnewton(u, NULL, &uinfo, &ab.prob, &ab.opt, ab.work, ab.bytes);
    if (last != CUSP_LCP_SOLVED) break;
    if (!ncontact) {
      mju_copy(ugood, u, nu);
      settled = 1;
      break;
    }
    contact_rhs(&cb, u, im);
    cuspConditionInfo cinfo;
    last = cusp_contact_solve(cb.fn, cb.beta, cb.gamma, NULL, &cinfo, &cb.lcp, &cb.opt, cb.work,
                              cb.bytes);
    if (last != CUSP_LCP_SOLVED) break;
    // under-relaxed: the two blocks pull against each other where the actuation presses into a
    // contact, and the plain alternation then cycles
    mjtNum w = rounds ? 0.5 : 1;
    for (int c = 0; c < ncontact; c++) {
      lambda[c * (1 + r)] += w * (cb.fn[c] - lambda[c * (1 + r)]);
      for (int e = 0; e < r; e++) {
        lambda[c * (1 + r) + 1 + e] +=
            w * (cb.beta[(size_t)c * r + e] - lambda[c * (1 + r) + 1 + e]);
      }
    }
    mjtNum change = 0;
    for (int a = 0; a < nu; a++) change = mju_max(change, fabs(u[a] - uold[a]));
    mju_copy(ugood, u, nu);
    mju_copy(lgood, lambda, nc);
    if (rounds > 0 && change <= 1e-9 * im->range) {
      settled = 1;
      break;
    }
  }
  int have = settled || rounds > 0;
  if (rounds == inv->iterations) rounds--;  // ran out of rounds: report the last one
  *rounds_out = rounds + 1;
  if (!have) return last;
  mju_copy(u, ugood, nu);
  mju_copy(lambda, lgood, nc);
  return CUSP_LCP_SOLVED;
}

//---------------------------------- the step -------------------------------------------------------

// the report slots of a step (state may be NULL): rounds 0 when no Gauss-Seidel ran
static void report(mjtNum* state, const mjtNum* u, const mjtNum* lambda, cuspLcpStatus status,
                   int rounds, const cuspInverseModel* im) {
  int nu = im->nu, nc = im->nc, r = im->r;
  mjtNum force = 0, speed_error = 0;
  if (status == CUSP_LCP_SOLVED) {
    for (int c = 0; c < im->ncontact; c++) force += lambda[c * (1 + r)] / im->H;  // N
    for (int i = 0; i < im->ne; i++) {  // predicted Je v_H - vdes
      mjtNum v = im->verr[i] + mju_dot(im->Ae + (size_t)i * nu, u, nu);
      if (nc) v += mju_dot(im->Ce + (size_t)i * nc, lambda, nc);
      speed_error += v * v;
    }
  }
  if (!state) return;
  state[CUSP_INVERSE_STATE_CONTACTS] = im->ncontact;
  state[CUSP_INVERSE_STATE_NORMAL_FORCE] = force;
  state[CUSP_INVERSE_STATE_TRACK_ERROR] = im->track_error;
  state[CUSP_INVERSE_STATE_SPEED_ERROR] = mju_sqrt(speed_error);
  state[CUSP_INVERSE_STATE_STATUS] = status;
  state[CUSP_INVERSE_STATE_ROUNDS] = rounds;
  state[CUSP_INVERSE_STATE_LAST_FAILED] = status != CUSP_LCP_SOLVED;
}

cuspLcpStatus cusp_inverse_solve(mjtNum* u, mjtNum* state, cuspInverse* inv, const mjModel* m,
                                 mjData* d) {
  mju_zero(u, inv->nact);
  if (cusp_dynamics_update(&inv->dyn, m, d, inv->dofs, inv->ndof)) return CUSP_LCP_NUMERICAL;
  mj_markStack(d);
  cuspInverseModel im;
  if (cusp_inverse_model(&im, inv, m, d)) {
    mj_freeStack(d);
    return CUSP_LCP_NUMERICAL;
  }
  mjtNum* lambda = mj_stackAllocNum(d, im.nc + 1);  // (fn, beta) per contact, the rows' order
  cuspLcpStatus status = CUSP_LCP_SOLVED;
  int rounds = 0;  // Gauss-Seidel rounds, 0 when the held modes or the box LCP solved
  if (!solve_held_modes(u, lambda, &im, inv, m, d) &&
      !(im.ncontact && solve_box_lcp(u, lambda, &im, inv, d))) {
    status = solve_gauss_seidel(u, lambda, &rounds, &im, inv, d);
  }
  report(state, u, lambda, status, rounds, &im);
  if (status != CUSP_LCP_SOLVED) mju_zero(u, im.nu);
  mj_freeStack(d);
  return status;
}
