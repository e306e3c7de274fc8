// The scene fuzzer's long run (driven by bench/scene_fuzz; never part of ctest): seeds from
// --first on, each scene of tests/scene_fuzz.h in a forked child, so that a signal, a sanitizer
// report or a hang ends that scene only and is counted. Prints one JSON object per scene, then a
// summary object on the last line.
//   scene_fuzz_run [--first S] [--count N] [--seconds T] [--steps K] [--step-budget SEC]
//                  [--dump DIR]   (DIR/fuzz<seed>.xml: each scene's MJCF, to replay by hand;
//                                  a comment first holds its constant ctrl and mocap motion)
//                  [--integrator NAME]  (every scene run with MuJoCo's integrator NAME: Euler,
//                                        RK4, implicit, implicitfast; the generator draws Euler
//                                        or implicitfast)
// Stops after N scenes or after T seconds of wall time, whichever first. A scene over
// K * step-budget seconds of CPU (default scene_fuzz.h's kStepBudget * kSlowdown) fails as a hang;
// a child that does not return within three times that plus a minute of wall time is killed by its
// alarm (a hang too).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "scene_fuzz.h"

namespace {

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    if ((unsigned char)c < 0x20) continue;
    o += c;
  }
  return o;
}

// exit codes the sanitizers are told to use (bench/scene_fuzz sets ASAN_OPTIONS, UBSAN_OPTIONS)
constexpr int kAsanExit = 86, kUbsanExit = 87;

// The scene's integrator (its <option integrator="..."> and the summary's name) replaced by name
void SetIntegrator(cusp_fuzz::Scene* sc, const std::string& name) {
  const std::string key = "integrator=\"";
  size_t at = sc->xml.find(key);
  if (at == std::string::npos) return;
  at += key.size();
  size_t end = sc->xml.find('"', at);
  std::string old = sc->xml.substr(at, end - at);
  sc->xml.replace(at, end - at, name);
  size_t s = sc->summary.find(old + " h=");
  if (s != std::string::npos) sc->summary.replace(s, old.size(), name);
}

}  // namespace

int main(int argc, char** argv) {
  long long first = 0, count = -1;
  double seconds = -1, step_budget = cusp_fuzz::kStepBudget * cusp_fuzz::kSlowdown;
  int steps = 1000;
  std::string dump;  // --dump DIR: write each scene's MJCF there
  std::string integrator;  // --integrator NAME: the scenes' integrator replaced by NAME
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--first")
      first = std::atoll(argv[i + 1]);
    else if (a == "--count")
      count = std::atoll(argv[i + 1]);
    else if (a == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (a == "--steps")
      steps = std::atoi(argv[i + 1]);
    else if (a == "--step-budget")
      step_budget = std::atof(argv[i + 1]);
    else if (a == "--dump")
      dump = argv[i + 1];
    else if (a == "--integrator")
      integrator = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: %s [--first S] [--count N] [--seconds T] [--steps K] "
                   "[--step-budget SEC] [--dump DIR] [--integrator NAME]\n",
                   argv[0]);
      return 2;
    }
  }
  if (count < 0 && seconds < 0) count = 100;
  mj_loadPluginLibrary(CUSP_PLUGIN_PATH);
  mju_user_warning = [](const char*) {};  // one line per scene is enough
  const char* names[] = {"ok", "solver_failures", "refused", "failed"};
  long long tally[4] = {0, 0, 0, 0}, failed_steps = 0, total_steps = 0;
  double worst_gain_ratio = 0;
  std::string failures;
  auto t0 = std::chrono::steady_clock::now();
  long long n = 0;
  for (long long seed = first;; seed++, n++) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if ((count >= 0 && n >= count) || (seconds >= 0 && elapsed >= seconds)) break;
    cusp_fuzz::Scene sc = cusp_fuzz::Generate((uint64_t)seed);
    if (!integrator.empty()) SetIntegrator(&sc, integrator);
    if (!dump.empty()) {  // the scene's MJCF, to replay one by hand
      std::string path = dump + "/fuzz" + std::to_string(seed) + ".xml";
      if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fputs(cusp_fuzz::Serialize(sc).c_str(), f);  // the MJCF, its ctrl in a comment
        std::fclose(f);
      }
    }
    double budget = step_budget * steps + 2;  // CPU s
    int fd[2];
    if (pipe(fd)) return 1;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      alarm((unsigned)(3 * budget + 60));  // a step that never returns (wall clock)
      cusp_fuzz::Result r = cusp_fuzz::Run(sc, steps, budget);
      std::string line = std::to_string((int)r.outcome) + " " + std::to_string(r.failures) + " " +
                         std::to_string(r.steps) + " " +
                         cusp_fuzz::Fmt("%.6g %.6g ", r.seconds, r.energy_gain) + r.reason;
      if (write(fd[1], line.data(), line.size()) < 0) _exit(1);
      _exit(0);
    }
    close(fd[1]);
    std::string got;
    char buf[4096];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof(buf))) > 0) got.append(buf, (size_t)k);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int outcome = cusp_fuzz::kFailed, fails = 0, nsteps = 0;
    double secs = 0, gain = 0;
    std::string reason;
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      reason = sig == SIGALRM ? "hang: the child did not return (alarm)"
                              : cusp_fuzz::Fmt("signal %d (%s)", sig, strsignal(sig));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      int code = WEXITSTATUS(status);
      reason = code == kAsanExit    ? "AddressSanitizer report"
               : code == kUbsanExit ? "UndefinedBehaviorSanitizer report"
                                    : cusp_fuzz::Fmt("exit code %d", code);
    } else {
      char rest[4096] = "";
      int used = 0;
      if (std::sscanf(got.c_str(), "%d %d %d %lf %lf %n", &outcome, &fails, &nsteps, &secs, &gain,
                      &used) >= 5) {
        reason = got.substr((size_t)used);
      } else {
        outcome = cusp_fuzz::kFailed;
        reason = "child wrote no result: " + got;
      }
      (void)rest;
    }
    tally[outcome]++;
    failed_steps += fails;
    total_steps += nsteps;
    double bound = cusp_fuzz::kEnergyGainAbs + cusp_fuzz::kEnergyGainRel * sc.energy_ref;
    if (!sc.actuated && outcome != cusp_fuzz::kRefused) {
      worst_gain_ratio = std::fmax(worst_gain_ratio, gain / bound);
    }
    if (outcome == cusp_fuzz::kFailed) {
      failures += (failures.empty() ? "" : ", ") + std::to_string(seed);
    }
    std::printf(
        "{\"seed\": %lld, \"outcome\": \"%s\", \"failed_steps\": %d, \"steps\": %d, "
        "\"seconds\": %.3f, \"energy_gain_J\": %.4g, \"energy_bound_J\": %.4g, "
        "\"actuated\": %s, \"scene\": \"%s\", \"reason\": \"%s\"}\n",
        seed, names[outcome], fails, nsteps, secs, gain, bound, sc.actuated ? "true" : "false",
        Escape(sc.summary).c_str(), Escape(reason).c_str());
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "{\"summary\": true, \"first\": %lld, \"scenes\": %lld, \"steps_per_scene\": %d, "
      "\"wall_seconds\": %.1f, \"ok\": %lld, \"solver_failures\": %lld, \"refused\": %lld, "
      "\"failed\": %lld, \"failed_seeds\": [%s], \"failed_steps\": %lld, "
      "\"stepped\": %lld, \"worst_energy_gain_over_bound\": %.3g}\n",
      first, n, steps, wall, tally[0], tally[1], tally[2], tally[3], failures.c_str(), failed_steps,
      total_steps, worst_gain_ratio);
  return tally[cusp_fuzz::kFailed] ? 1 : 0;
}
