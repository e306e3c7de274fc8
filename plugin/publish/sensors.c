// Plugin sensors: see sensors.h for what each kind reports.
#include "publish/sensors.h"

#include <stdio.h>

#include "collide/contact.h"
#include "collide/patch.h"

_Static_assert((int)CUSP_SENSOR_DIM >= (int)CUSP_NSTATE &&
                   (int)CUSP_SENSOR_DIM >= (int)CUSP_PATCH_NSLOT &&
                   (int)CUSP_SENSOR_DIM >= (int)CUSP_SENSOR_DISK_DIM,
               "every record must fit the sensor dimension");

// dim 5 record of disk geom `disk` from the last step's contacts
static void disk_record(mjtNum out[CUSP_SENSOR_DISK_DIM], const cuspStepWork* w, int disk) {
  mjtNum ln = 0, lf[3] = {0, 0, 0}, mu = 0;
  int n = 0, loaded = 0, sliding = 0;
  for (int i = 0; i < w->ncontact; i++) {
    const cuspContact* c = w->contacts + i;
    if (c->geom[0] != disk) continue;
    n++;
    ln += c->impulse_n;
    mju_addToScl3(lf, c->frame, c->impulse_t[0]);      // along t
    mju_addToScl3(lf, c->frame + 3, c->impulse_t[1]);  // along o
    mu = mju_max(mu, c->mu);
    loaded += c->mode != CUSP_MODE_BREAK;
    sliding += c->mode == CUSP_MODE_SLIDE;
  }
  mjtNum lf_norm = mju_norm3(lf);
  out[0] = ln;
  out[1] = lf_norm;
  out[2] = (ln > 0 && mu > 0) ? lf_norm / (mu * ln) : 0;
  out[3] = sliding ? CUSP_MODE_SLIDE : loaded ? CUSP_MODE_STICK : CUSP_MODE_BREAK;
  out[4] = n;
}

void cusp_sensor_fill(const mjModel* m, mjData* d, int instance, const cuspInstance* inst) {
  const mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  for (int i = 0; i < m->nsensor; i++) {
    if (m->sensor_type[i] != mjSENS_PLUGIN || m->sensor_plugin[i] != instance) continue;
    mjtNum* out = d->sensordata + m->sensor_adr[i];
    mju_zero(out, CUSP_SENSOR_DIM);
    int type = m->sensor_objtype[i], id = m->sensor_objid[i];
    if (type == mjOBJ_GEOM) {
      disk_record(out, &inst->work, id);
    } else if (type == mjOBJ_BODY || type == mjOBJ_XBODY) {
      int k = inst->work.params.patch_of_body[id];  // registered: checked at load
      mju_copy(out, state + CUSP_NSTATE + CUSP_PATCH_NSLOT * k, CUSP_PATCH_NSLOT);
    } else {
      mju_copy(out, state, CUSP_NSTATE);
    }
  }
}
