/*
 * posix_spawn for svcd's jobs (Linux). Node's child_process forks, and fork()
 * copies the page tables of all of svcd's memory for each job and tears them
 * down again at exec, blocking the event loop meanwhile (nodejs/node#14917,
 * libuv#1715). glibc's posix_spawn starts the child with
 * clone(CLONE_VM | CLONE_VFORK): nothing is copied, and a spawn costs the same
 * whatever svcd's size.
 *
 * spawn(file, argv, envp, cwd, onExit) starts `file` (a path: the PATH search
 * is done by the caller, with the job's PATH, as child_process does) in a new
 * session (its own process group, like `detached: true`), every signal at
 * its default disposition and none blocked, stdin /dev/null, stdout and
 * stderr on two new pipes. It returns [pid, stdoutFd, stderrFd, startTime]
 * (the read ends, close-on-exec; startTime is /proc/<pid>/stat's field 22 as
 * a string when the clock says what it is, else null: boottime_ticks) or a
 * negative errno. onExit(code, signal, watchError)
 * is called once when the child has exited and was reaped: the exit is
 * watched through a pidfd on the event loop, so only this child is waited for
 * (libuv waits for its own children by pid too). watchError is null, or the
 * (negative) libuv error of a pidfd poll that failed: the exit could not be
 * seen any more, so the child's group was killed and the child reaped, and
 * code/signal say how that ended it.
 *
 * failNextWatch() is a test seam: the next spawn's watch polls an fd on which
 * the kernel reports an error (the write end of a pipe with no reader), so the
 * test sees the path a failing pidfd poll takes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

typedef struct {
  uv_poll_t poll;
  pid_t pid;
  int pidfd;
  napi_env env;
  napi_ref on_exit;
  /* The async context of the spawn() call: onExit runs in it, so AsyncLocalStorage and
     async_hooks see the exit as caused by the spawn (a NULL context loses the store). */
  napi_async_context async;
} child_watch;

static void free_strings(char** list) {
  if (!list) return;
  for (char** p = list; *p; p++) free(*p);
  free(list);
}

/* A JS string as a malloc'd C string; NULL on failure. */
static char* c_string(napi_env env, napi_value value) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) return NULL;
  char* s = malloc(len + 1);
  if (!s) return NULL;
  if (napi_get_value_string_utf8(env, value, s, len + 1, &len) != napi_ok) {
    free(s);
    return NULL;
  }
  return s;
}

/* A JS array of strings as a NULL-terminated malloc'd list; NULL on failure. */
static char** c_strings(napi_env env, napi_value array) {
  uint32_t n = 0;
  if (napi_get_array_length(env, array, &n) != napi_ok) return NULL;
  char** list = calloc(n + 1, sizeof(char*));
  if (!list) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, array, i, &item) != napi_ok || !(list[i] = c_string(env, item))) {
      free_strings(list);
      return NULL;
    }
  }
  return list;
}

static void on_closed(uv_handle_t* handle) {
  child_watch* w = (child_watch*)handle;
  close(w->pidfd);
  free(w);
}

/* Set by failNextWatch(): the next watch polls a broken fd instead of the pidfd. */
static int fail_next_watch = 0;

static void on_readable(uv_poll_t* poll, int status, int events) {
  child_watch* w = (child_watch*)poll;
  int wstatus = 0;
  pid_t r;
  if (status < 0) {
    /* The pidfd cannot be polled any more: the exit could never be seen. As when no pidfd
       could be opened, an unwatched job must not run on: kill its group and reap it now. */
    kill(-w->pid, SIGKILL);
    do r = waitpid(w->pid, &wstatus, 0);
    while (r == -1 && errno == EINTR);
  } else {
    do r = waitpid(w->pid, &wstatus, WNOHANG);
    while (r == -1 && errno == EINTR);
    if (r == 0) return; /* not exited yet (spurious wake-up) */
  }
  uv_poll_stop(poll);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, global, argv[3], result;
  napi_get_reference_value(env, w->on_exit, &cb);
  napi_get_global(env, &global);
  if (r == w->pid && WIFEXITED(wstatus)) {
    napi_create_int32(env, WEXITSTATUS(wstatus), &argv[0]);
    napi_get_null(env, &argv[1]);
  } else if (r == w->pid && WIFSIGNALED(wstatus)) {
    napi_get_null(env, &argv[0]);
    napi_create_int32(env, WTERMSIG(wstatus), &argv[1]);
  } else {
    /* waitpid failed (ECHILD: reaped by someone else): the exit status is lost. */
    napi_get_null(env, &argv[0]);
    napi_get_null(env, &argv[1]);
  }
  if (status < 0) napi_create_int32(env, status, &argv[2]);
  else napi_get_null(env, &argv[2]);
  napi_delete_reference(env, w->on_exit);
  uv_close((uv_handle_t*)poll, on_closed);
  napi_make_callback(env, w->async, global, cb, 3, argv, &result);
  napi_async_destroy(env, w->async);
  napi_close_handle_scope(env, scope);
}

static napi_value make_int(napi_env env, int v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

/*
 * CLOCK_BOOTTIME in clock ticks, as /proc/<pid>/stat's starttime (field 22) counts a process's
 * start (the kernel's nsec_to_clock_t of its start_boottime, time-namespace offset included as in
 * clock_gettime); -1 when that cannot be computed here. A child starts between a reading before
 * posix_spawn and one after it: when both are the same tick, that tick is its start time, without
 * reading /proc/<pid>/stat, whose first read blocks until the child's exec is done (~0.3 ms).
 */
static long long boottime_ticks(void) {
  static long long ns_per_tick = 0;
  if (ns_per_tick == 0) {
    long hz = sysconf(_SC_CLK_TCK);
    ns_per_tick = hz > 0 && 1000000000LL % hz == 0 ? 1000000000LL / hz : -1;
  }
  struct timespec ts;
  if (ns_per_tick < 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0) return -1;
  return ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec) / ns_per_tick;
}

static napi_value spawn_child(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value args[5];
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 5) {
    napi_throw_type_error(env, NULL, "spawn(file, argv, envp, cwd, onExit)");
    return NULL;
  }
  char* file = c_string(env, args[0]);
  char** argv = c_strings(env, args[1]);
  char** envp = c_strings(env, args[2]);
  char* cwd = c_string(env, args[3]);
  int err = 0;
  int out[2] = {-1, -1}, errp[2] = {-1, -1};
  pid_t pid = -1;
  long long before = -1, after = -2;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  int have_actions = 0, have_attr = 0;

  if (!file || !argv || !envp || !cwd) {
    err = ENOMEM;
    goto done;
  }
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
    err = errno;
    goto done;
  }
  if ((err = posix_spawn_file_actions_init(&actions)) != 0) goto done;
  have_actions = 1;
  if ((err = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
      (err = posix_spawn_file_actions_adddup2(&actions, out[1], 1)) != 0 ||
      (err = posix_spawn_file_actions_adddup2(&actions, errp[1], 2)) != 0 ||
      (err = posix_spawn_file_actions_addchdir_np(&actions, cwd)) != 0)
    goto done;
  if ((err = posix_spawnattr_init(&attr)) != 0) goto done;
  have_attr = 1;
  sigset_t all, none;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  sigemptyset(&none);
  if ((err = posix_spawnattr_setsigdefault(&attr, &all)) != 0 || (err = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
      (err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)) != 0)
    goto done;
  before = boottime_ticks();
  err = posix_spawn(&pid, file, &actions, &attr, argv, envp);
  after = boottime_ticks();

done:
  if (have_actions) posix_spawn_file_actions_destroy(&actions);
  if (have_attr) posix_spawnattr_destroy(&attr);
  free(file);
  free(cwd);
  free_strings(argv);
  free_strings(envp);
  if (out[1] >= 0) close(out[1]);
  if (errp[1] >= 0) close(errp[1]);
  if (err != 0) {
    if (out[0] >= 0) close(out[0]);
    if (errp[0] >= 0) close(errp[0]);
    return make_int(env, -err);
  }

  /* Watch the exit. Without a pidfd the child would be left unwatched: kill it rather. */
  child_watch* w = calloc(1, sizeof(child_watch));
  uv_loop_t* loop = NULL;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fail_next_watch && pidfd >= 0) {
    int broken[2];
    if (pipe2(broken, O_CLOEXEC) == 0) {
      fail_next_watch = 0;
      close(broken[0]); /* no reader left: polling the write end reports EPOLLERR */
      close(pidfd);
      pidfd = broken[1];
    }
  }
  if (!w || pidfd < 0 || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &w->poll, pidfd) != 0) {
    int e = pidfd < 0 ? errno : ENOMEM;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (pidfd >= 0) close(pidfd);
    free(w);
    close(out[0]);
    close(errp[0]);
    return make_int(env, -e);
  }
  w->pid = pid;
  w->pidfd = pidfd;
  w->env = env;
  napi_value resource_name;
  napi_create_string_utf8(env, "svc:posix_spawn", NAPI_AUTO_LENGTH, &resource_name);
  napi_async_init(env, NULL, resource_name, &w->async);
  napi_create_reference(env, args[4], 1, &w->on_exit);
  uv_poll_start(&w->poll, UV_READABLE, on_readable);

  napi_value result;
  napi_create_array_with_length(env, 4, &result);
  napi_set_element(env, result, 0, make_int(env, pid));
  napi_set_element(env, result, 1, make_int(env, out[0]));
  napi_set_element(env, result, 2, make_int(env, errp[0]));
  napi_value start;
  if (before >= 0 && before == after) {
    char text[24];
    snprintf(text, sizeof text, "%lld", before);
    napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &start);
  } else {
    napi_get_null(env, &start);
  }
  napi_set_element(env, result, 3, start);
  return result;
}

/* Whether this kernel has pidfd_open (Linux 5.3+): probed once, on this process. */
static napi_value supported(napi_env env, napi_callback_info info) {
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (fd >= 0) close(fd);
  napi_value out;
  napi_get_boolean(env, fd >= 0, &out);
  return out;
}

static napi_value fail_next_watch_fn(napi_env env, napi_callback_info info) {
  fail_next_watch = 1;
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, spawn_child, NULL, &fn);
  napi_set_named_property(env, exports, "spawn", fn);
  napi_create_function(env, "supported", NAPI_AUTO_LENGTH, supported, NULL, &fn);
  napi_set_named_property(env, exports, "supported", fn);
  napi_create_function(env, "failNextWatch", NAPI_AUTO_LENGTH, fail_next_watch_fn, NULL, &fn);
  napi_set_named_property(env, exports, "failNextWatch", fn);
  return exports;
}
