#include "common/watchdog.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.hpp"

namespace strata::watchdog {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kQueryTag = 1, kReplyTag = 2;
constexpr int kReplyBytes = 512;
constexpr double kAnswerWait = 3.0;  // seconds to wait for the peers' answers

struct State {
  std::mutex mutex;
  std::vector<std::string> stack;  // the main thread's open scopes, outermost first
  Clock::time_point last_progress = Clock::now();
  std::atomic<double> timeout{0};
  bool by_default = false;  // the default limit, not STRATA_TIMEOUT's
  bool multiple = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::function<std::string()> diagnosis;  // guarded by mutex
  std::atomic<double> grace{0};            // seconds a held error waits for the peers; 0: off
  bool holding = false;                    // guarded by mutex: an error is held (HeldError)
  std::string held_message;                // guarded by mutex
  int held_status = 0;                     // guarded by mutex
  Clock::time_point held_since;            // guarded by mutex
  std::string held_cause;                  // guarded by mutex: the likely cause when the error was held
};

State& state() {
  static State s;
  return s;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Unlocked: the caller holds the mutex.
std::string describe_locked(const State& s) {
  if (s.stack.empty()) return "outside any Strata collective operation";
  std::string ops;
  for (const auto& op : s.stack) ops += (ops.empty() ? "" : " > ") + op;
  char since[64];
  std::snprintf(since, sizeof since, " for %.1f s", seconds_since(s.last_progress));
  return "in `" + ops + "`" + since;
}

std::string current_operation(State& s) {
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string ops;
  for (const auto& op : s.stack) ops += (ops.empty() ? "" : " > ") + op;
  return ops;
}

// Answers every pending question from a peer with this rank's state.
void answer_queries(State& s) {
  for (;;) {
    int pending = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, s.comm, &pending, &st);
    if (!pending) return;
    int dummy = 0;
    MPI_Recv(&dummy, 1, MPI_INT, st.MPI_SOURCE, kQueryTag, s.comm, MPI_STATUS_IGNORE);
    std::string text;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      text = describe_locked(s);
    }
    text.resize(kReplyBytes - 1);
    text.push_back('\0');
    MPI_Send(text.data(), kReplyBytes, MPI_CHAR, st.MPI_SOURCE, kReplyTag, s.comm);
  }
}

// The likely cause the diagnosis probe names, or "".
std::string likely_cause(State& s) {
  std::function<std::string()> probe;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    probe = s.diagnosis;
  }
  return probe ? probe() : std::string();
}

[[noreturn]] void report_and_abort(State& s) {
  std::string mine;
  std::string ops;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    mine = describe_locked(s);
  }
  ops = current_operation(s);
  std::string report;
  char head[256];
  if (s.by_default) {
    std::snprintf(head, sizeof head,
                  "strata: watchdog: rank %d made no progress for %.0f s (the default limit; STRATA_TIMEOUT=SECONDS "
                  "sets another, 0 turns it off): ",
                  s.rank, s.timeout.load());
  } else {
    std::snprintf(head, sizeof head, "strata: watchdog: rank %d made no progress (STRATA_TIMEOUT=%g): ", s.rank,
                  s.timeout.load());
  }
  report = head + mine + "\n";
  const std::string cause = likely_cause(s);
  if (!cause.empty()) report += "strata: watchdog: likely cause: " + cause + "\n";
  if (s.multiple && s.size > 1) {
    std::vector<MPI_Request> requests(static_cast<size_t>(s.size), MPI_REQUEST_NULL);
    std::vector<std::vector<char>> replies(static_cast<size_t>(s.size), std::vector<char>(kReplyBytes, 0));
    int query = 0;
    for (int p = 0; p < s.size; ++p) {
      if (p == s.rank) continue;
      MPI_Request sent;
      MPI_Isend(&query, 1, MPI_INT, p, kQueryTag, s.comm, &sent);
      MPI_Request_free(&sent);
      MPI_Irecv(replies[static_cast<size_t>(p)].data(), kReplyBytes, MPI_CHAR, p, kReplyTag, s.comm,
                &requests[static_cast<size_t>(p)]);
    }
    const auto asked = Clock::now();
    std::vector<int> answered(static_cast<size_t>(s.size), 0);
    while (seconds_since(asked) < kAnswerWait) {
      answer_queries(s);  // other stuck ranks ask this one too
      int all = 1;
      for (int p = 0; p < s.size; ++p) {
        if (p == s.rank || answered[static_cast<size_t>(p)]) continue;
        MPI_Test(&requests[static_cast<size_t>(p)], &answered[static_cast<size_t>(p)], MPI_STATUS_IGNORE);
        if (!answered[static_cast<size_t>(p)]) all = 0;
      }
      if (all) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // A peer in the same operation waits too; one deeper in it (further along, typically in the
    // agreement that ends it) waits for this rank; one elsewhere or silent is waited for.
    std::string waits_for, waiting_on_me;
    auto add = [](std::string& list, int p) { list += (list.empty() ? "" : ", ") + std::to_string(p); };
    for (int p = 0; p < s.size; ++p) {
      if (p == s.rank) continue;
      std::string line = "  rank " + std::to_string(p) + ": ";
      if (!answered[static_cast<size_t>(p)]) {
        line +=
            "no answer (outside Strata's collective operations and busy, dead, or its MPI library is not "
            "progressing)";
        add(waits_for, p);
      } else {
        const std::string theirs(replies[static_cast<size_t>(p)].data());
        line += theirs;
        if (!ops.empty() && theirs.rfind("in `" + ops + "`", 0) == 0) {
          line += " (the same operation)";
        } else if (!ops.empty() && theirs.rfind("in `" + ops + " > ", 0) == 0) {
          line += " (further along: waits for this rank)";
          add(waiting_on_me, p);
        } else if (theirs.find(kAgreementScope) != std::string::npos &&
                   ops.find(kAgreementScope) == std::string::npos) {
          // Further along in another step (a write's close agreeing while this rank still
          // transfers): an agreement ends only when every rank joins it.
          line += " (in an agreement: waits for this rank)";
          add(waiting_on_me, p);
        } else {
          add(waits_for, p);
        }
      }
      report += line + "\n";
    }
    if (!waits_for.empty()) report += "  this rank waits for rank(s) " + waits_for + "\n";
    if (!waiting_on_me.empty()) {
      report += "  rank(s) " + waiting_on_me + " wait for this rank, which is stuck in its own part of `" + ops + "`\n";
    }
    if (waits_for.empty() && waiting_on_me.empty()) {
      report +=
          "  every rank waits in the same operation: the hang is inside it (the MPI or I/O library, or the "
          "file system)\n";
    }
  }
  report += "strata: watchdog: aborting the job\n";
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  if (s.multiple) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ErrorKind::timeout));
  std::_Exit(static_cast<int>(ErrorKind::timeout));  // without thread support, the launcher ends the others
}

// The grace is over: this rank holds an error its peers never came to agree on, or it has made no
// progress while the likely cause (a full file system) says the collective it waits in cannot
// complete. Its error or that cause, where it is, why the job ends here; then the end (as
// report_and_abort).
[[noreturn]] void end_with_held_error(State& s, const std::string& cause_now) {
  std::string message, cause, where;
  int status = static_cast<int>(ErrorKind::runtime);
  bool holding = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    holding = s.holding;
    if (holding) {
      message = s.held_message;
      status = s.held_status;
      cause = s.held_cause;
    }
    where = describe_locked(s);
  }
  if (cause.empty()) cause = cause_now.empty() ? likely_cause(s) : cause_now;
  if (!holding) {
    message = "the write cannot complete: " + cause;
  } else if (!cause.empty() && message.find(cause) == std::string::npos) {
    message += " (" + cause + ")";
  }
  char tail[512];
  std::snprintf(tail, sizeof tail,
                " (rank %d, %s%s, ends the job after STRATA_ERROR_GRACE=%g s: its peers did not join the agreement "
                "on the outcome, still inside a collective call the error interrupted, as OMPIO's collective write "
                "is on a full disk)\n",
                s.rank, holding ? "holding this error " : "", where.c_str(), s.grace.load());
  const std::string report = "strata: error: " + message + tail;
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  if (s.multiple) MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // without thread support, the launcher ends the others
}

// A rank without progress in a collective operation for longer than the grace ends the job when it
// holds an error (its peers never came to the agreement), or when the likely cause (a full file
// system) says the collective cannot complete. The probe runs once a second at most.
void check_grace(State& s, Clock::time_point& next_probe) {
  if (s.size < 2 || s.grace <= 0) return;
  bool holding = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.stack.empty() || seconds_since(s.last_progress) <= s.grace) return;
    holding = s.holding;
  }
  if (holding) end_with_held_error(s, "");
  if (Clock::now() < next_probe) return;
  next_probe = Clock::now() + std::chrono::seconds(1);
  const std::string cause = likely_cause(s);
  if (!cause.empty()) end_with_held_error(s, cause);
}

void run(State& s) {
  Clock::time_point next_probe = Clock::now();
  while (!s.stopping.load()) {
    double idle = 0;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      idle = s.stack.empty() ? 0 : seconds_since(s.last_progress);
    }
    check_grace(s, next_probe);
    if (idle > s.timeout) report_and_abort(s);
    // This thread calls MPI only once this rank itself looks stuck: MPI calls here drive the
    // library's progress engine concurrently with the main thread's, and OMPIO's asynchronous
    // file I/O progress is not safe against that (a crash in mca_common_ompio_progress, seen with
    // a thread that polled all the time). A healthy rank, or one computing outside Strata's
    // collective operations, does not answer; the report says so.
    if (s.multiple && idle > s.timeout / 2) answer_queries(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool timeout_given() {
  const char* v = std::getenv("STRATA_TIMEOUT");
  return v != nullptr && *v != '\0';
}

// A variable's seconds (0: off), -1 for a value that is not one; `unset` when unset.
double parse_seconds(const char* name, double unset) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return unset;
  char* end = nullptr;
  const double t = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(t) || t < 0) return -1;
  return t;
}

double parse_timeout() { return parse_seconds("STRATA_TIMEOUT", 0); }

}  // namespace

int thread_level(int wanted) { return parse_timeout() > 0 ? MPI_THREAD_MULTIPLE : wanted; }

void start(MPI_Comm world, int provided_thread_level) {
  State& s = state();
  const double t = parse_timeout();
  const double grace = parse_seconds("STRATA_ERROR_GRACE", kDefaultErrorGrace);
  collectively(world, [&] {
    if (t < 0)
      throw_usage("STRATA_TIMEOUT must be a number of seconds, 0 (off) or more, not \"" +
                  std::string(std::getenv("STRATA_TIMEOUT")) + "\"");
    if (grace < 0)
      throw_usage("STRATA_ERROR_GRACE must be a number of seconds, 0 (off) or more, not \"" +
                  std::string(std::getenv("STRATA_ERROR_GRACE")) + "\"");
  });
  const bool given = timeout_given();
  if (given && t == 0) return;  // STRATA_TIMEOUT=0: off
  s.by_default = !given;
  s.timeout = given ? t : kDefaultTimeout;
  s.grace = grace;
  s.multiple = given && provided_thread_level >= MPI_THREAD_MULTIPLE;
  MPI_Comm_rank(world, &s.rank);
  MPI_Comm_size(world, &s.size);
  if (s.multiple) MPI_Comm_dup(world, &s.comm);
  s.stopping = false;
  s.thread = std::thread([&s] { run(s); });
}

void stop() {
  State& s = state();
  if (!s.thread.joinable()) return;
  s.stopping = true;
  s.thread.join();
  if (s.comm != MPI_COMM_NULL) MPI_Comm_free(&s.comm);
  s.timeout = 0;
}

double timeout() { return state().timeout; }

double error_grace() { return state().timeout == 0 ? 0 : state().grace.load(); }

HeldError::HeldError(const std::string& message, int status) {
  State& s = state();
  // The cause now, before the step's clean-up changes it (a container removed frees the disk).
  const std::string cause = s.timeout > 0 ? likely_cause(s) : std::string();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.held_cause = cause;
  s.holding = true;
  s.held_message = message;
  s.held_status = status;
  s.held_since = Clock::now();
}

HeldError::~HeldError() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.holding = false;
}

void set_diagnosis(std::function<std::string()> probe) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.diagnosis = std::move(probe);
}

void allow_for_bytes(double bytes) {
  State& s = state();
  if (!s.by_default || s.timeout == 0) return;
  const double needed = kDefaultTimeout + bytes / kSlowestBytesPerSecond;
  if (needed > s.timeout) s.timeout = needed;
}

std::string describe_setting() {
  const State& s = state();
  char text[256];
  if (s.timeout == 0) return "off (STRATA_TIMEOUT=0)";
  if (s.by_default) {
    std::snprintf(text, sizeof text,
                  "on: aborts after %.0f s without progress in a collective operation (the default, raised for "
                  "large runs; STRATA_TIMEOUT=SECONDS sets it, 0 turns it off)",
                  s.timeout.load());
  } else {
    std::snprintf(text, sizeof text, "on: aborts after %g s without progress (STRATA_TIMEOUT)", s.timeout.load());
  }
  std::string out = text;
  if (s.grace > 0) {
    std::snprintf(text, sizeof text,
                  "; a rank holding an error ends the job after %g s if its peers do not join the agreement "
                  "(STRATA_ERROR_GRACE)",
                  s.grace.load());
  } else {
    std::snprintf(text, sizeof text, "; no grace for a rank holding an error (STRATA_ERROR_GRACE=0)");
  }
  return out + text;
}

Scope::Scope(std::string what) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stack.push_back(std::move(what));
  s.last_progress = Clock::now();
}

Scope::~Scope() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.stack.empty()) s.stack.pop_back();
  s.last_progress = Clock::now();
}

std::string describe_state() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return describe_locked(s);
}

}  // namespace strata::watchdog
