// No heap allocation in the steady-state step: every seeds' scene is warmed up, then 1000 steps
// are taken while an interposed malloc family counts every call (from any library) and remembers
// who called it. Expected count: 0, from the plugin and from MuJoCo alike (MuJoCo steps in its
// mjData arena; the plugin allocates its workspace at init and grows it only when a step has more
// contacts than any before).
//
// The interposition replaces malloc/calloc/realloc/aligned_alloc/posix_memalign/memalign in this
// executable and forwards to glibc's __libc_* entry points. Under AddressSanitizer (which owns
// malloc) and valgrind (which replaces glibc's allocator) the counts are not meaningful, so the
// test skips itself there (CUSP_SANITIZE, RUNNING_ON_VALGRIND-like check via the environment).
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "control/avoid.h"
#include "instance.h"
}

#ifndef CUSP_SANITIZE
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {
constexpr int kMaxCallers = 64;
std::atomic<int> g_counting{0};
std::atomic<long> g_count{0};
void* g_callers[kMaxCallers];

void Record(void* caller) {
  long k = g_count.fetch_add(1);
  if (k < kMaxCallers) g_callers[k] = caller;
}
}  // namespace

extern "C" {
void* malloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) Record(__builtin_return_address(0));
  return __libc_malloc(n);
}
void* calloc(size_t k, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) Record(__builtin_return_address(0));
  return __libc_calloc(k, n);
}
void* realloc(void* p, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) Record(__builtin_return_address(0));
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) Record(__builtin_return_address(0));
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) Record(__builtin_return_address(0));
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) Record(__builtin_return_address(0));
  *out = __libc_memalign(a, n);
  return *out ? 0 : ENOMEM;
}
}
#endif  // CUSP_SANITIZE

namespace {

struct SceneCase {
  const char* file;
  double warmup_s;  // simulated seconds before counting: past the first contacts
};

// every seeds' scene; warm-up long enough that contact is established (arm scenes land within
// ~0.1 s, the pushing scenes and the rod within 0.3 s; arm_push_sphere touches the ball from
// t = 0.78 s to 1.31 s)
const SceneCase kScenes[] = {
    {"scenario_a_45_3.xml", 0.5}, {"scenario_a_45_6.xml", 0.5}, {"scenario_a_60_3.xml", 0.5},
    {"scenario_a_60_6.xml", 0.5}, {"scenario_b.xml", 0.5},      {"push_stick.xml", 0.5},
    {"push_slide.xml", 0.5},      {"push_break.xml", 0.5},      {"arm_push_sphere.xml", 0.85},
    {"rod_over_cylinder.xml", 0.5},
};

#ifndef CUSP_SANITIZE
std::string Where(void* caller) {
  Dl_info info;
  if (!dladdr(caller, &info) || !info.dli_fname) return "?";
  std::string s = info.dli_fname;
  if (info.dli_sname) s += std::string(":") + info.dli_sname;
  return s;
}
#endif

class SteadyStateAllocation : public cusp_test::SceneTest,
                              public ::testing::WithParamInterface<SceneCase> {};

TEST_P(SteadyStateAllocation, ThousandStepsAllocateNothing) {
#ifdef CUSP_SANITIZE
  GTEST_SKIP() << "allocation counting needs glibc's allocator (sanitizer build owns malloc)";
#else
  if (getenv("CUSP_UNDER_VALGRIND")) GTEST_SKIP() << "valgrind replaces the allocator";
  const SceneCase& sc = GetParam();
  LoadFile(sc.file);
  mjModel* m = m_;
  mjData* d = d_;
  const mjtNum* state = d->plugin_state + m->plugin_stateadr[0];
  int warm = (int)std::lround(sc.warmup_s / m->opt.timestep);
  mjtNum max_contacts = 0;
  for (int i = 0; i < warm; i++) {
    mj_step(m, d);
    max_contacts = std::max(max_contacts, state[CUSP_STATE_NCONTACT]);
  }
  ASSERT_GT(max_contacts, 0) << "warm-up reached no contact: the count would prove nothing";

  const int steps = 1000;
  long contact_steps = 0;
  g_count = 0;
  g_counting = 1;
  for (int i = 0; i < steps; i++) {
    mj_step(m, d);
    contact_steps += state[CUSP_STATE_NCONTACT] > 0;
  }
  g_counting = 0;
  long count = g_count.load();
  std::map<std::string, int> by_caller;
  for (long k = 0; k < std::min<long>(count, kMaxCallers); k++) by_caller[Where(g_callers[k])]++;
  std::string report;
  for (auto& [who, n] : by_caller) report += "  " + who + " x" + std::to_string(n) + "\n";
  std::printf("%s: %d warm-up steps (max %g contacts), 1000 counted steps (%ld with contact): "
              "%ld allocations\n",
              sc.file, warm, max_contacts, contact_steps, count);
  EXPECT_GT(contact_steps, 0) << "no contact in the counted steps";
  EXPECT_EQ(count, 0) << "allocations during the steady-state steps (first callers):\n" << report;
  for (int k = 0; k < m->nv; k++) ASSERT_TRUE(std::isfinite(d->qvel[k]));
#endif
}

INSTANTIATE_TEST_SUITE_P(Seeds, SteadyStateAllocation, ::testing::ValuesIn(kScenes),
                         [](const ::testing::TestParamInfo<SceneCase>& info) {
                           std::string s = info.param.file;
                           s = s.substr(0, s.find('.'));
                           return s;
                         });

// The interposer itself works: a plain malloc while counting is seen.
TEST(AllocationCounter, SeesAnAllocation) {
#ifdef CUSP_SANITIZE
  GTEST_SKIP() << "allocation counting needs glibc's allocator";
#else
  if (getenv("CUSP_UNDER_VALGRIND")) GTEST_SKIP() << "valgrind replaces the allocator";
  g_count = 0;
  g_counting = 1;
  void* volatile p = malloc(24);
  g_counting = 0;
  free(p);
  EXPECT_EQ(g_count.load(), 1);
#endif
}

class ControllerAllocation : public cusp_test::SceneTest {};

}  // namespace

// The controller plugins step in the mjData arena too: cusp.avoid on the 7-joint arm, counted
// while its separation rows are active (the LCP is solved every counted step).
TEST_F(ControllerAllocation, AvoidStepsAllocateNothing) {
#ifdef CUSP_SANITIZE
  GTEST_SKIP() << "allocation counting needs glibc's allocator";
#else
  if (getenv("CUSP_UNDER_VALGRIND")) GTEST_SKIP() << "valgrind replaces the allocator";
  LoadFile("avoid_arm7.xml");
  mjModel* m = m_;
  mjData* d = d_;
  d->mocap_pos[0] = 0.55;  // behind the pole: the links lean on its clearance
  d->mocap_pos[1] = 0.45;
  d->mocap_pos[2] = 0.35;
  const mjtNum* state = d->plugin_state + m->plugin_stateadr[0];
  for (int i = 0; i < 1000; i++) mj_step(m, d);
  long active_steps = 0;
  g_count = 0;
  g_counting = 1;
  for (int i = 0; i < 1000; i++) {
    mj_step(m, d);
    active_steps += state[CUSP_AVOID_STATE_ACTIVE] > 0;
  }
  g_counting = 0;
  long count = g_count.load();
  std::printf("avoid_arm7: 1000 counted steps (%ld with active rows): %ld allocations\n",
              active_steps, count);
  EXPECT_GT(active_steps, 0) << "no active row in the counted steps: the count would prove little";
  EXPECT_EQ(count, 0);
#endif
}
