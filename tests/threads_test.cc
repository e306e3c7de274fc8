// Thread safety: 8 mjData of one model, each started from its own perturbed state, stepped for
// 10 s of simulated time (CUSP_THREADS_SECONDS: another span), sequentially and then in 2
// threads (4 mjData each, round-robin so that both threads are inside the plugin at the same
// time). The trajectories (an FNV-1a hash of the
// bytes of qpos, qvel and the plugin state after every step, and the final state) must be
// bitwise equal. scripts/tsan builds this test with ThreadSanitizer, which reports any data race
// in the plugin (a shared mutable static, a shared workspace).
//
// Scenes: rod_over_cylinder.xml (21 disks, LCP path, implicitfast h = 1 ms) and push_slide.xml
// (patch contact, MCP path, h = 1 ms): the two seeds' scenes with h = 1 ms, so 10 s is 10000 steps
// per mjData (the Euler h = 1e-4 arm scenes would need 100000).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "instance.h"
}

namespace {

constexpr int kData = 8;

// simulated seconds per mjData: 10, or CUSP_THREADS_SECONDS where the run is for the sanitizers
// (scripts/test and scripts/tsan: 1 s; the contacts are made within it, the test asserts contact
// in most steps, and the later steps run the same plugin code on the same per-mjData memory)
double Seconds() {
  const char* v = std::getenv("CUSP_THREADS_SECONDS");
  double s = v && *v ? std::strtod(v, nullptr) : 0;
  return s > 0 ? s : 10;
}

struct Trajectories {
  std::vector<uint64_t> hash;              // per mjData
  std::vector<std::vector<mjtNum>> final;  // qpos, qvel, plugin_state per mjData
  std::vector<long> contact_steps;
};

void Mix(uint64_t* h, const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; i++) {
    *h ^= b[i];
    *h *= 1099511628211ull;
  }
}

mjData* MakePerturbed(const mjModel* m, int k) {
  mjData* d = mj_makeData(m);
  // each mjData starts differently: a small, deterministic velocity on every dof
  for (int i = 0; i < m->nv; i++) d->qvel[i] = 0.01 * std::sin(1.0 + 0.7 * k + 0.3 * i);
  return d;
}

// steps datas[first], datas[first + stride], ... round-robin, one step each, until t = Seconds()
void StepSome(const mjModel* m, std::vector<mjData*>& datas, Trajectories& run, int first, int stride) {
  int steps = (int)std::lround(Seconds() / m->opt.timestep);
  for (int s = 0; s < steps; s++) {
    for (int k = first; k < kData; k += stride) {
      mjData* d = datas[k];
      mj_step(m, d);
      const mjtNum* st = d->plugin_state;
      uint64_t* h = &run.hash[k];
      Mix(h, d->qpos, m->nq * sizeof(mjtNum));
      Mix(h, d->qvel, m->nv * sizeof(mjtNum));
      Mix(h, st, m->npluginstate * sizeof(mjtNum));
      run.contact_steps[k] += st[m->plugin_stateadr[0] + CUSP_STATE_NCONTACT] > 0;
    }
  }
}

Trajectories Simulate(const mjModel* m, int nthread) {
  Trajectories run;
  run.hash.assign(kData, 1469598103934665603ull);
  run.contact_steps.assign(kData, 0);
  std::vector<mjData*> datas;
  for (int k = 0; k < kData; k++) datas.push_back(MakePerturbed(m, k));
  if (nthread == 1) {
    StepSome(m, datas, run, 0, 1);
  } else {
    std::thread a([&] { StepSome(m, datas, run, 0, 2); });
    std::thread b([&] { StepSome(m, datas, run, 1, 2); });
    a.join();
    b.join();
  }
  for (mjData* d : datas) {
    std::vector<mjtNum> f(d->qpos, d->qpos + m->nq);
    f.insert(f.end(), d->qvel, d->qvel + m->nv);
    f.insert(f.end(), d->plugin_state, d->plugin_state + m->npluginstate);
    run.final.push_back(f);
    mj_deleteData(d);
  }
  return run;
}

// the model m_ of the scene (its d_ is not stepped: the runs make their own mjData)
class Threads : public cusp_test::SceneTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(Threads, TwoThreadsEqualSequentialBitwise) {
  LoadFile(GetParam());
  const mjModel* m = m_;
  Trajectories seq = Simulate(m, 1);
  Trajectories par = Simulate(m, 2);
  int steps = (int)std::lround(Seconds() / m->opt.timestep);
  for (int k = 0; k < kData; k++) {
    // the scene is exercised: contact during most of the run, a finite final state
    EXPECT_GT(seq.contact_steps[k], steps / 2) << "mjData " << k;
    for (mjtNum x : seq.final[k]) ASSERT_TRUE(std::isfinite(x)) << "mjData " << k;
    EXPECT_EQ(seq.hash[k], par.hash[k]) << "mjData " << k << ": trajectory differs";
    EXPECT_EQ(seq.contact_steps[k], par.contact_steps[k]);
    ASSERT_EQ(seq.final[k].size(), par.final[k].size());
    EXPECT_EQ(std::memcmp(seq.final[k].data(), par.final[k].data(),
                          seq.final[k].size() * sizeof(mjtNum)),
              0)
        << "mjData " << k << ": final state differs";
  }
  // the perturbations make the 8 trajectories different from each other
  for (int k = 1; k < kData; k++) EXPECT_NE(seq.hash[k], seq.hash[0]) << "mjData " << k;
}

INSTANTIATE_TEST_SUITE_P(Seeds, Threads,
                         ::testing::Values("rod_over_cylinder.xml", "push_slide.xml"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string s = info.param;
                           return s.substr(0, s.find('.'));
                         });

}  // namespace
