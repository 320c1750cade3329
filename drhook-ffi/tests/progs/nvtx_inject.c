/* A test NVTX tool: an injection library (the NVTX v3 protocol, declared
 * here by hand from its documentation) that attaches to the process's
 * NVTX implementation and records every RangePushEx / RangePop with the
 * calling thread to the file named by NVTX_TEST_LOG:
 *   <tid> push <name>
 *   <tid> pop                                                       */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef void (*fnptr)(void);
typedef const void *(*get_export_table_t)(uint32_t);
typedef struct {
  size_t struct_size;
  int (*get_module_function_table)(int module, fnptr ***table, unsigned *size);
} callbacks_t;
typedef struct {
  uint16_t version, size;
  uint32_t category;
  int32_t color_type;
  uint32_t color;
  int32_t payload_type, reserved0;
  uint64_t payload;
  int32_t message_type;
  const char *message;
} attributes_t;

static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static long tid(void) { return (long)syscall(SYS_gettid); }

static int push_ex(const attributes_t *a) {
  pthread_mutex_lock(&lock);
  fprintf(out, "%ld push %s\n", tid(), a->message_type == 1 ? a->message : "?");
  pthread_mutex_unlock(&lock);
  return 0;
}

static int pop(void) {
  pthread_mutex_lock(&lock);
  fprintf(out, "%ld pop\n", tid());
  pthread_mutex_unlock(&lock);
  return 0;
}

int InitializeInjectionNvtx2(get_export_table_t get) {
  const callbacks_t *cb = (const callbacks_t *)get(1);
  fnptr **table = NULL;
  unsigned size = 0;
  const char *log = getenv("NVTX_TEST_LOG");
  if (!cb || !log || !cb->get_module_function_table(1, &table, &size) || size < 12)
    return 0;
  out = fopen(log, "w");
  if (!out) return 0;
  setvbuf(out, NULL, _IOLBF, 0);
  fprintf(out, "%ld init %u\n", tid(), size);
  *table[8] = (fnptr)push_ex;
  *table[11] = (fnptr)pop;
  return 1;
}
