/* cudalens trace injection library: CUPTI activity records of a native CUDA program.
 *
 * Loaded by the CUDA driver through CUDA_INJECTION64_PATH (it calls InitializeInjection at cuInit).
 * Writes one tab-separated line per record to the file named by CUDALENS_TRACE_OUT, in the format
 * that cudalens.trace.records parses (the Python collector writes the same lines). Built by
 * cudalens.trace.inject at first use with the system's C compiler against the CUPTI beside the
 * driver's toolkit. CUDALENS_TRACE_LAUNCH_LIMIT caps the kernel records kept (0 = no cap).
 */
#include <cupti_result.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (8 * 1024 * 1024)
#define ALIGN 8

static FILE *out = NULL;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long launch_limit = 0;
static long long kernels_seen = 0;
static long long kernels_dropped = 0;
static int finished = 0;

static void clean(const char *s, char *dst, size_t n) {
  size_t i = 0;
  if (!s) s = "";
  for (; *s && i + 1 < n; ++s) dst[i++] = (*s == '\t' || *s == '\n' || *s == '\r') ? ' ' : *s;
  dst[i] = 0;
}

static int api_wanted(const char *name) {
  static const char *keys[] = {"ynchronize", "Malloc", "Free", "Memcpy", "Memset", "HostAlloc",
                               "HostRegister", "StreamWaitEvent", "DeviceReset", NULL};
  if (!name) return 0;
  for (int i = 0; keys[i]; ++i)
    if (strstr(name, keys[i])) return 1;
  return 0;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  uint8_t *b = (uint8_t *)malloc(BUF_SIZE + ALIGN);
  *buffer = b ? (uint8_t *)(((uintptr_t)b + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1)) : NULL;
  *size = b ? BUF_SIZE : 0;
  *max_records = 0;
}

static void write_record(CUpti_Activity *rec) {
  char name[4096];
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)rec;
      kernels_seen++;
      if (launch_limit > 0 && kernels_seen > launch_limit) { kernels_dropped++; return; }
      clean(k->name, name, sizeof name);
      fprintf(out, "K\t%llu\t%llu\t%u\t%u\t%u\t%d\t%d\t%d\t%d\t%d\t%d\t%u\t%d\t%d\t%u\t%u\t%s\n",
              (unsigned long long)k->start, (unsigned long long)k->end, k->deviceId, k->streamId,
              k->correlationId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
              (unsigned)k->registersPerThread, k->staticSharedMemory, k->dynamicSharedMemory,
              k->localMemoryPerThread, k->graphId, name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      CUpti_ActivityMemcpy6 *c = (CUpti_ActivityMemcpy6 *)rec;
      fprintf(out, "C\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%llu\t%u\n", (unsigned long long)c->start,
              (unsigned long long)c->end, c->deviceId, c->streamId, c->correlationId, (unsigned)c->copyKind,
              (unsigned)c->srcKind, (unsigned)c->dstKind, (unsigned long long)c->bytes, (unsigned)c->flags);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)rec;
      fprintf(out, "S\t%llu\t%llu\t%u\t%u\t%u\t%llu\t%u\t%u\n", (unsigned long long)m->start,
              (unsigned long long)m->end, m->deviceId, m->streamId, m->correlationId,
              (unsigned long long)m->bytes, (unsigned)m->memoryKind, (unsigned)m->flags);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)rec;
      const char *cbname = NULL;
      cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &cbname);
      if (!api_wanted(cbname)) return;
      clean(cbname, name, sizeof name);
      fprintf(out, "A\t%llu\t%llu\t%u\t%u\t%u\t%s\n", (unsigned long long)a->start, (unsigned long long)a->end,
              a->correlationId, a->cbid, a->returnValue, name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      CUpti_ActivitySynchronization2 *s = (CUpti_ActivitySynchronization2 *)rec;
      fprintf(out, "Y\t%llu\t%llu\t%u\t%u\t%u\n", (unsigned long long)s->start, (unsigned long long)s->end,
              s->streamId, s->correlationId, (unsigned)s->type);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      CUpti_ActivityMarker2 *m = (CUpti_ActivityMarker2 *)rec;
      clean(m->name, name, sizeof name);
      char dom[256];
      clean(m->domain, dom, sizeof dom);
      fprintf(out, "M\t%llu\t%u\t%u\t%s\t%s\n", (unsigned long long)m->timestamp, m->id, (unsigned)m->flags,
              dom, name);
      break;
    }
    default:
      break;
  }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)ctx; (void)stream; (void)size;
  CUpti_Activity *rec = NULL;
  pthread_mutex_lock(&lock);
  if (out) {
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) write_record(rec);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
      fprintf(out, "I\tdropped_records\t%zu\n", dropped);
  }
  pthread_mutex_unlock(&lock);
  /* the buffer was aligned inside a malloc'ed block; it is not freed (a few MB per 8 MB of records) */
}

static void finish(void) {
  if (finished) return;
  finished = 1;
  cuptiActivityFlushAll(1);
  pthread_mutex_lock(&lock);
  if (out) {
    fprintf(out, "I\tkernels_seen\t%lld\n", kernels_seen);
    if (kernels_dropped) fprintf(out, "I\tlaunch_limit_dropped\t%lld\n", kernels_dropped);
    fprintf(out, "I\tend\t1\n");
    fclose(out);
    out = NULL;
  }
  pthread_mutex_unlock(&lock);
}

static void on_term(int sig) {
  finish();
  signal(sig, SIG_DFL);
  raise(sig);
}

int InitializeInjection(void) {
  const char *path = getenv("CUDALENS_TRACE_OUT");
  if (!path || out) return 1;
  /* The first process to initialize CUDA takes the file (exclusive create; cudalens removes it before
   * the run); a child process of the program that initializes CUDA too writes beside it, to PATH.PID,
   * instead of truncating the parent's records. cudalens reports those children separately. */
  out = fopen(path, "wx");
  if (!out) {
    char child[4096];
    snprintf(child, sizeof child, "%s.%d", path, (int)getpid());
    out = fopen(child, "w");
  }
  if (!out) return 0;
  const char *lim = getenv("CUDALENS_TRACE_LAUNCH_LIMIT");
  launch_limit = lim ? atoll(lim) : 0;
  fprintf(out, "#cudalens-trace\t1\tinjection\n");
  fprintf(out, "I\tpid\t%d\n", (int)getpid());
  fflush(out);
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    const char *msg = NULL;
    cuptiGetResultString(r, &msg);
    fprintf(out, "I\terror\tcuptiActivityRegisterCallbacks: %s\n", msg ? msg : "?");
    fclose(out);
    out = NULL;
    return 0;
  }
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
  atexit(finish);
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  return 1;
}
