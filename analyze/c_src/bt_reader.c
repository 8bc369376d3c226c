/*
 * The one place that talks to libbabeltrace2: builds a graph of CTF
 * sources (source.ctf.fs per trace directory, or source.ctf.lttng-live for
 * a relay URL) and a sink, and hands each event to Rust as a flat record
 * (class index, ns from origin, cpu, fields in payload order). Event
 * classes get a small index the first time they are seen, so Rust
 * resolves names once per class, never per event.
 *
 * Trace files: the sink has one input port per stream and merges them by
 * timestamp itself (one comparison of integers per event; the generic
 * filter.utils.muxer costs about a tenth of a read). Live: the streams come
 * through filter.utils.muxer (it knows lttng-live's inactivity messages)
 * to a simple sink.
 */
#include <babeltrace2/babeltrace.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bt_reader.h"

#define CLASS_SLOTS 4096 /* open addressing; at most half used */
#define MAX_TRACES 1024  /* one per node and session: a few, searched in order */

#define CPU_CACHE 64 /* live packets whose cpu_id is known */

struct dt_class_slot {
    const bt_event_class *cls;
    uint32_t index;
    uint32_t n_fields;
    int mode; /* DT_CLASS_* */
    bt_field_class_type types[DT_MAX_FIELDS]; /* payload member types */
};

struct dt_packet_cpu {
    const bt_packet *packet;
    int64_t cpu;
};

/* One input port of the merging sink: its iterator, the messages it gave
 * (owned until handled), and the time of the next one. */
struct dt_port {
    bt_message_iterator *it;
    bt_message_array_const msgs;
    uint64_t count;
    uint64_t at;
    int64_t head_ts;
    int ended;
};

#define MERGE_STEP 4096 /* messages handled per consume call */

struct dt_reader {
    bt_graph *graph;
    const bt_plugin *ctf;
    const bt_plugin *utils;
    const bt_component_filter *muxer;
    dt_event_cb on_event;
    dt_class_cb on_class;
    dt_trace_cb on_trace;
    void *ctx;
    uint64_t discarded;
    uint64_t discarded_unknown; /* discarded-events messages without a count */
    uint32_t n_classes;
    struct dt_class_slot classes[CLASS_SLOTS];
    /* Events of DT_CLASS_COUNTED classes not handed on, per class index,
     * and the first and last one's time. */
    uint64_t counted[CLASS_SLOTS / 2];
    int64_t counted_first;
    int64_t counted_last;
    /* The packet context's cpu_id member: its index, per context class. */
    const bt_field_class *cpu_ctx_class;
    int64_t cpu_member;
    /* The event common context's vpid member (lttng add-context -t vpid):
     * its index, per context class; -1 when the channel has none. */
    const bt_field_class *vpid_ctx_class;
    int64_t vpid_member;
    /* cpu_id per packet, looked up once per packet: a packet object may be
     * reused after its end, so the cache is emptied at every packet
     * beginning or end message. */
    struct dt_packet_cpu cpus[CPU_CACHE];
    uint32_t n_cpus;
    /* Traces seen, by first event: an event's trace is its node. */
    const bt_trace *traces[MAX_TRACES];
    uint32_t n_traces;
    /* Whether an event of the trace was handed on. */
    uint8_t handed[MAX_TRACES];
    /* The merging sink's ports (trace files). */
    struct dt_port *ports;
    uint32_t n_ports;
    char error[1024];
};

static void set_error(struct dt_reader *r, const char *what)
{
    /* Keep the deepest cause: it names the file or the socket at fault. */
    const bt_error *err = bt_current_thread_take_error();
    const char *cause = NULL;
    if (err != NULL) {
        uint64_t n = bt_error_get_cause_count(err);
        if (n > 0)
            cause = bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, 0));
    }
    if (cause != NULL)
        snprintf(r->error, sizeof r->error, "%s: %s", what, cause);
    else
        snprintf(r->error, sizeof r->error, "%s", what);
    for (char *p = r->error; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    if (err != NULL)
        bt_error_release(err);
}

static struct dt_class_slot *class_slot(struct dt_reader *r, const bt_event_class *cls)
{
    uintptr_t h = ((uintptr_t)cls >> 4) * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 52) & (CLASS_SLOTS - 1);
    for (;;) {
        struct dt_class_slot *s = &r->classes[i];
        if (s->cls == cls)
            return s;
        if (s->cls == NULL) {
            if (r->n_classes >= CLASS_SLOTS / 2)
                return NULL;
            s->cls = cls;
            s->index = r->n_classes++;
            const char *names[DT_MAX_FIELDS];
            uint32_t n = 0;
            const bt_field_class *payload = bt_event_class_borrow_payload_field_class_const(cls);
            if (payload != NULL
                && bt_field_class_get_type(payload) == BT_FIELD_CLASS_TYPE_STRUCTURE) {
                uint64_t count = bt_field_class_structure_get_member_count(payload);
                for (uint64_t m = 0; m < count && n < DT_MAX_FIELDS; m++) {
                    const bt_field_class_structure_member *member =
                        bt_field_class_structure_borrow_member_by_index_const(payload, m);
                    s->types[n] = bt_field_class_get_type(
                        bt_field_class_structure_member_borrow_field_class_const(member));
                    names[n++] = bt_field_class_structure_member_get_name(member);
                }
            }
            s->n_fields = n;
            const char *name = bt_event_class_get_name(cls);
            s->mode = r->on_class(r->ctx, s->index, name ? name : "", n, names);
            return s;
        }
        i = (i + 1) & (CLASS_SLOTS - 1);
    }
}

static int64_t integer_of_type(const bt_field *f, bt_field_class_type t, int *ok)
{
    *ok = 1;
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return (int64_t)bt_field_integer_unsigned_get_value(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return bt_field_integer_signed_get_value(f);
    *ok = 0;
    return 0;
}

static int64_t integer_of(const bt_field *f, int *ok)
{
    return integer_of_type(f, bt_field_get_class_type(f), ok);
}

static int64_t member_int(const bt_field *st, const char *name)
{
    if (st == NULL || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return -1;
    const bt_field *f = bt_field_structure_borrow_member_field_by_name_const(st, name);
    int ok;
    int64_t v = f ? integer_of(f, &ok) : 0;
    return f && ok ? v : -1;
}

/* The index of the member `name` (or `alt`) of structure class `fc`, -1 if none. */
static int64_t member_index(const bt_field_class *fc, const char *name, const char *alt)
{
    uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t m = 0; m < n; m++) {
        const char *member = bt_field_class_structure_member_get_name(
            bt_field_class_structure_borrow_member_by_index_const(fc, m));
        if (strcmp(member, name) == 0 || (alt != NULL && strcmp(member, alt) == 0))
            return (int64_t)m;
    }
    return -1;
}

static int64_t packet_cpu(struct dt_reader *r, const bt_event *ev, const bt_packet *pkt)
{
    const bt_field *ctx = pkt ? bt_packet_borrow_context_field_const(pkt) : NULL;
    if (ctx != NULL && bt_field_get_class_type(ctx) == BT_FIELD_CLASS_TYPE_STRUCTURE) {
        const bt_field_class *fc = bt_field_borrow_class_const(ctx);
        if (fc != r->cpu_ctx_class) {
            r->cpu_ctx_class = fc;
            r->cpu_member = member_index(fc, "cpu_id", NULL);
        }
        if (r->cpu_member >= 0) {
            int ok;
            int64_t v = integer_of(
                bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)r->cpu_member), &ok);
            if (ok)
                return v;
        }
    }
    return member_int(bt_event_borrow_common_context_field_const(ev), "cpu_id");
}

static int64_t event_cpu(struct dt_reader *r, const bt_event *ev)
{
    const bt_packet *pkt = bt_event_borrow_packet_const(ev);
    if (pkt == NULL)
        return packet_cpu(r, ev, NULL);
    for (uint32_t i = 0; i < r->n_cpus; i++)
        if (r->cpus[i].packet == pkt)
            return r->cpus[i].cpu;
    int64_t cpu = packet_cpu(r, ev, pkt);
    if (r->n_cpus < CPU_CACHE)
        r->cpus[r->n_cpus++] = (struct dt_packet_cpu){pkt, cpu};
    return cpu;
}

static int64_t event_vpid(struct dt_reader *r, const bt_event *ev)
{
    const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
    if (ctx == NULL || bt_field_get_class_type(ctx) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return -1;
    const bt_field_class *fc = bt_field_borrow_class_const(ctx);
    if (fc != r->vpid_ctx_class) {
        r->vpid_ctx_class = fc;
        r->vpid_member = member_index(fc, "vpid", "_vpid");
    }
    if (r->vpid_member < 0)
        return -1;
    int ok;
    int64_t v = integer_of(bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)r->vpid_member), &ok);
    return ok ? v : -1;
}

static uint32_t trace_index(struct dt_reader *r, const bt_event *ev)
{
    const bt_stream *stream = bt_event_borrow_stream_const(ev);
    const bt_trace *t = bt_stream_borrow_trace_const(stream);
    for (uint32_t i = 0; i < r->n_traces; i++)
        if (r->traces[i] == t)
            return i;
    if (r->n_traces >= MAX_TRACES)
        return UINT32_MAX;
    r->traces[r->n_traces] = t;
    const char *name = bt_stream_get_name(stream);
    r->on_trace(r->ctx, r->n_traces, name ? name : "");
    return r->n_traces++;
}

/* The message's time for the merge: an event's default clock snapshot in
 * ns from origin (0 without one); other messages go first. */
static int64_t message_ts(const bt_message *msg)
{
    if (bt_message_get_type(msg) != BT_MESSAGE_TYPE_EVENT)
        return INT64_MIN;
    int64_t ns = 0;
    if (bt_message_event_borrow_stream_class_default_clock_class_const(msg) != NULL) {
        const bt_clock_snapshot *snap = bt_message_event_borrow_default_clock_snapshot_const(msg);
        if (bt_clock_snapshot_get_ns_from_origin(snap, &ns) != BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
            ns = 0;
    }
    return ns;
}

static int handle_event(struct dt_reader *r, const bt_message *msg, int64_t ts_ns)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    dt_event out;
    dt_field fields[DT_MAX_FIELDS];
    struct dt_class_slot *cls = class_slot(r, bt_event_borrow_class_const(ev));
    if (cls == NULL) {
        snprintf(r->error, sizeof r->error, "more than %d event classes", CLASS_SLOTS / 2);
        return -1;
    }
    /* Every event numbers its trace, handed on or not. */
    out.trace = trace_index(r, ev);
    if (out.trace == UINT32_MAX) {
        snprintf(r->error, sizeof r->error, "more than %d traces", MAX_TRACES);
        return -1;
    }
    if (cls->mode == DT_CLASS_DROPPED)
        return 0;
    if (cls->mode == DT_CLASS_COUNTED && r->handed[out.trace]) {
        r->counted[cls->index]++;
        if (ts_ns < r->counted_first)
            r->counted_first = ts_ns;
        if (ts_ns > r->counted_last)
            r->counted_last = ts_ns;
        return 0;
    }
    r->handed[out.trace] = 1;
    int wanted = cls->mode == DT_CLASS_FIELDS;
    out.class_index = cls->index;
    out.ts_ns = ts_ns;
    out.cpu = wanted ? event_cpu(r, ev) : -1;
    out.vpid = wanted ? event_vpid(r, ev) : -1;
    out.n_fields = 0;
    out.fields = fields;
    const bt_field *payload = wanted && cls->n_fields > 0 ? bt_event_borrow_payload_field_const(ev) : NULL;
    /* Member types come from the class slot: the payload of an event of
     * a class has that class's members, in order. */
    if (payload != NULL) {
        for (uint32_t m = 0; m < cls->n_fields; m++) {
            const bt_field *f = bt_field_structure_borrow_member_field_by_index_const(payload, m);
            dt_field *o = &fields[out.n_fields++];
            o->str = NULL;
            o->len = 0;
            o->integer = 0;
            o->kind = DT_FIELD_OTHER;
            bt_field_class_type t = cls->types[m];
            if (t == BT_FIELD_CLASS_TYPE_STRING) {
                o->str = bt_field_string_get_value(f);
                o->len = bt_field_string_get_length(f);
                o->kind = DT_FIELD_STRING;
            } else {
                int ok;
                o->integer = integer_of_type(f, t, &ok);
                if (ok)
                    o->kind = DT_FIELD_INTEGER;
            }
        }
    }
    r->on_event(r->ctx, &out);
    return 0;
}

/* Handles one message (0, or -1 on error). */
static int handle_message(struct dt_reader *r, const bt_message *msg, int64_t ts_ns)
{
    switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT:
        return handle_event(r, msg, ts_ns);
    case BT_MESSAGE_TYPE_PACKET_BEGINNING:
    case BT_MESSAGE_TYPE_PACKET_END:
        r->n_cpus = 0;
        return 0;
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
        uint64_t n;
        if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            r->discarded += n;
        else
            r->discarded_unknown++;
        return 0;
    }
    default:
        return 0;
    }
}

/* The simple sink behind the muxer (live). */
static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *data)
{
    struct dt_reader *r = data;
    bt_message_array_const msgs;
    uint64_t count;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    int failed = 0;
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *msg = msgs[i];
        if (!failed)
            failed = handle_message(r, msg, message_ts(msg)) != 0;
        bt_message_put_ref(msg);
    }
    return failed ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
                  : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* Makes the port's next message its head: 1, or 0 once it ended, 2 for
 * "again", -1 on error. */
static int port_fill(struct dt_port *p)
{
    while (p->at >= p->count) {
        if (p->ended)
            return 0;
        p->at = 0;
        p->count = 0;
        switch (bt_message_iterator_next(p->it, &p->msgs, &p->count)) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
            break;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
            p->ended = 1;
            return 0;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
            return 2;
        default:
            return -1;
        }
    }
    p->head_ts = message_ts(p->msgs[p->at]);
    return 1;
}

/* The merging sink: the oldest head of all ports, each time (ties in port
 * order); each port's messages stay in their order. */
static bt_component_class_sink_consume_method_status merge_consume(bt_self_component_sink *self)
{
    struct dt_reader *r = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (int n = 0; n < MERGE_STEP; n++) {
        struct dt_port *best = NULL;
        for (uint32_t i = 0; i < r->n_ports; i++) {
            struct dt_port *p = &r->ports[i];
            if (p->at >= p->count) {
                int rc = port_fill(p);
                if (rc < 0)
                    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
                if (rc == 2)
                    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
                if (rc == 0)
                    continue;
            }
            if (best == NULL || p->head_ts < best->head_ts)
                best = p;
        }
        if (best == NULL)
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
        const bt_message *msg = best->msgs[best->at++];
        int failed = handle_message(r, msg, best->head_ts) != 0;
        bt_message_put_ref(msg);
        if (best->at < best->count)
            best->head_ts = message_ts(best->msgs[best->at]);
        if (failed)
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    }
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

static bt_component_class_initialize_method_status merge_init(bt_self_component_sink *self,
                                                               bt_self_component_sink_configuration *config,
                                                               const bt_value *params, void *data)
{
    (void)config;
    (void)params;
    struct dt_reader *r = data;
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), r);
    for (uint32_t i = 0; i < r->n_ports; i++) {
        char name[32];
        snprintf(name, sizeof name, "in%u", i);
        if (bt_self_component_sink_add_input_port(self, name, NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
            return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
    }
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status merge_configured(bt_self_component_sink *self)
{
    struct dt_reader *r = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (uint32_t i = 0; i < r->n_ports; i++) {
        bt_self_component_port_input *port = bt_self_component_sink_borrow_input_port_by_index(self, i);
        if (bt_message_iterator_create_from_sink_component(self, port, &r->ports[i].it)
            != BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
            return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
    }
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static void merge_finalize(bt_self_component_sink *self)
{
    struct dt_reader *r = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (uint32_t i = 0; i < r->n_ports; i++) {
        struct dt_port *p = &r->ports[i];
        for (; p->at < p->count; p->at++)
            bt_message_put_ref(p->msgs[p->at]);
        bt_message_iterator_put_ref(p->it);
        p->it = NULL;
    }
}

static const bt_plugin *find_plugin(struct dt_reader *r, const char *name)
{
    const bt_plugin *p = NULL;
    if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &p) != BT_PLUGIN_FIND_STATUS_OK) {
        snprintf(r->error, sizeof r->error, "babeltrace2 plugin `%s` not found", name);
        bt_current_thread_clear_error();
        return NULL;
    }
    return p;
}

/* Connects every output port of `src` to a fresh input port of the muxer
 * (the muxer adds one each time its last one is connected). */
static int connect_source(struct dt_reader *r, const bt_component_source *src)
{
    uint64_t n = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t in = bt_component_filter_get_input_port_count(r->muxer);
        if (bt_graph_connect_ports(r->graph, bt_component_source_borrow_output_port_by_index_const(src, i),
                                   bt_component_filter_borrow_input_port_by_index_const(r->muxer, in - 1), NULL)
            != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            set_error(r, "cannot connect a trace's stream to the muxer");
            return -1;
        }
    }
    return 0;
}

static int add_source(struct dt_reader *r, const char *input, int live, uint32_t n,
                      const bt_component_source **added)
{
    const char *cls_name = live ? "lttng-live" : "fs";
    const bt_component_class_source *cls = bt_plugin_borrow_source_component_class_by_name_const(r->ctf, cls_name);
    if (cls == NULL) {
        snprintf(r->error, sizeof r->error, "babeltrace2 component class source.ctf.%s not found", cls_name);
        return -1;
    }
    bt_value *params = bt_value_map_create();
    bt_value *inputs = NULL;
    int rc = -1;
    if (params == NULL || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK
        || bt_value_array_append_string_element(inputs, input) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK
        || (live && bt_value_map_insert_string_entry(params, "session-not-found-action", "fail") != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)) {
        snprintf(r->error, sizeof r->error, "out of memory");
        goto out;
    }
    char name[32];
    snprintf(name, sizeof name, "source-%u", n);
    const bt_component_source *src = NULL;
    if (bt_graph_add_source_component(r->graph, cls, name, params, BT_LOGGING_LEVEL_NONE, &src)
        != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        set_error(r, "cannot open the trace");
        goto out;
    }
    *added = src;
    rc = 0;
out:
    bt_value_put_ref(params);
    return rc;
}

const char *dt_reader_error(const dt_reader *r)
{
    return r->error;
}

dt_reader *dt_reader_new(void)
{
    dt_reader *r = calloc(1, sizeof(dt_reader));
    if (r != NULL) {
        r->counted_first = INT64_MAX;
        r->counted_last = INT64_MIN;
    }
    return r;
}

static int connect_muxed(struct dt_reader *r, const bt_component_source **sources, uint32_t n);
static int connect_merged(struct dt_reader *r, const bt_component_source **sources, uint32_t n);

int dt_reader_open(dt_reader *r, const char *const *inputs, uint32_t n_inputs, int live,
                   dt_class_cb on_class, dt_event_cb on_event, dt_trace_cb on_trace, void *ctx)
{
    r->on_class = on_class;
    r->on_trace = on_trace;
    r->on_event = on_event;
    r->ctx = ctx;
    r->graph = bt_graph_create(0);
    if (r->graph == NULL) {
        snprintf(r->error, sizeof r->error, "cannot create a babeltrace2 graph");
        return -1;
    }
    if ((r->ctf = find_plugin(r, "ctf")) == NULL || (r->utils = find_plugin(r, "utils")) == NULL)
        return -1;
    const bt_component_source **sources = calloc(n_inputs ? n_inputs : 1, sizeof *sources);
    if (sources == NULL) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    int rc = -1;
    for (uint32_t i = 0; i < n_inputs; i++)
        if (add_source(r, inputs[i], live, i, &sources[i]) != 0)
            goto out;
    rc = live ? connect_muxed(r, sources, n_inputs) : connect_merged(r, sources, n_inputs);
out:
    free(sources);
    return rc;
}

/* Live: sources -> filter.utils.muxer -> a simple sink. */
static int connect_muxed(struct dt_reader *r, const bt_component_source **sources, uint32_t n)
{
    const bt_component_class_filter *mux = bt_plugin_borrow_filter_component_class_by_name_const(r->utils, "muxer");
    if (mux == NULL) {
        snprintf(r->error, sizeof r->error, "babeltrace2 component class filter.utils.muxer not found");
        return -1;
    }
    if (bt_graph_add_filter_component(r->graph, mux, "muxer", NULL, BT_LOGGING_LEVEL_NONE, &r->muxer)
        != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        set_error(r, "cannot add the muxer");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        if (connect_source(r, sources[i]) != 0)
            return -1;
    const bt_component_sink *sink = NULL;
    if (bt_graph_add_simple_sink_component(r->graph, "dyntrace-analyze", NULL, consume, NULL, r, &sink)
        != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        set_error(r, "cannot add the sink");
        return -1;
    }
    if (bt_graph_connect_ports(r->graph, bt_component_filter_borrow_output_port_by_index_const(r->muxer, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL)
        != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        set_error(r, "cannot connect the muxer to the sink");
        return -1;
    }
    return 0;
}

/* Trace files: every stream of every source to a port of the merging sink. */
static int connect_merged(struct dt_reader *r, const bt_component_source **sources, uint32_t n)
{
    uint64_t ports = 0;
    for (uint32_t i = 0; i < n; i++)
        ports += bt_component_source_get_output_port_count(sources[i]);
    r->ports = calloc(ports ? ports : 1, sizeof *r->ports);
    if (r->ports == NULL) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    r->n_ports = (uint32_t)ports;
    bt_component_class_sink *cls = bt_component_class_sink_create("dyntrace-analyze", merge_consume);
    if (cls == NULL) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    const bt_component_sink *sink = NULL;
    int ok = bt_component_class_sink_set_initialize_method(cls, merge_init) == BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK
             && bt_component_class_sink_set_graph_is_configured_method(cls, merge_configured)
                    == BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK
             && bt_component_class_sink_set_finalize_method(cls, merge_finalize) == BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK
             && bt_graph_add_sink_component_with_initialize_method_data(r->graph, cls, "dyntrace-analyze", NULL, r,
                                                                        BT_LOGGING_LEVEL_NONE, &sink)
                    == BT_GRAPH_ADD_COMPONENT_STATUS_OK;
    bt_component_class_sink_put_ref(cls);
    if (!ok) {
        set_error(r, "cannot add the sink");
        return -1;
    }
    uint64_t in = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t outs = bt_component_source_get_output_port_count(sources[i]);
        for (uint64_t o = 0; o < outs; o++, in++) {
            if (bt_graph_connect_ports(r->graph, bt_component_source_borrow_output_port_by_index_const(sources[i], o),
                                       bt_component_sink_borrow_input_port_by_index_const(sink, in), NULL)
                != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                set_error(r, "cannot connect a trace's stream to the sink");
                return -1;
            }
        }
    }
    return 0;
}

void dt_reader_set_context(dt_reader *r, void *ctx)
{
    r->ctx = ctx;
}

int dt_reader_run_once(dt_reader *r)
{
    switch (bt_graph_run_once(r->graph)) {
    case BT_GRAPH_RUN_ONCE_STATUS_OK:
        return DT_RUN_OK;
    case BT_GRAPH_RUN_ONCE_STATUS_AGAIN:
        return DT_RUN_AGAIN;
    case BT_GRAPH_RUN_ONCE_STATUS_END:
        return DT_RUN_END;
    default:
        if (r->error[0] == '\0')
            set_error(r, "cannot read the trace");
        else
            bt_current_thread_clear_error();
        return DT_RUN_ERROR;
    }
}

uint64_t dt_reader_discarded(const dt_reader *r, uint64_t *unknown)
{
    *unknown = r->discarded_unknown;
    return r->discarded;
}

uint32_t dt_reader_counted(const dt_reader *r, uint64_t *counts, uint32_t n, int64_t *first, int64_t *last)
{
    for (uint32_t i = 0; i < n && i < r->n_classes; i++)
        counts[i] = r->counted[i];
    *first = r->counted_first;
    *last = r->counted_last;
    return r->n_classes;
}

void dt_reader_free(dt_reader *r)
{
    if (r == NULL)
        return;
    bt_graph_put_ref(r->graph);
    bt_plugin_put_ref(r->ctf);
    bt_plugin_put_ref(r->utils);
    free(r->ports);
    free(r);
}
