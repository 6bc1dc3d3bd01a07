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
 * negative errno. envp is an array of K=V strings or one string of them
 * joined by NUL (the `envBlock` export says this build takes it; posixSpawn.ts
 * passes that). onExit(code, signal, watchError)
 * is called once when the child has exited and was reaped: the exit is
 * watched through a pidfd on the event loop, so only this child is waited for
 * (libuv waits for its own children by pid too). watchError is null, or the
 * (negative) libuv error of a pidfd poll that failed: the exit could not be
 * seen any more, so the child's group was killed and the child reaped, and
 * code/signal say how that ended it.
 *
 * readPipe(fd, onEvent), pipeRead(handle, on) and pipeClose(handle) read the pipes' read ends
 * on the event loop without a net.Socket around each (below).
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

/* A JS string as a malloc'd C string, its length in bytes in *len (it may hold NULs); NULL on failure. */
static char* c_string_len(napi_env env, napi_value value, size_t* len) {
  if (napi_get_value_string_utf8(env, value, NULL, 0, len) != napi_ok) return NULL;
  char* s = malloc(*len + 1);
  if (!s) return NULL;
  if (napi_get_value_string_utf8(env, value, s, *len + 1, len) != napi_ok) {
    free(s);
    return NULL;
  }
  return s;
}

/* A JS string as a malloc'd C string; NULL on failure. */
static char* c_string(napi_env env, napi_value value) {
  size_t len = 0;
  return c_string_len(env, value, &len);
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

/*
 * The environment as one JS string, its K=V entries joined by NUL (posixSpawn.ts): one conversion
 * and one allocation instead of one of each per variable (~100 of them, ~20 us a spawn). *block
 * gets the buffer the list points into (free both); NULL on failure.
 */
static char** c_block(napi_env env, napi_value value, char** block) {
  size_t len = 0;
  *block = NULL;
  char* buf = c_string_len(env, value, &len);
  if (!buf) return NULL;
  size_t n = len == 0 ? 0 : 1;
  for (size_t i = 0; i < len; i++) n += buf[i] == '\0';
  char** list = calloc(n + 1, sizeof(char*));
  if (!list) {
    free(buf);
    return NULL;
  }
  for (size_t i = 0, k = 0; k < n; k++) {
    list[k] = buf + i;
    i += strlen(buf + i) + 1;
  }
  *block = buf;
  return list;
}

static void on_closed(uv_handle_t* handle) {
  child_watch* w = (child_watch*)handle;
  close(w->pidfd);
  free(w);
}

/* Set by failNextWatch(): the next watch polls a broken fd instead of the pidfd. */
static int fail_next_watch = 0;

/* Waits for a killed child's end (a signal handler may interrupt the wait). */
static void reap(pid_t pid) {
  pid_t r;
  do r = waitpid(pid, NULL, 0);
  while (r == -1 && errno == EINTR);
}

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

/* One spawn: its arguments as C strings, then what posix_spawn made of them. */
typedef struct {
  char* file;
  char** argv;
  char** envp;
  char* env_block; /* the buffer envp points into when the environment came as one string (c_block), else NULL */
  char* cwd;
  int err;     /* 0, or the errno that stopped the spawn (the child is gone then) */
  pid_t pid;
  int out[2];  /* stdout's pipe; out[1] is closed after the spawn */
  int errp[2]; /* stderr's pipe */
  int pidfd;   /* -1 when the watch could not be opened (err says why) */
  long long before, after;
  int fail_watch; /* failNextWatch() was pending when this spawn was asked for */
  /* spawnAsync only */
  napi_async_work work;
  napi_ref on_exit;
  napi_ref on_spawned;
} spawn_request;

static void free_request(spawn_request* r) {
  free(r->file);
  free(r->cwd);
  free_strings(r->argv);
  if (r->env_block) {
    free(r->envp);
    free(r->env_block);
  } else {
    free_strings(r->envp);
  }
  free(r);
}

/* The arguments of spawn()/spawnAsync() (file, argv, envp, cwd) as a request (err ENOMEM when one is not a string or could not be copied); NULL when out of memory. */
static spawn_request* read_request(napi_env env, napi_value* args) {
  spawn_request* r = calloc(1, sizeof(spawn_request));
  if (!r) return NULL;
  r->file = c_string(env, args[0]);
  r->argv = c_strings(env, args[1]);
  napi_valuetype envType = napi_undefined;
  napi_typeof(env, args[2], &envType);
  r->envp = envType == napi_string ? c_block(env, args[2], &r->env_block) : c_strings(env, args[2]);
  r->cwd = c_string(env, args[3]);
  r->out[0] = r->out[1] = r->errp[0] = r->errp[1] = r->pidfd = -1;
  r->pid = -1;
  r->before = -1;
  r->after = -2;
  r->fail_watch = fail_next_watch;
  fail_next_watch = 0;
  if (!r->file || !r->argv || !r->envp || !r->cwd) r->err = ENOMEM;
  return r;
}

/*
 * posix_spawn and the pidfd that watches the child, without touching JS or the loop: spawnAsync
 * runs it on a libuv worker thread, so the event loop does not wait while the kernel starts the
 * child (posix_spawn returns only once the child has exec'd: CLONE_VFORK).
 */
static void do_spawn(spawn_request* r) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  int have_actions = 0, have_attr = 0;
  int err = r->err;
  if (err != 0) goto done;
  if (pipe2(r->out, O_CLOEXEC) != 0 || pipe2(r->errp, O_CLOEXEC) != 0) {
    err = errno;
    goto done;
  }
  if ((err = posix_spawn_file_actions_init(&actions)) != 0) goto done;
  have_actions = 1;
  if ((err = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
      (err = posix_spawn_file_actions_adddup2(&actions, r->out[1], 1)) != 0 ||
      (err = posix_spawn_file_actions_adddup2(&actions, r->errp[1], 2)) != 0 ||
      (err = posix_spawn_file_actions_addchdir_np(&actions, r->cwd)) != 0)
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
  r->before = boottime_ticks();
  err = posix_spawn(&r->pid, r->file, &actions, &attr, r->argv, r->envp);
  r->after = boottime_ticks();
  if (err == 0) {
    /* Watch the exit. Without a pidfd the child would be left unwatched: kill it rather. */
    r->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
    if (r->fail_watch && r->pidfd >= 0) {
      int broken[2];
      if (pipe2(broken, O_CLOEXEC) == 0) {
        close(broken[0]); /* no reader left: polling the write end reports EPOLLERR */
        close(r->pidfd);
        r->pidfd = broken[1];
      }
    }
    if (r->pidfd < 0) {
      err = errno;
      /* The job has exec'd in its own session and may have started others: its whole group goes. */
      kill(-r->pid, SIGKILL);
      reap(r->pid);
    }
  }

done:
  if (have_actions) posix_spawn_file_actions_destroy(&actions);
  if (have_attr) posix_spawnattr_destroy(&attr);
  if (r->out[1] >= 0) close(r->out[1]);
  if (r->errp[1] >= 0) close(r->errp[1]);
  r->out[1] = r->errp[1] = -1;
  if (err != 0) {
    if (r->out[0] >= 0) close(r->out[0]);
    if (r->errp[0] >= 0) close(r->errp[0]);
    r->out[0] = r->errp[0] = -1;
  }
  r->err = err;
}

/*
 * On the event loop's thread, after do_spawn: the exit watch on the loop, and what spawn() returns
 * ([pid, stdoutFd, stderrFd, startTime] or a negative errno). Takes over r's pidfd.
 */
static napi_value finish_spawn(napi_env env, spawn_request* r, napi_value on_exit) {
  if (r->err != 0) return make_int(env, -r->err);
  child_watch* w = calloc(1, sizeof(child_watch));
  uv_loop_t* loop = NULL;
  if (!w || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &w->poll, r->pidfd) != 0) {
    kill(-r->pid, SIGKILL);
    reap(r->pid);
    close(r->pidfd);
    free(w);
    close(r->out[0]);
    close(r->errp[0]);
    return make_int(env, -ENOMEM);
  }
  w->pid = r->pid;
  w->pidfd = r->pidfd;
  w->env = env;
  napi_value resource_name;
  napi_create_string_utf8(env, "svc:posix_spawn", NAPI_AUTO_LENGTH, &resource_name);
  napi_async_init(env, NULL, resource_name, &w->async);
  napi_create_reference(env, on_exit, 1, &w->on_exit);
  uv_poll_start(&w->poll, UV_READABLE, on_readable);

  napi_value result;
  napi_create_array_with_length(env, 4, &result);
  napi_set_element(env, result, 0, make_int(env, r->pid));
  napi_set_element(env, result, 1, make_int(env, r->out[0]));
  napi_set_element(env, result, 2, make_int(env, r->errp[0]));
  napi_value start;
  if (r->before >= 0 && r->before == r->after) {
    char text[24];
    snprintf(text, sizeof text, "%lld", r->before);
    napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &start);
  } else {
    napi_get_null(env, &start);
  }
  napi_set_element(env, result, 3, start);
  return result;
}

/*
 * The n arguments of a spawn()/spawnAsync() call into args, the first four read as a request. NULL
 * when the call is wrong (a TypeError saying `usage` is thrown) or memory ran out (*oom is set).
 */
static spawn_request* read_call(napi_env env, napi_callback_info info, size_t n, const char* usage, napi_value* args, int* oom) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < n) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  spawn_request* r = read_request(env, args);
  if (!r) *oom = 1;
  return r;
}

static napi_value spawn_child(napi_env env, napi_callback_info info) {
  napi_value args[5];
  int oom = 0;
  spawn_request* r = read_call(env, info, 5, "spawn(file, argv, envp, cwd, onExit)", args, &oom);
  if (!r) return oom ? make_int(env, -ENOMEM) : NULL;
  do_spawn(r);
  napi_value result = finish_spawn(env, r, args[4]);
  free_request(r);
  return result;
}

static void async_execute(napi_env env, void* data) {
  do_spawn((spawn_request*)data);
}

static void async_complete(napi_env env, napi_status status, void* data) {
  spawn_request* r = (spawn_request*)data;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value on_exit, on_spawned, global, result;
  napi_get_reference_value(env, r->on_exit, &on_exit);
  napi_get_reference_value(env, r->on_spawned, &on_spawned);
  napi_get_global(env, &global);
  /* A cancelled work never ran (never the case: svc does not cancel spawns): the spawn did not happen. */
  if (status != napi_ok && r->err == 0) r->err = ECANCELED;
  result = finish_spawn(env, r, on_exit);
  napi_delete_reference(env, r->on_exit);
  napi_delete_reference(env, r->on_spawned);
  napi_delete_async_work(env, r->work);
  free_request(r);
  napi_call_function(env, global, on_spawned, 1, &result, NULL);
  napi_close_handle_scope(env, scope);
}

/*
 * spawnAsync(file, argv, envp, cwd, onExit, onSpawned): spawn() on a libuv worker thread.
 * onSpawned(result) is called on the event loop with what spawn() would have returned; onExit as
 * for spawn(). Returns undefined (a negative errno when the request could not be queued).
 */
static napi_value spawn_async(napi_env env, napi_callback_info info) {
  napi_value args[6];
  int oom = 0;
  spawn_request* r = read_call(env, info, 6, "spawnAsync(file, argv, envp, cwd, onExit, onSpawned)", args, &oom);
  if (!r) return oom ? make_int(env, -ENOMEM) : NULL;
  napi_value name;
  napi_create_string_utf8(env, "svc:posix_spawn", NAPI_AUTO_LENGTH, &name);
  if (napi_create_async_work(env, NULL, name, async_execute, async_complete, r, &r->work) != napi_ok) {
    free_request(r);
    return make_int(env, -ENOMEM);
  }
  napi_create_reference(env, args[4], 1, &r->on_exit);
  napi_create_reference(env, args[5], 1, &r->on_spawned);
  if (napi_queue_async_work(env, r->work) != napi_ok) {
    napi_delete_reference(env, r->on_exit);
    napi_delete_reference(env, r->on_spawned);
    napi_delete_async_work(env, r->work);
    free_request(r);
    return make_int(env, -ENOMEM);
  }
  return NULL;
}

/*
 * readPipe(fd, onEvent): reads a pipe's read end on the event loop (libuv, as net.Socket does)
 * and hands each chunk to onEvent, without the stream around it: two net.Sockets cost a spawn
 * ~65-125 us of CPU (docs/perf/FIXES.md). onEvent(0, Buffer) for data, (1) at the end of the data,
 * (2, uvError) when a read failed, (3) once the pipe is closed (its fd with it). Reading starts
 * at once; pipeRead(handle, false/true) stops and restarts it; pipeClose(handle) closes it. A
 * call on a handle whose pipe is closed does nothing. Returns the handle, or a negative libuv
 * error (the fd is closed then).
 */
typedef struct reader_box reader_box;

typedef struct {
  uv_pipe_t pipe; /* first: the handle's address is the reader's */
  napi_env env;
  napi_ref on_event;
  napi_async_context async;
  reader_box* box; /* NULL once the handle (JS's external) was collected */
  int closing;
} pipe_reader;

/* What JS holds (an external): the reader while its pipe is open, NULL after; freed when collected. */
struct reader_box {
  pipe_reader* r;
};

static void box_finalize(napi_env env, void* data, void* hint) {
  reader_box* box = data;
  if (box->r) box->r->box = NULL;
  free(box);
}

static void free_handle(uv_handle_t* handle) {
  free(handle);
}

/* One read at a time per thread (libuv calls alloc then read for one handle before the next). */
static __thread char read_buf[65536];

static void reader_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf) {
  buf->base = read_buf;
  buf->len = sizeof read_buf;
}

/* onEvent(kind, value) in the reader's async context; an exception it throws is uncaught, as a stream listener's is. */
static void reader_emit(pipe_reader* r, int kind, napi_value value) {
  napi_env env = r->env;
  napi_value cb, recv, argv[2], result;
  napi_get_reference_value(env, r->on_event, &cb);
  napi_get_global(env, &recv); /* napi_make_callback wants an object */
  napi_create_int32(env, kind, &argv[0]);
  argv[1] = value;
  if (napi_make_callback(env, r->async, recv, cb, 2, argv, &result) == napi_pending_exception) {
    napi_value error;
    napi_get_and_clear_last_exception(env, &error);
    napi_fatal_exception(env, error);
  }
}

static void reader_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  pipe_reader* r = (pipe_reader*)stream;
  if (nread == 0) return; /* EAGAIN */
  napi_handle_scope scope;
  napi_open_handle_scope(r->env, &scope);
  napi_value value;
  void* data;
  if (nread > 0 && napi_create_buffer_copy(r->env, (size_t)nread, buf->base, &data, &value) == napi_ok) {
    reader_emit(r, 0, value);
  } else {
    /* The end, a failed read, or no memory for the chunk: nothing more can be read in order. */
    int err = nread > 0 ? UV_ENOMEM : (int)nread;
    uv_read_stop(stream);
    napi_create_int32(r->env, err, &value);
    reader_emit(r, err == UV_EOF ? 1 : 2, value);
  }
  napi_close_handle_scope(r->env, scope);
}

static void reader_closed(uv_handle_t* handle) {
  pipe_reader* r = (pipe_reader*)handle;
  napi_env env = r->env;
  if (r->box) r->box->r = NULL;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value none;
  napi_get_undefined(env, &none);
  reader_emit(r, 3, none);
  napi_delete_reference(env, r->on_event);
  napi_async_destroy(env, r->async);
  napi_close_handle_scope(env, scope);
  free(r);
}

static napi_value read_pipe(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  int32_t fd = -1;
  napi_valuetype cbType = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 2 || napi_get_value_int32(env, args[0], &fd) != napi_ok ||
      napi_typeof(env, args[1], &cbType) != napi_ok || cbType != napi_function) {
    napi_throw_type_error(env, NULL, "readPipe(fd, onEvent)");
    return NULL;
  }
  int err = UV_ENOMEM, inited = 0, opened = 0;
  uv_loop_t* loop = NULL;
  napi_value name, handle;
  pipe_reader* r = calloc(1, sizeof(pipe_reader));
  reader_box* box = calloc(1, sizeof(reader_box));
  if (!r || !box || napi_get_uv_event_loop(env, &loop) != napi_ok || napi_create_string_utf8(env, "svc:pipe", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_reference(env, args[1], 1, &r->on_event) != napi_ok || napi_async_init(env, NULL, name, &r->async) != napi_ok)
    goto fail;
  if ((err = uv_pipe_init(loop, &r->pipe, 0)) != 0) goto fail;
  inited = 1;
  if ((err = uv_pipe_open(&r->pipe, fd)) != 0) goto fail;
  opened = 1; /* the handle closes the fd from here */
  if ((err = uv_read_start((uv_stream_t*)&r->pipe, reader_alloc, reader_read)) != 0) goto fail;
  /* The box is JS's once the external exists: box_finalize frees it when the handle is collected. */
  if (napi_create_external(env, box, box_finalize, NULL, &handle) != napi_ok) {
    err = UV_ENOMEM;
    goto fail;
  }
  r->env = env;
  r->box = box;
  box->r = r;
  return handle;

fail: /* everything undone, the fd closed too */
  if (r && r->on_event) napi_delete_reference(env, r->on_event);
  if (r && r->async) napi_async_destroy(env, r->async);
  if (!opened) close(fd);
  if (inited) uv_close((uv_handle_t*)&r->pipe, free_handle);
  else free(r);
  free(box);
  return make_int(env, err);
}

/* The open reader of a handle from readPipe, or NULL: its pipe is closed or closing, or (a TypeError thrown) it is no such handle. */
static pipe_reader* reader_arg(napi_env env, napi_callback_info info, napi_value* second) {
  size_t argc = 2;
  napi_value args[2];
  void* box = NULL;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_external(env, args[0], &box) != napi_ok || !box) {
    napi_throw_type_error(env, NULL, "a handle from readPipe");
    return NULL;
  }
  if (second) *second = argc > 1 ? args[1] : NULL;
  pipe_reader* r = ((reader_box*)box)->r;
  return r && !r->closing ? r : NULL;
}

/* pipeRead(handle, on): restarts (true) or stops (false) reading; 0 or a negative libuv error. */
static napi_value pipe_read(napi_env env, napi_callback_info info) {
  napi_value on = NULL;
  pipe_reader* r = reader_arg(env, info, &on);
  if (!r) return NULL;
  bool yes = false;
  if (on) napi_get_value_bool(env, on, &yes);
  int err = yes ? uv_read_start((uv_stream_t*)&r->pipe, reader_alloc, reader_read) : uv_read_stop((uv_stream_t*)&r->pipe);
  return make_int(env, err == UV_EALREADY ? 0 : err);
}

/* pipeClose(handle): closes the pipe (and its fd); onEvent(3) follows in a later turn. */
static napi_value pipe_close(napi_env env, napi_callback_info info) {
  pipe_reader* r = reader_arg(env, info, NULL);
  if (!r) return NULL;
  r->closing = 1;
  uv_close((uv_handle_t*)&r->pipe, reader_closed);
  return NULL;
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
  napi_create_function(env, "spawnAsync", NAPI_AUTO_LENGTH, spawn_async, NULL, &fn);
  napi_set_named_property(env, exports, "spawnAsync", fn);
  napi_value yes;
  napi_get_boolean(env, true, &yes);
  napi_set_named_property(env, exports, "envBlock", yes); /* envp may be one NUL-joined string */
  napi_create_function(env, "readPipe", NAPI_AUTO_LENGTH, read_pipe, NULL, &fn);
  napi_set_named_property(env, exports, "readPipe", fn);
  napi_create_function(env, "pipeRead", NAPI_AUTO_LENGTH, pipe_read, NULL, &fn);
  napi_set_named_property(env, exports, "pipeRead", fn);
  napi_create_function(env, "pipeClose", NAPI_AUTO_LENGTH, pipe_close, NULL, &fn);
  napi_set_named_property(env, exports, "pipeClose", fn);
  napi_create_function(env, "supported", NAPI_AUTO_LENGTH, supported, NULL, &fn);
  napi_set_named_property(env, exports, "supported", fn);
  napi_create_function(env, "failNextWatch", NAPI_AUTO_LENGTH, fail_next_watch_fn, NULL, &fn);
  napi_set_named_property(env, exports, "failNextWatch", fn);
  return exports;
}
