// Synthetic LCPs and contact LCPs (see lcp_synth.h).
#include "solver/lcp_synth.h"

#include <math.h>
#include <string.h>

mjtNum cusp_synth_uniform(uint64_t* s) {
  uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return (mjtNum)(x >> 11) * (1.0 / 9007199254740992.0);
}

static mjtNum sym(uint64_t* s) { return 2 * cusp_synth_uniform(s) - 1; }

void cusp_synth_lcp(mjtNum* M, mjtNum* q, mjtNum* zstar, mjtNum* wstar, int n, int rank,
                    mjtNum shift, uint64_t seed, mjtNum* B) {
  uint64_t s = seed;
  for (size_t k = 0; k < (size_t)n * rank; k++) B[k] = sym(&s);  // B (n x rank)
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) {
      mjtNum v = 0;
      for (int k = 0; k < rank; k++) v += B[i + (size_t)k * n] * B[j + (size_t)k * n];
      M[i + (size_t)j * n] = v + (i == j ? shift : 0);
    }
  }
  for (int i = 0; i < n; i++) {
    mjtNum u = cusp_synth_uniform(&s);
    zstar[i] = u < 0.5 ? 0.1 + cusp_synth_uniform(&s) : 0;
    wstar[i] = u < 0.5 ? 0 : 0.1 + cusp_synth_uniform(&s);
  }
  for (int i = 0; i < n; i++) {
    mjtNum v = 0;
    for (int j = 0; j < n; j++) v += M[i + (size_t)j * n] * zstar[j];
    q[i] = wstar[i] - v;
  }
}

void cusp_synth_contact(cuspContactLcp* c, mjtNum* Meff, mjtNum* Jn, mjtNum* Jt, mjtNum* mu,
                        mjtNum* bn, mjtNum* bt, int nv, int m, int r, const int* dep, int ndep,
                        uint64_t seed) {
  uint64_t s = seed;
  // Meff = D^1/2 (sum_k v_k v_k^T / nv + I) D^1/2, D in [0.1, 10] (nv <= 512)
  for (int j = 0; j < nv; j++) {
    for (int i = 0; i < nv; i++) Meff[i + (size_t)j * nv] = 0;
  }
  for (int k = 0; k < nv; k++) {  // rank-one updates with random vectors
    mjtNum v[512];
    int nn = nv < 512 ? nv : 512;
    for (int i = 0; i < nn; i++) v[i] = sym(&s);
    for (int j = 0; j < nn; j++) {
      for (int i = 0; i < nn; i++) Meff[i + (size_t)j * nv] += v[i] * v[j] / nv;
    }
  }
  for (int i = 0; i < nv; i++) Meff[i + (size_t)i * nv] += 1;
  for (int i = 0; i < nv; i++) {
    mjtNum di = pow(10.0, sym(&s));
    for (int j = 0; j < nv; j++) {
      Meff[i + (size_t)j * nv] *= sqrt(di);
      Meff[j + (size_t)i * nv] *= sqrt(di);
    }
  }
  int base[2] = {-1, -1}, nbase = 0;
  for (int i = 0; i < m; i++) {
    int is_dep = 0;
    for (int k = 0; k < ndep; k++) is_dep |= dep[k] == i;
    mjtNum* jn = Jn + (size_t)i * nv;
    if (is_dep && nbase == 2) {
      // a + b < 1: pivoted QR always prefers a base contact over the redundant one
      mjtNum a = 0.1 + 0.35 * cusp_synth_uniform(&s), b = 0.1 + 0.35 * cusp_synth_uniform(&s);
      for (int j = 0; j < nv; j++) jn[j] = a * Jn[(size_t)base[0] * nv + j] + b * Jn[(size_t)base[1] * nv + j];
    } else {
      for (int j = 0; j < nv; j++) jn[j] = sym(&s);
      if (nbase < 2) base[nbase++] = i;
    }
    // two tangent rows, then r directions d_k = (cos, sin)(2 pi k / r)
    mjtNum t1[512], t2[512];
    int nn = nv < 512 ? nv : 512;
    for (int j = 0; j < nn; j++) {
      t1[j] = sym(&s);
      t2[j] = sym(&s);
    }
    for (int k = 0; k < r; k++) {
      mjtNum ang = 2 * 3.14159265358979323846 * k / r;
      mjtNum* jt = Jt + ((size_t)i * r + k) * nv;
      for (int j = 0; j < nv; j++) jt[j] = j < nn ? cos(ang) * t1[j] + sin(ang) * t2[j] : 0;
      bt[(size_t)i * r + k] = 0;
    }
    mjtNum vt1 = 0.5 * sym(&s), vt2 = 0.5 * sym(&s);
    for (int k = 0; k < r; k++) {
      mjtNum ang = 2 * 3.14159265358979323846 * k / r;
      bt[(size_t)i * r + k] = cos(ang) * vt1 + sin(ang) * vt2;
    }
    if (mu) mu[i] = 0.3 + 0.7 * cusp_synth_uniform(&s);
    bn[i] = -1 + 1.2 * cusp_synth_uniform(&s);  // mostly approaching, some separating
  }
  c->nv = nv;
  c->m = m;
  c->r = r;
  c->Meff = Meff;
  c->meff_is_factor = 0;
  c->Jn = Jn;
  c->Jt = r > 0 ? Jt : NULL;
  c->mu = r > 0 ? mu : NULL;
  c->bn = bn;
  c->bt = r > 0 ? bt : NULL;
  c->Jto = NULL;  // friction rows given one by one (Jt)
  c->dirs = NULL;
  c->pair = NULL;  // no geom-pair groups: no warm-start inheritance
}
