/* Flat view of libbabeltrace2's messages for the Rust side (src/input/babeltrace.rs). */
#ifndef DT_BT_READER_H
#define DT_BT_READER_H
#include <stdint.h>

#define DT_MAX_FIELDS 16

enum { DT_FIELD_OTHER = 0, DT_FIELD_STRING = 1, DT_FIELD_INTEGER = 2 };
enum { DT_RUN_OK = 0, DT_RUN_AGAIN = 1, DT_RUN_END = 2, DT_RUN_ERROR = -1 };
/* What the sink does with a class's events (the class callback's answer):
 * hands them on with their time only, or with their fields; counts them
 * (per class, with the first and last time) and hands on only a trace's
 * first, so that traces are numbered as if all were handed on; or drops
 * them (another provider's). */
enum { DT_CLASS_TIME = 0, DT_CLASS_FIELDS = 1, DT_CLASS_COUNTED = 2, DT_CLASS_DROPPED = 3 };

typedef struct {
    const char *str; /* DT_FIELD_STRING: borrowed until the callback returns */
    uint64_t len;
    int64_t integer; /* DT_FIELD_INTEGER (unsigned values above 2^63 wrap) */
    int32_t kind;
} dt_field;

typedef struct {
    uint32_t class_index;
    uint32_t n_fields;
    int64_t ts_ns; /* default clock, ns from its origin */
    int64_t cpu;   /* packet context cpu_id, or -1 */
    const dt_field *fields;
    uint32_t trace; /* the event's trace, numbered in order of first event */
    int64_t vpid;   /* LTTng's vpid context (the recording OS process), or -1 */
} dt_event;

typedef struct dt_reader dt_reader;
/* A class first seen; answers what to do with its events (DT_CLASS_*). */
typedef int (*dt_class_cb)(void *ctx, uint32_t index, const char *name, uint32_t n_fields,
                           const char *const *field_names);
typedef void (*dt_event_cb)(void *ctx, const dt_event *event);
/* A trace's first event: its index and the name of that event's stream
 * (source.ctf.fs names a stream after its file's path). */
typedef void (*dt_trace_cb)(void *ctx, uint32_t index, const char *stream_name);

dt_reader *dt_reader_new(void);
int dt_reader_open(dt_reader *r, const char *const *inputs, uint32_t n_inputs, int live,
                   dt_class_cb on_class, dt_event_cb on_event, dt_trace_cb on_trace, void *ctx);
void dt_reader_set_context(dt_reader *r, void *ctx);
int dt_reader_run_once(dt_reader *r);
const char *dt_reader_error(const dt_reader *r);
uint64_t dt_reader_discarded(const dt_reader *r, uint64_t *unknown);
/* Events counted rather than handed on: per class index, into counts[0..n]
 * (the number of classes is returned), and the first and last one's time
 * (INT64_MAX and INT64_MIN when none was). */
uint32_t dt_reader_counted(const dt_reader *r, uint64_t *counts, uint32_t n, int64_t *first, int64_t *last);
void dt_reader_free(dt_reader *r);
#endif
