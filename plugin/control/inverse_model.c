// cusp.inverse: the controller's model of one step (inverse_model.h): which contacts it holds,
// Mh over the horizon, the effector and contact rows, the free flow and the couplings.
#include "control/inverse_model.h"

#include <string.h>

#include "assemble/contact_rows.h"
#include "publish/contacts_api.h"

// 1 if a contact between bodies b0 and b1 touches the controller's model (robot or object)
static int models_pair(const cuspInverse* inv, const mjModel* m, int b0, int b1) {
  return cusp_inverse_models_tree(inv, m->body_treeid[b0]) ||
         (b1 > 0 && cusp_inverse_models_tree(inv, m->body_treeid[b1]));
}

// Of the contacts of cusp.contact's last step as point contacts (contacts API,
// cusp_contacts_points: disk and point contacts as they are, a patch as one point per vertex with
// the patch's frame and friction: the controller models the patch's friction by the polyhedral
// cone at its vertices, the simulation by the ellipsoidal limit surface at the ECP), those that
// touch the model, kept in order in the first of points; returns their number.
static int keep_model_contacts(cuspContact* points, int n, const cuspInverse* inv,
                               const mjModel* m) {
  int kept = 0;
  for (int k = 0; k < n; k++) {
    if (models_pair(inv, m, points[k].body[0], points[k].body[1])) points[kept++] = points[k];
  }
  return kept;
}

// the contacts cusp resolved last step on the model's trees (the contacts API) into im: ccfg,
// cone, r, contact, ncontact (none with contact ignored or no contact instance)
static void gather_contacts(cuspInverseModel* im, const cuspInverse* inv, const mjModel* m,
                            mjData* d) {
  im->ccfg = NULL;
  im->cone = NULL;
  im->r = im->ncontact = 0;
  int npoint = 0;
  if (inv->contact == CUSP_INVERSE_CONTACT_CUSP) {
    im->ccfg = cusp_contacts_config(m, d, inv->contact_instance);
    if (im->ccfg) {
      im->r = cusp_contacts_cone(m, d, inv->contact_instance, &im->cone);
      npoint = cusp_contacts_points(m, d, inv->contact_instance, NULL, 0);
    }
  }
  cuspContact* points = (cuspContact*)mj_stackAllocByte(
      d, sizeof(cuspContact) * (npoint + 1), sizeof(mjtNum));
  if (im->ccfg) {
    cusp_contacts_points(m, d, inv->contact_instance, points, npoint);
    im->ncontact = keep_model_contacts(points, npoint, inv, m);
  }
  im->contact = points;
}

// The controller's model of the arm over one horizon H (`horizon`, s): implicit in the inertia
// and every damping (dof and tendon), v_H = Mh^-1 (M v + H (f + B u) + J^T lambda) with
// Mh = M + H D on the equality-condensed coordinates (dynamics.h: v = N vr). The soft arms are
// overdamped, so over a horizon of the damping's time scale this is their quasi-static flow:
// the one-step model of the simulation (H = h) would make the control a deadbeat on the inertia.
// Returns 0, or -1 if Mh is not positive definite.
static int horizon_inertia(mjtNum* Mr, mjtNum* Mfull, const cuspInverse* inv,
                           const cuspDynamics* dyn, const mjModel* m, mjData* d, mjtNum H) {
  int nv = inv->ndof, nr = dyn->nr, nvm = m->nv;
  mj_fullM(m, d, Mfull);  // (nvm x nvm), kept for M v
  mjtNum* A = mj_stackAllocNum(d, (size_t)nv * nv);
  for (int i = 0; i < nv; i++) {
    for (int j = 0; j < nv; j++) A[i + (size_t)j * nv] = Mfull[inv->dofs[i] * nvm + inv->dofs[j]];
    A[i + (size_t)i * nv] += H * m->dof_damping[inv->dofs[i]];
  }
  for (int t = 0; t < m->ntendon; t++) {
    mjtNum damp = m->tendon_damping[t];
    if (damp <= 0) continue;
    int adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
    for (int a = 0; a < nnz; a++) {
      int ia = dyn->local[m->ten_J_colind[adr + a]];
      if (ia < 0) continue;
      for (int b = 0; b < nnz; b++) {
        int ib = dyn->local[m->ten_J_colind[adr + b]];
        if (ib >= 0) A[ia + (size_t)ib * nv] += H * damp * d->ten_J[adr + a] * d->ten_J[adr + b];
      }
    }
  }
  if (dyn->identity) {
    mju_copy(Mr, A, (size_t)nv * nv);
  } else {  // Mr = N^T A N
    mjtNum* AN = mj_stackAllocNum(d, (size_t)nv * nr);
    for (int c = 0; c < nr; c++) {
      for (int i = 0; i < nv; i++) {
        mjtNum v = 0;
        for (int k = 0; k < nv; k++) v += A[i + (size_t)k * nv] * dyn->N[k + (size_t)c * nv];
        AN[i + (size_t)c * nv] = v;
      }
    }
    for (int a = 0; a < nr; a++) {
      for (int b = 0; b < nr; b++) {
        Mr[a * nr + b] = mju_dot(dyn->N + (size_t)a * nv, AN + (size_t)b * nv, nv);
      }
    }
  }
  return mju_cholFactor(Mr, nr, mjMINVAL) == nr ? 0 : -1;
}

// Effector rows J (3 per effector, nv columns: the model's dofs) and desired velocities vdes
// over the horizon: bandwidth x error, capped at max_speed, both scaled by the effector's weight.
// Returns the largest effector-target distance (m).
static mjtNum effector_rows(mjtNum* J, mjtNum* vdes, const cuspInverse* inv, const mjModel* m,
                            const mjData* d) {
  int nv = inv->ndof;
  mjtNum track_error = 0;
  for (int e = 0; e < inv->neff; e++) {
    int site = inv->effectors[e];
    cusp_dynamics_jac(J + (size_t)3 * e * nv, NULL, &inv->dyn, m, d, d->site_xpos + 3 * site,
                      m->site_bodyid[site]);
    mjtNum err[3];
    mju_sub3(err, d->xpos + 3 * inv->targets[e], d->site_xpos + 3 * site);
    mjtNum len = mju_norm3(err);
    if (len > track_error) track_error = len;
    mju_scl3(vdes + 3 * e, err, inv->bandwidth);
    mjtNum speed = mju_norm3(vdes + 3 * e);
    if (speed > inv->max_speed) mju_scl3(vdes + 3 * e, vdes + 3 * e, inv->max_speed / speed);
    // the weight scales the effector's rows and its desired velocity alike (weight^2 on its
    // squared tracking error)
    mju_scl(J + (size_t)3 * e * nv, J + (size_t)3 * e * nv, inv->weights[e], 3 * (size_t)nv);
    mju_scl3(vdes + 3 * e, vdes + 3 * e, inv->weights[e]);
  }
  return track_error;
}

// Contact rows J (1 + r per contact, nv columns): normal, then the r directions
// d_k = cos t + sin o (the simulation's cone), on the velocity of geom[0] relative to geom[1]
// (a body outside the model counts as fixed). Scratch from d's arena.
static void contact_rows(mjtNum* J, const cuspInverseModel* im, const cuspInverse* inv,
                         const mjModel* m, mjData* d) {
  int nv = inv->ndof, r = im->r;
  const mjtNum* cone = im->cone;
  mjtNum* jac = mj_stackAllocNum(d, 3 * (size_t)nv);      // (3 x nv) relative Jacobian
  mjtNum* scratch = mj_stackAllocNum(d, 3 * (size_t)nv);
  for (int c = 0; c < im->ncontact; c++) {
    const cuspContact* ct = im->contact + c;
    cusp_relative_jac(jac, NULL, scratch, &inv->dyn, m, d, ct->pos, ct->body[0], ct->body[1], 0,
                      nv);
    mjtNum* rn = J + (size_t)c * (1 + r) * nv;
    const mjtNum* t = ct->frame;
    const mjtNum* o = ct->frame + 3;
    cusp_direction_row(rn, jac, ct->frame + 6, nv, 0, nv);
    for (int q = 0; q < r; q++) {
      mjtNum dir[3];
      for (int i = 0; i < 3; i++) {
        dir[i] = cone[2 * q] * t[i] + cone[2 * q + 1] * o[i];
      }
      cusp_direction_row(rn + (size_t)(1 + q) * nv, jac, dir, nv, 0, nv);
    }
  }
}

// The free flow's generalized impulse g (nv) = M v + H (f + D v), f = passive - bias + applied:
// the damping forces f holds are implicit in Mh. Mfull: (nv_model x nv_model) from mj_fullM.
static void free_flow_impulse(mjtNum* g, const mjtNum* Mfull, const cuspInverse* inv,
                              const mjModel* m, const mjData* d, mjtNum H) {
  int nv = inv->ndof;
  for (int i = 0; i < nv; i++) {
    int dof = inv->dofs[i];
    mjtNum mv = 0;
    for (int j = 0; j < nv; j++) mv += Mfull[dof * m->nv + inv->dofs[j]] * d->qvel[inv->dofs[j]];
    g[i] = mv + H * (d->qfrc_passive[dof] - d->qfrc_bias[dof] + d->qfrc_applied[dof] +
                     m->dof_damping[dof] * d->qvel[dof]);
  }
  for (int t = 0; t < m->ntendon; t++) {  // + H tendon damping J^T (J v)
    mjtNum damp = m->tendon_damping[t];
    if (damp <= 0) continue;
    int adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
    mjtNum vel = 0;
    for (int a = 0; a < nnz; a++) vel += d->ten_J[adr + a] * d->qvel[m->ten_J_colind[adr + a]];
    for (int a = 0; a < nnz; a++) {
      int ia = inv->dyn.local[m->ten_J_colind[adr + a]];
      if (ia >= 0) g[ia] += H * damp * d->ten_J[adr + a] * vel;
    }
  }
}

// Br (nu x nr): the actuator moments on the model, reduced (row a = (B column a)^T N). Scratch
// from d's arena.
static void actuator_rows(mjtNum* Br, cuspInverse* inv, const mjModel* m, mjData* d) {
  int nv = inv->ndof, nr = inv->dyn.nr;
  mjtNum* brow = mj_stackAllocNum(d, nv);
  for (int a = 0; a < inv->nact; a++) {
    int out = m->actuator_outadr[inv->actuators[a]];
    mju_zero(brow, nv);
    for (int k = 0; k < d->moment_rownnz[out]; k++) {
      int adr = d->moment_rowadr[out] + k;
      int col = inv->dyn.local[d->moment_colind[adr]];
      if (col >= 0) brow[col] = d->actuator_moment[adr];
    }
    cusp_dynamics_reduce(Br + (size_t)a * nr, &inv->dyn, brow, 1);
  }
}

// effector couplings Ae = H Je Mh^-1 B (ne x nu), Ce = Je Mh^-1 Jc^T (ne x nc); contact
// couplings G = H Jc Mh^-1 B (nc x nu); from the rows Jr and their Mh^-1 in T
static void couplings(cuspInverseModel* im) {
  int ne = im->ne, nc = im->nc, nu = im->nu, nr = im->nr, nrow = im->nrow;
  const mjtNum* Jr = im->Jr;
  const mjtNum* T = im->T;
  mjtNum H = im->H;
  for (int i = 0; i < ne; i++) {
    for (int a = 0; a < nu; a++) {
      im->Ae[i * nu + a] = H * mju_dot(Jr + (size_t)i * nr, T + (size_t)(nrow + a) * nr, nr);
    }
    for (int k = 0; k < nc; k++) {
      im->Ce[i * nc + k] = mju_dot(Jr + (size_t)i * nr, T + (size_t)(ne + k) * nr, nr);
    }
  }
  for (int k = 0; k < nc; k++) {
    for (int a = 0; a < nu; a++) {
      im->G[k * nu + a] = H * mju_dot(Jr + (size_t)(ne + k) * nr, T + (size_t)(nrow + a) * nr, nr);
    }
  }
}

int cusp_inverse_model(cuspInverseModel* im, cuspInverse* inv, const mjModel* m, mjData* d) {
  cuspDynamics* dyn = &inv->dyn;
  int nu = im->nu = inv->nact, nv = inv->ndof, ne = im->ne = 3 * inv->neff;
  int nr = im->nr = dyn->nr;
  mjtNum H = im->H = inv->horizon;
  gather_contacts(im, inv, m, d);
  int nc = im->nc = im->ncontact * (1 + im->r);
  int nrow = im->nrow = ne + nc;
  im->Mr = mj_stackAllocNum(d, (size_t)nr * nr);
  mjtNum* Mfull = mj_stackAllocNum(d, (size_t)m->nv * m->nv);
  if (horizon_inertia(im->Mr, Mfull, inv, dyn, m, d, H)) return -1;

  // rows in the model's dofs: effectors, contacts, then the free flow's impulse; reduced
  mjtNum* J = mj_stackAllocNum(d, (size_t)(nrow + 1) * nv);
  mjtNum* Jr = im->Jr = mj_stackAllocNum(d, (size_t)(nrow + 1) * nr);
  mjtNum* Br = mj_stackAllocNum(d, (size_t)nu * nr);
  mjtNum* T = im->T = mj_stackAllocNum(d, (size_t)(nrow + nu) * nr);
  im->rowv = mj_stackAllocNum(d, nrow);
  im->vdes = mj_stackAllocNum(d, ne);
  im->track_error = effector_rows(J, im->vdes, inv, m, d);
  contact_rows(J + (size_t)ne * nv, im, inv, m, d);
  free_flow_impulse(J + (size_t)nrow * nv, Mfull, inv, m, d, H);
  cusp_dynamics_reduce(Jr, dyn, J, nrow + 1);
  mjtNum* vr = Jr + (size_t)nrow * nr;  // reduced free-flow velocity
  mju_cholSolve(vr, im->Mr, vr, nr);
  for (int i = 0; i < nrow; i++) im->rowv[i] = mju_dot(Jr + (size_t)i * nr, vr, nr);
  im->verr = mj_stackAllocNum(d, ne);
  for (int i = 0; i < ne; i++) im->verr[i] = im->rowv[i] - im->vdes[i];

  // T := Mh^-1 applied to every reduced row (effector, contact, then actuator rows)
  actuator_rows(Br, inv, m, d);
  for (int i = 0; i < nrow; i++) mju_cholSolve(T + (size_t)i * nr, im->Mr, Jr + (size_t)i * nr, nr);
  for (int a = 0; a < nu; a++) {
    mju_cholSolve(T + (size_t)(nrow + a) * nr, im->Mr, Br + (size_t)a * nr, nr);
  }
  im->Ae = mj_stackAllocNum(d, (size_t)ne * nu);
  im->Ce = mj_stackAllocNum(d, (size_t)ne * (nc + 1));
  im->G = mj_stackAllocNum(d, (size_t)(nc + 1) * nu);
  couplings(im);
  im->range = 0;
  for (int a = 0; a < nu; a++) im->range = mju_max(im->range, inv->hi[a] - inv->lo[a]);
  return 0;
}
