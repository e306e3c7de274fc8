// Scene fuzzer: seeded random MJCF scenes of the kinds users build, run through the
// cusp.contact plugin with checks that need no reference answer. Shared by the bounded CI run
// (tests/scene_fuzz_test.cc, ASan + UBSan in scripts/test) and the long run (bench/scene_fuzz,
// bench/scene_fuzz_run.cc, one forked child per scene).
//
// A scene (Generate) has a floor (a plane, or with some seeds a heightfield), static boxes turned
// so that edges and corners stick out, static geoms of every type, and a mix of: rigid bodies of
// every geom type (box, cylinder, sphere, capsule, ellipsoid, convex mesh, the 200-sided mesh can)
// registered for patch contact, scattered or in piles, with masses over four decades and
// occasional extreme mass ratios; disk carriers (a rod with 2-4 registered cylinder disks);
// pushers (slide-jointed spheres or disks driven by motors: actuated); tools held by a weld to a
// mocap body (static, or moved along a circle: actuated); unregistered bodies left to MuJoCo.
// Euler or implicitfast, random solver settings, sometimes tolerance 1e-16 with 1e6 iterations;
// `environment` empty or listed, sometimes naming what cusp refuses (a heightfield, a geom of the
// disk's own body, a registered body's geom, a limit surface of an unregistered body).
// Bodies start apart (bounding spheres 1 mm clear), so no start is in penetration.
//
// Checks (Run): the scene is refused at load with a "cusp.contact:" message, or it steps: every
// qpos, qvel finite after every step and no MuJoCo instability warning (bad qpos/qvel/qacc, which
// resets the data); each scene within its CPU-time budget (a hang); for unactuated scenes the
// energy (kinetic + potential) contact is answerable for (EnergyLedger: a body's free flight is
// MuJoCo's integrator's) never rises more than kEnergyGainAbs + kEnergyGainRel * E_ref
// above the lowest value it had before (a passive scene only loses energy; the tolerance covers
// integration error of MuJoCo's own soft contacts), E_ref = sum over free bodies of
// m |g| (start height + 1 m). Counted, not failed: steps whose solve failed.
// A signal or a sanitizer report ends the process (in the CI run) or the child (long run): both
// are failures.
#ifndef CUSP_TESTS_SCENE_FUZZ_H_
#define CUSP_TESTS_SCENE_FUZZ_H_

#include <mujoco/mujoco.h>

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

extern "C" {
#include "instance.h"
#include "publish/contacts_api.h"
}

namespace cusp_fuzz {

// CPU-time budget of a scene: kStepBudget seconds a step (a step whose solves all fail spends at
// most a few runs of 200 iterations or the work budget: about 30-60 ms in a release build), times
// kSlowdown in a sanitizer build; a hang is orders of magnitude beyond
#ifdef CUSP_SANITIZE
constexpr double kSlowdown = 4;
#else
constexpr double kSlowdown = 1;
#endif
constexpr double kStepBudget = 0.1;

// energy bound for unactuated scenes: gain <= kEnergyGainAbs + kEnergyGainRel * E_ref
constexpr double kEnergyGainAbs = 1e-3;  // J
constexpr double kEnergyGainRel = 1e-2;

// splitmix64: small, seedable, the same sequence on every platform
struct Rng {
  uint64_t s;
  // the seed is mixed once, so that neighbouring seeds do not give shifted copies of one stream
  explicit Rng(uint64_t seed) : s(0) {
    s = seed;
    s = Next() ^ 0x2545F4914F6CDD1Dull;
  }
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform(double a, double b) {
    return a + (b - a) * (Next() >> 11) * (1.0 / 9007199254740992.0);
  }
  double LogUniform(double a, double b) { return std::exp(Uniform(std::log(a), std::log(b))); }
  int Int(int lo, int hi) { return lo + (int)(Next() % (uint64_t)(hi - lo + 1)); }  // [lo, hi]
  bool Chance(double p) { return Uniform(0, 1) < p; }
};

struct Scene {
  uint64_t seed = 0;
  std::string xml;
  bool actuated = false;     // motors or moving mocap bodies: no energy bound
  std::vector<double> ctrl;  // constant control of every actuator
  int moving_mocap = -1;     // mocap body moved along a circle (index), or -1
  double mocap_center[3] = {0, 0, 0};
  double energy_ref = 0;  // J, E_ref of the energy bound
  std::string summary;    // one line: what the scene holds
};

inline std::string Fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string Fmt(const char* f, ...) {
  va_list ap, ap2;
  va_start(ap, f);
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string out(n > 0 ? n : 0, '\0');
  std::vsnprintf(&out[0], out.size() + 1, f, ap2);
  va_end(ap2);
  return out;
}

// a random unit quaternion as "w x y z"
inline std::string RandomQuat(Rng& r) {
  double q[4], n = 0;
  do {
    n = 0;
    for (double& x : q) {
      x = r.Uniform(-1, 1);
      n += x * x;
    }
  } while (n < 1e-3 || n > 1);
  n = std::sqrt(n);
  return Fmt("%.9g %.9g %.9g %.9g", q[0] / n, q[1] / n, q[2] / n, q[3] / n);
}

struct Placed {
  double x, y, z, r;
};

// Generator state: placed bounding spheres, names, XML parts.
struct Builder {
  Rng& rng;
  std::string assets, world, actuators, equalities;
  std::vector<Placed> placed;
  std::vector<std::string> disks, bodies, statics, body_geoms, disk_body_geoms, stock_geoms;
  std::vector<std::string> unregistered_bodies;  // free bodies not in `bodies`
  std::string hfield;                            // name of the heightfield geom, if any
  int nmesh = 0, nmocap = 0, nact = 0;
  double mass_height = 0;  // sum m (z + 1)
  explicit Builder(Rng& r) : rng(r) {}

  bool Clear(double x, double y, double z, double rad) const {
    for (const Placed& p : placed) {
      double d = std::sqrt((x - p.x) * (x - p.x) + (y - p.y) * (y - p.y) + (z - p.z) * (z - p.z));
      if (d < rad + p.r + 1e-3) return false;
    }
    return true;
  }
  // a free spot for a bounding sphere of radius rad: the lowest clear height above the floor at a
  // random (x, y) in the arena (pile: at (x0, y0) with jitter, so bodies stack)
  Placed Spot(double rad, bool pile = false, double x0 = 0, double y0 = 0) {
    for (int attempt = 0; attempt < 200; attempt++) {
      double x = pile ? x0 + rng.Uniform(-0.3, 0.3) * rad : rng.Uniform(-0.45, 0.45);
      double y = pile ? y0 + rng.Uniform(-0.3, 0.3) * rad : rng.Uniform(-0.45, 0.45);
      for (double z = rad + 1e-3 + (hfield.empty() ? 0 : 0.06); z < 2.0; z += 0.25 * rad + 1e-3) {
        if (Clear(x, y, z, rad)) return {x, y, z, rad};
      }
    }
    return {rng.Uniform(-0.4, 0.4), rng.Uniform(-0.4, 0.4), 2.5 + placed.size() * 0.3, rad};
  }
  void Occupy(const Placed& p) { placed.push_back(p); }

  // a mesh asset: random convex points on an ellipsoid, or the 200-sided can; returns its name
  // and bounding radius
  std::string Mesh(double* rad) {
    std::string name = Fmt("mesh%d", nmesh++);
    std::string v;
    double rb = 0;
    if (rng.Chance(0.2)) {
      int sides = rng.Chance(0.5) ? 200 : rng.Int(6, 40);
      double R = rng.Uniform(0.02, 0.07), h = rng.Uniform(0.01, 0.04);
      for (int cap = 0; cap < 2; cap++) {
        for (int i = 0; i < sides; i++) {
          double a = 2 * M_PI * i / sides;
          v += Fmt("%.9g %.9g %.9g ", R * std::cos(a), R * std::sin(a), cap ? h : -h);
        }
      }
      rb = std::sqrt(R * R + h * h);
    } else {
      int n = rng.Int(8, 40);
      double a = rng.Uniform(0.01, 0.06), b = rng.Uniform(0.01, 0.06), c = rng.Uniform(0.01, 0.06);
      for (int i = 0; i < n; i++) {
        double p[3], nn;
        do {
          nn = 0;
          for (double& x : p) {
            x = rng.Uniform(-1, 1);
            nn += x * x;
          }
        } while (nn < 1e-2 || nn > 1);
        nn = std::sqrt(nn);
        v += Fmt("%.9g %.9g %.9g ", a * p[0] / nn, b * p[1] / nn, c * p[2] / nn);
      }
      rb = std::fmax(a, std::fmax(b, c));
    }
    assets += Fmt("<mesh name=\"%s\" vertex=\"%s\"/>\n", name.c_str(), v.c_str());
    *rad = rb;
    return name;
  }

  // a geom of a random type; returns its XML (with attrs) and bounding radius
  std::string Geom(const std::string& name, const std::string& attrs, double* rad, int type = -1) {
    if (type < 0) type = rng.Int(0, 5);
    double a = rng.Uniform(0.01, 0.07), b = rng.Uniform(0.01, 0.07), c = rng.Uniform(0.005, 0.07);
    switch (type) {
      case 0:
        *rad = std::sqrt(a * a + b * b + c * c);
        return Fmt("<geom name=\"%s\" type=\"box\" size=\"%.6g %.6g %.6g\" %s/>", name.c_str(), a,
                   b, c, attrs.c_str());
      case 1:
        *rad = std::sqrt(a * a + c * c);
        return Fmt("<geom name=\"%s\" type=\"cylinder\" size=\"%.6g %.6g\" %s/>", name.c_str(), a,
                   c, attrs.c_str());
      case 2:
        *rad = a;
        return Fmt("<geom name=\"%s\" type=\"sphere\" size=\"%.6g\" %s/>", name.c_str(), a,
                   attrs.c_str());
      case 3:
        *rad = a + c;
        return Fmt("<geom name=\"%s\" type=\"capsule\" size=\"%.6g %.6g\" %s/>", name.c_str(), a, c,
                   attrs.c_str());
      case 4:
        *rad = std::fmax(a, std::fmax(b, c));
        return Fmt("<geom name=\"%s\" type=\"ellipsoid\" size=\"%.6g %.6g %.6g\" %s/>",
                   name.c_str(), a, b, c, attrs.c_str());
      default: {
        std::string mesh = Mesh(rad);
        return Fmt("<geom name=\"%s\" type=\"mesh\" mesh=\"%s\" %s/>", name.c_str(), mesh.c_str(),
                   attrs.c_str());
      }
    }
  }

  double Mass() {
    if (rng.Chance(0.08))
      return rng.Chance(0.5) ? rng.LogUniform(1e-4, 1e-3) : rng.LogUniform(50, 500);
    return rng.LogUniform(0.02, 5);
  }
};

inline const char* kOff = "contype=\"0\" conaffinity=\"0\"";

inline Scene Generate(uint64_t seed) {
  Scene sc;
  sc.seed = seed;
  Rng rng(seed);
  Builder B(rng);
  std::string summary;

  // ---- floor and static environment
  bool use_hfield = rng.Chance(0.08);
  if (use_hfield) {
    int nr = rng.Int(4, 12), nc = rng.Int(4, 12);
    std::string elev;
    for (int i = 0; i < nr * nc; i++) elev += Fmt("%.4f ", rng.Uniform(0, 1));
    B.assets +=
        Fmt("<hfield name=\"terrain\" nrow=\"%d\" ncol=\"%d\" size=\"1 1 0.05 0.05\" "
            "elevation=\"%s\"/>\n",
            nr, nc, elev.c_str());
    B.world += "<geom name=\"ground\" type=\"hfield\" hfield=\"terrain\"/>\n";
    B.hfield = "ground";
    B.world += "<geom name=\"floor\" type=\"plane\" size=\"3 3 0.1\" pos=\"0 0 -0.2\"/>\n";
    summary += "hfield ";
  } else {
    B.world += "<geom name=\"floor\" type=\"plane\" size=\"3 3 0.1\"/>\n";
  }
  B.statics.push_back("floor");
  int nstatic = rng.Int(0, 3);
  for (int i = 0; i < nstatic; i++) {
    std::string name = Fmt("static%d", i);
    double rad;
    // mostly boxes with corners and edges up; sometimes any other type
    std::string g = B.Geom(name, "", &rad, rng.Chance(0.7) ? 0 : rng.Int(1, 5));
    double x = rng.Uniform(-0.4, 0.4), y = rng.Uniform(-0.4, 0.4), z = rng.Uniform(0, 0.6) * rad;
    std::string quat = rng.Chance(0.5) ? RandomQuat(rng) : "1 0 0 0";
    // static geoms sit in a body of their own (world-fixed), posed
    B.world += Fmt("<body name=\"sbody%d\" pos=\"%.6g %.6g %.6g\" quat=\"%s\">%s</body>\n", i, x, y,
                   z, quat.c_str(), g.c_str());
    B.Occupy({x, y, z, rad});
    B.statics.push_back(name);
  }
  summary += Fmt("statics=%d ", nstatic);

  // ---- registered rigid bodies (patch contact)
  int nbody = rng.Int(0, 6);
  bool pile = nbody >= 2 && rng.Chance(0.35);
  double px = rng.Uniform(-0.2, 0.2), py = rng.Uniform(-0.2, 0.2);
  for (int i = 0; i < nbody; i++) {
    std::string name = Fmt("body%d", i);
    double mass = B.Mass(), rad;
    std::string g = B.Geom(name + "_g0", Fmt("mass=\"%.6g\" %s", mass, kOff), &rad);
    B.body_geoms.push_back(name + "_g0");
    if (rng.Chance(0.15)) {  // a second geom, a sphere at one side: a compound body
      double r2 = rng.Uniform(0.01, 0.04);
      g +=
          Fmt("<geom name=\"%s_g1\" type=\"sphere\" size=\"%.6g\" pos=\"%.6g 0 0\" "
              "mass=\"%.6g\" %s/>",
              name.c_str(), r2, rad, mass * 0.5, kOff);
      B.body_geoms.push_back(name + "_g1");
      rad += r2;
    }
    Placed p = B.Spot(rad, pile, px, py);
    B.Occupy(p);
    B.world += Fmt("<body name=\"%s\" pos=\"%.6g %.6g %.6g\" quat=\"%s\"><freejoint/>%s</body>\n",
                   name.c_str(), p.x, p.y, p.z, RandomQuat(rng).c_str(), g.c_str());
    B.bodies.push_back(name);
    B.mass_height += mass * (p.z + 1);
  }
  summary += Fmt("bodies=%d%s ", nbody, pile ? "(pile)" : "");

  // ---- disk carriers
  int ncarrier = rng.Int(0, 2);
  for (int i = 0; i < ncarrier; i++) {
    int nd = rng.Int(2, 4);
    double L = rng.Uniform(0.08, 0.2), R = rng.Uniform(0.015, 0.04), t = rng.Uniform(0.003, 0.01);
    double mass = B.Mass();
    bool flat = rng.Chance(0.3);
    std::string g =
        Fmt("<geom name=\"carrier%d_rod\" type=\"capsule\" fromto=\"%.6g 0 0 %.6g 0 0\" "
            "size=\"0.008\" mass=\"%.6g\" %s/>",
            i, -L / 2, L / 2, mass * 0.4, kOff);
    B.disk_body_geoms.push_back(Fmt("carrier%d_rod", i));
    for (int k = 0; k < nd; k++) {
      std::string dn = Fmt("carrier%d_disk%d", i, k);
      double x = -L / 2 + L * k / (nd - 1);
      g +=
          Fmt("<geom name=\"%s\" type=\"cylinder\" size=\"%.6g %.6g\" pos=\"%.6g 0 0\" %s "
              "mass=\"%.6g\" friction=\"%.3g\" %s/>",
              dn.c_str(), R, t, x, flat ? "" : "euler=\"90 0 0\"", mass * 0.6 / nd,
              rng.Uniform(0.2, 1.0), kOff);
      B.disks.push_back(dn);
    }
    double rad = std::sqrt(L * L / 4 + R * R) + t;
    Placed p = B.Spot(rad);
    B.Occupy(p);
    B.world +=
        Fmt("<body name=\"carrier%d\" pos=\"%.6g %.6g %.6g\" euler=\"0 0 %.4g\"><freejoint/>"
            "%s</body>\n",
            i, p.x, p.y, p.z, rng.Uniform(0, 360), g.c_str());
    B.mass_height += mass * (p.z + 1);
    B.unregistered_bodies.push_back(Fmt("carrier%d", i));
  }
  summary += Fmt("carriers=%d ", ncarrier);

  // ---- pushers: a sphere or a registered disk on x/y slides (z held by gravcomp), motors
  int npusher = rng.Int(0, 1) + (rng.Chance(0.2) ? 1 : 0);
  for (int i = 0; i < npusher; i++) {
    bool disk = rng.Chance(0.4);
    double R = rng.Uniform(0.01, 0.03);
    std::string name = Fmt("pusher%d", i);
    double rad = R + 0.01;
    Placed p = B.Spot(rad);
    p.z = rad + 0.002 + (B.hfield.empty() ? 0 : 0.06);
    if (!B.Clear(p.x, p.y, p.z, rad)) continue;
    B.Occupy(p);
    std::string g =
        disk ? Fmt("<geom name=\"%s\" type=\"cylinder\" size=\"%.6g 0.008\" euler=\"90 0 0\" "
                   "mass=\"0.05\" %s/>",
                   name.c_str(), R, kOff)
             : Fmt("<geom name=\"%s\" type=\"sphere\" size=\"%.6g\" mass=\"0.05\"/>", name.c_str(),
                   R);
    if (disk)
      B.disks.push_back(name);
    else
      B.stock_geoms.push_back(name);
    B.world +=
        Fmt("<body name=\"%s\" pos=\"%.6g %.6g %.6g\" gravcomp=\"1\"><joint name=\"%s_x\" "
            "type=\"slide\" axis=\"1 0 0\"/><joint name=\"%s_y\" type=\"slide\" "
            "axis=\"0 1 0\"/>%s</body>\n",
            name.c_str(), p.x, p.y, p.z, name.c_str(), name.c_str(), g.c_str());
    // toward the arena centre, clamped force
    double fx = -p.x, fy = -p.y, n = std::sqrt(fx * fx + fy * fy) + 1e-9, F = rng.Uniform(0.2, 8);
    B.actuators +=
        Fmt("<motor joint=\"%s_x\" ctrlrange=\"-10 10\"/><motor joint=\"%s_y\" "
            "ctrlrange=\"-10 10\"/>\n",
            name.c_str(), name.c_str());
    sc.ctrl.push_back(F * fx / n);
    sc.ctrl.push_back(F * fy / n);
    sc.actuated = true;
  }
  summary += Fmt("pushers=%d ", npusher);

  // ---- a tool held by a weld to a mocap body (disk or sphere), mocap static or moving
  if (rng.Chance(0.3)) {
    bool disk = rng.Chance(0.6);
    double R = rng.Uniform(0.015, 0.035);
    Placed p = B.Spot(R + 0.01);
    B.Occupy(p);
    std::string g =
        disk ? Fmt("<geom name=\"tool\" type=\"cylinder\" size=\"%.6g 0.006\" "
                   "mass=\"0.1\" %s/>",
                   R, kOff)
             : Fmt("<geom name=\"tool\" type=\"sphere\" size=\"%.6g\" mass=\"0.1\"/>", R);
    if (disk)
      B.disks.push_back("tool");
    else
      B.stock_geoms.push_back("tool");
    B.world +=
        Fmt("<body name=\"handle\" mocap=\"true\" pos=\"%.6g %.6g %.6g\"/>\n", p.x, p.y, p.z);
    B.world += Fmt("<body name=\"toolbody\" pos=\"%.6g %.6g %.6g\"><freejoint/>%s</body>\n", p.x,
                   p.y, p.z, g.c_str());
    B.equalities += "<weld body1=\"toolbody\" body2=\"handle\"/>\n";
    B.unregistered_bodies.push_back("toolbody");
    if (rng.Chance(0.5)) {
      sc.moving_mocap = 0;
      sc.mocap_center[0] = p.x;
      sc.mocap_center[1] = p.y;
      sc.mocap_center[2] = p.z;
      sc.actuated = true;
    }
    summary += disk ? "weld-disk-tool " : "weld-sphere-tool ";
    B.mass_height += 0.1 * (p.z + 1);
  }

  // ---- unregistered bodies: MuJoCo's own contacts
  int nstock = rng.Int(0, 2);
  for (int i = 0; i < nstock; i++) {
    double rad, mass = rng.LogUniform(0.05, 2);
    std::string name = Fmt("stock%d", i);
    std::string g = B.Geom(name, Fmt("mass=\"%.6g\"", mass), &rad, rng.Int(0, 4));
    Placed p = B.Spot(rad);
    B.Occupy(p);
    B.world += Fmt("<body name=\"%sb\" pos=\"%.6g %.6g %.6g\" quat=\"%s\"><freejoint/>%s</body>\n",
                   name.c_str(), p.x, p.y, p.z, RandomQuat(rng).c_str(), g.c_str());
    B.stock_geoms.push_back(name);
    B.unregistered_bodies.push_back(name + "b");
    B.mass_height += mass * (p.z + 1);
  }
  summary += Fmt("stock=%d ", nstock);

  // ---- config
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
  };
  std::string config;
  if (!B.disks.empty()) config += "<config key=\"disks\" value=\"" + join(B.disks) + "\"/>";
  if (!B.bodies.empty()) config += "<config key=\"bodies\" value=\"" + join(B.bodies) + "\"/>";
  if (rng.Chance(0.45)) {
    std::vector<std::string> env = B.statics;
    for (const std::string& s : B.stock_geoms) {
      if (rng.Chance(0.7)) env.push_back(s);
    }
    // sometimes a listed mistake that must be refused
    double u = rng.Uniform(0, 1);
    if (u < 0.05 && !B.hfield.empty())
      env.push_back(B.hfield), summary += "env+hfield ";
    else if (u < 0.09 && !B.disk_body_geoms.empty())
      env.push_back(B.disk_body_geoms[0]), summary += "env+own-body ";
    else if (u < 0.12 && !B.body_geoms.empty())
      env.push_back(B.body_geoms[0]), summary += "env+body-geom ";
    config += "<config key=\"environment\" value=\"" + join(env) + "\"/>";
    summary += "env=listed ";
  } else {
    summary += "env=empty ";
  }
  const char* solvers[] = {"chain", "chain", "chain", "fbnewton", "lemke", "pgs"};
  std::string solver = solvers[rng.Int(0, 5)];
  config += "<config key=\"solver\" value=\"" + solver + "\"/>";
  if (solver != "chain" && rng.Chance(0.5)) config += "<config key=\"fallback\" value=\"false\"/>";
  config += Fmt("<config key=\"friction_directions\" value=\"%d\"/>", rng.Int(4, 16));
  config += Fmt("<config key=\"margin\" value=\"%.4g\"/>", rng.LogUniform(5e-4, 2e-2));
  if (rng.Chance(0.3))
    config += Fmt("<config key=\"friction\" value=\"%.3g\"/>", rng.Uniform(0, 1.2));
  if (rng.Chance(0.2)) config += "<config key=\"warm_start\" value=\"false\"/>";
  if (rng.Chance(0.06)) {
    config +=
        "<config key=\"tolerance\" value=\"1e-16\"/><config key=\"max_iterations\" "
        "value=\"1000000\"/>";
    summary += "tol=1e-16 ";
  }
  if (!B.bodies.empty() && rng.Chance(0.2)) {
    std::string ls;
    for (const std::string& b : B.bodies) {
      if (rng.Chance(0.5))
        ls += Fmt("%s:%.3g,%.3g,%.3g; ", b.c_str(), rng.Uniform(0, 2), rng.Uniform(0, 2),
                  rng.Uniform(0, 0.05));
    }
    if (rng.Chance(0.15) && !B.unregistered_bodies.empty()) {
      ls += B.unregistered_bodies[rng.Int(0, (int)B.unregistered_bodies.size() - 1)] + ":1,1,0.01;";
      summary += "ls-unregistered ";
    }
    config += "<config key=\"limit_surface\" value=\"" + ls + "\"/>";
  }

  bool euler = rng.Chance(0.5);
  double h = rng.Chance(0.7) ? 1e-3 : 5e-4;
  summary += Fmt("%s h=%g solver=%s", euler ? "Euler" : "implicitfast", h, solver.c_str());

  sc.xml = "<mujoco model=\"fuzz" + std::to_string(seed) + "\">\n" +
           Fmt("<option timestep=\"%g\" integrator=\"%s\"><flag energy=\"enable\"/></option>\n", h,
               euler ? "Euler" : "implicitfast") +
           "<extension><plugin plugin=\"cusp.contact\"><instance name=\"cusp\">" + config +
           "</instance></plugin></extension>\n" + "<asset>\n" + B.assets + "</asset>\n" +
           "<worldbody>\n" + B.world + "</worldbody>\n" +
           (B.actuators.empty() ? "" : "<actuator>\n" + B.actuators + "</actuator>\n") +
           (B.equalities.empty() ? "" : "<equality>\n" + B.equalities + "</equality>\n") +
           "</mujoco>\n";
  sc.energy_ref = 9.81 * B.mass_height;
  sc.summary = summary;
  return sc;
}

// A scene as a file (the regression corpus, tests/scene_fuzz_regressions/): its MJCF with the
// inputs Run needs in a first-line comment, so that a kept scene does not depend on the generator
// staying the same.
inline std::string Serialize(const Scene& sc) {
  std::string head =
      Fmt("<!-- scene_fuzz seed=%llu actuated=%d mocap=%d center=%.17g,%.17g,%.17g "
          "energy_ref=%.17g ctrl=",
          (unsigned long long)sc.seed, sc.actuated ? 1 : 0, sc.moving_mocap, sc.mocap_center[0],
          sc.mocap_center[1], sc.mocap_center[2], sc.energy_ref);
  for (size_t i = 0; i < sc.ctrl.size(); i++) head += Fmt("%s%.17g", i ? "," : "", sc.ctrl[i]);
  return head + " summary=" + sc.summary + " -->\n" + sc.xml;
}

inline bool Parse(const std::string& text, Scene* sc) {
  unsigned long long seed;
  int actuated, mocap, used = 0;
  if (std::sscanf(text.c_str(),
                  "<!-- scene_fuzz seed=%llu actuated=%d mocap=%d center=%lf,%lf,%lf "
                  "energy_ref=%lf ctrl=%n",
                  &seed, &actuated, &mocap, sc->mocap_center, sc->mocap_center + 1,
                  sc->mocap_center + 2, &sc->energy_ref, &used) != 7) {
    return false;
  }
  sc->seed = seed;
  sc->actuated = actuated;
  sc->moving_mocap = mocap;
  sc->ctrl.clear();
  const char* p = text.c_str() + used;
  while (*p && *p != ' ') {
    char* end;
    double v = std::strtod(p, &end);
    if (end == p) return false;
    sc->ctrl.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  size_t at = text.find(" summary="), close = text.find(" -->\n");
  if (at == std::string::npos || close == std::string::npos) return false;
  sc->summary = text.substr(at + 9, close - at - 9);
  sc->xml = text.substr(close + 5);
  return true;
}

// Energy (J) of a body on a free joint from qpos/qvel alone: kinetic 1/2 m |v_com|^2 +
// 1/2 w^T I w about the centre of mass, potential -m g . x_com. qvel's linear part is the body
// origin's world velocity, its angular part is in the body frame (MuJoCo's free joint).
inline double FreeBodyEnergy(const mjModel* m, const mjData* d, int body) {
  int j = m->body_jntadr[body];
  const mjtNum *q = d->qpos + m->jnt_qposadr[j], *v = d->qvel + m->jnt_dofadr[j];
  mjtNum r[3], w_world[3], v_com[3], w_inertial[3], iquat_conj[4];
  mju_rotVecQuat(r, m->body_ipos + 3 * body, q + 3);  // origin -> centre of mass, world
  mju_rotVecQuat(w_world, v + 3, q + 3);
  mju_cross(v_com, w_world, r);
  mju_addTo3(v_com, v);
  mju_negQuat(iquat_conj, m->body_iquat + 4 * body);
  mju_rotVecQuat(w_inertial, v + 3, iquat_conj);  // body frame -> principal axes
  const mjtNum* I = m->body_inertia + 3 * body;
  double mass = m->body_mass[body], ke = 0.5 * mass * mju_dot3(v_com, v_com);
  for (int k = 0; k < 3; k++) ke += 0.5 * I[k] * w_inertial[k] * w_inertial[k];
  mjtNum x_com[3] = {q[0] + r[0], q[1] + r[1], q[2] + r[2]};
  return ke - mass * mju_dot3(m->opt.gravity, x_com);
}

// The energy of an unactuated scene that contact is answerable for. A body on a free joint that
// nothing touched in a step (no cusp contact record with an impulse, no MuJoCo contact, no
// equality) flew freely: its energy change in that step is MuJoCo's integrator's alone (Euler
// integrates a fast spin explicitly and gains energy without any contact: a capsule spinning at
// 400 rad/s gains 86 J in 33 steps of 1 ms), so it is left out; every other change counts.
// Scenes with a joint other than free count the whole energy.
struct EnergyLedger {
  std::vector<double> last;     // J, each body's energy after the previous step
  std::vector<char> touched;    // this step
  std::vector<int> bodies;      // free-joint bodies
  std::vector<int> held;        // bodies of weld and connect equalities
  double charged = 0;           // J, sum of the counted changes since the start
  bool whole = false;           // a joint other than free: count d->energy instead (after
                                // mj_step, the energy of the state before it: its forward's)

  void Start(const mjModel* m, const mjData* d) {
    last.assign(m->nbody, 0);
    touched.assign(m->nbody, 0);
    for (int j = 0; j < m->njnt; j++) {
      if (m->jnt_type[j] != mjJNT_FREE) whole = true;
    }
    for (int e = 0; e < m->neq; e++) {  // a body held by a weld or connect is never free
      if ((m->eq_type[e] == mjEQ_WELD || m->eq_type[e] == mjEQ_CONNECT) &&
          m->eq_objtype[e] == mjOBJ_BODY) {
        held.push_back(m->eq_obj1id[e]);
        held.push_back(m->eq_obj2id[e]);
      } else {
        whole = true;
      }
    }
    for (int b = 1; b < m->nbody; b++) {
      if (m->body_jntnum[b] == 1 && m->jnt_type[m->body_jntadr[b]] == mjJNT_FREE) {
        bodies.push_back(b);
        last[b] = FreeBodyEnergy(m, d, b);
      }
    }
  }
  // after mj_step; returns the counted energy (J) up to now, up to a constant
  double Step(const mjModel* m, const mjData* d) {
    if (whole) return d->energy[0] + d->energy[1];
    std::fill(touched.begin(), touched.end(), 0);
    int n = cusp_contacts_count(m, d, 0);
    if (n > 0) {
      std::vector<double> impulse(4 * (size_t)n);
      std::vector<int> body(2 * (size_t)n);
      cusp_contacts_copy(m, d, 0, n, nullptr, nullptr, impulse.data(), nullptr, nullptr, nullptr,
                         nullptr, body.data());
      for (int i = 0; i < n; i++) {
        const double* p = impulse.data() + 4 * i;
        if (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0) continue;
        for (int k = 0; k < 2; k++) {
          if (body[2 * i + k] >= 0) touched[body[2 * i + k]] = 1;
        }
      }
    }
    for (int c = 0; c < d->ncon; c++) {
      touched[m->geom_bodyid[d->contact[c].geom[0]]] = 1;
      touched[m->geom_bodyid[d->contact[c].geom[1]]] = 1;
    }
    for (int b : held) touched[b] = 1;
    for (int b : bodies) {
      double e = FreeBodyEnergy(m, d, b);
      if (touched[b]) charged += e - last[b];
      last[b] = e;
    }
    return charged;
  }
};

enum Outcome { kOk = 0, kSolverFailures, kRefused, kFailed };

inline const char* OutcomeName(Outcome o) {
  static const char* n[] = {"ok", "solver_failures", "refused", "FAILED"};
  return n[o];
}

struct Result {
  Outcome outcome = kOk;
  std::string reason;  // refusal message or failure
  int steps = 0;
  int failures = 0;        // steps whose solve failed (plugin counter)
  double energy_gain = 0;  // J, largest rise of the total energy above its lowest value so far
                           // (unactuated scenes)
  double seconds = 0;      // CPU time of the steps (this process), s
};

// Compile and step a scene. max_seconds: CPU-time budget of the stepping (exceeded: failed,
// "hang"). The caller guards against a step that never returns (alarm / child process).
inline Result Run(const Scene& sc, int nstep, double max_seconds) {
  Result res;
  char err[4096] = "";
  mjSpec* spec = mj_parseXMLString(sc.xml.c_str(), nullptr, err, sizeof(err));
  if (!spec) {
    res.outcome = kFailed;
    res.reason = std::string("generator wrote bad MJCF: ") + err;
    return res;
  }
  mjModel* m = mj_compile(spec, nullptr);
  if (!m) {
    std::string e = mjs_getError(spec);
    mj_deleteSpec(spec);
    size_t at = e.find("cusp.contact:");
    if (at != std::string::npos) {
      res.outcome = kRefused;
      res.reason = e.substr(at, e.find('\n', at) - at);
    } else {
      res.outcome = kFailed;
      res.reason = "compile failed without a cusp refusal: " + e;
    }
    return res;
  }
  mj_deleteSpec(spec);
  mjData* d = mj_makeData(m);
  if (!d) {
    mj_deleteModel(m);
    res.outcome = kFailed;
    res.reason = "mj_makeData failed";
    return res;
  }
  const mjtNum* state = d->plugin_state + m->plugin_stateadr[0];
  // CPU time, not wall time: a run at nice 19 on a shared machine may wait for a core for long
  std::clock_t t0 = std::clock();
  double e0 = NAN;
  EnergyLedger ledger;
  ledger.Start(m, d);
  for (int i = 0; i < nstep; i++) {
    for (int k = 0; k < m->nu && k < (int)sc.ctrl.size(); k++) d->ctrl[k] = sc.ctrl[k];
    if (sc.moving_mocap >= 0 && m->nmocap > sc.moving_mocap) {
      double t = d->time, a = 2 * M_PI * t / 0.8;  // 5 cm circle at 0.4 m/s
      mjtNum* p = d->mocap_pos + 3 * sc.moving_mocap;
      p[0] = sc.mocap_center[0] + 0.05 * std::sin(a);
      p[1] = sc.mocap_center[1] + 0.05 * (1 - std::cos(a));
      p[2] = sc.mocap_center[2];
    }
    mj_step(m, d);
    res.steps = i + 1;
    for (int k = 0; k < m->nq && res.outcome != kFailed; k++) {
      if (!std::isfinite(d->qpos[k]))
        res.outcome = kFailed, res.reason = Fmt("qpos[%d] not finite", k);
    }
    for (int k = 0; k < m->nv && res.outcome != kFailed; k++) {
      if (!std::isfinite(d->qvel[k]))
        res.outcome = kFailed, res.reason = Fmt("qvel[%d] not finite", k);
    }
    for (int w : {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC}) {
      if (d->warning[w].number && res.outcome != kFailed) {
        res.outcome = kFailed;
        res.reason = Fmt("MuJoCo instability warning %d (data reset) at t = %g", w, d->time);
      }
    }
    double e = ledger.Step(m, d);
    if (i == 0 || e < e0) e0 = e;  // the lowest energy so far
    if (!sc.actuated) res.energy_gain = std::fmax(res.energy_gain, e - e0);
    res.seconds = double(std::clock() - t0) / CLOCKS_PER_SEC;
    if (res.outcome == kFailed) break;
    if (res.seconds > max_seconds) {
      res.outcome = kFailed;
      res.reason =
          Fmt("hang: %d steps took %.1f s of CPU (budget %.1f s)", i + 1, res.seconds, max_seconds);
      break;
    }
  }
  res.failures = (int)state[CUSP_STATE_SOLVER_FAILURES];
  double bound = kEnergyGainAbs + kEnergyGainRel * sc.energy_ref;
  if (res.outcome != kFailed && !sc.actuated && res.energy_gain > bound) {
    res.outcome = kFailed;
    res.reason =
        Fmt("energy gain %.3g J above the bound %.3g J (unactuated)", res.energy_gain, bound);
  }
  if (res.outcome == kOk && res.failures) res.outcome = kSolverFailures;
  mj_deleteData(d);
  mj_deleteModel(m);
  return res;
}

}  // namespace cusp_fuzz

#endif  // CUSP_TESTS_SCENE_FUZZ_H_
